"""The legacy backend's `K.rnn` (a step function looped over the time axis, with masks, constants and
go_backwards) and `K.gradients` (graph-only in TF 2: eager code uses tf.GradientTape)."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import torch

from torchstrategy.keras._legacy_backend.settings import _t


def _where(mask_t: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
    """new where the [batch] mask is set, else old (the mask broadcast over the trailing axes)."""
    return torch.where(mask_t.reshape(mask_t.shape + (1,) * (new.dim() - mask_t.dim())), new, old)


def rnn(step_function: Callable, inputs: Any, initial_states: Sequence[Any], go_backwards: bool = False,
        mask: Any = None, constants: Optional[Sequence[Any]] = None, unroll: bool = False, input_length: Any = None,
        time_major: bool = False, zero_output_for_mask: bool = False, return_all_outputs: bool = True) -> tuple:
    """(last_output, outputs, new_states): calls `step_function(input_t, states + constants)` ->
    (output_t, new_states) for each time step of `inputs` ([batch, time, ...], or [time, batch, ...] when
    time_major), in reverse with go_backwards. Where the [batch, time] `mask` is off a step keeps the states
    and repeats the previous output (zeros with zero_output_for_mask). `outputs` keeps every step, or only
    the last (time axis of 1) when return_all_outputs is False. `unroll` and `input_length` change nothing
    here (the loop always runs eagerly)."""
    op = "keras.backend.rnn"
    if isinstance(inputs, (list, tuple, dict)):
        raise NotImplementedError(f"{op}: nested inputs are not supported; pass one [batch, time, ...] tensor.")
    x = _t(inputs, op)
    if x.dim() < 3:
        raise ValueError(f"{op}: inputs must have rank 3 or more ([batch, time, features]), got shape "
                         f"{tuple(x.shape)}.")
    if not time_major:
        x = x.transpose(0, 1)
    steps = x.shape[0]
    mask_t = None
    if mask is not None:
        mask_t = _t(mask, op).to(torch.bool)
        if mask_t.dim() != 2:
            raise ValueError(f"{op}: mask must be [batch, time], got shape {tuple(mask_t.shape)}.")
        if not time_major:
            mask_t = mask_t.transpose(0, 1)
    extra = list(constants or [])
    states = list(initial_states)
    order = range(steps - 1, -1, -1) if go_backwards else range(steps)
    outputs: list = []
    previous = None
    for time in order:
        output, new_states = step_function(x[time], states + extra)
        new_states = list(new_states)
        if mask_t is not None:
            if previous is None or zero_output_for_mask:
                previous = torch.zeros_like(output)
            output = _where(mask_t[time], output, previous)
            new_states = [_where(mask_t[time], new, old) for new, old in zip(new_states, states)]
        states, previous = new_states, output
        if return_all_outputs:
            outputs.append(output)
        else:
            outputs = [output]
    if not outputs:
        raise ValueError(f"{op}: inputs have no time steps (shape {tuple(_t(inputs, op).shape)}).")
    stacked = torch.stack(outputs)
    last_output = stacked[-1]
    if not time_major:
        stacked = stacked.transpose(0, 1)
    return last_output, stacked, states


def gradients(loss: Any, variables: Any) -> list:
    """Symbolic gradients exist only in TF graphs; eager code (all code here) raises as TF 2 does."""
    raise RuntimeError("keras.backend.gradients (tf.gradients) builds graph gradients, which eager execution "
                       "does not have. Use tf.GradientTape instead.")
