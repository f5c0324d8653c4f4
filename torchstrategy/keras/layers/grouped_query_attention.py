"""Keras's GroupQueryAttention: multi-head attention where groups of query heads share key/value heads,
with Keras's EinsumDense projections (query, key, optional gate, value, attention_output), masks, causal and
sliding-window masking, and score dropout."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch

from torchstrategy.keras import initializers, regularizers
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.core import Dropout
from torchstrategy.keras.layers.einsum_dense import EinsumDense


class GroupQueryAttention(Layer):
    """`num_query_heads` query heads of size `head_dim` attend over `num_key_value_heads` key/value heads,
    each shared by `num_query_heads // num_key_value_heads` query heads.

    >>> layer = GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2)
    >>> layer(torch.ones(1, 3, 8), torch.ones(1, 5, 8)).shape
    torch.Size([1, 3, 8])
    """

    def __init__(self, head_dim: int, num_query_heads: int, num_key_value_heads: int, dropout: float = 0.0,
                 use_bias: bool = True, sliding_window: Optional[int] = None, flash_attention: Optional[bool] = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, use_gate: bool = False,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError("`num_query_heads` must be divisible by `num_key_value_heads`. Received: "
                             f"num_query_heads={num_query_heads}, num_key_value_heads={num_key_value_heads}.")
        if sliding_window is not None and (not isinstance(sliding_window, int) or sliding_window <= 0):
            raise ValueError(f"`sliding_window` must be `None` or a positive integer. Received: "
                             f"sliding_window={sliding_window}")
        if flash_attention and dropout > 0.0:
            raise ValueError("Dropout is not supported when flash attention is enabled. Please set dropout to 0.0 "
                             "to use flash attention.")
        self.head_dim, self.num_query_heads, self.num_key_value_heads = head_dim, num_query_heads, num_key_value_heads
        self.num_repeats = num_query_heads // num_key_value_heads
        self.dropout, self.use_bias, self.use_gate = dropout, use_bias, use_gate
        self.sliding_window, self._flash_attention, self.seed = sliding_window, flash_attention, seed
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        # Keras 3 regularizes both the projections' activity and this layer's own output
        self.sublayer_activity_regularizer = regularizers.get(activity_regularizer)
        self.activity_regularizer = self.sublayer_activity_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self._inverse_sqrt_head_dim = 1.0 / math.sqrt(float(head_dim))

    def __call__(self, query: Any, value: Any = None, *args: Any, **kwargs: Any) -> Any:
        if value is None:
            raise ValueError(f"Layer '{self.name}' (GroupQueryAttention) is called as layer(query, value, key=None, "
                             "...); `value` is missing (pass the query again for self-attention).")
        if not self.built and isinstance(query, torch.Tensor) and isinstance(value, torch.Tensor):
            key = kwargs.get("key", args[0] if args else None)
            shapes = [None if t is None else (None,) + tuple(t.shape[1:]) for t in (query, value, key)]
            self.build(*shapes)
        for name, tensor in (("query_mask", query), ("value_mask", value), ("key_mask", kwargs.get("key"))):
            if kwargs.get(name) is None and getattr(tensor, "_keras_mask", None) is not None:
                kwargs[name] = tensor._keras_mask
        return super().__call__(query, value, *args, **kwargs)

    def _dense(self, equation: str, output_shape: tuple, bias_axes: str, name: str, **extra: Any) -> EinsumDense:
        return EinsumDense(equation, output_shape=output_shape, bias_axes=bias_axes if self.use_bias else None,
                           name=name, kernel_initializer=self.kernel_initializer,
                           bias_initializer=self.bias_initializer, kernel_regularizer=self.kernel_regularizer,
                           bias_regularizer=self.bias_regularizer,
                           activity_regularizer=self.sublayer_activity_regularizer,
                           kernel_constraint=self.kernel_constraint, bias_constraint=self.bias_constraint,
                           dtype=self.dtype_policy, **extra)

    def build(self, query_shape: Any, value_shape: Any, key_shape: Any = None) -> None:
        if value_shape is None:
            raise ValueError(f"Layer '{self.name}' (GroupQueryAttention) needs both query and value to build; call "
                             "it as layer(query, value).")
        key_shape = value_shape if key_shape is None else key_shape
        self.feature_dim = query_shape[-1]
        heads_q, heads_kv = (None, self.num_query_heads, self.head_dim), (None, self.num_key_value_heads, self.head_dim)
        self._query_dense = self._dense("bqm,muh->bquh", heads_q, "uh", "query")
        self._query_dense.build(tuple(query_shape))
        self._key_dense = self._dense("bkm,mvh->bkvh", heads_kv, "vh", "key")
        self._key_dense.build(tuple(key_shape))
        if self.use_gate:
            self._gate_dense = self._dense("bqm,muh->bquh", heads_q, "uh", "gate", activation="sigmoid")
            self._gate_dense.build(tuple(query_shape))
        self._value_dense = self._dense("bkm,mvh->bkvh", heads_kv, "vh", "value")
        self._value_dense.build(tuple(value_shape))
        self._dropout_layer = Dropout(rate=self.dropout, seed=self.seed)
        self._output_dense = self._dense("bquh,uhm->bqm", (None, self.feature_dim), "m", "attention_output")
        self._output_dense.build((None, None, self.num_query_heads, self.head_dim))
        self.built = True

    def _attention_mask(self, query: torch.Tensor, value: torch.Tensor, query_mask: Any, value_mask: Any,
                        key_mask: Any, attention_mask: Any, use_causal_mask: bool) -> Optional[torch.Tensor]:
        auto = None

        def both(a: Optional[torch.Tensor], b: torch.Tensor) -> torch.Tensor:
            return b if a is None else a & b

        if query_mask is not None:
            auto = both(auto, torch.as_tensor(query_mask).to(torch.bool).unsqueeze(-1))
        for mask in (value_mask, key_mask):
            if mask is not None:
                auto = both(auto, torch.as_tensor(mask).to(torch.bool).unsqueeze(-2))
        tq, tv = query.shape[1], value.shape[1]
        rows = torch.arange(tq, device=query.device).reshape(1, tq, 1)
        cols = torch.arange(tv, device=query.device).reshape(1, 1, tv)
        if use_causal_mask:
            auto = both(auto, rows >= cols)
        if self.sliding_window is not None:
            auto = both(auto, (rows - cols).abs() < self.sliding_window)
        if auto is None:
            return None if attention_mask is None else torch.as_tensor(attention_mask).to(torch.bool)
        return auto if attention_mask is None else torch.as_tensor(attention_mask).to(torch.bool) & auto

    def call(self, query: torch.Tensor, value: torch.Tensor, key: Optional[torch.Tensor] = None,
             query_mask: Any = None, value_mask: Any = None, key_mask: Any = None, attention_mask: Any = None,
             return_attention_scores: bool = False, training: Optional[bool] = None,
             use_causal_mask: bool = False) -> Any:
        key = value if key is None else key
        mask = self._attention_mask(query, value, query_mask, value_mask, key_mask, attention_mask, use_causal_mask)
        gate = self._gate_dense(query) if self.use_gate else None
        q = self._query_dense(query) * self._inverse_sqrt_head_dim
        k = self._key_dense(key).repeat_interleave(self.num_repeats, dim=2)
        v = self._value_dense(value).repeat_interleave(self.num_repeats, dim=2)
        scores = torch.einsum("bquh,bkuh->buqk", q, k)
        if mask is not None:
            while mask.dim() < scores.dim():
                mask = mask.unsqueeze(-3)
            # Keras's Softmax with a mask: masked scores set to a large negative number, masked weights zeroed
            # (a row with every key masked gets zero weights)
            scores = torch.where(mask, scores, torch.full_like(scores, -3e4 if scores.dtype == torch.float16 else -1e9))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = torch.where(mask, weights, torch.zeros_like(weights))
        dropped = self._dropout_layer(weights, training=training) if self.dropout > 0.0 else weights
        output = torch.einsum("buqk,bkuh->bquh", dropped, v)
        output = self._output_dense(output * gate if gate is not None else output)
        return (output, weights) if return_attention_scores else output

    def compute_mask(self, inputs: Any, previous_mask: Any) -> Any:
        """The query's mask passes through (Keras's parameter names)."""
        return previous_mask

    def compute_output_shape(self, query_shape: Any, value_shape: Any, key_shape: Any = None) -> Any:
        key_shape = value_shape if key_shape is None else key_shape
        if value_shape is not None and query_shape[-1] != value_shape[-1]:
            raise ValueError(f"The last dimension of `query_shape` and `value_shape` must be equal, but are "
                             f"{query_shape[-1]}, {value_shape[-1]}. Received: query_shape={query_shape}, "
                             f"value_shape={value_shape}")
        if value_shape is not None and tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError(f"All dimensions of `value` and `key`, except the last one, must be equal. Received: "
                             f"value_shape={value_shape} and key_shape={key_shape}")
        return query_shape

    def get_config(self) -> dict:
        return {
            **super().get_config(), "head_dim": self.head_dim, "num_query_heads": self.num_query_heads,
            "num_key_value_heads": self.num_key_value_heads, "use_bias": self.use_bias, "use_gate": self.use_gate,
            "sliding_window": self.sliding_window, "dropout": self.dropout,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "activity_regularizer": regularizers.serialize(self.sublayer_activity_regularizer),
            "kernel_constraint": self.kernel_constraint, "bias_constraint": self.bias_constraint,
            "seed": self.seed,
        }
