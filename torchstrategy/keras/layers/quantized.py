"""Keras 3.15's `quantize()`: int8 for Dense, EinsumDense and Embedding (abs-max kernels with a float scale,
inputs quantized on the fly) and int4 (packed, per block with zero points); Keras's checks, names and order."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.keras import dtype_policies

_INT8_ROWS_EXACT_IN_FLOAT32 = 1040  # 127 * 127 * rows stays below 2**24: an int8 dot product is exact in float32


def not_implemented(layer: Any, attr: str) -> NotImplementedError:
    """Keras's error for a layer without `attr` (e.g. `quantize`)."""
    return NotImplementedError(f"Layer {type(layer).__name__} does not have a `{attr}` method implemented.")


def _mode_error(mode: Any) -> NotImplementedError:
    return NotImplementedError(f"Invalid quantization mode. Expected one of {dtype_policies.QUANTIZATION_MODES}. "
                               f"Received: quantization_mode={mode}")


def unsupported_mode(layer: Any, mode: str) -> NotImplementedError:
    """What torchstrategy does not provide: int4/float8 kernels and the GPTQ/AWQ calibration passes."""
    if mode in ("gptq", "awq"):
        return NotImplementedError(
            f"{type(layer).__name__} '{layer.name}': quantize('{mode}') needs {mode.upper()}'s calibration pass "
            "(a dataset and tokenizer run through the model block by block), which torchstrategy does not "
            "implement. Use quantize('int8') here, or quantize with GPTQ/AWQ under Keras and load the result there.")
    if mode in ("int4", "float8"):
        where = ""
        return NotImplementedError(
            f"{type(layer).__name__} '{layer.name}': quantize('{mode}') is not implemented by torchstrategy{where}: "
            f"its {mode} kernels and their stored variables are missing. Use quantize('int8').")
    return _mode_error(mode)


def resolve(layer: Any, mode: Optional[str], config: Any) -> tuple[str, Any]:
    """(mode, config) after Keras's checks: the layer is built and not yet quantized, the mode is known (or
    comes from `config`), GPTQ/AWQ came with their config, and int8 does not compute in float16."""
    if isinstance(config, str):
        mode, config = config, None
    if config is not None and mode is None:
        mode = config.mode
    if mode is not None and mode not in dtype_policies.QUANTIZATION_MODES:
        raise ValueError(f"Invalid quantization mode. Expected one of {dtype_policies.QUANTIZATION_MODES}. "
                         f"Received: mode={mode}")
    if config is None and mode in ("gptq", "awq"):
        kind = "GPTQConfig" if mode == "gptq" else "AWQConfig"
        raise ValueError(f"For {mode.upper()}, you must pass a `{kind}` object in the `config` argument.")
    if mode is None:
        raise ValueError("Invalid quantization mode. Received: mode=None; pass one of "
                         f"{dtype_policies.QUANTIZATION_MODES} or a quantization config.")
    if not layer.built:
        raise ValueError(f"Cannot quantize a layer that isn't yet built. Layer '{layer.name}' (of type "
                         f"'{type(layer).__name__}') is not built yet.")
    if layer.__dict__.get("_is_quantized", False):
        raise ValueError(f"Layer '{layer.name}' is already quantized with dtype_policy='{layer.dtype_policy.name}'. "
                         f"Received: mode={mode}")
    if mode in ("int8", "int4") and config is None:  # Keras: the mode's default config
        from torchstrategy.keras.quantizers import Int4QuantizationConfig, Int8QuantizationConfig

        config = Int8QuantizationConfig() if mode == "int8" else Int4QuantizationConfig()
    if mode == "int8" and layer.compute_dtype == "float16":
        raise ValueError(f"Quantization mode='{mode}' doesn't work well with compute_dtype='float16'. Consider "
                         "loading model/layer with another dtype policy such as 'mixed_bfloat16' or "
                         "'mixed_float16' before calling `quantize()`.")
    return mode, config


