"""The states a stateful recurrent layer keeps between batches (Keras's `stateful=True`): made once for the
static batch size, read as each call's initial state, given each call's final states, zeroed by
`reset_state()`. They are not weights (Keras 3 does not list them either)."""
from __future__ import annotations

from typing import Any, Callable

import torch

from torchstrategy import _context
from torchstrategy.nest import flatten, map_structure


def _variable(value: torch.Tensor, layer: Any) -> torch.Tensor:
    from torchstrategy.keras.variables import make_weight

    return make_weight(value.detach().clone(), False, False, "rnn_state", f"{layer.name}/rnn_state")


def initial_state(layer: Any, sequences: torch.Tensor, zeros: Callable[[int], Any]) -> Any:
    """The state a stateful `layer` starts this call from: its kept states (made from `zeros(batch)` on the first
    call). While shapes are inferred, an unknown symbolic batch size is refused, as Keras refuses it."""
    probing, symbolic_batch = _context.current_shape_probe()
    if probing and symbolic_batch is None:
        shape = (None,) + tuple(sequences.shape[1:])
        raise ValueError(f"When using `stateful=True` in a RNN, the batch size must be static. Found dynamic batch "
                         f"size: sequence.shape={shape}. Give the input a fixed batch size, e.g. "
                         f"keras.Input(batch_shape=(32, ...)).")
    batch = int(sequences.shape[0])
    if layer.states is None:
        layer.states = map_structure(lambda value: _variable(value, layer), zeros(batch))
    kept = flatten(layer.states)
    if int(kept[0].shape[0]) != batch:
        raise ValueError(f"Layer '{layer.name}' ({type(layer).__name__}) is stateful with batch size "
                         f"{int(kept[0].shape[0])}, but got a batch of {batch} rows. A stateful RNN needs every "
                         f"batch to have exactly that many rows (pass batch_size={int(kept[0].shape[0])} and a "
                         "number of samples it divides, or drop the remainder).")
    for variable in kept:
        if variable.device != sequences.device:
            variable.data = variable.data.to(sequences.device)
    return map_structure(lambda variable: variable.value.to(sequences.dtype, copy=True), layer.states)


def keep_final_state(layer: Any, final: Any) -> None:
    """Stores this call's final states for the next call (not while shapes are inferred on stand-ins)."""
    if _context.current_shape_probe()[0]:
        return
    for variable, value in zip(flatten(layer.states), flatten(final)):
        with torch.no_grad():
            variable.copy_(value.detach().to(variable.dtype))


def reset_state(layer: Any) -> None:
    """Zeroes the kept states (nothing to do before the first call)."""
    if layer.states is not None:
        for variable in flatten(layer.states):
            with torch.no_grad():
                variable.zero_()
