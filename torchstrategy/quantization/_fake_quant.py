"""tf.quantization's fake-quantisation ops and their gradients, computed as TF's kernels compute them (float32
nudging of the range so that 0.0 is exact, a straight-through gradient inside it)."""
from __future__ import annotations

import collections
from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.errors import InvalidArgumentError

FakeQuantWithMinMaxVarsGradient = collections.namedtuple(
    "FakeQuantWithMinMaxVarsGradient", ["backprops_wrt_input", "backprop_wrt_min", "backprop_wrt_max"])
FakeQuantWithMinMaxVarsPerChannelGradient = collections.namedtuple(
    "FakeQuantWithMinMaxVarsPerChannelGradient", ["backprops_wrt_input", "backprop_wrt_min", "backprop_wrt_max"])


def _check_bits(num_bits: int, op: str) -> None:
    if not 2 <= int(num_bits) <= 16:
        raise InvalidArgumentError(None, None, f"{op}: num_bits must be between 2 and 16, inclusive; got {num_bits}.")


def _grid(min_value: torch.Tensor, max_value: torch.Tensor, num_bits: int, narrow_range: bool) -> tuple:
    """TF's Nudge in float32: (nudged_min, nudged_max, scale, zero_point - quant_min), with the zero point
    moved onto the integer grid so that 0.0 is exact."""
    quant_min = torch.tensor(1.0 if narrow_range else 0.0)
    quant_max = torch.tensor(float((1 << int(num_bits)) - 1))
    min_value, max_value = min_value.to(torch.float32), max_value.to(torch.float32)
    scale = (max_value - min_value) / (quant_max - quant_min)
    zero_point_from_min = quant_min - min_value / scale
    rounded = torch.sign(zero_point_from_min) * torch.floor(torch.abs(zero_point_from_min) + 0.5)  # std::round
    zero_point = torch.where(zero_point_from_min < quant_min, quant_min,
                             torch.where(zero_point_from_min > quant_max, quant_max, rounded))
    return (quant_min - zero_point) * scale, (quant_max - zero_point) * scale, scale, zero_point - quant_min


def _nudge(min_value: torch.Tensor, max_value: torch.Tensor, num_bits: int, narrow_range: bool) -> tuple:
    """(nudged_min, nudged_max, scale) of the range, as TF nudges it."""
    return _grid(min_value, max_value, num_bits, narrow_range)[:3]


def _fake_quant(inputs: torch.Tensor, min_value: torch.Tensor, max_value: torch.Tensor, num_bits: int,
                narrow_range: bool) -> torch.Tensor:
    nudged_min, nudged_max, scale, offset = _grid(min_value, max_value, num_bits, narrow_range)
    clamped = torch.minimum(torch.maximum(inputs, nudged_min), nudged_max)
    steps = torch.floor((clamped - nudged_min) * (1.0 / scale) + 0.5)
    return (steps - offset) * scale  # the grid point relative to the zero point: 0.0 stays exactly 0.0


def _float_input(value: Any, op: str) -> torch.Tensor:
    tensor = to_tensor(value, torch.float32, op=op)
    if tensor.dtype != torch.float32:
        raise InvalidArgumentError(None, None, f"{op}: inputs must be float32; got {tensor.dtype}.")
    return tensor


def _in_range_mask(inputs: torch.Tensor, min_value: torch.Tensor, max_value: torch.Tensor, num_bits: int,
                   narrow_range: bool) -> tuple:
    nudged_min, nudged_max, _ = _nudge(min_value, max_value, num_bits, narrow_range)
    below, above = inputs < nudged_min, inputs > nudged_max
    return below, above, ~(below | above)


class _FakeQuant(torch.autograd.Function):
    """Fake quantisation with TF's straight-through gradient (zero outside [nudged_min, nudged_max]); min and
    max (vars versions) get the gradients of the inputs clipped below / above."""

    @staticmethod
    def forward(ctx: Any, inputs: torch.Tensor, min_value: torch.Tensor, max_value: torch.Tensor, num_bits: int,
                narrow_range: bool, reduce_dims: Any) -> torch.Tensor:  # type: ignore[override]
        ctx.save_for_backward(inputs, min_value, max_value)
        ctx.num_bits, ctx.narrow_range, ctx.reduce_dims = num_bits, narrow_range, reduce_dims
        return _fake_quant(inputs, min_value, max_value, num_bits, narrow_range)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple:  # type: ignore[override]
        inputs, min_value, max_value = ctx.saved_tensors
        below, above, inside = _in_range_mask(inputs, min_value, max_value, ctx.num_bits, ctx.narrow_range)
        zero = torch.zeros_like(grad)
        grad_min = torch.where(below, grad, zero).sum(dim=ctx.reduce_dims).reshape(min_value.shape)
        grad_max = torch.where(above, grad, zero).sum(dim=ctx.reduce_dims).reshape(max_value.shape)
        return torch.where(inside, grad, zero), grad_min, grad_max, None, None, None


