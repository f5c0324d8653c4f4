"""tf.quantization's real quantisation: quantize / dequantize in TF's three modes (MIN_COMBINED, MIN_FIRST,
SCALED), quantize_and_dequantize(_v2) and quantized_concat, with TF's range adjustments and roundings.
TF's quantized dtypes (quint8, qint8, quint16, qint16, qint32) are held as the integer tensors of their range."""
from __future__ import annotations

import collections
from typing import Any, Optional, Sequence

import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.errors import InvalidArgumentError, UnimplementedError

QuantizeV2 = collections.namedtuple("QuantizeV2", ["output", "output_min", "output_max"])
QuantizedConcat = collections.namedtuple("QuantizedConcat", ["output", "output_min", "output_max"])

_QUANTIZED = {"quint8": torch.uint8, "qint8": torch.int8, "quint16": torch.uint16, "qint16": torch.int16,
              "qint32": torch.int32}
_STORAGE = {torch.uint8: "quint8", torch.int8: "qint8", torch.uint16: "quint16", torch.int16: "qint16",
            torch.int32: "qint32", torch.quint8: "quint8", torch.qint8: "qint8", torch.qint32: "qint32"}
_MODES = ("MIN_COMBINED", "MIN_FIRST", "SCALED")


def _quantized_type(T: Any, op: str) -> torch.dtype:  # noqa: N803 - TF's argument name
    """The integer dtype standing for TF's quantized type `T` (tf.quint8, 'qint8', torch.int8, ...)."""
    name = _STORAGE.get(T) if isinstance(T, torch.dtype) else str(getattr(T, "name", T)).replace("tf.", "")
    if name not in _QUANTIZED:
        raise InvalidArgumentError(None, None, f"{op}: T must be one of quint8, qint8, quint16, qint16, qint32; "
                                               f"got {T!r}.")
    return _QUANTIZED[name]


def _limits(dtype: torch.dtype) -> tuple:
    info = torch.iinfo(dtype)
    return float(info.min), float(info.max)


def _round_half_away(x: torch.Tensor) -> torch.Tensor:
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


def _mode(mode: str, op: str) -> str:
    if mode not in _MODES:
        raise InvalidArgumentError(None, None, f"{op}: Mode string must be 'MIN_COMBINED', 'MIN_FIRST', or 'SCALED', "
                                               f"is '{mode}'")
    return mode


def _scaled_factor(min_range: float, max_range: float, dtype: torch.dtype, narrow_range: bool) -> float:
    lowest, highest = _limits(dtype)
    min_out = lowest + (1 if narrow_range else 0)
    huge = float(torch.finfo(torch.float32).max)
    from_min = min_out / min_range if min_out * min_range > 0 else huge
    from_max = highest / max_range if highest * max_range > 0 else huge
    return _f32(min(_f32(from_min), _f32(from_max)))


def _f32(value: float) -> float:
    return float(torch.tensor(value, dtype=torch.float32))


