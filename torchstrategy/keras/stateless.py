"""Keras 3's stateless machinery on torch: `keras.StatelessScope` / `keras.SymbolicScope`, and the stateless_* calls
of layers, models, optimizers and metrics (new state returned, the objects' own variables left as they were)."""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

import torch
from torch import nn

from torchstrategy import _context
from torchstrategy.keras.variables import MappedValue, mapped_value


def _as_value(variable: torch.Tensor, value: Any) -> torch.Tensor:
    """`value` as a tensor of the variable's dtype and device (autograd history kept), shape checked."""
    if not isinstance(value, torch.Tensor):
        from torchstrategy.keras import backend

        value = backend.to_tensor(value)
    value = value.to(device=variable.device, dtype=variable.dtype)
    if tuple(value.shape) != tuple(variable.shape):
        raise ValueError("Invalid variable value in StatelessScope: all values in argument `mapping` must be tensors "
                         "with a shape that matches the corresponding variable shape. For variable "
                         f"{_described(variable)}, received a value of shape {tuple(value.shape)}.")
    return value


def _described(variable: torch.Tensor) -> str:
    return f"'{getattr(variable, 'path', None) or 'variable'}' of shape {tuple(variable.shape)}"


def _variable_of(value: Any) -> Any:
    """The weight behind what a layer read inside a scope (a MappedValue), or `value` itself."""
    return value.__dict__["_keras_of"] if isinstance(value, MappedValue) else value


class StatelessScope:
    """While entered, a mapped variable reads as its value in `state_mapping` (pairs `(variable, value)`), and
    writes to any variable (`assign*`, or in-place updates of a mapped one) go to the scope, not the variable;
    `get_current_value(variable)` gives the scope's value (None for a variable it never saw).

    On torch: a mapped value that requires grad is what layers read for that weight (gradients reach it); every
    other mapped value is read through the variable, which holds a private copy of it until the scope exits.
    Variables made inside are initialized when made (`initialize_variables` has nothing left to do here)."""

    def __init__(self, state_mapping: Optional[Iterable] = None, collect_losses: bool = False,
                 initialize_variables: bool = True) -> None:
        self.collect_losses = collect_losses
        self.initialize_variables = initialize_variables
        self.losses: list = []
        pairs = state_mapping.items() if isinstance(state_mapping, dict) else (state_mapping or ())
        self._mapping: list[tuple[torch.Tensor, torch.Tensor]] = []
        for pair in pairs:
            variable, value = pair
            if not isinstance(variable, torch.Tensor):
                raise ValueError("Invalid reference variable in StatelessScope: all keys in argument `mapping` must "
                                 f"be Variable instances. Received instead: {variable!r}")
            self._mapping.append((variable, _as_value(variable, value)))
        self._held: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # id -> (variable, its own data)
        self._substitutes: dict[int, torch.Tensor] = {}  # id -> what layers read instead (gradients reach the value)
        self._given: dict[int, torch.Tensor] = {}  # id -> the mapped value behind a substitute
        self._final: dict[int, torch.Tensor] = {}  # id -> value at exit
        self._active = False

    def __enter__(self) -> "StatelessScope":
        if self._active:
            raise RuntimeError("This StatelessScope is already entered; make a new one for another block.")
        self._active = True
        self._final = {}
        _context.push_keras_scope("stateless", self)
        try:
            for variable, value in self._mapping:
                if isinstance(variable, nn.Parameter) and value.requires_grad:
                    self._substitutes[id(variable)] = mapped_value(variable, value)
                    self._given[id(variable)] = value
                self._hold(variable, value.detach().clone())
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        _context.pop_keras_scope("stateless")
        for key, (variable, own) in self._held.items():
            self._final[key] = self._given[key] if key in self._substitutes else torch.Tensor.detach(variable)
            variable.data = own
        self._held, self._substitutes, self._given, self._active = {}, {}, {}, False

    def _hold(self, variable: torch.Tensor, data: torch.Tensor) -> None:
        """Gives `variable` the scope's private `data` until exit (its own data is put back then)."""
        if id(variable) not in self._held:
            self._held[id(variable)] = (variable, variable.data)
        variable.data = data

    def _adopt(self, variable: torch.Tensor) -> None:
        """Called before a write to `variable` inside the scope: the write lands in the scope's copy."""
        if id(variable) not in self._held:
            self._hold(variable, torch.Tensor.detach(variable).clone())
        self._substitutes.pop(id(variable), None)  # written: its value is now the variable's (the scope's copy)

    def _read(self, value: Any) -> Any:
        """What a layer reading weight `value` sees inside the scope."""
        return self._substitutes.get(id(value), value)

    def add_loss(self, loss: Any) -> None:
        """Keeps `loss` in `losses` (layers add theirs here when `collect_losses` is set)."""
        self.losses.append(loss)

    def add_update(self, update: Sequence) -> None:
        """Records `(variable, value)`: the variable's value in this scope becomes `value`."""
        variable, value = update
        variable = _variable_of(variable)
        value = _as_value(variable, value)
        if self._active:
            self._adopt(variable)
            with torch.no_grad():
                torch.Tensor.copy_(variable, value)
        else:
            self._final[id(variable)] = value

    def get_current_value(self, variable: Any) -> Optional[torch.Tensor]:
        """The variable's value in this scope (mapped, or written inside), or None if the scope never saw it."""
        variable = _variable_of(variable)
        key = id(variable)
        if not self._active:
            return self._final.get(key)
        if key in self._substitutes:
            return self._given[key]
        return torch.Tensor.detach(variable) if key in self._held else None


