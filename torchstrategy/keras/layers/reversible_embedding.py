"""Keras's ReversibleEmbedding: an Embedding that can also map hidden vectors back to vocabulary logits
(`reverse=True`) with the transposed table (tied) or its own (hidden, vocab) kernel, optionally soft-capped."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.core import Embedding


class ReversibleEmbedding(Embedding):
    """`layer(ids)` embeds; `layer(hidden, reverse=True)` gives `hidden @ embeddings.T` (or
    `reverse_embeddings` when `tie_weights=False`), then `tanh(logits / cap) * cap` if `logit_soft_cap`.

    >>> layer = ReversibleEmbedding(10, 4)
    >>> layer(layer(torch.tensor([[1, 2]])), reverse=True).shape
    torch.Size([1, 2, 10])
    """

    def __init__(self, input_dim: int, output_dim: int, tie_weights: bool = True,
                 embeddings_initializer: Any = "uniform", embeddings_regularizer: Any = None,
                 embeddings_constraint: Any = None, mask_zero: bool = False, reverse_dtype: Any = None,
                 logit_soft_cap: Optional[float] = None, **kwargs: Any) -> None:
        if kwargs.pop("quantization_config", None) is not None:
            raise NotImplementedError("ReversibleEmbedding(quantization_config=...) is not supported here (quantized "
                                      "tables are a Keras-backend feature). Leave it None.")
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer,
                         embeddings_regularizer=embeddings_regularizer, embeddings_constraint=embeddings_constraint,
                         mask_zero=mask_zero, **kwargs)
        self.tie_weights, self.reverse_dtype, self.logit_soft_cap = bool(tie_weights), reverse_dtype, logit_soft_cap
        self.supports_masking = False  # Keras: the mask rides on the forward result only, set in call

    def build(self, input_shape: Any = None) -> None:
        super().build(input_shape)
        if not self.tie_weights:
            self.add_weight("reverse_embeddings", (self.output_dim, self.input_dim),
                            initializer=self.embeddings_initializer)
        self.built = True

    def call(self, inputs: torch.Tensor, reverse: bool = False) -> torch.Tensor:
        if not reverse:
            result = super().call(inputs)
            if self.mask_zero:
                result._keras_mask = inputs != 0
            return result
        kernel = self.embeddings.t() if self.tie_weights else self.reverse_embeddings
        if self.reverse_dtype is not None:
            dtype = backend.to_torch_dtype(self.reverse_dtype)
            inputs, kernel = inputs.to(dtype), kernel.to(dtype)
        else:
            kernel = kernel.to(inputs.dtype)
        logits = torch.matmul(inputs, kernel)
        if self.logit_soft_cap is not None:
            logits = torch.tanh(logits / self.logit_soft_cap) * self.logit_soft_cap
        return logits

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None

    def compute_output_shape(self, input_shape: Any, reverse: bool = False) -> Any:
        shape = list(input_shape)
        if reverse:
            shape[-1] = self.input_dim
        else:
            shape.append(self.output_dim)
        return shape

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("input_length", None)
        return {**config, "quantization_config": None, "tie_weights": self.tie_weights, "reverse_dtype": self.reverse_dtype,
                "logit_soft_cap": self.logit_soft_cap}
