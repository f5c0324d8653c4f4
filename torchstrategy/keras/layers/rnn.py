"""Keras's generic recurrent layer `RNN(cell)` (any object with Keras's cell protocol: `call(inputs, states)`
and `state_size`) and `StackedRNNCells`; the masked time loop follows Keras 3's backend `rnn`."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras.layers import rnn_state
from torchstrategy.keras.layers.base import Layer
from torchstrategy.nest import flatten, is_nested, pack_sequence_as


def _call_cell(cell: Any, inputs: torch.Tensor, states: Any, training: bool, **kwargs: Any) -> tuple:
    """One cell step; `kwargs` (extra call arguments, as Keras's StackedRNNCells forwards them) go to the cell."""
    if isinstance(cell, Layer):
        if cell._call_takes_training:
            return cell(inputs, states, training=training, **kwargs)
        return cell(inputs, states, **kwargs)
    return cell(inputs, states, **kwargs) if callable(cell) else cell.call(inputs, states, **kwargs)


def _rebuild(entry: Any, custom_objects: Optional[dict]) -> Any:
    if not isinstance(entry, dict):
        return entry  # a cell object kept as is
    from torchstrategy.keras import saving

    return saving.deserialize_layer(entry, custom_objects)


def _serialize(cell: Any) -> Any:
    if isinstance(cell, Layer):
        return {"module": "keras.layers", "class_name": type(cell).__name__, "config": cell.get_config(),
                "registered_name": None}
    return cell


def _mark_sequence(cell: Any, active: bool) -> None:
    for sub in getattr(cell, "cells", [cell]):
        if hasattr(sub, "_sequence"):
            sub._sequence(active)
        elif hasattr(sub, "cells"):
            _mark_sequence(sub, active)


class StackedRNNCells(Layer):
    """Cells run one after the other at each step; each cell's output is the next one's input.

    >>> from torchstrategy.keras.layers import LSTMCell, SimpleRNNCell
    >>> RNN(StackedRNNCells([SimpleRNNCell(3), LSTMCell(2)]))(torch.ones(1, 4, 5)).shape
    torch.Size([1, 2])
    """

    def __init__(self, cells: list, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for cell in cells:
            if "call" not in dir(cell):
                raise ValueError(f"All cells must have a `call` method. Received cell without a `call` method: {cell}")
            if "state_size" not in dir(cell):
                raise ValueError(f"All cells must have a `state_size` attribute. Received cell without a "
                                 f"`state_size`: {cell}")
        self.cells = list(cells)

    @property
    def state_size(self) -> list:
        return [c.state_size for c in self.cells]

    @property
    def output_size(self) -> int:
        last = self.cells[-1]
        if getattr(last, "output_size", None) is not None:
            return last.output_size
        return last.state_size[0] if isinstance(last.state_size, (list, tuple)) else last.state_size

    def get_initial_state(self, batch_size: Optional[int] = None) -> list:
        """Each cell's initial state (its own `get_initial_state`, else zeros of its `state_size`)."""
        out = []
        for cell in self.cells:
            if hasattr(cell, "get_initial_state"):
                out.append(cell.get_initial_state(batch_size=batch_size))
            elif isinstance(cell.state_size, int):
                out.append(torch.zeros((batch_size, cell.state_size), dtype=self._compute_torch_dtype))
            else:
                out.append([torch.zeros((batch_size, d), dtype=self._compute_torch_dtype) for d in cell.state_size])
        return out

    def build(self, input_shape: Any) -> None:
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(input_shape)
                cell.built = True
                cell._build_input_shape = input_shape
            if getattr(cell, "output_size", None) is not None:
                output_dim = cell.output_size
            elif isinstance(cell.state_size, (list, tuple)):
                output_dim = cell.state_size[0]
            else:
                output_dim = cell.state_size
            input_shape = (flatten(input_shape)[0], output_dim)
        self.built = True

    def call(self, inputs: torch.Tensor, states: Any, training: bool = False, **kwargs: Any) -> tuple:
        """Runs the cells in order; further keyword arguments are handed to every cell, as Keras does."""
        new_states = []
        for cell, cell_states in zip(self.cells, states):
            was_nested = is_nested(cell_states)
            cell_states = list(cell_states) if was_nested else [cell_states]
            inputs, cell_states = _call_cell(cell, inputs, cell_states, training, **kwargs)
            if len(cell_states) == 1 and not was_nested:
                cell_states = cell_states[0]
            new_states.append(cell_states)
        return inputs, (new_states[0] if len(new_states) == 1 else new_states)

    def get_config(self) -> dict:
        return {**super().get_config(), "cells": [_serialize(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "StackedRNNCells":
        config = dict(config)
        cells = [_rebuild(c, custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)


class RNN(Layer):
    """Runs `cell` over the time axis of (batch, timesteps, ...) inputs; a list of cells is stacked.

    >>> from torchstrategy.keras.layers import GRUCell
    >>> RNN(GRUCell(4), return_sequences=True)(torch.ones(2, 3, 5)).shape
    torch.Size([2, 3, 4])
    """

    def __init__(self, cell: Any, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 zero_output_for_mask: bool = False, **kwargs: Any) -> None:
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if "call" not in dir(cell):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: cell={cell}")
        if "state_size" not in dir(cell):
            raise ValueError("The RNN cell should have a `state_size` attribute (single integer or list of integers, "
                             f"one integer per RNN state). Received: cell={cell}")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful, self.unroll = bool(go_backwards), bool(stateful), bool(unroll)
        self.states: Any = None  # with stateful=True: the states kept between batches (rnn_state.py)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.supports_masking = True
        state_size = getattr(cell, "state_size", None)
        if not isinstance(state_size, (list, tuple, int)):
            raise ValueError("state_size must be an integer, or a list/tuple of integers (one for each state tensor).")
        self.single_state = isinstance(state_size, int)
        self.state_size = [state_size] if self.single_state else list(state_size)

    def build(self, sequences_shape: Any, initial_state_shape: Any = None) -> None:
        if isinstance(sequences_shape, list):
            sequences_shape = sequences_shape[0]
        if not isinstance(sequences_shape, tuple) or len(sequences_shape) < 3:
            raise ValueError(f"Input 0 of layer '{self.name}' (RNN) must be at least 3-D (batch, timesteps, "
                             f"features), but received input with shape {sequences_shape}.")
        step_shape = (sequences_shape[0],) + tuple(sequences_shape[2:])
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build(step_shape)
            self.cell.built = True
            self.cell._build_input_shape = step_shape
        self.built = True

    def get_initial_state(self, batch_size: int) -> list:
        """The cell's `get_initial_state`, else zeros of each state size."""
        if hasattr(self.cell, "get_initial_state"):
            state = self.cell.get_initial_state(batch_size=batch_size)
            return list(state) if is_nested(state) else [state]
        dtype = getattr(self.cell, "_compute_torch_dtype", torch.float32)
        return [torch.zeros((batch_size, d), dtype=dtype) for d in self.state_size]

    def call(self, sequences: torch.Tensor, initial_state: Any = None, mask: Optional[torch.Tensor] = None,
             training: bool = False) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if self.stateful:  # the kept states, unless the call gives its own
            kept = rnn_state.initial_state(self, sequences, self.get_initial_state)
            initial_state = kept if initial_state is None else initial_state
        if initial_state is None:
            initial_state = self.get_initial_state(sequences.shape[0])
        initial_state = list(initial_state) if is_nested(initial_state) else [initial_state]
        flat = [torch.as_tensor(s, device=sequences.device).to(sequences.dtype) for s in flatten(initial_state)]
        steps = sequences.shape[1]
        if steps == 0:
            raise ValueError(f"Layer '{self.name}' got an input with 0 timesteps; it needs at least one.")
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        step_mask = None if mask is None else mask.to(torch.bool)
        outputs, previous = [], None
        _mark_sequence(self.cell, True)
        try:
            for t in order:
                states = pack_sequence_as(initial_state, flat)
                if self.single_state and len(states) == 1 and not isinstance(self.cell, StackedRNNCells):
                    cell_states: Any = states  # Keras hands the list; a cell may unwrap it
                else:
                    cell_states = states
                output, new_states = _call_cell(self.cell, sequences[:, t], cell_states, bool(training))
                new_flat = flatten(new_states if is_nested(new_states) else [new_states])
                if step_mask is not None:
                    keep = step_mask[:, t].reshape((-1,) + (1,) * (output.dim() - 1))
                    new_flat = [torch.where(keep.reshape((-1,) + (1,) * (n.dim() - 1)), n, o)
                                for n, o in zip(new_flat, flat)]
                    fallback = torch.zeros_like(output) if self.zero_output_for_mask or previous is None else previous
                    output = torch.where(keep, output, fallback)
                    previous = output if previous is None else torch.where(keep, output, previous)
                else:
                    previous = output
                flat = new_flat
                outputs.append(output)
        finally:
            _mark_sequence(self.cell, False)
        result = torch.stack(outputs, dim=1) if self.return_sequences else previous
        if self.stateful:
            rnn_state.keep_final_state(self, flat)
        if self.return_state:
            return [result] + list(pack_sequence_as(initial_state, flat))
        return result

    def reset_state(self) -> None:
        """Zeroes the states a stateful layer keeps between batches (Keras 3)."""
        rnn_state.reset_state(self)

    def reset_states(self) -> None:
        """Keras's other name for `reset_state`."""
        rnn_state.reset_state(self)

    def compute_mask(self, _: Any, mask: Any) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        return [output_mask] + [None] * len(self.state_size) if self.return_state else output_mask

    def compute_output_shape(self, sequences_shape: Any, initial_state_shape: Any = None) -> Any:
        batch, length = sequences_shape[0], sequences_shape[1]
        states = []
        for size in self.state_size:
            states.append((batch, size) if isinstance(size, int) else [(batch, s) for s in size])
        output_size = getattr(self.cell, "output_size", None)
        if output_size is None:
            output_size = self.state_size[0] if isinstance(self.state_size[0], int) else self.state_size[0][0]
        output = (batch, length, output_size) if self.return_sequences else (batch, output_size)
        return (output, *states) if self.return_state else output

    def get_config(self) -> dict:
        return {**super().get_config(), "return_sequences": self.return_sequences, "return_state": self.return_state,
                "go_backwards": self.go_backwards, "stateful": self.stateful, "unroll": self.unroll,
                "zero_output_for_mask": self.zero_output_for_mask, "cell": _serialize(self.cell)}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "RNN":
        config = dict(config)
        return cls(_rebuild(config.pop("cell"), custom_objects), **config)
