"""Core Keras layers: Dense, Activation, Dropout, Flatten, Reshape, Permute, ReLU, LeakyReLU, ELU,
Softmax, Embedding, Lambda, PReLU; plus small argument helpers the other layer files share."""
from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy.keras import activations, initializers, regularizers
from torchstrategy.keras.layers import quantized
from torchstrategy.keras.layers.base import InputSpec, Layer, _shape_str


# ----- helpers shared by the layer files -----------------------------------------------------
def _normalize_tuple(value: Union[int, Sequence[int]], rank: int, name: str) -> tuple[int, ...]:
    """An int or a sequence of `rank` ints -> a tuple of `rank` ints (Keras's conv_utils rule)."""
    values = (value,) * rank if isinstance(value, int) else tuple(value)
    if len(values) != rank or not all(isinstance(v, int) and v > 0 for v in values):
        raise ValueError(f"The `{name}` argument must be a positive int or a tuple of {rank} positive ints. "
                         f"Received: {name}={value!r}")
    return values


def _normalize_data_format(data_format: Optional[str]) -> str:
    if data_format is None:  # Keras: keras.config.image_data_format()
        from torchstrategy import _context

        data_format = _context.keras_setting("image_data_format")
    data_format = str(data_format).lower()
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be 'channels_last' or 'channels_first'. "
                         f"Received: data_format={data_format!r}")
    return data_format


def _normalize_padding(padding: str, allowed: Sequence[str] = ("valid", "same")) -> str:
    value = str(padding).lower()
    if value not in allowed:
        raise ValueError(f"The `padding` argument must be one of {list(allowed)}. Received: padding={padding!r}")
    return value


def _refuse_lora(layer: str, lora_rank: Any, lora_alpha: Any) -> None:
    """Keras 3's LoRA arguments: accepted, refused when set (LoRA is not implemented here)."""
    for arg, value in (("lora_rank", lora_rank), ("lora_alpha", lora_alpha)):
        if value is not None:
            raise NotImplementedError(f"{layer}({arg}=...) is not supported by torchstrategy (Keras 3's LoRA is not "
                                      "implemented); leave it None.")


def _record_activity(layer: Layer, outputs: torch.Tensor) -> None:
    """Kept for the layer files that call it: the base Layer's `__call__` now adds every layer's activity
    penalty (Keras 3: penalty(output) / batch size, through `add_loss`)."""


def _require_defined(layer: Layer, input_shape: Any, axis: int, what: str) -> int:
    if not isinstance(input_shape, tuple) or not (-len(input_shape) <= axis < len(input_shape)):
        raise ValueError(f"Layer '{layer.name}' ({type(layer).__name__}) got an input of shape "
                         f"{input_shape!r}, which has no {what} axis {axis}.")
    size = input_shape[axis]
    if size is None:
        raise ValueError(f"Layer '{layer.name}' needs the {what} dimension (axis {axis}) of its input to be "
                         f"known, but the input shape is {_shape_str(input_shape)}.")
    return int(size)


def _require_rank(layer: Layer, input_shape: Any, ndim: int, layout: str) -> None:
    if not isinstance(input_shape, tuple) or len(input_shape) != ndim:
        shown = _shape_str(input_shape) if isinstance(input_shape, tuple) else repr(input_shape)
        raise ValueError(f"Input 0 of layer '{layer.name}' ({type(layer).__name__}) must be a {ndim}-D tensor "
                         f"{layout}, but received input with shape {shown}.")


