"""Identity, RepeatVector, ZeroPadding1D/3D, Cropping3D, UpSampling3D against Keras 3.15 outputs frozen in
keras_layers_reference.json; compute_output_shape, configs and bad arguments."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("Identity", "RepeatVector", "ZeroPadding1D", "ZeroPadding3D",
                                             "Cropping3D", "UpSampling3D"))
def test_matches_keras(case_id):
    check_case(case_id)


@pytest.mark.parametrize("layer,shape,expected", [
    (layers.RepeatVector(3), (None, 4), (None, 3, 4)),
    (layers.ZeroPadding1D((1, 2)), (None, 5, 2), (None, 8, 2)),
    (layers.ZeroPadding1D(1, data_format="channels_first"), (None, 2, 5), (None, 2, 7)),
    (layers.ZeroPadding3D(1), (None, 2, None, 3, 4), (None, 4, None, 5, 4)),
    (layers.Cropping3D(((1, 0), (0, 1), (1, 1))), (None, 3, 3, 4, 2), (None, 2, 2, 2, 2)),
    (layers.UpSampling3D((2, 1, 3), data_format="channels_first"), (None, 1, 2, 2, 2), (None, 1, 4, 2, 6)),
    (layers.Identity(), (None, 7), (None, 7)),
])
def test_compute_output_shape(layer, shape, expected):
    assert layer.compute_output_shape(shape) == expected


def test_channels_first_matches_channels_last():
    x = torch.randn(2, 3, 4, 5, 6)
    last = layers.UpSampling3D((1, 2, 3))(x)
    first = layers.UpSampling3D((1, 2, 3), data_format="channels_first")(x.movedim(-1, 1))
    assert torch.equal(first.movedim(1, -1), last)
    last = layers.Cropping3D(1)(x)
    first = layers.Cropping3D(1, data_format="channels_first")(x.movedim(-1, 1))
    assert torch.equal(first.movedim(1, -1), last)


def test_bad_arguments():
    with pytest.raises(TypeError, match="integer value for `n`"):
        layers.RepeatVector(2.5)
    with pytest.raises(ValueError, match="cropping"):
        layers.Cropping3D(((1, 2), (1,), (0, 0)))
    with pytest.raises(ValueError, match="leaves nothing"):
        layers.Cropping3D(2)(torch.ones(1, 3, 5, 5, 1))
    with pytest.raises(ValueError, match="size"):
        layers.UpSampling3D((2, 0, 1))
    with pytest.raises(ValueError, match="expected ndim=3"):
        layers.ZeroPadding1D()(torch.ones(2, 3))


def test_config_round_trip():
    for layer in (layers.ZeroPadding3D(((1, 0), (0, 2), (1, 1))), layers.Cropping3D(2), layers.UpSampling3D(2),
                  layers.RepeatVector(4), layers.ZeroPadding1D((0, 3))):
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config
