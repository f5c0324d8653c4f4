"""GroupQueryAttention against Keras 3.15 outputs frozen in keras_layers_reference.json (self/cross attention,
separate key, scores, causal + sliding window + gate, query/value masks); shapes, config, bad arguments."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("GroupQueryAttention"))
def test_matches_keras(case_id):
    check_case(case_id)


def test_shapes_dropout_and_config():
    layer = layers.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2, dropout=0.5, seed=1)
    q, v = torch.randn(2, 3, 6), torch.randn(2, 5, 6)
    out, scores = layer(q, v, return_attention_scores=True)
    assert out.shape == (2, 3, 6) and scores.shape == (2, 4, 3, 5)
    assert torch.equal(layer(q, v), layer(q, v, training=False))
    assert layer.compute_output_shape((None, 3, 6), (None, 5, 6)) == (None, 3, 6)
    config = layer.get_config()
    assert (config["head_dim"], config["num_query_heads"], config["num_key_value_heads"]) == (2, 4, 2)
    assert layers.GroupQueryAttention.from_config(config).get_config() == config


def test_bad_arguments():
    with pytest.raises(ValueError, match="divisible by `num_key_value_heads`"):
        layers.GroupQueryAttention(2, 3, 2)
    with pytest.raises(ValueError, match="sliding_window"):
        layers.GroupQueryAttention(2, 2, 1, sliding_window=0)
    with pytest.raises(ValueError, match="`value` is missing"):
        layers.GroupQueryAttention(2, 2, 1)(torch.ones(1, 2, 3))
    with pytest.raises(ValueError, match="must be equal"):
        layers.GroupQueryAttention(2, 2, 1).compute_output_shape((None, 3, 4), (None, 3, 5))


def test_build_and_output_shape_need_the_value_shape_as_in_keras():
    # Keras 3.15: build(query_shape, value_shape, key_shape=None) and compute_output_shape likewise.
    for layer in (layers.GroupQueryAttention(head_dim=4, num_query_heads=2, num_key_value_heads=1),
                  layers.MultiHeadAttention(num_heads=2, key_dim=4)):
        with pytest.raises(TypeError, match="value_shape"):
            layer.compute_output_shape((None, 5, 8))
        assert tuple(layer.compute_output_shape((None, 5, 8), (None, 3, 8))) == (None, 5, 8)
        layer.build((None, 5, 8), (None, 3, 8))
        assert layer._query_dense.built
