"""tf.nn's RNN cell wrappers (TF 2.21's Keras 2 legacy classes RNNCellDropoutWrapper, RNNCellResidualWrapper,
RNNCellDeviceWrapper) over this library's Keras cells: each is a cell itself (`call(inputs, states)`, `state_size`,
`output_size`), so keras.layers.RNN and StackedRNNCells run it, and it holds the wrapped cell as a sublayer."""
from __future__ import annotations

import hashlib
from typing import Any, Callable, Optional

import torch

from torchstrategy import framework
from torchstrategy import random as tf_random
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.rnn import _call_cell
from torchstrategy.nest import flatten, pack_sequence_as
from torchstrategy.nn import dropout as _nn_dropout
from torchstrategy.variables import VariableAggregation, VariableSynchronization

__all__ = ["RNNCellDropoutWrapper", "RNNCellResidualWrapper", "RNNCellDeviceWrapper"]


class _CellWrapper(Layer):
    """What the three wrappers share: the wrapped cell's sizes, initial state, build and serialization."""

    def __init__(self, cell: Any, **kwargs: Any) -> None:
        if "call" not in dir(cell) or "state_size" not in dir(cell):
            raise TypeError(f"{type(self).__name__} wraps an RNN cell (an object with `call` and `state_size`, such "
                            f"as keras.layers.LSTMCell); got {cell!r}.")
        super().__init__(**kwargs)
        self.cell = cell

    @property
    def state_size(self) -> Any:
        return self.cell.state_size

    @property
    def output_size(self) -> Any:
        size = getattr(self.cell, "output_size", None)
        if size is not None:
            return size
        state_size = self.cell.state_size
        return state_size[0] if isinstance(state_size, (list, tuple)) else state_size

    def get_initial_state(self, inputs: Any = None, batch_size: Optional[int] = None, dtype: Any = None) -> Any:
        """The wrapped cell's zero state for `batch_size` rows (else as many as `inputs` has), in `dtype` if given."""
        if batch_size is None and inputs is not None:
            batch_size = int(flatten(inputs)[0].shape[0])
        state = self.cell.get_initial_state(batch_size=batch_size)
        if dtype is None:
            return state
        from torchstrategy.dtypes import as_dtype

        return pack_sequence_as(state, [s.to(as_dtype(dtype)) for s in flatten(state)])

    def zero_state(self, batch_size: int, dtype: Any) -> Any:
        """Zero states for `batch_size` rows in `dtype` (the legacy RNNCell API these wrappers keep)."""
        return self.get_initial_state(batch_size=batch_size, dtype=dtype)

    def build(self, inputs_shape: Any) -> None:
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build(inputs_shape)
            self.cell.built = True
        self.built = True

    # ----- the Keras 2 Layer spellings TF's wrappers have (each maps onto this library's Keras 3 Layer) -----
    def add_weight(self, name: Optional[str] = None, shape: Any = None, dtype: Any = None, initializer: Any = None,
                   regularizer: Any = None, trainable: Optional[bool] = None, constraint: Any = None,
                   use_resource: Any = None, synchronization: Any = VariableSynchronization.AUTO,
                   aggregation: Any = VariableAggregation.NONE, **kwargs: Any) -> Any:
        """A new weight of this wrapper (Keras 2's argument order: name first); as Layer.add_weight."""
        if isinstance(aggregation, VariableAggregation):
            aggregation = {VariableAggregation.SUM: "sum", VariableAggregation.MEAN: "mean",
                           VariableAggregation.ONLY_FIRST_REPLICA: "only_first_replica"}.get(aggregation, "none")
        return super().add_weight(shape=shape, initializer=initializer, dtype=dtype,
                                  trainable=True if trainable is None else trainable, regularizer=regularizer,
                                  constraint=constraint, aggregation=aggregation, name=name)

    def add_variable(self, *args: Any, **kwargs: Any) -> Any:
        """Keras 2's deprecated alias of `add_weight` (TF's wrappers take any arguments add_weight takes)."""
        return self.add_weight(*args, **kwargs)

    def add_loss(self, losses: Any, **kwargs: Any) -> None:
        """Adds a loss (or several) from inside `call`, as Layer.add_loss."""
        super().add_loss(losses)

    def add_metric(self, value: Any, name: Optional[str] = None, **kwargs: Any) -> None:
        """Refused as by every Keras 3 layer (see Layer.add_metric)."""
        super().add_metric(value, name=name, **kwargs)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """The mask passes through unchanged when the wrapper supports masking (as Layer.compute_mask)."""
        return super().compute_mask(inputs, mask)

    def _sequence(self, active: bool) -> None:  # keras.layers.RNN marks a sequence's start/end on its cells
        inner = getattr(self.cell, "_sequence", None)
        if inner is not None:
            inner(active)

    def _run_cell(self, inputs: Any, states: Any, training: Optional[bool]) -> tuple:
        return _call_cell(self.cell, inputs, states, bool(training))

    def call(self, inputs: Any, state: Any, **kwargs: Any) -> tuple:
        """One step of the wrapped cell: `(output, new_state)`; `training` is passed on to the cell."""
        return self._run_cell(inputs, state, kwargs.get("training"))

    def get_config(self) -> dict:
        return {**super().get_config(), "cell": {"class_name": type(self.cell).__name__,
                                                  "config": self.cell.get_config()}}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "_CellWrapper":
        from torchstrategy.keras import saving

        config = dict(config)
        entry = dict(config.pop("cell"))
        entry.setdefault("module", "keras.layers")
        return cls(saving.deserialize_layer(entry, custom_objects), **config)


