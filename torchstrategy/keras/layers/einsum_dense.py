"""Keras's EinsumDense: a dense layer written as an einsum equation `input,kernel->output`, with the kernel's
and bias's shapes found from the equation, the input shape and the (partial) `output_shape`, as Keras does."""
from __future__ import annotations

import re
from typing import Any, Optional, Sequence, Union

import torch

from torchstrategy.keras import activations, initializers, regularizers
from torchstrategy.keras.layers import quantized
from torchstrategy.keras.layers.base import InputSpec, Layer

_FORMS = (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", False), ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", True),
          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", False))


def _einsum_shapes(equation: str, bias_axes: Optional[str], input_shape: Sequence[Optional[int]],
                   output_shape: Any) -> tuple[list, Optional[list], list]:
    """(kernel shape, bias shape or None, full output shape) for `equation` on `input_shape`."""
    compact = equation.replace("...", "0")
    for pattern, left_elided in _FORMS:
        match = re.fullmatch(pattern, compact)
        if match:
            break
    else:
        raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form [X],[Y]->[Z], "
                         "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")
    input_spec, weight_spec, output_spec = match.groups()
    elided = len(input_shape) - len(input_spec)
    full = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    full.insert(0, input_shape[0])
    if elided > 0 and left_elided:
        for i in range(1, elided):
            full.insert(1, input_shape[i])
    elif elided > 0:
        full.extend(input_shape[len(input_shape) - elided:])
    offset = elided if left_elided else 0
    in_index = {d: i + offset for i, d in enumerate(input_spec)}
    out_index = {d: i + offset for i, d in enumerate(output_spec)}
    for d in input_spec:
        if d in out_index and full[out_index[d]] is not None and full[out_index[d]] != input_shape[in_index[d]]:
            raise ValueError(f"Input shape and output shape do not match at shared dimension '{d}'. Input shape is "
                             f"{input_shape[in_index[d]]}, and output shape is {full[out_index[d]]}.")
    for d in output_spec:
        if d not in input_spec and d not in weight_spec:
            raise ValueError(f"Dimension '{d}' was specified in the output '{output_spec}' but has no corresponding "
                             f"dim in the input spec '{input_spec}' or weight spec '{weight_spec}'")
    kernel_shape = []
    for d in weight_spec:
        if d in out_index:
            kernel_shape.append(full[out_index[d]])
        elif d in in_index:
            kernel_shape.append(input_shape[in_index[d]])
        else:
            raise ValueError(f"Weight dimension '{d}' did not have a match in either the input spec '{input_spec}' "
                             f"or the output spec '{output_spec}'. For this layer, the weight must be fully specified.")
    bias_shape = None
    if bias_axes is not None:
        for d in bias_axes:
            if d not in output_spec:
                raise ValueError(f"Bias dimension '{d}' was requested, but is not part of the output spec "
                                 f"'{output_spec}'")
        first = min(output_spec.find(d) for d in bias_axes)
        bias_shape = [full[out_index[d]] if d in bias_axes else 1 for d in output_spec[first:]]
        if not left_elided:
            bias_shape.extend([1] * max(elided, 0))
    return kernel_shape, bias_shape, full


