"""CategoryEncoding and Discretization against Keras 3.15 outputs frozen in keras_layers_reference.json;
Discretization.adapt's quantile boundaries (frozen from Keras), count weights, shapes, configs, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("CategoryEncoding", "Discretization"))
def test_matches_keras(case_id):
    check_case(case_id)


def test_discretization_adapt_matches_keras():
    # Keras 3.15.1: Discretization(num_bins=5, epsilon=0.05).adapt(sin(arange(1000) * 0.731 + 0.37))
    layer = layers.Discretization(num_bins=5, epsilon=0.05)
    layer.adapt(np.sin(np.arange(1000) * 0.731 + 0.37).astype("float32"))
    np.testing.assert_allclose(layer.bin_boundaries, [-0.806577205657959, -0.30749788880348206,
                                                      0.31076401472091675, 0.8124063014984131], rtol=1e-6)
    # ... and Discretization(num_bins=3).adapt([arange(10), arange(5, 30)]) over two batches
    layer = layers.Discretization(num_bins=3)
    layer.adapt([np.arange(10.0), np.arange(5.0, 30.0)])
    np.testing.assert_allclose(layer.bin_boundaries, [7.666666507720947, 17.333332061767578], rtol=1e-6)
    assert layer(torch.tensor([0.0, 10.0, 20.0])).tolist() == [0, 1, 2]


def test_count_weights_and_shapes():
    out = layers.CategoryEncoding(4, output_mode="count")(torch.tensor([[0, 1, 1]]),
                                                          count_weights=torch.tensor([[0.5, 1.0, 2.0]]))
    assert out.tolist() == [[0.5, 3.0, 0.0, 0.0]]
    assert layers.CategoryEncoding(4, output_mode="one_hot").compute_output_shape((None, 1)) == (None, 4)
    assert layers.CategoryEncoding(4).compute_output_shape((None, 3)) == (None, 4)
    assert layers.Discretization([0.0], output_mode="multi_hot").compute_output_shape((None, 3)) == (None, 2)


@pytest.mark.parametrize("make,message", [
    (lambda: layers.CategoryEncoding(), "num_tokens must be set"),
    (lambda: layers.CategoryEncoding(3, output_mode="int"), "output_mode"),
    (lambda: layers.CategoryEncoding(3)(torch.tensor([0, 3])), "0 <= values < num_tokens"),
    (lambda: layers.Discretization(), "either `num_bins` or `bin_boundaries`"),
    (lambda: layers.Discretization([0.0], num_bins=3), "Both `num_bins` and `bin_boundaries`"),
    (lambda: layers.Discretization(num_bins=-1), "greater than or equal to 0"),
    (lambda: layers.Discretization(num_bins=3)(torch.ones(2)), "call `adapt"),
    (lambda: layers.Discretization([0.0]).adapt(np.ones(3)), "Cannot adapt"),
])
def test_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_config_round_trip():
    layer = layers.Discretization(num_bins=3)
    layer.adapt(np.arange(30.0))
    clone = layers.Discretization.from_config(layer.get_config())
    assert clone.bin_boundaries == layer.bin_boundaries
    config = layers.CategoryEncoding(6, output_mode="count").get_config()
    assert layers.CategoryEncoding.from_config(config).get_config() == config
