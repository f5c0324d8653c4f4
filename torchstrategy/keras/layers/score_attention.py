"""Keras's single-head attention layers over [query, value(, key)] lists: Attention (Luong dot-product or
'concat' scores) and AdditiveAttention (Bahdanau), with masks, causal masking and score dropout."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras.layers.base import Layer


class Attention(Layer):
    """`softmax(scores(query, key)) @ value` over (batch, T, dim) tensors; `score_mode='dot'` scores
    `query @ key^T` (times a learned scalar `scale` if `use_scale`), `'concat'` scores
    `concat_score_weight * sum(tanh(scale * (q + k)))`.

    >>> Attention()([torch.ones(1, 2, 3), torch.ones(1, 4, 3)]).shape
    torch.Size([1, 2, 3])
    """

    def __init__(self, use_scale: bool = False, score_mode: str = "dot", dropout: float = 0.0,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.use_scale, self.score_mode, self.dropout, self.seed = use_scale, score_mode, dropout, seed
        if self.score_mode not in ("dot", "concat"):
            raise ValueError("Invalid value for argument score_mode. Expected one of {'dot', 'concat'}. "
                             f"Received: score_mode={score_mode}")
        self.supports_masking = True
        self._generators: dict[torch.device, torch.Generator] = {}

    def _validate_inputs(self, inputs: Any, mask: Any = None) -> None:
        name = type(self).__name__
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"{name} layer must be called on a list of inputs, namely [query, value] or "
                             f"[query, value, key]. Received: inputs={inputs}.")
        if not 2 <= len(inputs) <= 3:
            raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely [query, value] or "
                             f"[query, value, key]. Received length: {len(inputs)}.")
        if mask is not None:
            if not isinstance(mask, (list, tuple)):
                raise ValueError(f"{name} layer mask must be a list, namely [query_mask, value_mask]. "
                                 f"Received: mask={mask}.")
            if not 2 <= len(mask) <= 3:
                raise ValueError(f"{name} layer accepts mask list of length 2 or 3. Received: mask={mask}.")

    def build(self, input_shape: Any) -> None:
        self._validate_inputs(input_shape)
        self.scale = self.add_weight("scale", (), initializer="ones") if self.use_scale else None
        self.concat_score_weight = (self.add_weight("concat_score_weight", (), initializer="ones")
                                    if self.score_mode == "concat" else None)
        self.built = True

    def _calculate_scores(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        if self.score_mode == "dot":
            scores = torch.matmul(query, key.transpose(-2, -1))
            return scores if self.scale is None else scores * self.scale
        summed = query.unsqueeze(-2) + key.unsqueeze(-3)
        if self.scale is not None:
            summed = self.scale * summed
        return self.concat_score_weight * torch.tanh(summed).sum(-1)

    def _dropout(self, weights: torch.Tensor) -> torch.Tensor:
        generator = None
        if self.seed is not None:
            if weights.device not in self._generators:
                self._generators[weights.device] = torch.Generator(weights.device).manual_seed(int(self.seed))
            generator = self._generators[weights.device]
        keep = 1.0 - self.dropout
        mask = torch.empty_like(weights).bernoulli_(keep, generator=generator)
        return weights * mask / keep

    def call(self, inputs: Any, mask: Any = None, training: bool = False, return_attention_scores: bool = False,
             use_causal_mask: bool = False) -> Any:
        self._validate_inputs(inputs, mask)
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        scores = self._calculate_scores(query, key)
        scores_mask = None if v_mask is None else v_mask.to(torch.bool)
        if use_causal_mask:
            tq, tv = scores.shape[-2], scores.shape[-1]
            causal = torch.ones((1, tq, tv), dtype=torch.bool, device=scores.device).tril()
            scores_mask = causal if scores_mask is None else scores_mask.unsqueeze(-2) & causal
        if scores_mask is not None:
            if scores_mask.dim() == 2:
                scores_mask = scores_mask.unsqueeze(-2)
            big = 65504.0 if scores.dtype == torch.float16 else 1.0e9
            scores = torch.where(scores_mask, scores, scores - big)
        weights = torch.softmax(scores, dim=-1)
        if training and self.dropout > 0:
            weights = self._dropout(weights)
        output = torch.matmul(weights, value)
        if q_mask is not None:
            output = torch.where(q_mask.to(torch.bool).unsqueeze(-1), output, torch.zeros_like(output))
        return (output, weights) if return_attention_scores else output

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if mask is None or mask[0] is None:
            return None
        return mask[0]

    def compute_output_shape(self, input_shape: Any) -> Any:
        query_shape, value_shape = input_shape[0], input_shape[1]
        return (*query_shape[:-1], value_shape[-1])

    def get_config(self) -> dict:
        return {**super().get_config(), "use_scale": self.use_scale, "score_mode": self.score_mode,
                "dropout": self.dropout, "seed": self.seed}


class AdditiveAttention(Attention):
    """Bahdanau attention: scores `sum(scale * tanh(q + k), axis=-1)` with a learned per-feature `scale`.

    >>> AdditiveAttention()([torch.ones(1, 2, 3), torch.ones(1, 4, 3)]).shape
    torch.Size([1, 2, 3])
    """

    def __init__(self, use_scale: bool = True, dropout: float = 0.0, **kwargs: Any) -> None:
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape: Any) -> None:
        self._validate_inputs(input_shape)
        dim = input_shape[0][-1]
        self.scale = self.add_weight("scale", (dim,), initializer="glorot_uniform") if self.use_scale else None
        self.concat_score_weight = None
        self.built = True

    def _calculate_scores(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        summed = torch.tanh(query.unsqueeze(-2) + key.unsqueeze(-3))
        return (summed * self.scale if self.scale is not None else summed).sum(-1)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["score_mode"]
        return config
