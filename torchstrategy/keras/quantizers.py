"""`keras.quantizers`: Keras 3.15's quantizer objects and functions (abs-max int8, grouped int4 with zero
point, int4 packing, float8 scaling, fake quantization) and the quantization configs, on torch tensors."""
from __future__ import annotations

import inspect
import math
from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.keras import serialization_lib
from torchstrategy.keras.ops import convert_to_tensor

_EPSILON = 1e-7  # keras.backend.epsilon() when Keras defines these defaults


def _dtype_name(x: Any) -> str:
    return str(x.dtype).replace("torch.", "") if isinstance(x, torch.Tensor) else str(np.asarray(x).dtype)


def _axes(axis: Any, ndim: int) -> tuple:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % ndim if ndim else a for a in axes)


class Quantizer:
    """Base class of quantizers: `__call__(x)` returns the quantized form of `x` (here `x` itself)."""

    def __init__(self, output_dtype: str = "int8") -> None:
        self.output_dtype = output_dtype

    def __call__(self, x: Any) -> Any:
        """The quantized form of `x`; the base class returns `x` unchanged."""
        return x

    @classmethod
    def from_config(cls, config: dict) -> "Quantizer":
        """A quantizer built from `get_config()`'s dictionary."""
        return cls(**config)

    def get_config(self) -> dict:
        """The constructor arguments as a dictionary; subclasses must define it."""
        raise NotImplementedError(f"{self} does not implement get_config()")


def abs_max_quantize(inputs: Any, axis: Any, value_range: Sequence = (-127, 127), dtype: str = "int8",
                     epsilon: float = _EPSILON, to_numpy: bool = False) -> tuple:
    """(quantized, scale): `scale = value_range[1] / (max|inputs| over axis + epsilon)` (kept dims),
    quantized = clip(round(inputs * scale), *value_range) cast to `dtype`. `to_numpy` computes on the host."""
    x = convert_to_tensor(inputs)
    original = x.dtype
    if to_numpy:
        array = x.detach().cpu().numpy()
        axes = _axes(axis, array.ndim)
        scale = np.divide(value_range[1], np.add(np.max(np.abs(array), axis=axes, keepdims=True), epsilon))
        out = np.clip(np.round(np.multiply(array, scale)), value_range[0], value_range[1]).astype(dtype)
        return torch.from_numpy(np.ascontiguousarray(out)), torch.from_numpy(np.asarray(scale)).to(original)
    axes = _axes(axis, x.ndim)
    amax = torch.amax(torch.abs(x), dim=axes, keepdim=True)
    scale = (value_range[1] / (amax + epsilon)).to(original)
    out = torch.clamp(torch.round(x * scale), value_range[0], value_range[1]).to(as_dtype(dtype))
    return out, scale


