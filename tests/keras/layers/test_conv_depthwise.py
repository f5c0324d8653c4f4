"""DepthwiseConv1D, SeparableConv1D (and the Convolution1DTranspose alias) against Keras 3.15 outputs frozen in
keras_layers_reference.json, SeparableConv2D against TF 2.21 outputs frozen here; weight shapes, configs and
bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case, golden_array as _arr, run_with_weights as _run
from torchstrategy.keras import layers
from torchstrategy.keras.layers.conv_depthwise import SeparableConv2D

# SEPARABLE_CASES: keras.layers.SeparableConv2D(3, **kwargs) on _arr((1, 5, 5, 2), 30 + i), weights
# [depthwise_kernel, pointwise_kernel, bias] = _arr(shape, 40 + 3 * i + j): (kwargs, output shape, output).
SEPARABLE_CASES = [
    ({'kernel_size': 3, 'strides': 2, 'padding': 'same', 'depth_multiplier': 2}, (1, 3, 3, 3),
     np.array([
        0.4218134, -0.3781629, 0.206408, 0.01395035, -0.7767918, 1.034645, 0.8239022, -0.9414007,
        1.048147, -0.1605268, 0.0766201, 0.7167594, 1.011846, -1.537989, 0.8353044, 0.2795183,
        1.185014, -0.2226047, 0.4338698, -0.06545833, 0.5809873, 0.5421689, 1.138944, -0.05716902,
        0.6291118, -0.4020198, 1.681566], np.float32)),
    ({'kernel_size': (3, 2), 'strides': 1, 'padding': 'valid', 'dilation_rate': (2, 1), 'depth_multiplier': 1},
     (1, 1, 4, 3),
     np.array([
        -1.949634, 0.811797, -0.1106363, -0.385317, 0.272989, 0.9366056, -0.2291476, 0.401928,
        0.15677, -0.2427544, 0.8069153, -1.789736], np.float32)),
]


@pytest.mark.parametrize("case_id", cases_of("DepthwiseConv1D", "SeparableConv1D", "Convolution1DTranspose"))
def test_matches_keras(case_id):
    check_case(case_id)


def test_weight_shapes_and_aliases():
    layer = layers.SeparableConv1D(4, 3, depth_multiplier=2)
    layer(torch.ones(1, 6, 3))
    assert [tuple(w.shape) for w in layer.weights] == [(3, 3, 2), (1, 6, 4), (4,)]
    assert layers.SeparableConvolution1D is layers.SeparableConv1D
    assert layers.Convolution1DTranspose is layers.Conv1DTranspose


def test_bad_arguments():
    with pytest.raises(ValueError, match="depth_multiplier"):
        layers.DepthwiseConv1D(3, depth_multiplier=0)
    with pytest.raises(ValueError, match="depth_multiplier"):
        layers.SeparableConv1D(2, 3, depth_multiplier=-1)
    with pytest.raises(ValueError, match="3-D tensor"):
        layers.DepthwiseConv1D(3)(torch.ones(1, 2, 5, 3))


def test_config_round_trip():
    for layer in (layers.DepthwiseConv1D(3, depth_multiplier=2, padding="same"),
                  layers.SeparableConv1D(4, 2, strides=2, depthwise_initializer="ones")):
        config = layer.get_config()
        assert "kernel_initializer" not in config and "depthwise_initializer" in config
        assert type(layer).from_config(config).get_config() == config


@pytest.mark.parametrize("index", range(len(SEPARABLE_CASES)))
def test_separable_conv2d_matches_tf(index):
    kwargs, shape, expected = SEPARABLE_CASES[index]
    layer = SeparableConv2D(3, **kwargs)
    x = _arr((1, 5, 5, 2), 30 + index)
    layer(torch.tensor(x))
    names = [name for name, _ in layer._weight_order]
    assert names == ["depthwise_kernel", "pointwise_kernel", "bias"]
    multiplier = kwargs["depth_multiplier"]
    assert tuple(layer.pointwise_kernel.shape) == (1, 1, 2 * multiplier, 3)
    weights = [_arr(tuple(w.shape), 40 + 3 * index + j) for j, w in enumerate(layer.weights)]
    out = _run(layer, x, weights)
    assert out.shape == shape
    np.testing.assert_allclose(out.ravel(), expected, rtol=1e-5, atol=1e-5)
    first = SeparableConv2D(3, data_format="channels_first", **kwargs)
    out_first = _run(first, np.ascontiguousarray(x.transpose(0, 3, 1, 2)), weights)
    np.testing.assert_allclose(out_first.transpose(0, 2, 3, 1), out, rtol=1e-6, atol=1e-6)


def test_separable_conv2d_config_and_errors():
    layer = SeparableConv2D(4, 3, strides=2, padding="same", depth_multiplier=2, pointwise_initializer="ones")
    config = layer.get_config()
    for key in ("depth_multiplier", "depthwise_initializer", "pointwise_initializer", "pointwise_regularizer",
                "depthwise_constraint"):
        assert key in config
    assert "groups" not in config and "kernel_initializer" not in config
    clone = SeparableConv2D.from_config(config)
    assert clone.get_config() == config
    clone(torch.zeros(1, 6, 6, 3))
    np.testing.assert_array_equal(clone.pointwise_kernel.detach().numpy(), 1.0)
    with pytest.raises(ValueError, match="depth_multiplier"):
        SeparableConv2D(4, 3, depth_multiplier=0)
    with pytest.raises(ValueError, match="kernel is larger than its input"):
        SeparableConv2D(4, 5)(torch.zeros(1, 3, 3, 2))


@pytest.mark.parametrize("make, shape", [(lambda: layers.SeparableConv1D(2, 3, activity_regularizer="l2"), (1, 5, 3)),
                                         (lambda: layers.SeparableConv2D(2, 3, activity_regularizer="l2"), (1, 5, 5, 3)),
                                         (lambda: layers.DepthwiseConv2D(3, activity_regularizer="l2"), (1, 5, 5, 3))])
def test_activity_regularizer_adds_its_loss(make, shape):
    layer = make()
    out = layer(torch.ones(shape))
    assert len(layer.losses) == 1
    torch.testing.assert_close(layer.losses[0], 0.01 * out.square().sum() / shape[0])