def read_config(layer_class: str, value: Any) -> Any:
    """A layer's `quantization_config` argument (a config or its serialized dict, as Keras writes it for a
    quantized layer); only int8 configs are provided."""
    if value is None:
        return None
    from torchstrategy.keras import quantizers

    if isinstance(value, dict):  # a layer config read from Keras's file may come without the module key
        value = quantizers.deserialize({"module": "keras.quantizers", **value})
    config = value
    if not isinstance(config, quantizers.QuantizationConfig):
        raise TypeError(f"{layer_class}(quantization_config=...) must be a keras.quantizers.QuantizationConfig "
                        f"(such as Int8QuantizationConfig()) or its serialized dict. Received: {value!r}")
    if config.mode not in ("int8", "int4"):
        raise NotImplementedError(f"{layer_class}(quantization_config=...) of mode '{config.mode}' is not supported "
                                  "by torchstrategy: int8 and int4 are provided.")
    return config


def serialized_config(layer: Any) -> Any:
    """The layer's quantization config as Keras writes it in the layer's config (None when it has none)."""
    from torchstrategy.keras import quantizers

    config = layer.__dict__.get("quantization_config")
    return None if config is None else quantizers.serialize(config)


def _drop_weight(layer: Any, attr: str) -> None:
    layer._weight_order = [(a, t) for a, t in layer._weight_order if a != attr]
    layer._regularizers = [(a, r) for a, r in layer.__dict__.get("_regularizers", []) if a != attr]
    delattr(layer, attr)


def build_int8(layer: Any, kernel_attr: str, kernel_shape: Sequence[int], scale_attr: str,
               scale_shape: Sequence[int]) -> None:
    """Creates the int8 kernel and its float scale as Keras names them (non-trainable), and marks the layer
    quantized; the policy becomes int8_from_<source> unless it already is a quantized one."""
    if kernel_attr in layer._parameters or kernel_attr in layer._buffers:
        _drop_weight(layer, kernel_attr)
    layer.add_weight(kernel_attr, shape=tuple(kernel_shape), initializer="zeros", dtype="int8", trainable=False)
    layer.add_weight(scale_attr, shape=tuple(scale_shape), initializer="ones", trainable=False)
    layer._is_quantized = True
    layer.inputs_quantizer = _inputs_quantizer(layer.__dict__.get("quantization_config"))
    if layer._dtype_policy.quantization_mode is None:  # the layer's own policy (its entry of a policy map)
        layer._dtype_policy = dtype_policies.get(f"int8_from_{layer._dtype_policy.name}")


def _weight_quantizer(config: Any, axis: Any) -> Any:
    from torchstrategy.keras.quantizers import AbsMaxQuantizer, QuantizationConfig

    return QuantizationConfig.weight_quantizer_or_default(config, AbsMaxQuantizer(axis=axis))


def _inputs_quantizer(config: Any) -> Any:
    from torchstrategy.keras.quantizers import AbsMaxQuantizer, QuantizationConfig

    return QuantizationConfig.activation_quantizer_or_default(config, AbsMaxQuantizer())


def _assign(layer: Any, attr: str, value: torch.Tensor) -> None:
    target = getattr(layer, attr)
    with torch.no_grad():
        target.copy_(value.to(device=target.device, dtype=target.dtype).reshape(target.shape))


