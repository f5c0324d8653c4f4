"""ReversibleEmbedding against Keras 3.15 outputs frozen in keras_layers_reference.json (forward, tied and untied
reverse with a soft cap); masks, shapes, config."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("ReversibleEmbedding"))
def test_matches_keras(case_id):
    check_case(case_id)


def test_weights_mask_and_shapes():
    layer = layers.ReversibleEmbedding(7, 3, tie_weights=False, mask_zero=True)
    out = layer(torch.tensor([[0, 2, 5]]))
    assert out._keras_mask.tolist() == [[False, True, True]]
    assert [tuple(w.shape) for w in layer.weights] == [(7, 3), (3, 7)]
    assert layer.compute_output_shape((None, 3)) == [None, 3, 3]
    assert layer.compute_output_shape((None, 3, 3), reverse=True) == [None, 3, 7]
    config = layer.get_config()
    assert config["tie_weights"] is False and config["mask_zero"] is True
    assert layers.ReversibleEmbedding.from_config(config).get_config() == config
