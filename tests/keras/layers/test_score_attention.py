"""Attention and AdditiveAttention against Keras 3.15 outputs frozen in keras_layers_reference.json (dot, scaled,
separate key, concat scores, causal masks); masks, returned scores, dropout, configs and bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("Attention", "AdditiveAttention"))
def test_matches_keras(case_id):
    check_case(case_id)


def test_masks_and_scores_follow_numpy():
    rng = np.random.default_rng(0)
    q, v = rng.normal(size=(2, 3, 4)).astype(np.float32), rng.normal(size=(2, 5, 4)).astype(np.float32)
    q_mask = np.array([[1, 1, 0], [1, 0, 1]], bool)
    v_mask = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], bool)
    out, scores = layers.Attention()([torch.from_numpy(q), torch.from_numpy(v)],
                                     mask=[torch.from_numpy(q_mask), torch.from_numpy(v_mask)],
                                     return_attention_scores=True)
    logits = q @ v.transpose(0, 2, 1) - 1e9 * (~v_mask[:, None, :])
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(scores.numpy(), weights, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), (weights @ v) * q_mask[..., None], atol=1e-5)


def test_dropout_only_in_training():
    layer = layers.Attention(dropout=0.5, seed=1)
    q = torch.randn(2, 3, 4)
    assert torch.equal(layer([q, q]), layer([q, q], training=False))
    _, scores = layer([q, q], training=True, return_attention_scores=True)
    assert bool((scores == 0).any())


def test_bad_arguments():
    with pytest.raises(ValueError, match="score_mode"):
        layers.Attention(score_mode="general")
    with pytest.raises(ValueError, match="list of inputs"):
        layers.Attention()(torch.ones(1, 2, 3))
    with pytest.raises(ValueError, match="length 2 or 3"):
        layers.AdditiveAttention()([torch.ones(1, 2, 3)])


def test_config_and_output_shape():
    layer = layers.Attention(use_scale=True, score_mode="concat", dropout=0.1, seed=3)
    config = layer.get_config()
    assert {k: config[k] for k in ("use_scale", "score_mode", "dropout", "seed")} == \
        {"use_scale": True, "score_mode": "concat", "dropout": 0.1, "seed": 3}
    assert layers.Attention.from_config(config).get_config() == config
    additive = layers.AdditiveAttention(use_scale=False).get_config()
    assert "score_mode" not in additive and additive["use_scale"] is False
    assert layer.compute_output_shape([(None, 3, 4), (None, 5, 6)]) == (None, 3, 6)
