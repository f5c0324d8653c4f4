"""GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout1D/2D/3D and ActivityRegularization: identity at
inference, the noise's statistics in training (Keras 3.15 formulas), configs, bad arguments, and the activity
penalty reaching `losses` and fit's loss."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torchstrategy import keras
from torchstrategy.keras import layers

X = torch.from_numpy(np.random.default_rng(0).normal(size=(4000, 50)).astype(np.float32))


@pytest.mark.parametrize("layer", [
    layers.GaussianNoise(0.5), layers.GaussianDropout(0.3), layers.AlphaDropout(0.2),
    layers.SpatialDropout1D(0.5), layers.ActivityRegularization(l1=0.1),
])
def test_inference_is_identity(layer):
    x = X[:8].reshape(8, 5, 10)
    assert torch.equal(layer(x), x)
    assert torch.equal(layer(x, training=False), x)


def test_gaussian_noise_statistics():
    noise = layers.GaussianNoise(0.4, seed=3)(torch.zeros(4000, 50), training=True)
    assert abs(float(noise.mean())) < 0.01
    assert abs(float(noise.std()) - 0.4) < 0.01


def test_gaussian_dropout_statistics():
    out = layers.GaussianDropout(0.2)(torch.ones(4000, 50), training=True)
    assert abs(float(out.mean()) - 1.0) < 0.01
    assert abs(float(out.std()) - math.sqrt(0.2 / 0.8)) < 0.01


def test_alpha_dropout_keeps_selu_moments_and_values():
    rate = 0.3
    out = layers.AlphaDropout(rate, seed=1)(X, training=True)
    # inputs with zero mean and unit variance keep them (the point of alpha dropout)
    assert abs(float(out.mean())) < 0.02
    assert abs(float(out.std()) - 1.0) < 0.03
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * rate
    kept = torch.isclose(out, a * X + b, atol=1e-6)
    dropped = torch.isclose(out, torch.full_like(out, a * alpha_p + b), atol=1e-6)
    assert bool((kept | dropped).all())
    assert abs(float(dropped.float().mean()) - rate) < 0.01


def test_alpha_dropout_noise_shape_shares_the_draw():
    out = layers.AlphaDropout(0.5, noise_shape=(None, 1, 4))(torch.randn(64, 6, 4), training=True)
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.5) * (1 + 0.5 * alpha_p ** 2)) ** -0.5
    dropped = torch.isclose(out, torch.full_like(out, a * alpha_p - a * alpha_p * 0.5), atol=1e-6)
    assert bool((dropped == dropped[:, :1]).all())  # one draw per (sample, channel)


@pytest.mark.parametrize("layer,shape,channel_axis", [
    (layers.SpatialDropout1D(0.5), (200, 7, 6), 2),
    (layers.SpatialDropout2D(0.5), (200, 3, 4, 6), 3),
    (layers.SpatialDropout2D(0.5, data_format="channels_first"), (200, 6, 3, 4), 1),
    (layers.SpatialDropout3D(0.5), (100, 2, 3, 2, 6), 4),
])
def test_spatial_dropout_drops_whole_channels(layer, shape, channel_axis):
    out = layer(torch.ones(shape), training=True)
    values = set(np.unique(out.numpy()).tolist())
    assert values <= {0.0, 2.0}
    per_channel = out.movedim(channel_axis, 1).reshape(shape[0], shape[channel_axis], -1)
    assert bool((per_channel == per_channel[:, :, :1]).all())
    assert abs(float((per_channel[:, :, 0] == 0).float().mean()) - 0.5) < 0.08


def test_spatial_dropout_rank_is_checked():
    with pytest.raises(ValueError, match="expected ndim=4"):
        layers.SpatialDropout2D(0.2)(torch.ones(2, 3, 4), training=True)


@pytest.mark.parametrize("make,message", [
    (lambda: layers.GaussianNoise(1.5), "stddev=1.5"),
    (lambda: layers.GaussianDropout(-0.1), "rate=-0.1"),
    (lambda: layers.AlphaDropout(2), "rate=2"),
    (lambda: layers.SpatialDropout1D(1.2), "rate"),
])
def test_bad_rates_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("layer,expected", [
    (layers.GaussianNoise(0.1, seed=2), {"stddev": 0.1, "seed": 2}),
    (layers.GaussianDropout(0.3), {"rate": 0.3, "seed": None}),
    (layers.AlphaDropout(0.3, noise_shape=[None, 1]), {"rate": 0.3, "seed": None, "noise_shape": [None, 1]}),
    (layers.SpatialDropout1D(0.3), {"rate": 0.3, "seed": None}),
    (layers.SpatialDropout3D(0.3, data_format="channels_first"), {"rate": 0.3, "data_format": "channels_first"}),
    (layers.ActivityRegularization(l1=0.1, l2=0.2), {"l1": 0.1, "l2": 0.2}),
])
def test_config_round_trip(layer, expected):
    config = layer.get_config()
    assert {k: config[k] for k in expected} == expected
    assert "activity_regularizer" not in config
    assert type(layer).from_config(config).get_config() == config


def test_activity_regularization_penalty_joins_losses_and_fit_loss():
    x = np.random.default_rng(1).normal(size=(8, 3)).astype(np.float32)
    layer = layers.ActivityRegularization(l1=0.1, l2=0.2)
    out = layer(torch.from_numpy(x))
    expected = (0.1 * np.abs(x).sum() + 0.2 * np.square(x).sum()) / 8
    np.testing.assert_allclose(float(layer.losses[0]), expected, rtol=1e-5)
    layer(torch.from_numpy(x[:4]))  # a new outermost call replaces the penalty
    assert len(layer.losses) == 1
    np.testing.assert_allclose(float(layer.losses[0]), (0.1 * np.abs(x[:4]).sum() + 0.2 * np.square(x[:4]).sum()) / 4,
                               rtol=1e-5)
    assert torch.equal(out, torch.from_numpy(x))

    model = keras.Sequential([keras.Input((3,)), layers.Dense(2, kernel_initializer="ones", use_bias=False),
                              layers.ActivityRegularization(l2=1.0)])
    model.compile(loss="mse", optimizer="sgd")
    y = np.zeros((8, 2), np.float32)
    loss = model.evaluate(x, y, batch_size=8, verbose=0)
    h = x.sum(axis=1, keepdims=True).repeat(2, axis=1)
    np.testing.assert_allclose(loss, np.mean(h ** 2) + np.square(h).sum() / 8, rtol=1e-5)
