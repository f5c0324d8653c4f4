"""The Keras `Metric` base (a plain object holding Keras state variables that replicas combine as each one's
aggregation says) and the reduction metrics built on it: `Sum`, `Mean` and `MeanMetricWrapper`."""
from __future__ import annotations

import functools
import re
import threading
from typing import Any, Callable, Optional, Sequence

import torch

from torchstrategy import _context
from torchstrategy.keras import backend
from torchstrategy.keras.losses import _checks, fused
from torchstrategy.keras.metrics import replica_states


def _snake_case(name: str) -> str:
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def _device_of(*values: Any) -> torch.device:
    for value in values:
        if isinstance(value, torch.Tensor):
            return value.device
    return torch.device("cpu")


def _as_input(value: Any, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """`value` as a tensor on `device` in `dtype`, without autograd history or Python attributes riding on it (a
    Keras mask, logits): the tensor itself when it is one already (no new tensor per update and step)."""
    tensor = backend.to_tensor(value)
    if type(tensor) is not torch.Tensor or tensor.requires_grad or tensor.__dict__:
        tensor = tensor.detach()
    if tensor.dtype != dtype or tensor.device != device:
        tensor = tensor.to(device=device, dtype=dtype, non_blocking=True)
    return tensor


# Replica threads of one process share the metric objects: their updates (and reads) run one at a time, each
# replica's update on its own copy of the states (replica_states.ReplicaCopies), as TF keeps one per replica.
_UPDATE_LOCK = threading.RLock()


def _locked(update: Callable) -> Callable:
    # the wrapper only names module-level functions: a metric class pickled by value (a closure for a
    # parameter-server worker) carries references to them, not the lock
    @functools.wraps(update)
    def locked_update(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _update_locked(self, update, args, kwargs)

    locked_update._locked = True  # type: ignore[attr-defined]
    return locked_update


def _update_locked(metric: Any, update: Callable, args: tuple, kwargs: dict) -> Any:
    with _UPDATE_LOCK:
        if metric.__dict__.get("_updating") or not metric._state_variables_list():
            return update(metric, *args, **kwargs)  # inside its own update, or no state to keep per replica yet
        replica = replica_states.local_replica()
        if replica is None:
            return update(metric, *args, **kwargs)
        copies = metric.__dict__.setdefault("_replica_copies", replica_states.ReplicaCopies())
        copies.enter(metric._state_variables, metric._aggregations, *replica)
        metric._updating = True
        try:
            return update(metric, *args, **kwargs)
        finally:
            metric._updating = False
            copies.leave(metric._state_variables, metric._aggregations, replica[0], metric.name)


def _locked_read(result: Callable) -> Callable:
    @functools.wraps(result)
    def locked_result(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _read_locked(self, result, args, kwargs)

    locked_result._locked = True  # type: ignore[attr-defined]
    return locked_result


def _read_locked(metric: Any, result: Callable, args: tuple, kwargs: dict) -> Any:
    with _UPDATE_LOCK:  # never a replica's own copy halfway through its update
        value = result(metric, *args, **kwargs)
    if any(value is state for state in metric._state_variables_list()):
        return torch.Tensor.clone(value)  # `return self.total`: the value now, as Keras's read gives
    return value


class Metric:
    """Base of Keras metrics: `update_state` accumulates, `result` reads, `reset_state` zeroes.

    State lives in Keras variables made by `add_variable` / `add_weight` (tensors with `assign`,
    `assign_add`, `assign_sub`, `value`, `numpy()`); they follow the inputs' device lazily, are only ever
    changed in place (so every reference to them, and a parameter-server registry watching their version
    counters, sees each write) and combine across replicas as their `aggregation` says. Updates never
    call `.item()`, so a training step is not synchronised with the host.

    >>> class Count(Metric):
    ...     def __init__(self, name=None):
    ...         super().__init__(name=name)
    ...         self.seen = self.add_variable(shape=(), initializer="zeros", name="seen")
    ...     def update_state(self, values):
    ...         self.seen.assign_add(torch.as_tensor(values).numel())
    ...     def result(self):
    ...         return self.seen
    >>> Count()([1, 2, 3])
    tensor(3.)
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        update = cls.__dict__.get("update_state")
        if update is not None and not getattr(update, "_locked", False):
            cls.update_state = _locked(update)
        result = cls.__dict__.get("result")
        if result is not None and not getattr(result, "_locked", False):
            cls.result = _locked_read(result)

    def __init__(self, dtype: Any = None, name: Optional[str] = None) -> None:
        # unnamed metrics get unique Keras-style names ('auc', 'auc_1', ...), as Keras 2 does
        self.name = name or _context.unique_name(_snake_case(type(self).__name__))
        self._dtype = backend.to_torch_dtype(dtype)
        self._state_variables: list[torch.Tensor] = []  # the state variables, in creation order
        self._aggregations: list[str] = []  # how each combines over replicas (replica_states.AGGREGATIONS)
        self._device = torch.device("cpu")

    @property
    def dtype(self) -> str:
        """The state/result dtype name, e.g. 'float32'."""
        return str(self._dtype).replace("torch.", "")

    def add_variable(self, shape: Sequence[int], initializer: Any, dtype: Any = None, aggregation: str = "sum",
                     name: Optional[str] = None) -> torch.Tensor:
        """Creates a state variable (Keras 3): a non-trainable Keras variable of `shape` started at `initializer`,
        set to zeros by `reset_state`, whose replicas' values combine as `aggregation` says ('sum', 'mean',
        'only_first_replica'; 'none' cannot combine). It is also kept as attribute `name` unless that is taken."""
        aggregation = replica_states.check_aggregation(aggregation)
        if name is None:
            name = f"variable_{len(self._state_variables)}" if self._state_variables else "variable"
        if not isinstance(name, str) or "/" in name:
            raise ValueError(f"Metric.add_variable(name={name!r}): a state's name must be a string without '/'.")
        shape = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
        dtype = backend.to_torch_dtype(dtype) if dtype else self._dtype
        if initializer in ("zeros", None):
            value = torch.zeros(shape, dtype=dtype)
        else:
            from torchstrategy.keras import initializers

            value = backend.to_tensor(initializers.get(initializer)(shape, dtype=dtype)).to(dtype)
        from torchstrategy.keras.variables import make_weight

        variable = make_weight(value.to(self._device), False, False, name, f"{self.name}/{name}")
        variable._keras_aggregation = aggregation
        self._state_variables.append(variable)
        self._aggregations.append(aggregation)
        if not hasattr(type(self), name) and name not in self.__dict__:
            setattr(self, name, variable)  # built-in metrics read their states by name
        return variable

    def add_weight(self, shape: Sequence[int] = (), initializer: Any = None, dtype: Any = None,
                   name: Optional[str] = None) -> torch.Tensor:
        """Keras's other spelling of `add_variable` (aggregation 'sum')."""
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype, name=name)

    @property
    def variables(self) -> list[torch.Tensor]:
        """The state variables, in creation order (Keras's `Metric.variables`)."""
        return self._state_tensors()

    def _state_variables_list(self) -> list:
        return self.__dict__.get("_state_variables", [])

    def _follow_device(self, device: torch.device) -> torch.device:
        """Moves the states to `device` the first time inputs arrive there (every reference to a state variable
        stays valid); returns the device."""
        if device != self._device:
            for index, state in enumerate(self._state_variables):
                if device.type == "xla" and not state.any():  # zeros: made there (no upload in the graph)
                    self._replace_state(index, torch.zeros(tuple(state.shape), dtype=state.dtype, device=device))
                else:
                    self._replace_state(index, state.detach().to(device))
            self._device = device
        return device

    def _write_state(self, index: int, value: torch.Tensor) -> None:
        """Writes `value` into state `index` in place (its version counter moves, so a parameter-server registry
        sends the write), or swaps its data where it lives elsewhere (another device)."""
        state = self._state_variables[index]
        if value.device == state.device and value.dtype == state.dtype and self._device.type != "xla":
            with torch.no_grad():
                torch.Tensor.copy_(state, value.reshape(state.shape))
            return
        self._replace_state(index, value.reshape(state.shape))

    def _replace_state(self, index: int, value: torch.Tensor) -> None:
        """Gives state `index` new data: swapped in (version counter moved) when torch allows it, else as a new
        variable put wherever the metric held the old one (a tensor of another kind, e.g. on an XLA device)."""
        old = self._state_variables[index]
        self.__dict__.pop("_unit", None)  # _Reduce._add_count's one: made again next to the new state
        try:
            old.data = value
            torch.autograd.graph.increment_version(old)  # `.data =` alone leaves no trace of the write
            return
        except RuntimeError:
            pass
        from torchstrategy.keras.variables import make_weight

        new = make_weight(value, False, False, old.name, old.path)
        new._keras_aggregation = old.aggregation
        self._state_variables[index] = new
        for key, held in list(self.__dict__.items()):
            if held is old:
                self.__dict__[key] = new

    def _state_tensors(self) -> list[torch.Tensor]:
        """The state variables, in a fixed order; replicas combine them (see `_load_state_tensors`)."""
        return list(self._state_variables)

    def _state_contributions(self, process_rank: int, processes: int) -> list[torch.Tensor]:
        """What this process adds to the cross-process sum of each state (`_load_state_tensors` takes the sums)."""
        return [replica_states.process_contribution(state, how, process_rank, processes, self.name)
                for state, how in zip(self._state_variables, self._aggregations)]

    def _load_state_tensors(self, tensors: Sequence[Any], processes: int = 1) -> None:
        """Writes values in `_state_tensors` order into the states (in place); with `processes` > 1 they are the
        sums of that many processes' `_state_contributions`, and each state takes its aggregation of them."""
        if len(tensors) != len(self._state_variables):
            raise ValueError(f"Metric {self.name!r} has {len(self._state_variables)} state tensors "
                             f"({[state.name for state in self._state_variables]}); got {len(tensors)} values.")
        for index, (state, how, value) in enumerate(zip(self._state_variables, self._aggregations, tensors)):
            value = backend.to_tensor(value).to(device=state.device, dtype=state.dtype)
            self._write_state(index, replica_states.from_process_sum(value, how, processes).clone())

    def reset_state(self) -> None:
        """Sets every state to zeros (whatever its initializer, as Keras 3 does), in place."""
        for index, state in enumerate(self._state_variables):
            if self._device.type == "xla":
                # fresh zeros made on the device, as the first epoch's states were: zeroing in place would give
                # the next epoch's first step a graph of its own, compiled again
                self._replace_state(index, torch.zeros(tuple(state.shape), dtype=state.dtype, device=self._device))
            else:
                with torch.no_grad():
                    torch.Tensor.zero_(state)  # not `state.data.zero_()`: that write leaves the version counter be

    def reset_states(self) -> None:
        """Alias of `reset_state` (the Keras 2 name)."""
        self.reset_state()

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement update_state().")

    def result(self) -> torch.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement result().")

    def stateless_update_state(self, metric_variables: Sequence[Any], *args: Any, **kwargs: Any) -> list:
        """`update_state` on the states given as values (`variables` order); returns the new values and leaves
        the metric's own states as they were."""
        from torchstrategy.keras import stateless

        return stateless.metric_update(self, metric_variables, args, kwargs)

    def stateless_result(self, metric_variables: Sequence[Any]) -> Any:
        """The result the metric gives when its states hold `metric_variables`."""
        from torchstrategy.keras import stateless

        return stateless.metric_result(self, metric_variables)

    def stateless_reset_state(self) -> list:
        """The state values a reset gives, in `variables` order (the metric's own states are left as they are)."""
        from torchstrategy.keras import stateless

        return stateless.metric_reset(self)

    def __call__(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        """Updates with one batch, then returns the running result (as Keras does)."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config: dict) -> "Metric":
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"


def _divide_no_nan(numerator: torch.Tensor, denominator: torch.Tensor) -> torch.Tensor:
    """numerator / denominator, and 0 where the denominator is 0 (tf.math.divide_no_nan)."""
    safe = torch.where(denominator == 0, torch.ones_like(denominator), denominator)
    return torch.where(denominator == 0, torch.zeros_like(numerator), numerator / safe)


def _state_mean(total: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """`_divide_no_nan(total, count)` for a mean's own states, which carry no gradient: the quotient's inf or
    nan where the count is 0 is never selected, so no safe denominator is made."""
    return torch.where(count == 0, torch.zeros_like(total), total / count)


def _weights_for(values: torch.Tensor, sample_weight: Any,
                 reduce_by_sum: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Keras's weight handling: squeeze/expand a trailing axis, broadcast the weights to the values,
    or else reduce (mean, or sum for `Sum`) the values down to the weights' rank."""
    weights = backend.to_tensor(sample_weight).to(device=values.device, dtype=values.dtype, non_blocking=True)
    if weights.ndim and weights.ndim == values.ndim + 1 and weights.shape[-1] == 1:
        weights = weights.squeeze(-1)
    elif weights.ndim and values.ndim == weights.ndim + 1:
        weights = weights.unsqueeze(-1)
    try:
        return values, torch.broadcast_to(weights, values.shape)
    except RuntimeError:
        pass
    if weights.ndim <= values.ndim and tuple(values.shape[:weights.ndim]) == tuple(weights.shape):
        axes = tuple(range(weights.ndim, values.ndim))
        return (values.sum(dim=axes) if reduce_by_sum else values.mean(dim=axes)), weights
    raise ValueError(f"sample_weight of shape {tuple(weights.shape)} does not fit values of shape "
                     f"{tuple(values.shape)}: pass one weight per sample (shape (batch,)).")


class _Reduce(Metric):
    """Accumulates a weighted sum (and, for a mean, the total weight)."""

    def __init__(self, with_count: bool, name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_weight(name="total")
        self._with_count = with_count
        if with_count:
            self.count = self.add_weight(name="count")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        device = self._follow_device(_device_of(values))
        values = _as_input(values, device, self._dtype)
        if sample_weight is None:
            self.total.add_(values.sum())
            if self._with_count:
                self._add_count(values.numel())
            return
        if type(sample_weight) is int and values.ndim == 0 and abs(sample_weight) < 2 ** 24 \
                and values.dtype in (torch.float32, torch.float64):
            # one value weighted by a count (the loss tracker, by the batch size): the count is exact in float32, so
            # the tensor path's numbers (up to rounding) in one op, without making a weight tensor every step
            self.total.add_(values, alpha=sample_weight)
            if self._with_count:
                self._add_count(sample_weight)
            return
        values, weights = _weights_for(values, sample_weight, reduce_by_sum=not self._with_count)
        self.total.add_((values * weights).sum())
        if self._with_count:
            self.count.add_(weights.sum())

    def _add_count(self, amount: int) -> None:
        """count += amount, as a held one times `amount` (a Python number given to add_ is made into a tensor on
        every call, which costs more than the add): the same float32 sum, exact below 2**24."""
        count = self.count
        unit = self.__dict__.get("_unit")
        if unit is None:  # dropped by _replace_state whenever a state moves or changes dtype
            unit = self.__dict__["_unit"] = torch.ones((), dtype=count.dtype, device=count.device)
        count.add_(unit, alpha=amount)


class Sum(_Reduce):
    """Running (weighted) sum of the values given."""

    def __init__(self, name: str = "sum", dtype: Any = None) -> None:
        super().__init__(with_count=False, name=name, dtype=dtype)

    def result(self) -> torch.Tensor:
        return self.total.clone()


class Mean(_Reduce):
    """Running (weighted) mean: sum(values * weights) / sum(weights).

    >>> m = Mean(); m.update_state([1.0, 3.0]); m.update_state([5.0], sample_weight=[2.0]); m.result()
    tensor(3.5000)
    """

    def __init__(self, name: str = "mean", dtype: Any = None) -> None:
        super().__init__(with_count=True, name=name, dtype=dtype)

    def result(self) -> torch.Tensor:
        return _state_mean(self.total, self.count)


class MeanMetricWrapper(Mean):
    """Mean over samples of `fn(y_true, y_pred, **kwargs)` (a per-sample metric or loss function).

    y_true and y_pred are cast to the metric dtype first, as Keras does.
    """

    def __init__(self, fn: Callable, name: Optional[str] = None, dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(name=name or getattr(fn, "__name__", None) or "mean_metric_wrapper", dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def _inputs(self, y_true: Any, y_pred: Any) -> tuple[torch.Tensor, torch.Tensor]:
        device = self._follow_device(_device_of(y_pred, y_true))
        y_pred, y_true = _as_input(y_pred, device, self._dtype), _as_input(y_true, device, self._dtype)
        return _checks.align_ranks(y_true, y_pred)

    #: an unweighted update may add `fn`'s fused batch mean instead (see fused.declared)
    _fusable = True

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = self._inputs(y_true, y_pred)
        if sample_weight is None and fused.declared(self):
            mean = fused.batch_mean(self._fn, self._fn_kwargs, y_true, y_pred)
            if mean is not None:  # the per-sample values' sum is their mean times their count
                count = y_pred.numel() // y_pred.shape[-1]
                self.total.add_(mean, alpha=count)
                self._add_count(count)
                return
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight=sample_weight)

    def get_config(self) -> dict:
        config = {**super().get_config(), **self._fn_kwargs}
        if type(self) is MeanMetricWrapper:  # built-in functions are saved by name
            config["fn"] = getattr(self._fn, "__name__", self._fn)
        return config

    @classmethod
    def from_config(cls, config: dict) -> "Metric":
        config = dict(config)
        if cls is MeanMetricWrapper and isinstance(config.get("fn"), str):
            from torchstrategy.keras import metrics

            fn = getattr(metrics, config["fn"], None)
            if not callable(fn):
                raise ValueError(f"Unknown metric function {config['fn']!r} in MeanMetricWrapper config; pass "
                                 "the function itself.")
            config["fn"] = fn
        return cls(**config)