class EinsumDense(Layer):
    """`activation(einsum(equation, inputs, kernel) + bias)`; `output_shape` excludes the batch axis (None for a
    dimension taken from the input), `bias_axes` names the output letters the bias spans.

    >>> EinsumDense("abc,cd->abd", output_shape=(None, 4))(torch.ones(2, 3, 5)).shape
    torch.Size([2, 3, 4])
    """

    def __init__(
        self, equation: str, output_shape: Union[int, Sequence[Optional[int]]], activation: Any = None,
        bias_axes: Optional[str] = None, kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None, bias_regularizer: Any = None, kernel_constraint: Any = None,
        bias_constraint: Any = None, lora_rank: Optional[int] = None, lora_alpha: Optional[float] = None,
        gptq_unpacked_column_size: Optional[int] = None, quantization_config: Any = None, **kwargs: Any,
    ) -> None:
        for arg, value in (("lora_rank", lora_rank), ("lora_alpha", lora_alpha),
                           ("gptq_unpacked_column_size", gptq_unpacked_column_size)):
            if value is not None:
                raise NotImplementedError(f"EinsumDense({arg}=...) is not supported here (LoRA and quantized "
                                          f"kernels are Keras-backend features). Leave {arg}=None.")
        super().__init__(**kwargs)
        self.equation = equation
        self.partial_output_shape = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.lora_rank, self.lora_alpha = None, None
        self.gptq_unpacked_column_size = None
        self.quantization_config = quantized.read_config("EinsumDense", quantization_config)
        if not any(re.fullmatch(pattern, str(equation).replace("...", "0")) for pattern, _ in _FORMS):
            raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form [X],[Y]->[Z], "
                             "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")

    def build(self, input_shape: Any) -> None:
        kernel_shape, bias_shape, _ = _einsum_shapes(self.equation, self.bias_axes, input_shape,
                                                     self.partial_output_shape)
        if any(d is None for d in kernel_shape):
            raise ValueError(f"EinsumDense '{self.name}': the kernel shape {kernel_shape} has unknown dimensions; "
                             "give them in output_shape or in the input shape.")
        self.input_spec = InputSpec(ndim=len(input_shape))
        if self.quantization_mode is None:
            self.kernel = self.add_weight("kernel", tuple(kernel_shape), initializer=self.kernel_initializer,
                                          regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = None if bias_shape is None else self.add_weight(
            "bias", tuple(bias_shape), initializer=self.bias_initializer, regularizer=self.bias_regularizer,
            constraint=self.bias_constraint)
        if self.quantization_mode is not None:  # loaded from a quantized layer's config
            self.quantized_build(tuple(kernel_shape), self.quantization_mode)
        self.built = True

    # ----- quantization (Keras 3.15: int8 here) -----
    @property
    def variable_serialization_spec(self) -> dict:
        """The variables Keras stores, in its order, for each quantization mode provided."""
        return {None: ["kernel", "bias"], "int8": ["kernel", "bias", "kernel_scale"],
                "int4": ["kernel", "bias", "kernel_scale", "kernel_zero", "g_idx"]}

    def _int8_plan(self) -> "quantized.EinsumPlan":
        return quantized.EinsumPlan(self.equation, self.input_spec.ndim)

    def quantized_build(self, kernel_shape: Any, mode: str, config: Any = None) -> None:
        if mode == "int4":
            config = config or self.quantization_config
            return quantized.build_int4_einsum(self, self._int8_plan(), kernel_shape, config)
        if mode != "int8":
            raise quantized.unsupported_mode(self, mode)
        scale_shape = self._int8_plan().kernel_scale_shape(list(kernel_shape))
        quantized.build_int8(self, "kernel", kernel_shape, "kernel_scale", scale_shape)

    def quantize(self, mode: Optional[str] = None, type_check: bool = True, config: Any = None) -> None:
        """Keras's int8 quantization (abs-max int8 kernel over the contracted axes, `kernel_scale` laid out like
        the output; inputs quantized over their contracted axes on each call) and int4 (the kernel flattened to
        (contracted rows, columns) and packed, per block of rows with zero points)."""
        mode, config = quantized.resolve(self, mode, config)
        if type_check and type(self) is not EinsumDense:
            raise quantized.not_implemented(self, "quantize")
        if mode == "int4":
            return quantized.quantize_einsum_int4(self, self._int8_plan(), config)
        if mode != "int8":
            raise quantized.unsupported_mode(self, mode)
        quantized.quantize_kernel(self, "kernel", "kernel_scale", self._int8_plan(), config)

    def _int8_call(self, inputs: torch.Tensor, training: Optional[bool] = None) -> torch.Tensor:
        x = quantized.int8_product(self, inputs, self._int8_plan(), self.kernel, self.kernel_scale)
        if self.bias is not None:
            x = x + self.bias
        return self.activation(x) if self.activation is not None else x

    def _int4_call(self, inputs: torch.Tensor, training: Optional[bool] = None) -> torch.Tensor:
        x = quantized.einsum_int4_product(self, inputs, self._int8_plan())
        if self.bias is not None:
            x = x + self.bias
        return self.activation(x) if self.activation is not None else x

    def call(self, inputs: torch.Tensor, training: Optional[bool] = None) -> torch.Tensor:
        x = torch.einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            x = x + self.bias
        return self.activation(x) if self.activation is not None else x

    def compute_output_shape(self, input_shape: Any) -> Any:
        return tuple(_einsum_shapes(self.equation, self.bias_axes, input_shape, self.partial_output_shape)[2])

    def get_config(self) -> dict:
        return {
            **super().get_config(), "output_shape": self.partial_output_shape, "equation": self.equation,
            "activation": activations.serialize(self.activation), "bias_axes": self.bias_axes,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "kernel_constraint": self.kernel_constraint, "bias_constraint": self.bias_constraint,
            "quantization_config": quantized.serialized_config(self),
        }