# ----- the int8 product ----------------------------------------------------------------------------------
class _Int8Product(torch.autograd.Function):
    """Forward: `einsum(x_q, k_q) / (x_scale * k_scale)` (integer products, exact); backward: the inputs'
    gradient through the dequantized kernel, none for the int8 kernel and its scale (Keras's custom gradient)."""

    @staticmethod
    def forward(ctx: Any, inputs: torch.Tensor, kernel: torch.Tensor, kernel_scale: torch.Tensor, equation: str,
                grad_equation: str, input_axes: tuple, align_input_scale: Any, quantize_inputs: Any) -> torch.Tensor:
        dtype = inputs.dtype
        ctx.save_for_backward(kernel, kernel_scale)
        ctx.grad_equation, ctx.dtype, ctx.kernel_scale_for_kernel = grad_equation, dtype, align_input_scale
        if quantize_inputs is None:  # weight-only: a float product with the dequantized kernel
            float_kernel = kernel.to(dtype) / align_input_scale("kernel", kernel_scale)
            return torch.einsum(equation, inputs, float_kernel)
        quantized, input_scale = quantize_inputs(inputs, axis=input_axes)
        rows = int(torch.tensor([inputs.shape[a] for a in input_axes]).prod()) if input_axes else 1
        exact = torch.float32 if rows <= _INT8_ROWS_EXACT_IN_FLOAT32 else torch.float64
        product = torch.einsum(equation, quantized.to(exact), kernel.to(exact)).to(dtype)
        return product / (align_input_scale("input", input_scale) * kernel_scale)

    @staticmethod
    def backward(ctx: Any, upstream: torch.Tensor) -> tuple:
        kernel, kernel_scale = ctx.saved_tensors
        float_kernel = kernel.to(ctx.dtype) / ctx.kernel_scale_for_kernel("kernel", kernel_scale)
        return (torch.einsum(ctx.grad_equation, upstream, float_kernel),) + (None,) * 7