class SymbolicScope:
    """Marks the symbolic stage (tracing on KerasTensors) for the block, as Keras's `SymbolicScope`."""

    def __enter__(self) -> "SymbolicScope":
        _context.push_keras_scope("symbolic", self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _context.pop_keras_scope("symbolic")


def in_stateless_scope() -> bool:
    """True inside a `StatelessScope` on this thread."""
    return _context.keras_scope("stateless") is not None


def in_symbolic_scope() -> bool:
    """True inside a `SymbolicScope` on this thread."""
    return _context.keras_scope("symbolic") is not None


# ----- the stateless_* calls -----------------------------------------------------------------------------------
def _check_count(given: Sequence, expected: Sequence, argument: str, owner: str, what: str) -> None:
    if given is None or len(given) != len(expected):
        raise ValueError(f"Argument `{argument}` must be a list of tensors corresponding 1:1 to {owner}. "
                         f"Received list with length {None if given is None else len(given)}, but expected "
                         f"{len(expected)} variables ({what}).")


def layer_call(layer: Any, trainable_variables: Sequence, non_trainable_variables: Sequence, args: tuple,
               return_losses: bool, kwargs: dict) -> tuple:
    """`Layer.stateless_call`: (outputs, new non-trainable values[, losses])."""
    name = type(layer).__name__
    if not layer.built:
        raise ValueError(f"To call stateless_call, {name} must be built (i.e. its variables must have been already "
                         "created). You can build it by calling it on some data.")
    trainable, non_trainable = layer.trainable_variables, layer.non_trainable_variables
    _check_count(trainable_variables, trainable, "trainable_variables", f"{name}().trainable_variables",
                 "trainable then non-trainable are passed separately")
    _check_count(non_trainable_variables, non_trainable, "non_trainable_variables",
                 f"{name}().non_trainable_variables", "moving statistics, counters and other non-trainable state")
    mapping = list(zip(trainable, trainable_variables)) + list(zip(non_trainable, non_trainable_variables))
    losses = None
    with StatelessScope(state_mapping=mapping, collect_losses=return_losses) as scope:
        outputs = layer(*args, **kwargs)
        if return_losses:
            losses = layer.losses
        new_non_trainable = [scope.get_current_value(v) for v in non_trainable]
    new_non_trainable = [value.clone() for value in new_non_trainable]  # not the scope's storage, reused later
    return (outputs, new_non_trainable, losses) if return_losses else (outputs, new_non_trainable)


def model_compute_loss(model: Any, trainable_variables: Sequence, non_trainable_variables: Sequence,
                       metrics_variables: Sequence, x: Any, y: Any, y_pred: Any, sample_weight: Any,
                       training: bool) -> tuple:
    """`Model.stateless_compute_loss`: (loss, (trainable, new non-trainable, new metrics values))."""
    name = type(model).__name__
    trainable, non_trainable = model.trainable_variables, model.non_trainable_variables
    metric_vars = model.metrics_variables
    _check_count(trainable_variables, trainable, "trainable_variables", f"{name}().trainable_variables", "weights")
    _check_count(non_trainable_variables, non_trainable, "non_trainable_variables",
                 f"{name}().non_trainable_variables", "non-trainable state")
    _check_count(metrics_variables, metric_vars, "metrics_variables", f"{name}().metrics_variables",
                 "the compiled metrics' states")
    mapping = (list(zip(trainable, trainable_variables)) + list(zip(non_trainable, non_trainable_variables))
               + list(zip(metric_vars, metrics_variables)))
    with StatelessScope(state_mapping=mapping) as scope:
        loss = model.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training)
        new_non_trainable = [scope.get_current_value(v).clone() for v in non_trainable]
        new_metrics = [scope.get_current_value(v).clone() for v in metric_vars]
    return loss, (list(trainable_variables), new_non_trainable, new_metrics)


