"""Keras MultiHeadAttention: query/key/value/attention_output projections with Keras's EinsumDense
kernel shapes, masked scaled dot-product attention over the sequence axis, and score dropout."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy.keras import initializers, regularizers
from torchstrategy.keras.layers.base import InputSpec, Layer, _shape_str
from torchstrategy.keras.layers.core import Dropout, _record_activity


class _Projection(Layer):
    """Keras's EinsumDense as MultiHeadAttention uses it: contracts the last `bound_dims` input axes
    with a kernel of shape (*those axes, *output_shape); bias has shape `output_shape`."""

    def __init__(self, output_shape: Sequence[int], bound_dims: int, use_bias: bool, kernel_initializer: Any,
                 bias_initializer: Any, kernel_regularizer: Any, bias_regularizer: Any, activity_regularizer: Any,
                 kernel_constraint: Any, bias_constraint: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.projected_shape, self.bound_dims, self.use_bias = tuple(output_shape), bound_dims, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.activity_regularizer = activity_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def build(self, input_shape: Any) -> None:
        bound = tuple(input_shape[-self.bound_dims:])
        self.kernel = self.add_weight("kernel", shape=bound + self.projected_shape,
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", shape=self.projected_shape, initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        axes = {axis: int(size) for axis, size in zip(range(-self.bound_dims, 0), bound)}
        self.input_spec = InputSpec(min_ndim=self.bound_dims + 1, axes=axes)
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        lead = inputs.shape[:inputs.dim() - self.bound_dims]
        kernel = self.kernel.reshape(-1, math.prod(self.projected_shape))
        bias = None if self.bias is None else self.bias.reshape(-1)
        outputs = F.linear(inputs.reshape(*lead, kernel.shape[0]), kernel.t(), bias)
        outputs = outputs.reshape(*lead, *self.projected_shape)
        _record_activity(self, outputs)
        return outputs


def _large_negative(dtype: torch.dtype) -> float:
    # Keras's masking constant: -1e9, or -3e4 where float16 cannot hold -1e9.
    return -3e4 if dtype == torch.float16 else -1e9


class MultiHeadAttention(Layer):
    """Multi-head attention as `keras.layers.MultiHeadAttention` (attention over axis 1 of 3-D inputs).

    Weights, in Keras order: query kernel (query_dim, num_heads, key_dim) and bias (num_heads, key_dim),
    key kernel (key_dim_in, num_heads, key_dim), value kernel (value_dim_in, num_heads, value_dim), and
    attention_output kernel (num_heads, value_dim, *output_shape) with bias `output_shape`.

    >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
    >>> mha(torch.ones(3, 5, 8), torch.ones(3, 7, 6)).shape
    torch.Size([3, 5, 8])
    """

    def __init__(
        self, num_heads: int, key_dim: int, value_dim: Optional[int] = None, dropout: float = 0.0,
        use_bias: bool = True, output_shape: Union[None, int, Sequence[int]] = None, attention_axes: Any = None,
        sliding_window: Optional[int] = None, flash_attention: Optional[bool] = None,
        kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
        bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
        bias_constraint: Any = None, use_gate: bool = False, seed: Optional[int] = None, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        for name, value, optional in (("num_heads", num_heads, False), ("key_dim", key_dim, False),
                                      ("value_dim", value_dim, True)):
            if (value is not None or not optional) and (not isinstance(value, int) or isinstance(value, bool)
                                                        or value <= 0):
                raise ValueError(f"MultiHeadAttention: `{name}` must be a positive integer"
                                 f"{' or None' if optional else ''}. Received: {name}={value!r}")
        if not 0.0 <= float(dropout) <= 1.0:
            raise ValueError(f"MultiHeadAttention: `dropout` must be between 0 and 1. Received: dropout={dropout!r}")
        if attention_axes is not None and tuple(attention_axes if not isinstance(attention_axes, int)
                                                else (attention_axes,)) != (1,):
            raise ValueError(
                "MultiHeadAttention here attends over the sequence axis of 3-D (batch, seq, features) inputs only, "
                f"so `attention_axes` must be None (or (1,)). Received: attention_axes={attention_axes!r}. Reshape "
                "multi-axis inputs to one sequence axis instead.")
        if use_gate or sliding_window is not None:
            raise ValueError("MultiHeadAttention: the Keras 3 extensions use_gate=True and sliding_window are not "
                             f"supported here (received use_gate={use_gate!r}, sliding_window={sliding_window!r}); "
                             "leave them at their defaults.")
        if output_shape is not None and not isinstance(output_shape, int):
            try:
                output_shape = tuple(int(d) for d in output_shape)
            except TypeError:
                raise ValueError(f"MultiHeadAttention: `output_shape` must be None, an int or a tuple of ints. "
                                 f"Received: output_shape={output_shape!r}") from None
        self.num_heads, self.key_dim = num_heads, key_dim
        self.value_dim = value_dim or key_dim
        self.dropout, self.use_bias, self.seed = float(dropout), bool(use_bias), seed
        self._output_shape = (output_shape,) if isinstance(output_shape, int) else output_shape
        self.attention_axes = None if attention_axes is None else (1,)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        # Keras 3 regularizes the projections' activity only, not this layer's own output
        self._activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.supports_masking = True

    # ----- building ------------------------------------------------------------------------
    def __call__(self, query: Any, value: Any = None, *args: Any, **kwargs: Any) -> Any:
        if value is None:
            raise ValueError(f"Layer '{self.name}' (MultiHeadAttention) is called as mha(query, value, key=None, "
                             "...); `value` is missing (pass the query again for self-attention).")
        if not self.built and all(isinstance(t, torch.Tensor) for t in (query, value)):
            # Keras builds from all three shapes; the base class only sees the query's.
            key = kwargs.get("key", args[0] if args else None)
            shapes = [(None,) + tuple(t.shape[1:]) if isinstance(t, torch.Tensor) else None
                      for t in (query, value, key)]
            from torchstrategy.keras import dtype_policies as precision

            with precision.no_autocast():
                self.build(*shapes)
        return super().__call__(query, value, *args, **kwargs)

    def _sublayer_kwargs(self) -> dict:
        return dict(kernel_initializer=self.kernel_initializer, bias_initializer=self.bias_initializer,
                    kernel_regularizer=self.kernel_regularizer, bias_regularizer=self.bias_regularizer,
                    activity_regularizer=self._activity_regularizer, kernel_constraint=self.kernel_constraint,
                    bias_constraint=self.bias_constraint, use_bias=self.use_bias, dtype=self.dtype_policy)

    def build(self, query_shape: Any, value_shape: Any, key_shape: Any = None) -> None:
        if value_shape is None:
            raise ValueError(f"Layer '{self.name}' (MultiHeadAttention) needs both query and value to build; "
                             "call it as mha(query, value).")
        key_shape = value_shape if key_shape is None else key_shape
        for what, shape in (("query", query_shape), ("value", value_shape), ("key", key_shape)):
            if len(shape) != 3 or shape[-1] is None:
                raise ValueError(
                    f"Layer '{self.name}' (MultiHeadAttention): `{what}` must be 3-D (batch, seq, features) with a "
                    f"known feature size here (attention_axes other than the default are not supported); "
                    f"received {what} shape {_shape_str(shape)}.")
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError(f"Layer '{self.name}' (MultiHeadAttention): `value` and `key` must have the same shape "
                             f"except the last axis. Received value shape {_shape_str(value_shape)} and key shape "
                             f"{_shape_str(key_shape)}.")
        common = self._sublayer_kwargs()
        heads = self.num_heads
        self._query_dense = _Projection((heads, self.key_dim), 1, name="query", **common)
        self._key_dense = _Projection((heads, self.key_dim), 1, name="key", **common)
        self._value_dense = _Projection((heads, self.value_dim), 1, name="value", **common)
        out_shape = self._output_shape or (int(query_shape[-1]),)
        self._output_dense = _Projection(out_shape, 2, name="attention_output", **common)
        # built here, in Keras's weight order (query, key, value, attention_output)
        self._query_dense.build(tuple(query_shape))
        self._key_dense.build(tuple(key_shape))
        self._value_dense.build(tuple(value_shape))
        self._output_dense.build((None, None, heads, self.value_dim))
        self._dropout_layer = Dropout(self.dropout, seed=self.seed, dtype=self.dtype_policy)
        self.built = True

    @property
    def query_dense(self) -> Layer:
        return self._query_dense

    @property
    def key_dense(self) -> Layer:
        return self._key_dense

    @property
    def value_dense(self) -> Layer:
        return self._value_dense

    @property
    def output_dense(self) -> Layer:
        return self._output_dense

    # ----- calling -------------------------------------------------------------------------
    def _attention_mask(self, query: torch.Tensor, value: torch.Tensor, query_mask: Any, value_mask: Any,
                        key_mask: Any, attention_mask: Any, use_causal_mask: bool) -> Optional[torch.Tensor]:
        """All masks AND-ed into one boolean (B or 1, T, S) mask (True = may attend), or None."""
        mask = None

        def merge(current: Optional[torch.Tensor], new: torch.Tensor) -> torch.Tensor:
            return new if current is None else current & new

        device = query.device
        if query_mask is not None:
            mask = merge(mask, torch.as_tensor(query_mask, device=device).bool().unsqueeze(-1))
        for extra in (value_mask, key_mask):
            if extra is not None:
                mask = merge(mask, torch.as_tensor(extra, device=device).bool().unsqueeze(-2))
        if use_causal_mask:
            rows, cols = int(query.shape[1]), int(value.shape[1])
            mask = merge(mask, torch.ones(rows, cols, dtype=torch.bool, device=device).tril().unsqueeze(0))
        if attention_mask is not None:
            given = torch.as_tensor(attention_mask, device=device).bool()
            mask = given if mask is None else given & mask
        return mask

    def call(
        self, query: torch.Tensor, value: torch.Tensor, key: Optional[torch.Tensor] = None, query_mask: Any = None,
        value_mask: Any = None, key_mask: Any = None, attention_mask: Any = None,
        return_attention_scores: bool = False, training: Optional[bool] = None, use_causal_mask: bool = False,
    ) -> Any:
        key = value if key is None else key
        mask = self._attention_mask(query, value, query_mask, value_mask, key_mask, attention_mask, use_causal_mask)
        q = self._query_dense(query)  # (B, T, heads, key_dim)
        k = self._key_dense(key)      # (B, S, heads, key_dim)
        v = self._value_dense(value)  # (B, S, heads, value_dim)
        q = q * (1.0 / math.sqrt(float(self.key_dim)))
        scores = torch.einsum("bsnh,btnh->bnts", k, q)
        if mask is not None:
            while mask.dim() < scores.dim():  # (B, T, S) -> (B, 1, T, S): one mask for every head
                mask = mask.unsqueeze(-3)
            scores = scores.masked_fill(~mask, _large_negative(scores.dtype))
        probabilities = torch.softmax(scores, dim=-1)
        # TF computes the attention differently when scores or dropout are needed: there a query row whose
        # keys are all masked gets zero weights; otherwise (fused path) it averages over every key. Follow both.
        if mask is not None and (return_attention_scores or self.dropout > 0.0):
            probabilities = probabilities.masked_fill(~mask, 0.0)
        dropped = self._dropout_layer(probabilities, training=training) if self.dropout > 0.0 else probabilities
        attended = torch.einsum("bnts,bsnv->btnv", dropped, v)
        outputs = self._output_dense(attended)
        if return_attention_scores:
            return outputs, probabilities
        return outputs

    def compute_output_shape(self, query_shape: Any, value_shape: Any, key_shape: Any = None) -> tuple:
        """(batch, T, *output_shape), output_shape defaulting to the query's feature size."""
        query_shape = tuple(query_shape)
        if key_shape is not None and value_shape is not None and tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError(f"MultiHeadAttention: `value` and `key` must have the same shape except the last axis. "
                             f"Received value shape {value_shape} and key shape {key_shape}.")
        return query_shape[:-1] + tuple(self._output_shape) if self._output_shape else query_shape

    def get_config(self) -> dict:
        return {
            **super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
            "value_dim": self.value_dim, "dropout": self.dropout, "use_bias": self.use_bias,
            "output_shape": None if self._output_shape is None else list(self._output_shape),
            "attention_axes": self.attention_axes,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self._activity_regularizer),
            "kernel_constraint": self.kernel_constraint, "bias_constraint": self.bias_constraint, "seed": self.seed,
        }
