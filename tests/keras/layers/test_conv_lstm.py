"""ConvLSTM1D/2D/3D against Keras 3.15 outputs frozen in keras_layers_reference.json (valid/same padding,
strides, dilation, returned states, channels_first, go_backwards, no bias); shapes, dropout, errors, config."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"))
def test_matches_keras(case_id):
    check_case(case_id)


def test_weights_shapes_and_forget_bias():
    layer = layers.ConvLSTM2D(4, (3, 2))
    layer(torch.ones(1, 2, 5, 5, 3))
    assert [tuple(w.shape) for w in layer.weights] == [(3, 2, 3, 16), (3, 2, 4, 16), (16,)]
    bias = layer.get_weights()[2]
    assert (bias[4:8] == 1).all() and (bias[:4] == 0).all() and (bias[8:] == 0).all()


def test_output_shapes():
    layer = layers.ConvLSTM2D(2, 3, strides=2, return_sequences=True, return_state=True)
    assert layer.compute_output_shape((None, 4, 9, 7, 3)) == ((None, 4, 4, 3, 2), (None, 4, 3, 2), (None, 4, 3, 2))
    out = layer(torch.randn(2, 4, 9, 7, 3))
    assert [tuple(t.shape) for t in out] == [(2, 4, 4, 3, 2), (2, 4, 3, 2), (2, 4, 3, 2)]


def test_dropout_only_in_training():
    layer = layers.ConvLSTM1D(2, 2, dropout=0.5, recurrent_dropout=0.5, seed=1)
    x = torch.randn(2, 3, 5, 2)
    assert torch.equal(layer(x), layer(x, training=False))
    assert not torch.equal(layer(x, training=True), layer(x))


def test_bad_arguments():
    with pytest.raises(ValueError, match="filters"):
        layers.ConvLSTM2D(0, 3)
    with pytest.raises(ValueError, match="padding"):
        layers.ConvLSTM2D(2, 3, padding="causal")
    with pytest.raises(ValueError, match="must be a 5-D tensor"):
        layers.ConvLSTM2D(2, 3)(torch.ones(1, 2, 5, 3))
    with pytest.raises(ValueError, match="dropout"):
        layers.ConvLSTM1D(2, 3, dropout=1.5)


def test_config_round_trip():
    layer = layers.ConvLSTM3D(2, 2, padding="same", return_sequences=True, recurrent_dropout=0.1)
    config = layer.get_config()
    assert config["filters"] == 2 and config["kernel_size"] == (2, 2, 2) and config["return_sequences"] is True
    assert layers.ConvLSTM3D.from_config(config).get_config() == config