def fake_quant_with_min_max_args(inputs: Any, min: float = -6, max: float = 6, num_bits: int = 8,  # noqa: A002
                                 narrow_range: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """Quantises float `inputs` to `num_bits` over [min, max] (nudged so that 0.0 is exact) and back to float;
    its gradient passes where inputs lie inside the range."""
    op = "tf.quantization.fake_quant_with_min_max_args"
    _check_bits(num_bits, op)
    if not min < max:
        raise InvalidArgumentError(None, None, f"{op}: min has to be smaller than max, was: {min} >= {max}")
    tensor = _float_input(inputs, op)
    low, high = torch.tensor(float(min), dtype=torch.float32), torch.tensor(float(max), dtype=torch.float32)
    return _FakeQuant.apply(tensor, low, high, int(num_bits), bool(narrow_range), tuple(range(tensor.dim())))


def fake_quant_with_min_max_args_gradient(gradients: Any, inputs: Any, min: float = -6, max: float = 6,  # noqa: A002
                                          num_bits: int = 8, narrow_range: bool = False,
                                          name: Optional[str] = None) -> torch.Tensor:
    """The gradient of fake_quant_with_min_max_args: `gradients` where inputs lie inside the nudged range, else 0."""
    op = "tf.quantization.fake_quant_with_min_max_args_gradient"
    _check_bits(num_bits, op)
    if not min < max:
        raise InvalidArgumentError(None, None, f"{op}: min has to be smaller than max, was: {min} >= {max}")
    grads, tensor = _float_input(gradients, op), _float_input(inputs, op)
    low, high = torch.tensor(float(min), dtype=torch.float32), torch.tensor(float(max), dtype=torch.float32)
    _, _, inside = _in_range_mask(tensor, low, high, int(num_bits), bool(narrow_range))
    return torch.where(inside, grads, torch.zeros_like(grads))


def _vars(min: Any, max: Any, op: str, channels: Optional[int]) -> tuple:  # noqa: A002
    low, high = _float_input(min, op), _float_input(max, op)
    if channels is None:
        if low.dim() or high.dim():
            raise InvalidArgumentError(None, None, f"{op}: min and max must be scalars; got shapes "
                                                   f"{list(low.shape)} and {list(high.shape)}.")
    elif list(low.shape) != [channels] or list(high.shape) != [channels]:
        raise InvalidArgumentError(None, None, f"{op}: min and max must be vectors of the inputs' last dimension "
                                               f"({channels}); got shapes {list(low.shape)} and {list(high.shape)}.")
    return low, high


def fake_quant_with_min_max_vars(inputs: Any, min: Any, max: Any, num_bits: int = 8,  # noqa: A002
                                 narrow_range: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """As fake_quant_with_min_max_args with a range held in scalar tensors (variables), which get gradients too."""
    op = "tf.quantization.fake_quant_with_min_max_vars"
    _check_bits(num_bits, op)
    tensor = _float_input(inputs, op)
    low, high = _vars(min, max, op, None)
    return _FakeQuant.apply(tensor, low, high, int(num_bits), bool(narrow_range), tuple(range(tensor.dim())))


def fake_quant_with_min_max_vars_per_channel(inputs: Any, min: Any, max: Any, num_bits: int = 8,  # noqa: A002
                                             narrow_range: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """As fake_quant_with_min_max_vars with one range per channel (the last dimension of `inputs`)."""
    op = "tf.quantization.fake_quant_with_min_max_vars_per_channel"
    _check_bits(num_bits, op)
    tensor = _float_input(inputs, op)
    if tensor.dim() == 0:
        raise InvalidArgumentError(None, None, f"{op}: inputs must have at least one dimension (the channels).")
    low, high = _vars(min, max, op, int(tensor.shape[-1]))
    return _FakeQuant.apply(tensor, low, high, int(num_bits), bool(narrow_range), tuple(range(tensor.dim() - 1)))


def _vars_gradient(gradients: Any, inputs: Any, min: Any, max: Any, num_bits: int, narrow_range: bool,  # noqa: A002
                   op: str, per_channel: bool) -> tuple:
    _check_bits(num_bits, op)
    grads, tensor = _float_input(gradients, op), _float_input(inputs, op)
    if grads.shape != tensor.shape:
        raise InvalidArgumentError(None, None, f"{op}: gradients and inputs must have one shape; got "
                                               f"{list(grads.shape)} and {list(tensor.shape)}.")
    low, high = _vars(min, max, op, int(tensor.shape[-1]) if per_channel else None)
    below, above, inside = _in_range_mask(tensor, low, high, int(num_bits), bool(narrow_range))
    dims = tuple(range(tensor.dim() - 1)) if per_channel else tuple(range(tensor.dim()))
    zero = torch.zeros_like(grads)
    return (torch.where(inside, grads, zero), torch.where(below, grads, zero).sum(dim=dims).reshape(low.shape),
            torch.where(above, grads, zero).sum(dim=dims).reshape(high.shape))


def fake_quant_with_min_max_vars_gradient(gradients: Any, inputs: Any, min: Any, max: Any,  # noqa: A002
                                          num_bits: int = 8, narrow_range: bool = False,
                                          name: Optional[str] = None) -> FakeQuantWithMinMaxVarsGradient:
    """(backprops_wrt_input, backprop_wrt_min, backprop_wrt_max) of fake_quant_with_min_max_vars."""
    return FakeQuantWithMinMaxVarsGradient(*_vars_gradient(
        gradients, inputs, min, max, num_bits, narrow_range, "tf.quantization.fake_quant_with_min_max_vars_gradient",
        False))


def fake_quant_with_min_max_vars_per_channel_gradient(gradients: Any, inputs: Any, min: Any, max: Any,  # noqa: A002
                                                      num_bits: int = 8, narrow_range: bool = False,
                                                      name: Optional[str] = None
                                                      ) -> FakeQuantWithMinMaxVarsPerChannelGradient:
    """(backprops_wrt_input, backprop_wrt_min, backprop_wrt_max) of the per-channel op (one min/max per channel)."""
    return FakeQuantWithMinMaxVarsPerChannelGradient(*_vars_gradient(
        gradients, inputs, min, max, num_bits, narrow_range,
        "tf.quantization.fake_quant_with_min_max_vars_per_channel_gradient", True))