def _quantize_slice(values: torch.Tensor, low: float, high: float, dtype: torch.dtype, mode: str, round_mode: str,
                    narrow_range: bool, ensure_minimum_range: float, op: str) -> tuple:
    if high < low:
        raise InvalidArgumentError(None, None, f"{op}: input_max_range must be larger than input_min_range.")
    min_range = _f32(min(0.0, low))
    epsilon = _f32(max(1.0, max(abs(low), abs(high))) * ensure_minimum_range)
    max_range = _f32(max(0.0, max(high, _f32(min_range + epsilon))))
    lowest, highest = _limits(dtype)
    clamped = values.clamp(min_range, max_range)
    if mode == "MIN_COMBINED":
        scale = _f32((highest - lowest) / _f32(max_range - min_range))
        if lowest < 0:
            half = (highest - lowest + 1) / 2.0
            out = _round_half_away((clamped - min_range) * scale - half)
        else:
            out = torch.floor((clamped - min_range) * scale + 0.5)
    elif mode == "MIN_FIRST" and dtype == torch.uint8:  # TF's quint8 kernel: MIN_COMBINED's rounding (TF 2.21)
        scale = _f32((highest - lowest) / _f32(max_range - min_range))
        out = torch.floor((clamped - min_range) * scale + 0.5)
    elif mode == "MIN_FIRST":
        steps = float(1 << (torch.iinfo(dtype).bits))
        range_scale = _f32(steps / ((max_range - min_range) * (steps / (steps - 1.0))))
        out = (_round_half_away(values * range_scale) - _round_half_away(torch.tensor(min_range * range_scale))
               + lowest).clamp(lowest, highest)
    else:
        scale = _scaled_factor(min_range, max_range, dtype, narrow_range)
        min_range, max_range = _f32(lowest + (1 if narrow_range else 0)) / scale, highest / scale
        min_range, max_range = _f32(min_range), _f32(max_range)
        scaled = values.clamp(min_range, max_range) * scale
        out = torch.round(scaled) if round_mode == "HALF_TO_EVEN" else _round_half_away(scaled)
    return out.to(torch.int64).to(dtype), min_range, max_range


def _per_axis(tensor: torch.Tensor, axis: Optional[int], ranges: Sequence[torch.Tensor], op: str) -> tuple:
    """(axis or None, [min list], [max list]) checked against `tensor`."""
    low, high = ranges
    if axis is None:
        if low.numel() != 1 or high.numel() != 1:
            raise InvalidArgumentError(None, None, f"{op}: min_range and max_range must be scalars without an axis.")
        return None, [float(low.reshape(()))], [float(high.reshape(()))]
    axis = int(axis) + tensor.dim() if int(axis) < 0 else int(axis)
    if not 0 <= axis < tensor.dim():
        raise InvalidArgumentError(None, None, f"{op}: axis {axis} is out of range for an input of rank {tensor.dim()}.")
    depth = int(tensor.shape[axis])
    if low.numel() != depth or high.numel() != depth:
        raise InvalidArgumentError(None, None, f"{op}: min_range and max_range need {depth} values (the size of axis "
                                               f"{axis}); got {low.numel()} and {high.numel()}.")
    return axis, low.reshape(-1).tolist(), high.reshape(-1).tolist()


def quantize(input: Any, min_range: Any, max_range: Any, T: Any, mode: str = "MIN_COMBINED",  # noqa: A002,N803
             round_mode: str = "HALF_AWAY_FROM_ZERO", name: Optional[str] = None, narrow_range: bool = False,
             axis: Optional[int] = None, ensure_minimum_range: float = 0.01) -> QuantizeV2:
    """Quantises float `input` over [min_range, max_range] to the integer type T; returns (output, output_min,
    output_max), the range TF actually used (widened to include 0, and to at least `ensure_minimum_range`)."""
    op = "tf.quantization.quantize"
    mode = _mode(mode, op)
    if round_mode not in ("HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN"):
        raise InvalidArgumentError(None, None, f"{op}: Round mode string must be 'HALF_AWAY_FROM_ZERO' or "
                                               f"'HALF_TO_EVEN', is '{round_mode}'")
    if round_mode == "HALF_TO_EVEN" and mode != "SCALED":
        raise InvalidArgumentError(None, None, f"{op}: Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED', "
                                               f"but mode is '{mode}'.")
    dtype = _quantized_type(T, op)
    tensor = to_tensor(input, torch.float32, op=op).to(torch.float32)
    ranges = [to_tensor(v, torch.float32, op=op).to(torch.float32) for v in (min_range, max_range)]
    axis, lows, highs = _per_axis(tensor, axis, ranges, op)
    if axis is None:
        out, low, high = _quantize_slice(tensor, lows[0], highs[0], dtype, mode, round_mode, narrow_range,
                                         ensure_minimum_range, op)
        return QuantizeV2(out, torch.tensor(low), torch.tensor(high))
    if mode == "MIN_FIRST":
        raise UnimplementedError(None, None, "MIN_FIRST mode is not implemented for Quantize with axis != -1.")
    pieces, out_lows, out_highs = [], [], []
    for index, (low, high) in enumerate(zip(lows, highs)):
        piece, low, high = _quantize_slice(tensor.select(axis, index), low, high, dtype, mode, round_mode,
                                           narrow_range, ensure_minimum_range, op)
        pieces.append(piece)
        out_lows.append(low)
        out_highs.append(high)
    return QuantizeV2(torch.stack(pieces, dim=axis), torch.tensor(out_lows), torch.tensor(out_highs))