# ----- layers --------------------------------------------------------------------------------
class Dense(Layer):
    """`activation(inputs @ kernel + bias)` on the last axis; kernel (in, out) as Keras.

    >>> Dense(4)(torch.ones(2, 3)).shape
    torch.Size([2, 4])
    """

    def __init__(
        self, units: int, activation: Any = None, use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros", kernel_regularizer: Any = None, bias_regularizer: Any = None,
        activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None,
        lora_rank: Optional[int] = None, lora_alpha: Optional[float] = None, quantization_config: Any = None,
        **kwargs: Any,
    ) -> None:
        _refuse_lora("Dense", lora_rank, lora_alpha)
        super().__init__(**kwargs)
        self.quantization_config = quantized.read_config("Dense", quantization_config)
        self.supports_masking = True  # passes its input's mask on, as Keras
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"Dense: `units` must be a positive integer, got {units!r}.")
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape: Any) -> None:
        last = _require_defined(self, input_shape, -1, "last (features)")
        if self.quantization_mode is None:  # a quantized layer (loaded from its config) gets its int8 kernel below
            self.kernel = self.add_weight("kernel", shape=(last, self.units), initializer=self.kernel_initializer,
                                          regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=(self.units,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        else:
            self.bias = None
        if self.quantization_mode is not None:
            self.quantized_build((last, self.units), self.quantization_mode)
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.built = True

    def call(self, inputs: torch.Tensor, training: Optional[bool] = None) -> torch.Tensor:
        kernel, bias = self.kernel, self.bias
        if inputs.dim() == 2 and bias is not None:
            # the addmm F.linear makes of it, without linear's two transposed views of the kernel: the same numbers
            # and gradients, one autograd node fewer each way
            outputs = torch.addmm(bias, inputs, kernel)
        else:  # kernel.t() is a free view; linear/addmm reads it transposed without a copy.
            outputs = F.linear(inputs, kernel.t(), bias)
        outputs = self.activation(outputs)
        _record_activity(self, outputs)
        return outputs

    # ----- quantization (Keras 3.15: int8 here) -----
    @property
    def variable_serialization_spec(self) -> dict:
        """The variables Keras stores, in its order, for each quantization mode provided."""
        return {None: ["kernel", "bias"], "int8": ["kernel", "bias", "kernel_scale"],
                "int4": ["kernel", "bias", "kernel_scale", "kernel_zero", "g_idx"]}

    def quantized_build(self, kernel_shape: Any, mode: str, config: Any = None) -> None:
        if mode == "int4":
            return quantized.build_int4_dense(self, kernel_shape, config or self.quantization_config)
        if mode != "int8":
            raise quantized.unsupported_mode(self, mode)
        quantized.build_int8(self, "kernel", kernel_shape, "kernel_scale", (self.units,))

    def quantize(self, mode: Optional[str] = None, type_check: bool = True, config: Any = None) -> None:
        """Keras's int8 quantization (per-output-channel abs-max int8 kernel and `kernel_scale`; inputs are
        quantized per row on each call) and int4 (packed kernel, per block of 128 input rows by default, with
        zero points). float8/GPTQ/AWQ raise NotImplementedError."""
        mode, config = quantized.resolve(self, mode, config)
        if type_check and type(self) is not Dense:
            raise quantized.not_implemented(self, "quantize")
        if mode == "int4":
            return quantized.quantize_dense_int4(self, config)
        if mode != "int8":
            raise quantized.unsupported_mode(self, mode)
        plan = quantized.EinsumPlan("...a,ab->...b", 2)
        quantized.quantize_kernel(self, "kernel", "kernel_scale", plan, config, scale_shape=(self.units,))

    def _int8_call(self, inputs: torch.Tensor, training: Optional[bool] = None) -> torch.Tensor:
        plan = quantized.EinsumPlan("...a,ab->...b", inputs.dim())
        x = quantized.int8_product(self, inputs, plan, self.kernel, self.kernel_scale)
        return self.activation(x + self.bias if self.bias is not None else x)

    def _int4_call(self, inputs: torch.Tensor, training: Optional[bool] = None) -> torch.Tensor:
        x = quantized.dense_int4_product(self, inputs)
        return self.activation(x + self.bias if self.bias is not None else x)

    def get_config(self) -> dict:
        return {
            **super().get_config(), "units": self.units, "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias, "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "kernel_constraint": self.kernel_constraint, "bias_constraint": self.bias_constraint,
            **({"quantization_config": quantized.serialized_config(self)} if self.quantization_config else {}),
        }


class Activation(Layer):
    """Applies an activation function given by name or callable."""

    def __init__(self, activation: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # passes its input's mask on, as Keras
        self.activation = activations.get(activation)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.activation(inputs)

    def get_config(self) -> dict:
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


class Dropout(Layer):
    """Inverted dropout: in training, zeroes a `rate` fraction and scales the rest by 1/(1-rate)."""

    def __init__(self, rate: float, noise_shape: Optional[Sequence[Optional[int]]] = None,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # passes its input's mask on, as Keras
        if not 0.0 <= float(rate) <= 1.0:
            raise ValueError(f"Invalid value {rate} received for `rate`, expected a value between 0 and 1.")
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self._generators: dict[torch.device, torch.Generator] = {}

    def _generator(self, device: torch.device) -> Optional[torch.Generator]:
        if self.seed is None:
            return None
        if device not in self._generators:  # one stream per device, advancing call after call
            self._generators[device] = torch.Generator(device=device).manual_seed(int(self.seed))
        return self._generators[device]

    def call(self, inputs: torch.Tensor, training: bool = False) -> torch.Tensor:
        if not training or self.rate == 0.0:
            return inputs
        if self.rate == 1.0:
            return torch.zeros_like(inputs)
        if self.noise_shape is None and self.seed is None:
            return F.dropout(inputs, self.rate, training=True)
        shape = inputs.shape if self.noise_shape is None else tuple(
            inputs.shape[i] if size is None else size for i, size in enumerate(self.noise_shape))
        keep = 1.0 - self.rate
        mask = torch.empty(shape, dtype=inputs.dtype, device=inputs.device)
        mask.bernoulli_(keep, generator=self._generator(inputs.device))
        return inputs * mask * (1.0 / keep)

    def get_config(self) -> dict:
        noise = None if self.noise_shape is None else list(self.noise_shape)
        return {**super().get_config(), "rate": self.rate, "noise_shape": noise, "seed": self.seed}


class Flatten(Layer):
    """(batch, ...) -> (batch, features), flattening in channels_last order as Keras does."""

    def __init__(self, data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = _normalize_data_format(data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if self.data_format == "channels_first" and inputs.dim() > 2:
            inputs = inputs.movedim(1, -1)
        return inputs.reshape(inputs.shape[0], -1)

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format}


class Reshape(Layer):
    """Reshapes each sample to `target_shape` (batch axis untouched); one entry may be -1."""

    def __init__(self, target_shape: Sequence[int], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1 or any(d < -1 or d == 0 for d in self.target_shape):
            raise ValueError(f"Reshape: target_shape may hold positive sizes and at most one -1, "
                             f"got {target_shape!r}.")

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        per_sample = math.prod(inputs.shape[1:])
        known = math.prod(d for d in self.target_shape if d != -1)
        fits = per_sample % known == 0 if -1 in self.target_shape else per_sample == known
        if not fits:
            raise ValueError(f"Layer '{self.name}': cannot reshape input of shape {_shape_str((None,) + tuple(inputs.shape[1:]))} "
                             f"to target_shape {self.target_shape}; the number of elements per sample must match.")
        return inputs.reshape((inputs.shape[0],) + self.target_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "target_shape": list(self.target_shape)}


class Permute(Layer):
    """Permutes the non-batch axes; `dims` are 1-based as in Keras, e.g. (2, 1)."""

    def __init__(self, dims: Sequence[int], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Permute: `dims` must be a permutation of 1..{len(self.dims)} (1-based), got {dims!r}.")
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return inputs.permute(0, *self.dims)

    def get_config(self) -> dict:
        return {**super().get_config(), "dims": list(self.dims)}


class ReLU(Layer):
    """`x` above `threshold` (capped at `max_value`), else `negative_slope * (x - threshold)`."""

    def __init__(self, max_value: Optional[float] = None, negative_slope: float = 0.0,
                 threshold: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # passes its input's mask on, as Keras
        if max_value is not None and max_value < 0:
            raise ValueError(f"ReLU: max_value must be >= 0, got {max_value}.")
        if negative_slope is None or negative_slope < 0:
            raise ValueError(f"ReLU: negative_slope must be >= 0, got {negative_slope}.")
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope, self.threshold = float(negative_slope), float(threshold)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return activations.relu(inputs, self.negative_slope, self.max_value, self.threshold)

    def get_config(self) -> dict:
        return {**super().get_config(), "max_value": self.max_value, "negative_slope": self.negative_slope,
                "threshold": self.threshold}


class LeakyReLU(Layer):
    """`x` for x >= 0 else `alpha * x`; Keras 2 default alpha=0.3 (`negative_slope` also accepted)."""

    def __init__(self, negative_slope: float = 0.3, **kwargs: Any) -> None:
        alpha = kwargs.pop("alpha", None)  # Keras 2's name, still taken by Keras 3
        super().__init__(**kwargs)
        self.supports_masking = True  # passes its input's mask on, as Keras
        if alpha is not None and negative_slope != 0.3 and alpha != negative_slope:
            raise ValueError("LeakyReLU: pass either `alpha` or `negative_slope`, not both.")
        slope = alpha if alpha is not None else negative_slope
        if slope < 0:
            raise ValueError(f"LeakyReLU: alpha must be >= 0, got {slope}.")
        self.alpha = float(slope)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(inputs, self.alpha)

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha": self.alpha}


class ELU(Layer):
    """`x` for x > 0 else `alpha * (exp(x) - 1)`."""

    def __init__(self, alpha: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # passes its input's mask on, as Keras
        self.alpha = float(alpha)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return F.elu(inputs, self.alpha)

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha": self.alpha}


class Softmax(Layer):
    """Softmax along `axis`; an optional boolean `mask` (True = keep) pushes masked logits to -1e9."""

    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # passes its input's mask on, as Keras
        self.axis = axis

    def call(self, inputs: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if mask is not None:
            large = 65500.0 if inputs.dtype == torch.float16 else 1e9
            inputs = inputs + (1.0 - mask.to(inputs.dtype)) * -large
        return torch.softmax(inputs, dim=self.axis)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


class Embedding(Layer):
    """Looks up rows of an (input_dim, output_dim) table for integer indices (floats are cast)."""


    def __init__(
        self, input_dim: int, output_dim: int, embeddings_initializer: Any = "uniform",
        embeddings_regularizer: Any = None, embeddings_constraint: Any = None, mask_zero: bool = False,
        weights: Any = None, lora_rank: Optional[int] = None, lora_alpha: Optional[float] = None,
        quantization_config: Any = None, **kwargs: Any,
    ) -> None:
        _refuse_lora("Embedding", lora_rank, lora_alpha)
        config = quantized.read_config("Embedding", quantization_config)
        activity_regularizer = kwargs.pop("activity_regularizer", None)  # Keras 3 takes both through kwargs
        input_length = kwargs.pop("input_length", None)
        if input_length is not None and "input_shape" not in kwargs and "batch_input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,)
        super().__init__(**kwargs)
        self.quantization_config = config
        if int(input_dim) <= 0 or int(output_dim) <= 0:
            raise ValueError(f"Embedding: input_dim and output_dim must be positive, got {input_dim}, {output_dim}.")
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero, self.input_length = bool(mask_zero), input_length
        self.supports_masking = self.mask_zero
        if weights is not None:  # Keras 3: build now and load the given table
            self.build(None)
            self.set_weights(weights if isinstance(weights, (list, tuple)) else [weights])

    def build(self, input_shape: Any = None) -> None:
        if self.quantization_mode is not None:  # loaded from a quantized layer's config
            self.quantized_build((self.input_dim, self.output_dim), self.quantization_mode)
            self.built = True
            return
        # autocast=False as in Keras: look rows up in the stored dtype, then cast only those (not the table)
        self.embeddings = self.add_weight(
            "embeddings", shape=(self.input_dim, self.output_dim), initializer=self.embeddings_initializer,
            regularizer=self.embeddings_regularizer, constraint=self.embeddings_constraint, autocast=False)
        # under ParameterServerStrategy a worker reads only the rows it looks up, not the whole table
        self.embeddings._rows_read_on_demand = True
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if inputs.is_floating_point() or inputs.dtype != torch.int64:
            inputs = inputs.to(torch.int64)
        strategy = self._distribute_strategy  # a parameter-server worker reads only the rows looked up
        rows = strategy.embedding_lookup(self.embeddings, inputs) if strategy is not None else None
        if rows is None:
            try:
                rows = F.embedding(inputs, self.embeddings)
            except IndexError as error:  # checked only when torch refused: no per-call host sync
                raise _index_error(self, inputs) from error
        outputs = rows.to(self._compute_torch_dtype)
        _record_activity(self, outputs)
        return outputs

    @property
    def variable_serialization_spec(self) -> dict:
        """The variables Keras stores, in its order, for each quantization mode provided."""
        return {None: ["embeddings"], "int8": ["embeddings", "embeddings_scale"],
                "int4": ["embeddings", "embeddings_scale", "embeddings_zero", "g_idx"]}

    def quantized_build(self, embeddings_shape: Any, mode: str, config: Any = None) -> None:
        if mode == "int4":
            return quantized.build_int4_embedding(self, embeddings_shape, config or self.quantization_config)
        if mode != "int8":
            raise quantized.unsupported_mode(self, mode)
        quantized.build_int8(self, "embeddings", embeddings_shape, "embeddings_scale", (embeddings_shape[0],))

    def quantize(self, mode: Optional[str] = None, type_check: bool = True, config: Any = None) -> None:
        """Keras's int8 quantization (int8 rows with one abs-max scale per row) and int4 (packed rows, scale and
        zero point per block of 128 columns by default)."""
        mode, config = quantized.resolve(self, mode, config)
        if type_check and type(self) is not Embedding:
            raise quantized.not_implemented(self, "quantize")
        if mode == "int4":
            return quantized.quantize_embedding_int4(self, config)
        if mode != "int8":
            raise quantized.unsupported_mode(self, mode)
        quantized.quantize_embedding(self, config)

    def _int8_call(self, inputs: torch.Tensor) -> torch.Tensor:
        ids = inputs.to(torch.int64) if inputs.is_floating_point() or inputs.dtype != torch.int64 else inputs
        return quantized.embedding_int8_lookup(self, ids)

    def _int4_call(self, inputs: torch.Tensor) -> torch.Tensor:
        ids = inputs.to(torch.int64) if inputs.is_floating_point() or inputs.dtype != torch.int64 else inputs
        return quantized.embedding_int4_lookup(self, ids)

    def compute_mask(self, inputs: torch.Tensor, mask: Any = None) -> Optional[torch.Tensor]:
        """`inputs != 0` when `mask_zero=True` (index 0 is padding), else None."""
        return inputs != 0 if self.mask_zero else None

    def get_config(self) -> dict:
        return {
            **super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim,
            "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
            "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
            "activity_regularizer": regularizers.serialize(self.activity_regularizer),
            "embeddings_constraint": self.embeddings_constraint, "mask_zero": self.mask_zero,
            "input_length": self.input_length,
            **({"quantization_config": quantized.serialized_config(self)} if self.quantization_config else {}),
        }


def _index_error(layer: Embedding, inputs: torch.Tensor) -> Exception:
    """TF's error for an index outside [0, input_dim): which index, where, the valid range and the layer."""
    from torchstrategy.errors import InvalidArgumentError

    bad = ((inputs < 0) | (inputs >= layer.input_dim)).nonzero()
    where = ",".join(str(int(i)) for i in bad[0]) if len(bad) else "?"
    value = int(inputs[tuple(bad[0])]) if len(bad) else "?"
    return InvalidArgumentError(
        None, None, f"Exception encountered when calling Embedding layer '{layer.name}': indices[{where}] = {value} "
        f"is not in [0, {layer.input_dim}). Its input_dim ({layer.input_dim}) must be larger than every index fed "
        "to it: raise input_dim, or map indices into range (e.g. with a lookup layer's OOV index).")


class Lambda(Layer):
    """Wraps a function of tensors as a layer; `arguments` are extra keyword arguments for it."""

    def __init__(self, function: Callable, output_shape: Any = None, mask: Any = None,
                 arguments: Optional[dict] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not callable(function):
            raise ValueError(f"Lambda: `function` must be callable, got {function!r}.")
        self.function, self.output_shape, self.mask, self.arguments = function, output_shape, mask, arguments or {}
        self.supports_masking = mask is not None  # Keras 3: `mask` (a tensor or a function) gives the output mask
        try:
            params = inspect.signature(function).parameters
        except (TypeError, ValueError):  # some builtins have no signature
            params = {}
        self._fn_takes_training = "training" in params
        self._fn_takes_mask = "mask" in params

    def call(self, inputs: Any, mask: Any = None, training: Optional[bool] = None) -> Any:
        kwargs = dict(self.arguments)
        if self._fn_takes_training:
            kwargs["training"] = training
        if self._fn_takes_mask:  # as Keras: the input's mask goes to a function that asks for it
            kwargs["mask"] = mask
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """`mask(inputs, mask)` when `mask` is a function, else `mask` itself (Keras 3)."""
        return self.mask(inputs, mask) if callable(self.mask) else self.mask

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None, safe_mode: Optional[bool] = None
                    ) -> "Lambda":
        """The layer from `get_config()` (the function is kept as an object, so no code is deserialized)."""
        return cls(**config)

    def get_config(self) -> dict:
        # The function itself is kept (not source text): configs round-trip within one process.
        return {**super().get_config(), "function": self.function, "output_shape": self.output_shape,
                "mask": self.mask, "arguments": self.arguments}


class PReLU(Layer):
    """Parametric ReLU: `max(x, 0) - alpha * max(-x, 0)` with a learned `alpha` per input position
    (one value along each of `shared_axes`, 1-based as in Keras).

    >>> PReLU()(torch.tensor([[-1.0, 2.0]])).tolist()
    [[0.0, 2.0]]
    """

    def __init__(self, alpha_initializer: Any = "Zeros", alpha_regularizer: Any = None, alpha_constraint: Any = None,
                 shared_axes: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from torchstrategy.keras import constraints

        self.supports_masking = True
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        else:
            self.shared_axes = list(shared_axes) if isinstance(shared_axes, (list, tuple)) else [shared_axes]

    def build(self, input_shape: Any) -> None:
        param_shape = list(input_shape[1:])
        for axis in self.shared_axes or []:
            if not 1 <= axis < len(input_shape):
                raise ValueError(f"PReLU '{self.name}': shared_axes holds {axis}, but the input of shape "
                                 f"{_shape_str(input_shape)} has axes 1..{len(input_shape) - 1} (1-based, batch excluded).")
            param_shape[axis - 1] = 1
        if any(d is None for d in param_shape):
            raise ValueError(f"PReLU '{self.name}' needs every non-shared axis of its input to be known, got "
                             f"{_shape_str(input_shape)}. Pass shared_axes for the unknown axes.")
        self.alpha = self.add_weight("alpha", tuple(param_shape), initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        axes = {i: input_shape[i] for i in range(1, len(input_shape)) if i not in (self.shared_axes or [])}
        self.input_spec = InputSpec(ndim=len(input_shape), axes=axes)
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return F.relu(inputs) - self.alpha * F.relu(-inputs)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        from torchstrategy.keras import constraints

        return {**super().get_config(), "alpha_initializer": initializers.serialize(self.alpha_initializer),
                "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
                "alpha_constraint": constraints.serialize(self.alpha_constraint), "shared_axes": self.shared_axes}