def _specs(equation: str, ndim: int) -> tuple[str, str, str]:
    """The equation's (input, kernel, output) letters with its ellipsis spelled out for an `ndim` input."""
    left, output = equation.split("->")
    inputs, kernel = left.split(",")
    if "..." in inputs:
        free = sorted(set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") - set(equation))
        elided = "".join(free[:ndim - (len(inputs) - 3)])
        inputs, output = inputs.replace("...", elided), output.replace("...", elided)
    return inputs, kernel, output


def _aligned(tensor: torch.Tensor, labels: str, reduced: Sequence[int], output: str) -> torch.Tensor:
    """`tensor` (dims `labels`, size 1 on the `reduced` axes) laid out like the output: its kept axes in the
    output's order, size 1 where the output has a letter it lacks (Keras's scale layout)."""
    kept = "".join(l for i, l in enumerate(labels) if i not in reduced)
    squeezed = tensor.reshape([tensor.shape[i] for i in range(tensor.dim()) if i not in reduced])
    ordered = "".join(l for l in output if l in kept)
    moved = torch.einsum(f"{kept}->{ordered}", squeezed) if kept else squeezed
    return moved.reshape([moved.shape[ordered.index(l)] if l in ordered else 1 for l in output])


class EinsumPlan:
    """How an int8 einsum quantizes: the input axes its scale spans, the kernel's reduced axes, and the layouts."""

    def __init__(self, equation: str, ndim: int) -> None:
        self.inputs, self.kernel, self.output = _specs(equation, ndim)
        self.equation = f"{self.inputs},{self.kernel}->{self.output}"
        self.grad_equation = f"{self.output},{self.kernel}->{self.inputs}"
        self.input_axes = tuple(i for i, l in enumerate(self.inputs) if l not in self.output)
        self.kernel_axes = tuple(i for i, l in enumerate(self.kernel) if l not in self.output)

    def kernel_scale_shape(self, kernel_shape: Sequence[int]) -> list:
        return [kernel_shape[self.kernel.index(l)] if l in self.kernel else 1 for l in self.output]

    def align(self, which: str, scale: torch.Tensor) -> torch.Tensor:
        if which == "input":
            return _aligned(scale, self.inputs, self.input_axes, self.output)
        # kernel: the stored (output-laid) scale back onto the kernel's axes, for dequantizing it
        if scale.dim() < len(self.output):  # Dense keeps its scale as (units,)
            scale = scale.reshape([1] * (len(self.output) - scale.dim()) + list(scale.shape))
        present = "".join(l for l in self.output if l in self.kernel)
        squeezed = scale.reshape([scale.shape[self.output.index(l)] for l in present])
        kept = "".join(l for l in self.kernel if l in present)
        moved = torch.einsum(f"{present}->{kept}", squeezed) if present else squeezed
        return moved.reshape([moved.shape[kept.index(l)] if l in kept else 1 for l in self.kernel])


def quantize_kernel(layer: Any, kernel_attr: str, scale_attr: str, plan: EinsumPlan, config: Any,
                    scale_shape: Optional[Sequence[int]] = None) -> None:
    """Replaces a float kernel by its int8 form and Keras's per-output-channel scale (laid out like the
    output, or in `scale_shape`: Dense's (units,))."""
    kernel = getattr(layer, kernel_attr).detach()
    values, scale = _weight_quantizer(config, plan.kernel_axes)(kernel, to_numpy=True)
    scale_shape = scale_shape or plan.kernel_scale_shape(list(kernel.shape))
    layer.quantization_config = config
    build_int8(layer, kernel_attr, kernel.shape, scale_attr, scale_shape)
    _assign(layer, kernel_attr, values)
    _assign(layer, scale_attr, _aligned(scale, plan.kernel, plan.kernel_axes, plan.output))


def int8_product(layer: Any, inputs: torch.Tensor, plan: EinsumPlan, kernel: torch.Tensor,
                 kernel_scale: torch.Tensor) -> torch.Tensor:
    """The int8 layer's `einsum(inputs, kernel)` as Keras computes it, in the layer's compute dtype."""
    quantizer = layer.__dict__.get("inputs_quantizer")
    inputs = inputs.to(layer._compute_torch_dtype) if inputs.is_floating_point() else inputs
    return _Int8Product.apply(inputs, kernel, kernel_scale.to(inputs.dtype), plan.equation, plan.grad_equation,
                              plan.input_axes, plan.align, quantizer)


# ----- Embedding ----------------------------------------------------------------------------------------------
def quantize_embedding(layer: Any, config: Any) -> None:
    """Replaces the table by int8 rows and one float scale per row (abs-max over the row)."""
    table = layer.embeddings.detach()
    values, scale = _weight_quantizer(config, -1)(table, to_numpy=True)
    layer.quantization_config = config
    build_int8(layer, "embeddings", table.shape, "embeddings_scale", (table.shape[0],))
    _assign(layer, "embeddings", values)
    _assign(layer, "embeddings_scale", scale.reshape(-1))


def embedding_int8_lookup(layer: Any, ids: torch.Tensor) -> torch.Tensor:
    """Rows of the int8 table divided by their scale, in the compute dtype (Keras's int8 Embedding call)."""
    rows = torch.nn.functional.embedding(ids, layer.embeddings).to(layer._compute_torch_dtype)
    scale = torch.nn.functional.embedding(ids, layer.embeddings_scale.unsqueeze(-1))
    return rows / scale.to(rows.dtype)


# ----- Model.quantize ----------------------------------------------------------------------------------------
def _selected(layer: Any, filters: Any) -> bool:
    """Keras's filters: a regex searched in the layer's name, a list of them (any), or a callable."""
    import re

    if filters is None:
        return True
    if isinstance(filters, str):
        return bool(re.search(filters, layer.name))
    if isinstance(filters, (list, tuple)):
        return any(re.search(pattern, layer.name) for pattern in filters)
    return bool(filters(layer))


def quantize_model(model: Any, mode: Optional[str], config: Any, filters: Any, kwargs: dict) -> None:
    """Keras's `Model.quantize`: every leaf layer the filters select is quantized; a layer type that cannot
    be quantized gives a warning, as in Keras. Modes torchstrategy lacks raise before any layer changes."""
    import warnings

    type_check = kwargs.pop("type_check", True)
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments passed to {type(model).__name__}: {kwargs}")
    if filters is not None and not (isinstance(filters, (str, list, tuple)) or callable(filters)):
        raise ValueError("The `filters` argument must be a regex string, a list of regex strings, or a callable. "
                         f"Received: {type(filters)}")
    resolved = config.mode if mode is None and config is not None and not isinstance(config, str) else mode
    if isinstance(config, str):
        resolved = config
    if resolved in ("gptq", "awq") and config is None:
        kind = "GPTQConfig" if resolved == "gptq" else "AWQConfig"
        raise ValueError(f"For {resolved.upper()}, you must pass a `{kind}` object in the `config` argument.")
    if resolved in ("gptq", "awq", "float8"):
        raise unsupported_mode(model, resolved)
    for layer in model._flatten_layers():
        if layer is model or not _selected(layer, filters) or len(layer._flatten_layers()) != 1:
            continue
        try:
            layer.quantize(mode, type_check=type_check, config=config)
        except NotImplementedError as error:
            warnings.warn(str(error), stacklevel=3)


# ----- Dense int4 --------------------------------------------------------------------------------------------
def int4_block_size(layer: Any, config: Any) -> Optional[int]:
    """The int4 block size: the config's, else the layer's Int4DTypePolicy's (-1 means per channel: None)."""
    from torchstrategy.keras.quantizers import Int4QuantizationConfig

    if isinstance(config, Int4QuantizationConfig):
        size = config.block_size
    else:
        size = getattr(layer._dtype_policy, "block_size", None)
    return None if size is None or size == -1 else int(size)


def _build_int4(layer: Any, name: str, shape: Sequence[int], config: Any, scale_shape: Any, grouped: int) -> None:
    """The int4 variables Dense and Embedding share: `name` (rows, cols) packed two values a byte along cols, its
    scale of `scale_shape(block)` and, with a block size, a zero point and each of the `grouped` indices' group
    (`g_idx`); then the layer is marked quantized under the int4 policy of its block size."""
    rows, cols = int(shape[0]), int(shape[1])
    if name in layer._parameters or name in layer._buffers:
        _drop_weight(layer, name)
    block = int4_block_size(layer, config)
    layer.add_weight(name, shape=(rows, (cols + 1) // 2), initializer="zeros", dtype="int8", trainable=False)
    layer.add_weight(f"{name}_scale", shape=scale_shape(block), initializer="ones", trainable=False)
    if block is not None:
        layer.add_weight(f"{name}_zero", shape=scale_shape(block), initializer="zeros", dtype="int8", trainable=False)
        layer.add_weight("g_idx", shape=(grouped,), initializer="zeros", dtype="float32", trainable=False)
        _assign(layer, "g_idx", torch.div(torch.arange(grouped), block, rounding_mode="floor").float())
    layer._int4_block_size, layer._orig_output_dim = block, cols
    layer._is_quantized = True
    if layer._dtype_policy.quantization_mode is None:
        layer._dtype_policy = dtype_policies.get(f"int4/{block or -1}_from_{layer._dtype_policy.name}")


def build_int4_dense(layer: Any, kernel_shape: Sequence[int], config: Any) -> None:
    """Keras's int4 Dense variables: the kernel packed two values a byte along the units axis, its scale (per
    unit, or per block of `block_size` input rows and unit with a zero point and each row's group `g_idx`)."""
    input_dim, units = int(kernel_shape[0]), int(kernel_shape[1])
    _build_int4(layer, "kernel", kernel_shape, config,
                lambda block: (units,) if block is None else (-(-input_dim // block), units), grouped=input_dim)
    layer.inputs_quantizer = config.activation_quantizer if config is not None else None


def quantize_dense_int4(layer: Any, config: Any) -> None:
    """Replaces Dense's float kernel by Keras's int4 form (sub-channel with zero points unless the block
    size is -1)."""
    from torchstrategy.keras.quantizers import AbsMaxQuantizer, abs_max_quantize_grouped_with_zero_point, pack_int4

    kernel = layer.kernel.detach()
    block = int4_block_size(layer, config)
    zero = None
    if block is None:
        values, scale = AbsMaxQuantizer(axis=0, value_range=(-8, 7), output_dtype="int8")(kernel, to_numpy=True)
        scale = scale.reshape(-1)
    else:
        values, scale, zero = abs_max_quantize_grouped_with_zero_point(kernel, block_size=block, to_numpy=True)
    packed = pack_int4(values, axis=-1)[0]
    layer.quantization_config = config
    build_int4_dense(layer, kernel.shape, config)
    _assign(layer, "kernel", packed)
    _assign(layer, "kernel_scale", scale)
    if zero is not None:
        _assign(layer, "kernel_zero", zero)


def dense_int4_product(layer: Any, inputs: torch.Tensor) -> torch.Tensor:
    """Keras's int4 Dense product: per channel as the int8 one on the unpacked kernel; per block, the inputs
    times the dequantized kernel `(q - zero[g]) * scale[g]` (the inputs' gradient through it)."""
    from torchstrategy.keras.quantizers import unpack_int4

    unpacked = unpack_int4(layer.kernel, layer._orig_output_dim, axis=-1)
    if layer._int4_block_size is None:
        plan = EinsumPlan("...a,ab->...b", inputs.dim())
        return int8_product(layer, inputs, plan, unpacked, layer.kernel_scale)
    groups = layer.g_idx.to(torch.int64)
    scale, zero = layer.kernel_scale[groups], layer.kernel_zero[groups].to(layer.kernel_scale.dtype)
    float_kernel = ((unpacked.to(scale.dtype) - zero) * scale).to(layer._compute_torch_dtype)
    return torch.matmul(inputs.to(layer._compute_torch_dtype), float_kernel)


# ----- Embedding int4 ----------------------------------------------------------------------------------------
def build_int4_embedding(layer: Any, shape: Sequence[int], config: Any) -> None:
    """Keras's int4 Embedding variables: rows packed two values a byte, a scale per row (or per row and block
    of `block_size` columns, with a zero point and each column's group `g_idx`)."""
    input_dim, output_dim = int(shape[0]), int(shape[1])
    _build_int4(layer, "embeddings", shape, config,
                lambda block: (input_dim,) if block is None else (input_dim, -(-output_dim // block)),
                grouped=output_dim)


def quantize_embedding_int4(layer: Any, config: Any) -> None:
    """Replaces the table by Keras's int4 form: per row (block size -1) or per row and block of columns."""
    from torchstrategy.keras.quantizers import AbsMaxQuantizer, abs_max_quantize_grouped_with_zero_point, pack_int4

    table = layer.embeddings.detach()
    block = int4_block_size(layer, config)
    zero = None
    if block is None:
        values, scale = AbsMaxQuantizer(axis=-1, value_range=(-8, 7), output_dtype="int8")(table, to_numpy=True)
        scale = scale.reshape(-1)
    else:  # Keras groups the columns: the transposed table, grouped along its rows
        values, scale, zero = abs_max_quantize_grouped_with_zero_point(table.t(), block_size=block, to_numpy=True)
        values, scale, zero = values.t(), scale.t(), zero.t()
    layer.quantization_config = config
    build_int4_embedding(layer, table.shape, config)
    _assign(layer, "embeddings", pack_int4(values.contiguous(), axis=-1)[0])
    _assign(layer, "embeddings_scale", scale)
    if zero is not None:
        _assign(layer, "embeddings_zero", zero)


def embedding_int4_lookup(layer: Any, ids: torch.Tensor) -> torch.Tensor:
    """Keras's int4 Embedding call: the looked-up rows unpacked and dequantized in the compute dtype."""
    from torchstrategy.keras.quantizers import unpack_int4

    rows = unpack_int4(layer.embeddings, layer._orig_output_dim, axis=-1)[ids].to(layer._compute_torch_dtype)
    scale = layer.embeddings_scale[ids]
    if layer._int4_block_size is None:
        return rows / scale.unsqueeze(-1).to(rows.dtype)
    groups = layer.g_idx.to(torch.int64)
    zero = layer.embeddings_zero[ids].to(scale.dtype)
    return ((rows - zero[..., groups]) * scale[..., groups]).to(rows.dtype)


# ----- EinsumDense int4: Keras flattens the kernel to (contracted rows, other columns) --------------------------
def _einsum_rows_columns(plan: EinsumPlan, kernel_shape: Sequence[int]) -> tuple[int, int]:
    rows = int(np.prod([d for i, d in enumerate(kernel_shape) if i in plan.kernel_axes]))
    return rows, int(np.prod(kernel_shape)) // max(rows, 1)


def build_int4_einsum(layer: Any, plan: EinsumPlan, kernel_shape: Sequence[int], config: Any) -> None:
    """Keras's int4 EinsumDense variables: the kernel as (rows, columns) packed along the columns, with Dense's
    int4 scale, zero point and g_idx laid over that matrix."""
    rows, columns = _einsum_rows_columns(plan, kernel_shape)
    build_int4_dense(layer, (rows, columns), config)
    layer._int4_kernel_shape = tuple(int(d) for d in kernel_shape)


def quantize_einsum_int4(layer: Any, plan: EinsumPlan, config: Any) -> None:
    """Replaces the float kernel by Keras's int4 form of its (rows, columns) reshape."""
    from torchstrategy.keras.quantizers import abs_max_quantize, abs_max_quantize_grouped_with_zero_point, pack_int4

    kernel = layer.kernel.detach()
    flat = kernel.reshape(_einsum_rows_columns(plan, kernel.shape))
    block = int4_block_size(layer, config)
    zero = None
    if block is None:
        values, scale = abs_max_quantize(flat, axis=0, value_range=(-8, 7), dtype="int8", to_numpy=True)
        scale = scale.reshape(-1)
    else:
        values, scale, zero = abs_max_quantize_grouped_with_zero_point(flat, block_size=block, to_numpy=True)
    layer.quantization_config = config
    build_int4_einsum(layer, plan, kernel.shape, config)
    _assign(layer, "kernel", pack_int4(values, axis=-1)[0])
    _assign(layer, "kernel_scale", scale)
    if zero is not None:
        _assign(layer, "kernel_zero", zero)


def einsum_int4_product(layer: Any, inputs: torch.Tensor, plan: EinsumPlan) -> torch.Tensor:
    """`einsum(inputs, dequantized kernel)` (the inputs' gradient through it); with an inputs quantizer, the
    quantized inputs and a division by their scale, as Keras's int4 EinsumDense."""
    from torchstrategy.keras.quantizers import unpack_int4

    unpacked = unpack_int4(layer.kernel, layer._orig_output_dim, axis=-1)
    dtype = layer._compute_torch_dtype
    if layer._int4_block_size is None:
        float_kernel = unpacked.to(dtype) / layer.kernel_scale.to(dtype)
    else:
        groups = layer.g_idx.to(torch.int64)
        scale = layer.kernel_scale[groups]
        float_kernel = ((unpacked.to(scale.dtype) - layer.kernel_zero[groups].to(scale.dtype)) * scale).to(dtype)
    float_kernel = float_kernel.reshape(layer._int4_kernel_shape)
    inputs = inputs.to(dtype)
    quantizer = layer.__dict__.get("inputs_quantizer")
    if not quantizer:
        return torch.einsum(plan.equation, inputs, float_kernel)
    quantized_inputs, input_scale = quantizer(inputs.detach(), axis=plan.input_axes)
    value = torch.einsum(plan.equation, quantized_inputs.to(dtype), float_kernel) / plan.align("input", input_scale)
    exact = torch.einsum(plan.equation, inputs, float_kernel)  # the gradient Keras gives: through the float kernel
    return exact + (value - exact).detach()