def _dequantize_slice(values: torch.Tensor, low: float, high: float, source: torch.dtype, mode: str,
                      narrow_range: bool) -> torch.Tensor:
    lowest, highest = _limits(source)
    if mode == "MIN_COMBINED":
        scale = _f32(_f32(high - low) / _f32(highest - lowest))
        half = (highest - lowest + 1) / 2.0 if lowest < 0 else 0.0
        return (values.to(torch.float32) + half) * scale + low
    if mode == "MIN_FIRST":
        return _to_float(values, low, high)
    min_out = lowest + (1 if narrow_range else 0)
    scale = _f32(max(low / min_out, high / highest)) if lowest < 0 else _f32(high / highest)
    return values.to(torch.float32) * scale


def dequantize(input: Any, min_range: Any, max_range: Any, mode: str = "MIN_COMBINED",  # noqa: A002
               name: Optional[str] = None, axis: Optional[int] = None, narrow_range: bool = False,
               dtype: Any = torch.float32) -> torch.Tensor:
    """Maps quantised integers (of a quint8/qint8/... range) back to floats over [min_range, max_range], as the
    mode quantised them; `dtype` float32 (TF's default) or bfloat16."""
    op = "tf.quantization.dequantize"
    mode = _mode(mode, op)
    tensor = input if isinstance(input, torch.Tensor) else torch.as_tensor(input)
    if tensor.dtype not in _STORAGE or tensor.dtype.is_floating_point:
        raise InvalidArgumentError(None, None, f"{op}: input must hold quantised integers (uint8, int8, uint16, "
                                               f"int16 or int32 for quint8 ... qint32); got {tensor.dtype}.")
    from torchstrategy.dtypes import as_dtype

    out_dtype = as_dtype(dtype)
    if out_dtype not in (torch.float32, torch.bfloat16):
        raise InvalidArgumentError(None, None, f"{op}: dtype must be float32 or bfloat16; got {dtype!r}.")
    ranges = [to_tensor(v, torch.float32, op=op).to(torch.float32) for v in (min_range, max_range)]
    axis, lows, highs = _per_axis(tensor, axis, ranges, op)
    if axis is None:
        return _dequantize_slice(tensor, lows[0], highs[0], tensor.dtype, mode, narrow_range).to(out_dtype)
    if mode == "MIN_FIRST":
        raise UnimplementedError(None, None, "MIN_FIRST mode is not implemented for Dequantize with axis != -1.")
    pieces = [_dequantize_slice(tensor.select(axis, i), low, high, tensor.dtype, mode, narrow_range)
              for i, (low, high) in enumerate(zip(lows, highs))]
    return torch.stack(pieces, dim=axis).to(out_dtype)


# ----- quantize and dequantize in one (simulated quantisation) --------------------------------------------
def _qdq_slice(values: torch.Tensor, low: float, high: float, signed_input: bool, num_bits: int,
               round_mode: str, narrow_range: bool) -> tuple:
    if signed_input:
        min_q = float(-(1 << (num_bits - 1)) + (1 if narrow_range else 0))
        max_q = float((1 << (num_bits - 1)) - 1)
    else:
        min_q, max_q = 0.0, float((1 << num_bits) - 1)
    huge = float(torch.finfo(torch.float32).max)
    from_min = _f32(min_q / low) if min_q * low > 0 else huge
    from_max = _f32(max_q / high) if max_q * high > 0 else huge
    if from_min < from_max:
        scale, inverse = from_min, _f32(low / min_q)
        high = _f32(max_q * inverse)
    else:
        scale, inverse = from_max, _f32(high / max_q)
        low = _f32(min_q * inverse)
    scaled = values.clamp(low, high) * scale
    rounded = torch.round(scaled) if round_mode == "HALF_TO_EVEN" else torch.floor(scaled + 0.5)
    return rounded * inverse, low, high