def _keep_prob(value: Any, name: str) -> float:
    prob = float(value)
    if not 0.0 <= prob <= 1.0:
        raise ValueError(f"Parameter {name} must be between 0 and 1: {prob}")
    return prob


def _sizes(size: Any) -> list:
    return [int(s) for s in flatten(size)] if isinstance(size, (list, tuple)) else [int(size)]


class RNNCellDropoutWrapper(_CellWrapper):
    """Dropout on a cell's inputs, outputs and new states (tf.nn.RNNCellDropoutWrapper). As in TF, the dropout
    runs at every call, in training and inference alike (the legacy wrapper has no training flag); with
    `variational_recurrent=True` one mask per input/state/output entry, drawn at construction, is reused.

    >>> from torchstrategy.keras.layers import RNN, GRUCell
    >>> RNN(RNNCellDropoutWrapper(GRUCell(3), output_keep_prob=0.5, seed=1))(torch.ones(2, 4, 5)).shape
    torch.Size([2, 3])
    """

    def __init__(self, cell: Any, input_keep_prob: float = 1.0, output_keep_prob: float = 1.0,
                 state_keep_prob: float = 1.0, variational_recurrent: bool = False, input_size: Any = None,
                 dtype: Any = None, seed: Optional[int] = None,
                 dropout_state_filter_visitor: Optional[Callable] = None, **kwargs: Any) -> None:
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._state_filter = dropout_state_filter_visitor
        self._input_keep_prob = _keep_prob(input_keep_prob, "input_keep_prob")
        self._output_keep_prob = _keep_prob(output_keep_prob, "output_keep_prob")
        self._state_keep_prob = _keep_prob(state_keep_prob, "state_keep_prob")
        self._variational_recurrent, self._input_size, self._seed = variational_recurrent, input_size, seed
        self._noise: dict = {}
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            if self._input_keep_prob < 1.0 and input_size is None:
                raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, "
                                 "input_size must be provided")
            sizes = {"state": _sizes(cell.state_size), "output": _sizes(self.output_size)}
            if self._input_keep_prob < 1.0:
                sizes["input"] = _sizes(input_size)
            for part, entries in sizes.items():  # one [1, size] uniform draw per entry, kept for every call
                self._noise[part] = [tf_random.uniform((1, size), seed=self._seed_for(part, index))
                                     for index, size in enumerate(entries)]

    @property
    def wrapped_cell(self) -> Any:
        return self.cell

    def _seed_for(self, part: str, index: int) -> Optional[int]:
        if self._seed is None:
            return None
        digest = hashlib.md5(f"{self._seed}{part}_{index}".encode("utf-8")).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def _drop(self, values: list, part: str, keep: float, chosen: Optional[list] = None) -> list:
        out = []
        for index, value in enumerate(values):
            if chosen is not None and not chosen[index]:
                out.append(value)
            elif self._variational_recurrent:
                mask = torch.floor(keep + self._noise[part][index].to(value.device, value.dtype))
                out.append(value / keep * mask)
            else:
                out.append(_nn_dropout(value, rate=1.0 - keep, seed=self._seed_for(part, index)))
        return out

    def _state_choice(self, states: list) -> Optional[list]:
        if self._state_filter is None:
            return None
        chosen = self._state_filter(states)
        if isinstance(chosen, bool):
            return [chosen] * len(states)
        chosen = list(flatten(chosen))
        if len(chosen) != len(states) or not all(isinstance(c, bool) for c in chosen):
            raise TypeError(f"dropout_state_filter_visitor must return a bool or one bool per state tensor "
                            f"({len(states)}); got {chosen!r}.")
        return chosen

    def call(self, inputs: Any, state: Any, **kwargs: Any) -> tuple:
        """The cell's step with dropout on its inputs, new state and output (at every call, as TF)."""
        if self._input_keep_prob < 1.0:
            inputs = pack_sequence_as(inputs, self._drop(flatten(inputs), "input", self._input_keep_prob))
        output, new_states = self._run_cell(inputs, state, kwargs.get("training"))
        if self._state_keep_prob < 1.0:
            flat = flatten(new_states)
            new_states = pack_sequence_as(new_states, self._drop(flat, "state", self._state_keep_prob,
                                                                 self._state_choice(flat)))
        if self._output_keep_prob < 1.0:
            output = pack_sequence_as(output, self._drop(flatten(output), "output", self._output_keep_prob))
        return output, new_states

    def get_config(self) -> dict:
        if self._state_filter is not None:
            raise NotImplementedError("RNNCellDropoutWrapper.get_config with a dropout_state_filter_visitor: "
                                      "functions are not serialized here; rebuild the wrapper in code.")
        return {**super().get_config(), "input_keep_prob": self._input_keep_prob,
                "output_keep_prob": self._output_keep_prob, "state_keep_prob": self._state_keep_prob,
                "variational_recurrent": self._variational_recurrent, "input_size": self._input_size,
                "seed": self._seed}