def abs_max_quantize_grouped_with_zero_point(inputs: Any, block_size: int, value_range: Sequence = (-8, 7),
                                             dtype: str = "int8", epsilon: float = _EPSILON,
                                             to_numpy: bool = False) -> tuple:
    """(quantized, scale, zero_point) of a 2-D `(input_dim, output_dim)` tensor quantized asymmetrically in
    groups of `block_size` rows: scale and zero_point have shape `(ceil(input_dim / block_size), output_dim)`."""
    x = convert_to_tensor(inputs)
    if x.ndim != 2:
        raise ValueError(f"abs_max_quantize_grouped_with_zero_point expects a 2-D (input_dim, output_dim) tensor; "
                         f"got shape {tuple(x.shape)}.")
    original = x.dtype
    input_dim, output_dim = x.shape
    qmin, qmax = value_range
    groups = math.ceil(input_dim / block_size)
    padded = torch.cat([x, x.new_zeros(groups * block_size - input_dim, output_dim)]) if \
        groups * block_size > input_dim else x
    blocks = padded.reshape(groups, block_size, output_dim)
    low, high = blocks.amin(dim=1), blocks.amax(dim=1)
    if to_numpy:
        scale = (high - low + epsilon) / (qmax - qmin)
        zero = torch.clamp(torch.round(-low / scale) + qmin, qmin, qmax)
        zero_dtype = torch.int8
    else:  # Keras's tensor path: compute_quantization_parameters(signed=True) on the transposed kernel
        if groups == 1:  # one group: its range is taken before any padding
            low, high = x.amin(dim=0, keepdim=True), x.amax(dim=0, keepdim=True)
        bits = int(math.log2(qmax - qmin + 1))
        same = low == high
        low, high = torch.where(same, low - 1, low), torch.where(same, high + 1, high)
        maxq = float(2 ** bits - 1)
        span = high - low
        if epsilon > 0:
            span = span + epsilon
        scale = span / maxq
        scale = torch.where(scale <= 0, torch.full_like(scale, 1e-8), scale)
        zero = torch.clamp(torch.round(-low / scale) - 2 ** (bits - 1), -(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        zero_dtype = torch.int8
    q = torch.clamp(torch.round(blocks / scale[:, None, :]) + zero[:, None, :], qmin, qmax)
    q = q.to(as_dtype(dtype)).reshape(groups * block_size, output_dim)[:input_dim]
    return q, scale.to(original), zero.to(zero_dtype)


class AbsMaxQuantizer(Quantizer):
    """Abs-max quantizer: `__call__(x, axis=None, to_numpy=False)` returns `abs_max_quantize`'s
    (quantized, scale) along `axis` (the constructor's, else -1)."""

    def __init__(self, axis: Any = None, value_range: Sequence = (-127, 127), epsilon: float = _EPSILON,
                 output_dtype: str = "int8") -> None:
        Quantizer.__init__(self, output_dtype=output_dtype)
        self.axis = None if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
        self.value_range = value_range
        self.epsilon = epsilon
        if output_dtype == "int8" and (value_range[0] < -128 or value_range[1] > 127):
            raise ValueError(f"Quantizer with output_dtype='int8' requires value_range to be within the interval "
                             f"[-128, 127]. Received: value_range={value_range}")

    def __call__(self, x: Any, axis: Any = None, to_numpy: bool = False) -> tuple:
        """(quantized, scale) of `x` along `axis`."""
        axis = self.axis if axis is None else axis
        return abs_max_quantize(x, -1 if axis is None else axis, self.value_range, self.output_dtype,
                                self.epsilon, to_numpy)

    def get_config(self) -> dict:
        config = {"value_range": self.value_range, "epsilon": self.epsilon, "output_dtype": self.output_dtype}
        if self.axis is not None:
            config["axis"] = self.axis
        return config


class _FakeQuant(torch.autograd.Function):
    """TF's FakeQuantWithMinMaxVars(PerChannel) kernel and gradient, channels on the last axis."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, low: torch.Tensor, high: torch.Tensor, num_bits: int,
                narrow_range: bool) -> torch.Tensor:
        quant_min, quant_max = (1 if narrow_range else 0), (1 << num_bits) - 1
        scale = (high - low) / (quant_max - quant_min)
        zero_from_min = quant_min - low / scale
        nudged_zero = torch.where(zero_from_min < quant_min, torch.full_like(zero_from_min, quant_min),
                                  torch.where(zero_from_min > quant_max, torch.full_like(zero_from_min, quant_max),
                                              torch.sign(zero_from_min) * torch.floor(zero_from_min.abs() + 0.5)))
        nudged_min, nudged_max = (quant_min - nudged_zero) * scale, (quant_max - nudged_zero) * scale
        clamped = torch.minimum(torch.maximum(x, nudged_min), nudged_max)
        out = torch.floor((clamped - nudged_min) * (1.0 / scale) + 0.5) * scale + nudged_min
        ctx.save_for_backward(x, nudged_min, nudged_max)
        ctx.shapes = (low.shape, high.shape)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple:
        x, nudged_min, nudged_max = ctx.saved_tensors
        below, above = x < nudged_min, x > nudged_max
        zero = torch.zeros_like(grad)
        dx = torch.where(below | above, zero, grad)
        reduce = tuple(range(x.ndim - 1)) if len(ctx.shapes[0]) else tuple(range(x.ndim))
        d_low = torch.where(below, grad, zero).sum(dim=reduce).reshape(ctx.shapes[0])
        d_high = torch.where(above, grad, zero).sum(dim=reduce).reshape(ctx.shapes[1])
        return dx, d_low, d_high, None, None


def fake_quant_with_min_max_vars(inputs: Any, min_vals: Any, max_vals: Any, num_bits: int = 8,
                                 narrow_range: bool = False, axis: Optional[int] = None) -> torch.Tensor:
    """Quantizes `inputs` to `num_bits` levels in the nudged `[min_vals, max_vals]` range and back to float
    (per tensor, or per channel along `axis`); differentiable in `inputs`, `min_vals` and `max_vals`."""
    x = convert_to_tensor(inputs)
    dtype = x.dtype
    low = convert_to_tensor(min_vals).to(torch.float32)
    high = convert_to_tensor(max_vals).to(torch.float32)
    x32 = x.to(torch.float32)
    if axis is None:
        out = _FakeQuant.apply(x32, low.reshape(()), high.reshape(()), int(num_bits), bool(narrow_range))
        return out.to(dtype)
    axis = axis % x.ndim
    moved = x32.transpose(axis, -1)
    out = _FakeQuant.apply(moved, low, high, int(num_bits), bool(narrow_range))
    return out.transpose(axis, -1).to(dtype)


def compute_float8_scale(amax: Any, scale: Any, dtype_max: Any, margin: int = 0) -> torch.Tensor:
    """The new float8 scale from the amax: `1 / (dtype_max / amax / 2**margin)`, the old scale kept where
    amax is not positive or not finite."""
    amax, scale = convert_to_tensor(amax), convert_to_tensor(scale)
    inverse = torch.reciprocal(scale)
    factor = torch.as_tensor(dtype_max, dtype=amax.dtype) / amax / (2 ** margin)
    factor = torch.where(amax > 0.0, factor, inverse)
    factor = torch.where(torch.isfinite(amax), factor, inverse)
    return torch.reciprocal(factor)


def compute_float8_amax_history(x: Any, amax_history: Any) -> torch.Tensor:
    """`amax_history` rolled one step back with max|x| written at index 0."""
    history = convert_to_tensor(amax_history)
    rolled = torch.roll(history, shifts=-1, dims=0).clone()
    rolled[0] = torch.amax(torch.abs(convert_to_tensor(x))).to(history.dtype)
    return rolled


_FLOAT8_MAX = {"float8_e4m3fn": 448.0, "float8_e5m2": 57344.0, "float8_e4m3fnuz": 240.0,
               "float8_e5m2fnuz": 57344.0}


def quantize_and_dequantize(inputs: Any, scale: Any, quantized_dtype: str, compute_dtype: str) -> torch.Tensor:
    """`inputs / scale` clipped to `quantized_dtype`'s range, cast to it (a float8 type) and back, times
    `scale`, in `compute_dtype`."""
    if quantized_dtype not in _FLOAT8_MAX:
        raise ValueError(f"quantize_and_dequantize needs a float8 quantized_dtype ({sorted(_FLOAT8_MAX)}); "
                         f"got {quantized_dtype!r}.")
    compute = as_dtype(compute_dtype)
    top = torch.tensor(_FLOAT8_MAX[quantized_dtype], dtype=compute)
    scale = convert_to_tensor(scale).to(compute)
    x = torch.clamp(convert_to_tensor(inputs).to(compute) / scale, -top, top)
    return x.to(as_dtype(quantized_dtype)).to(compute) * scale


def pack_int4(arr: Any, axis: int = 0, dtype: str = "int8") -> tuple:
    """(packed, packed_shape, orig_len): pairs along `axis` packed into one byte each (first value in the
    low nibble, second in the high one), an odd length padded with a zero."""
    if dtype not in ("int8", "uint8"):
        raise ValueError(f"Expected dtype to be 'int8' or 'uint8', but got '{dtype}'.")
    if _dtype_name(arr) != dtype:
        raise TypeError(f"Expected {dtype} tensor for packing, got {_dtype_name(arr)}.")
    array = arr.detach().cpu().numpy() if isinstance(arr, torch.Tensor) else np.asarray(arr)
    axis = axis + array.ndim if axis < 0 else axis
    front = np.moveaxis(array, axis, 0)
    length = front.shape[0]
    if length % 2:
        front = np.concatenate([front, np.zeros((1,) + front.shape[1:], dtype=front.dtype)])
    mask = np.array(0x0F, dtype=dtype)
    packed = np.bitwise_or(np.bitwise_and(front[::2], mask),
                           np.left_shift(np.bitwise_and(front[1::2], mask), np.array(4, dtype=dtype))).astype(dtype)
    packed = np.ascontiguousarray(np.moveaxis(packed, 0, axis))
    return torch.from_numpy(packed), tuple(packed.shape), length


def unpack_int4(packed: Any, orig_len: int, axis: int = 0, dtype: str = "int8") -> torch.Tensor:
    """The inverse of `pack_int4`: each byte's low then high nibble along `axis` (signed [-8, 7] for int8),
    cut back to `orig_len`."""
    if dtype not in ("int8", "uint8"):
        raise ValueError(f"Expected dtype to be 'int8' or 'uint8', but got '{dtype}'.")
    if _dtype_name(packed) not in ("int8", "uint8"):
        raise TypeError(f"Expected int8 or uint8 tensor for unpacking, got {_dtype_name(packed)}")
    t = convert_to_tensor(packed)
    axis = axis + t.ndim if axis < 0 else axis
    front = t.movedim(axis, 0).to(torch.int16)
    low, high = front & 0x0F, (front >> 4) & 0x0F
    if dtype == "int8":
        low, high = (low ^ 8) - 8, (high ^ 8) - 8
    both = torch.stack([low, high], dim=1).reshape((-1,) + tuple(front.shape[1:]))[:orig_len]
    return both.to(as_dtype(dtype)).movedim(0, axis)


class QuantizationConfig:
    """Base class of quantization configs: a weight quantizer, an activation quantizer and the `mode` a
    subclass names."""

    def __init__(self, weight_quantizer: Any = None, activation_quantizer: Any = None) -> None:
        self.weight_quantizer = weight_quantizer
        self.activation_quantizer = activation_quantizer

    @property
    def mode(self) -> str:
        raise NotImplementedError("Subclasses must implement this property. Do not instantiate "
                                  "QuantizationConfig directly.")

    def get_config(self) -> dict:
        return {"weight_quantizer": serialization_lib.serialize_keras_object(self.weight_quantizer),
                "activation_quantizer": serialization_lib.serialize_keras_object(self.activation_quantizer)}

    @classmethod
    def from_config(cls, config: dict) -> "QuantizationConfig":
        return cls(weight_quantizer=serialization_lib.deserialize_keras_object(config.get("weight_quantizer")),
                   activation_quantizer=serialization_lib.deserialize_keras_object(
                       config.get("activation_quantizer")))

    @staticmethod
    def weight_quantizer_or_default(config: Any, default: Any) -> Any:
        """`config`'s weight quantizer, or `default` when there is none."""
        if config is not None and config.weight_quantizer is not None:
            return config.weight_quantizer
        return default

    @staticmethod
    def activation_quantizer_or_default(config: Any, default: Any) -> Any:
        """`config`'s activation quantizer (None included) when there is a config, else `default`."""
        return config.activation_quantizer if config is not None else default


class Int8QuantizationConfig(QuantizationConfig):
    """Int8 weights; activations by `AbsMaxQuantizer()` unless another (or None) is given."""

    def __init__(self, weight_quantizer: Any = None, activation_quantizer: Any = "default") -> None:
        if isinstance(activation_quantizer, str) and activation_quantizer == "default":
            activation_quantizer = AbsMaxQuantizer()
        super().__init__(weight_quantizer, activation_quantizer)
        if self.weight_quantizer is not None and self.weight_quantizer.output_dtype != "int8":
            raise ValueError("Int8QuantizationConfig requires a weight_quantizer with output_dtype='int8'. "
                             f"Received: output_dtype={self.weight_quantizer.output_dtype}")

    @property
    def mode(self) -> str:
        return "int8"


class Int4QuantizationConfig(QuantizationConfig):
    """Int4 weights in groups of `block_size` input rows (None or -1: one scale per output channel);
    weight-only unless an activation quantizer is given."""

    def __init__(self, weight_quantizer: Any = None, activation_quantizer: Any = "default",
                 block_size: Optional[int] = 128) -> None:
        if isinstance(activation_quantizer, str) and activation_quantizer == "default":
            activation_quantizer = None
        super().__init__(weight_quantizer, activation_quantizer)
        if block_size is not None and block_size != -1 and block_size <= 0:
            raise ValueError(f"block_size must be None, -1, or a positive integer. Received: "
                             f"block_size={block_size}")
        self.block_size = block_size
        if block_size is not None and block_size > 0 and (weight_quantizer, activation_quantizer) != (None, None):
            raise ValueError("Int4 sub-channel quantization (block_size > 0) does not support custom quantizers. "
                             "Either set block_size to None or -1 for per-channel quantization, or remove the "
                             f"custom quantizer arguments. Received: block_size={block_size}")
        if self.weight_quantizer is not None:
            if self.weight_quantizer.value_range != (-8, 7):
                raise ValueError("Int4QuantizationConfig requires a weight_quantizer with value_range=(-8, 7). "
                                 f"Received: value_range={self.weight_quantizer.value_range}")
            if self.weight_quantizer.output_dtype != "int8":
                raise ValueError("Int4QuantizationConfig requires a weight_quantizer with output_dtype='int8'. "
                                 f"Received: output_dtype={self.weight_quantizer.output_dtype}")

    @property
    def mode(self) -> str:
        return "int4"

    def get_config(self) -> dict:
        return {**super().get_config(), "block_size": self.block_size}

    @classmethod
    def from_config(cls, config: dict) -> "Int4QuantizationConfig":
        return cls(weight_quantizer=serialization_lib.deserialize_keras_object(config.get("weight_quantizer")),
                   activation_quantizer=serialization_lib.deserialize_keras_object(
                       config.get("activation_quantizer")),
                   block_size=config.get("block_size"))  # None: saved before block_size existed


class Float8QuantizationConfig(QuantizationConfig):
    """Float8 training config: no custom quantizers (Keras scales with amax histories instead)."""

    def __init__(self) -> None:
        super().__init__(None, None)

    @property
    def mode(self) -> str:
        return "float8"

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> "Float8QuantizationConfig":
        return cls()


_ALL = (Quantizer, AbsMaxQuantizer, QuantizationConfig, Int8QuantizationConfig, Int4QuantizationConfig,
        Float8QuantizationConfig)


def _snake(name: str) -> str:
    import re

    return re.sub(r"(?<!^)(?=[A-Z])", "_", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)).lower()


_BY_NAME = {**{cls.__name__: cls for cls in _ALL}, **{_snake(cls.__name__): cls for cls in _ALL}}


def serialize(initializer: Any) -> Any:
    """The Keras config dictionary of a quantizer or quantization config."""
    return serialization_lib.serialize_keras_object(initializer)


def deserialize(config: Any, custom_objects: Optional[dict] = None) -> Any:
    """The quantizer or quantization config `serialize` described."""
    return serialization_lib.deserialize_keras_object(config, custom_objects=custom_objects,
                                                      module_objects=_BY_NAME)


def get(identifier: Any, **kwargs: Any) -> Any:
    """A quantizer from a config dict, a class name ('AbsMaxQuantizer' or 'abs_max_quantizer'), a class
    (instantiated with `kwargs` as its first argument, as Keras does) or an instance; None stays None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        obj = _BY_NAME.get(identifier)
    else:
        obj = identifier
    if callable(obj):
        return obj(kwargs) if inspect.isclass(obj) else obj
    raise ValueError(f"Could not interpret quantizer identifier: {identifier}")


# The calibration configs (GPTQ, AWQ) live in their own module; imported last, once QuantizationConfig exists.
from torchstrategy.keras.calibrated_quantization import AWQConfig, GPTQConfig  # noqa: E402,F401