def quantize_and_dequantize_v2(input: Any, input_min: Any, input_max: Any, signed_input: bool = True,  # noqa: A002
                               num_bits: int = 8, range_given: bool = False, round_mode: str = "HALF_TO_EVEN",
                               name: Optional[str] = None, narrow_range: bool = False,
                               axis: Optional[int] = None) -> torch.Tensor:
    """Quantises `input` to `num_bits` and back (simulated quantisation): the range is [input_min, input_max]
    when `range_given`, else the input's own min and max, scaled so that 0.0 stays exact. As in TF 2.21's eager
    tape, no gradient flows through it (use fake_quant_with_min_max_vars for quantization-aware training)."""
    op = "tf.quantization.quantize_and_dequantize_v2"
    if round_mode not in ("HALF_TO_EVEN", "HALF_UP"):
        raise InvalidArgumentError(None, None, f"{op}: round_mode must be 'HALF_TO_EVEN' or 'HALF_UP'; got "
                                               f"{round_mode!r}.")
    if not 0 < int(num_bits) <= (62 if signed_input else 63):
        raise InvalidArgumentError(None, None, f"{op}: num_bits is out of range: {num_bits} with signed_input "
                                               f"{signed_input}")
    tensor = to_tensor(input, torch.float32, op=op)
    if not tensor.dtype.is_floating_point:
        raise InvalidArgumentError(None, None, f"{op}: input must be a float tensor; got {tensor.dtype}.")
    work = tensor.detach().to(torch.float32)
    if axis is None:
        if range_given:
            low, high = float(to_tensor(input_min, torch.float32, op=op)), float(to_tensor(input_max, torch.float32,
                                                                                          op=op))
            if low > high:
                raise InvalidArgumentError(None, None, f"{op}: Invalid range: input_min {low:g} > input_max {high:g}")
        else:
            low, high = float(work.min()), float(work.max())
        result = _qdq_slice(work, low, high, signed_input, int(num_bits), round_mode, narrow_range)[0]
    else:
        axis = int(axis) + work.dim() if int(axis) < 0 else int(axis)
        depth = int(work.shape[axis])
        moved = work.movedim(axis, 0).reshape(depth, -1)
        if range_given:
            given = [to_tensor(v, torch.float32, op=op).reshape(-1).tolist() for v in (input_min, input_max)]
            if len(given[0]) != depth or len(given[1]) != depth:
                raise InvalidArgumentError(None, None, f"{op}: input_min and input_max need {depth} values (axis "
                                                       f"{axis}).")
            ranges = list(zip(*given))
        else:
            ranges = list(zip(moved.min(dim=1).values.tolist(), moved.max(dim=1).values.tolist()))
        pieces = [_qdq_slice(row, low, high, signed_input, int(num_bits), round_mode, narrow_range)[0]
                  for row, (low, high) in zip(moved, ranges)]
        shape = (depth,) + tuple(work.movedim(axis, 0).shape[1:])
        result = torch.stack(pieces).reshape(shape).movedim(0, axis)
    return result.to(tensor.dtype)  # TF 2.21's tape gives no gradient through it (None), nor does this