class RNNCellResidualWrapper(_CellWrapper):
    """Adds the cell's inputs to its outputs (tf.nn.RNNCellResidualWrapper), or maps (inputs, outputs) through
    `residual_fn`; the default needs outputs shaped as the inputs."""

    def __init__(self, cell: Any, residual_fn: Optional[Callable] = None, **kwargs: Any) -> None:
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def call(self, inputs: Any, state: Any, **kwargs: Any) -> tuple:
        """The cell's step, its output plus its inputs (or `residual_fn(inputs, output)`)."""
        output, new_states = self._run_cell(inputs, state, kwargs.get("training"))
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_states
        flat_in, flat_out = flatten(inputs), flatten(output)
        if len(flat_in) != len(flat_out):
            raise ValueError(f"RNNCellResidualWrapper: the cell's inputs ({len(flat_in)} tensors) and outputs "
                             f"({len(flat_out)}) differ in structure; pass a residual_fn.")
        for x, y in zip(flat_in, flat_out):
            if tuple(x.shape) != tuple(y.shape):
                raise ValueError(f"Shapes {tuple(x.shape)} and {tuple(y.shape)} are incompatible: the residual adds "
                                 f"the cell's inputs to its outputs, so the cell's units must equal the input size "
                                 f"(or pass a residual_fn).")
        return pack_sequence_as(output, [x + y for x, y in zip(flat_in, flat_out)]), new_states

    def get_config(self) -> dict:
        if self._residual_fn is not None:
            raise NotImplementedError("RNNCellResidualWrapper.get_config with a residual_fn: functions are not "
                                      "serialized here; rebuild the wrapper in code.")
        return super().get_config()


class RNNCellDeviceWrapper(_CellWrapper):
    """Runs the cell's step under tf.device(`device`) (tf.nn.RNNCellDeviceWrapper): tensors the step creates
    are placed there; its weights stay where they are."""

    def __init__(self, cell: Any, device: str, **kwargs: Any) -> None:
        super().__init__(cell, **kwargs)
        self._device = device

    def call(self, inputs: Any, state: Any, **kwargs: Any) -> tuple:
        """The cell's step under tf.device(device)."""
        with framework.device(self._device):
            return self._run_cell(inputs, state, kwargs.get("training"))

    def get_config(self) -> dict:
        return {**super().get_config(), "device": self._device}