def optimizer_apply(optimizer: Any, optimizer_variables: Sequence, grads: Sequence,
                    trainable_variables: Sequence) -> tuple[list, list]:
    """`Optimizer.stateless_apply`: (new trainable values, new optimizer variable values)."""
    name = type(optimizer).__name__
    if not optimizer.built:
        raise ValueError(f"To call `stateless_apply`, {name} must be built (i.e. its variables must have been "
                         "created). You can build it via `optimizer.build(trainable_variables)`.")
    own_vars, own_trainable = optimizer.variables, optimizer._all_params()
    _check_count(optimizer_variables, own_vars, "optimizer_variables", f"{name}().variables",
                 "iterations, then its slots")
    _check_count(trainable_variables, own_trainable, "trainable_variables",
                 "the trainable variables the optimizer was built with", "the model's trainable variables")
    if len(grads) != len(own_trainable):
        raise ValueError(f"stateless_apply got {len(grads)} gradients for {len(own_trainable)} trainable variables; "
                         "pass one gradient per variable, in the same order.")
    mapping = list(zip(own_trainable, [torch.Tensor.detach(v) if isinstance(v, torch.Tensor) else v
                                       for v in trainable_variables]))
    mapping += list(zip(own_vars, optimizer_variables))
    with StatelessScope(state_mapping=mapping) as scope:
        optimizer.apply(list(grads), own_trainable)
        new_trainable = [scope.get_current_value(v).clone() for v in own_trainable]
        new_vars = [scope.get_current_value(v).clone() for v in own_vars]
    return new_trainable, new_vars


def _metric_mapping(metric: Any, metric_variables: Sequence) -> list:
    own = metric.variables
    _check_count(metric_variables, own, "metric_variables", f"{type(metric).__name__}().variables",
                 "the metric's states")
    return list(zip(own, metric_variables))


def metric_update(metric: Any, metric_variables: Sequence, args: tuple, kwargs: dict) -> list:
    """`Metric.stateless_update_state`: the states after the update, in `metric.variables` order."""
    with StatelessScope(state_mapping=_metric_mapping(metric, metric_variables)) as scope:
        metric.update_state(*args, **kwargs)
        return [scope.get_current_value(v).clone() for v in metric.variables]


def metric_result(metric: Any, metric_variables: Sequence) -> Any:
    """`Metric.stateless_result`: the result the metric would give holding `metric_variables`."""
    with StatelessScope(state_mapping=_metric_mapping(metric, metric_variables)):
        result = metric.result()
    from torchstrategy.nest import map_structure

    return map_structure(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, result)


def metric_reset(metric: Any) -> list:
    """`Metric.stateless_reset_state`: the states a reset gives, the metric's own left as they are."""
    own = metric.variables
    with StatelessScope(state_mapping=[(v, torch.Tensor.detach(v)) for v in own]) as scope:
        metric.reset_state()
        return [scope.get_current_value(v).clone() for v in own]