def quantize_and_dequantize(input: Any, input_min: Any, input_max: Any, signed_input: bool = True,  # noqa: A002
                            num_bits: int = 8, range_given: bool = False, round_mode: str = "HALF_TO_EVEN",
                            name: Optional[str] = None, narrow_range: bool = False,
                            axis: Optional[int] = None) -> torch.Tensor:
    """TF's older name of quantize_and_dequantize_v2 (the same forward and gradient)."""
    return quantize_and_dequantize_v2(input, input_min, input_max, signed_input, num_bits, range_given, round_mode,
                                      name, narrow_range, axis)


# ----- quantized_concat -----------------------------------------------------------------------------------
def _to_float(values: torch.Tensor, low: float, high: float) -> torch.Tensor:
    """TF's MIN_FIRST dequantisation in float32: the range's minimum rounded onto the grid, plus the steps."""
    lowest, _ = _limits(values.dtype)
    steps = float(1 << torch.iinfo(values.dtype).bits)
    range_scale = _f32((high - low) / (steps - 1.0))
    rounded_min = low if high == low else _f32(float(_round_half_away(torch.tensor(low / range_scale))) * range_scale)
    offset = torch.tensor(rounded_min, dtype=torch.float32) - torch.tensor(lowest * range_scale, dtype=torch.float32)
    return offset + values.to(torch.float32) * torch.tensor(range_scale, dtype=torch.float32)


def _from_float(values: torch.Tensor, low: float, high: float, dtype: torch.dtype) -> torch.Tensor:
    """TF's MIN_FIRST quantisation in float32 (rounded steps from the range's rounded minimum), clamped."""
    lowest, highest = _limits(dtype)
    steps = float(1 << torch.iinfo(dtype).bits)
    range_scale = 0.0 if high == low else _f32((steps - 1.0) / (high - low))
    min_scaled = float(_round_half_away(torch.tensor(low * range_scale)))
    quantized = _round_half_away(values.to(torch.float32) * range_scale) - torch.tensor(min_scaled - lowest)
    bounds = (max(lowest, -2.147483648e9), min(highest, 2.147483520e9))
    return quantized.clamp(*bounds).to(torch.int64).to(torch.int32).to(dtype)


def quantized_concat(concat_dim: Any, values: Sequence[Any], input_mins: Sequence[Any], input_maxes: Sequence[Any],
                     name: Optional[str] = None) -> QuantizedConcat:
    """Concatenates quantised tensors along `concat_dim`, each requantised from its own [min, max] to the
    joint range (the least min, the greatest max); returns (output, output_min, output_max)."""
    op = "tf.quantization.quantized_concat"
    tensors = [v if isinstance(v, torch.Tensor) else torch.as_tensor(v) for v in values]
    if not tensors or len(input_mins) != len(tensors) or len(input_maxes) != len(tensors):
        raise InvalidArgumentError(None, None, f"{op}: values, input_mins and input_maxes need one entry per input; "
                                               f"got {len(tensors)}, {len(input_mins)} and {len(input_maxes)}.")
    dtype = tensors[0].dtype
    if dtype not in _STORAGE or any(t.dtype != dtype for t in tensors):
        raise InvalidArgumentError(None, None, f"{op}: every value must hold quantised integers of one type; got "
                                               f"{[str(t.dtype) for t in tensors]}.")
    lows = [float(to_tensor(v, torch.float32, op=op)) for v in input_mins]
    highs = [float(to_tensor(v, torch.float32, op=op)) for v in input_maxes]
    out_low, out_high = min(0.0, min(lows)), max(highs)  # TF: the joint range includes 0 ...
    if torch.iinfo(dtype).min < 0:  # ... and is symmetric for signed types
        out_low, out_high = -max(abs(out_low), abs(out_high)), max(abs(out_low), abs(out_high))
    dim = int(to_tensor(concat_dim, torch.int32, op=op))
    pieces = [t if (low == out_low and high == out_high) else _from_float(_to_float(t, low, high), out_low, out_high,
                                                                          dtype)
              for t, low, high in zip(tensors, lows, highs)]
    return QuantizedConcat(torch.cat(pieces, dim=dim), torch.tensor(out_low), torch.tensor(out_high))
