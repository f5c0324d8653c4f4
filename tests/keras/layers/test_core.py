"""Core layers (Dense, Dropout, Flatten, Reshape, Permute, ReLU family, Softmax, Embedding, Lambda)
against NumPy references on Keras layouts; weights, configs, and error messages."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from torchstrategy.keras import layers

RNG = np.random.default_rng(0)


def _t(array):
    return torch.tensor(np.asarray(array, dtype=np.float32))


def test_dense_matches_x_at_w_plus_b_any_rank():
    dense = layers.Dense(5, activation="tanh")
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    out = dense(_t(x))
    kernel, bias = dense.get_weights()
    assert kernel.shape == (4, 5) and bias.shape == (5,)
    np.testing.assert_allclose(out.detach().numpy(), np.tanh(x @ kernel + bias), rtol=1e-5, atol=1e-6)


def test_dense_default_initializers_glorot_kernel_zero_bias():
    dense = layers.Dense(300)
    dense(torch.zeros(1, 200))
    kernel, bias = dense.get_weights()
    limit = math.sqrt(6.0 / (200 + 300))
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.98 * limit
    np.testing.assert_array_equal(bias, np.zeros(300))
    assert re.fullmatch(r"dense(_\d+)?", dense.name)


def test_dense_set_weights_keras_order_gives_reference():
    dense = layers.Dense(3, input_shape=(4,))
    kernel = RNG.normal(size=(4, 3)).astype(np.float32)
    bias = RNG.normal(size=(3,)).astype(np.float32)
    dense(torch.zeros(1, 4))
    dense.set_weights([kernel, bias])
    x = RNG.normal(size=(6, 4)).astype(np.float32)
    np.testing.assert_allclose(dense(_t(x)).detach().numpy(), x @ kernel + bias, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"expects 2 weight arrays, but set_weights got 1"):
        dense.set_weights([kernel])
    with pytest.raises(ValueError, match=r"weight #0 has shape \(4, 3\).*shape \(3, 4\)"):
        dense.set_weights([kernel.T, bias])


def test_dense_without_bias_and_trainable_weights():
    dense = layers.Dense(2, use_bias=False)
    dense(torch.ones(1, 3))
    assert [tuple(w.shape) for w in dense.trainable_weights] == [(3, 2)]
    assert dense.bias is None


def test_dense_wrong_input_shape_after_build_names_layer_and_shapes():
    dense = layers.Dense(2, name="head")
    dense(torch.ones(2, 3))
    with pytest.raises(ValueError, match=r"layer 'head'.*axis -1.*value 3.*\(None, 3\).*\(None, 4\)"):
        dense(torch.ones(2, 4))


def test_dense_bad_arguments():
    with pytest.raises(ValueError, match="positive integer"):
        layers.Dense(0)
    with pytest.raises(ValueError, match=r"Unknown activation function: 'rellu'.*Valid names"):
        layers.Dense(3, activation="rellu")
    with pytest.raises(ValueError, match=r"Unknown initializer: 'glorot'"):
        layers.Dense(3, kernel_initializer="glorot")
    with pytest.raises(ValueError, match="last \\(features\\) dimension"):
        layers.Dense(3)(torch.ones(4))


def test_dense_regularizers_and_activity_regularizer():
    dense = layers.Dense(3, kernel_regularizer="l2", bias_regularizer=None, activity_regularizer="l1")
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    out = dense(_t(x)).detach().numpy()
    kernel = dense.get_weights()[0]
    activity_loss, kernel_loss = [float(v.detach()) for v in dense.losses]  # Keras 3: added losses first
    np.testing.assert_allclose(kernel_loss, 0.01 * np.square(kernel).sum(), rtol=1e-5)
    np.testing.assert_allclose(activity_loss, 0.01 * np.abs(out).sum() / 4, rtol=1e-5)  # Keras 3: / batch size


def test_dense_config_round_trip():
    dense = layers.Dense(4, activation="relu", use_bias=False, kernel_initializer="he_normal",
                         kernel_regularizer="l2")
    config = dense.get_config()
    assert config["activation"] == "relu" and config["kernel_initializer"]["class_name"] == "HeNormal"
    clone = layers.Dense.from_config(config)
    x = torch.randn(2, 3)
    dense(x)
    clone(x)
    clone.set_weights(dense.get_weights())
    assert torch.allclose(clone(x), dense(x))
    assert clone.get_config() == config


def test_activation_layer():
    x = RNG.normal(size=(3, 4))
    out = layers.Activation("sigmoid")(_t(x)).numpy()
    np.testing.assert_allclose(out, 1 / (1 + np.exp(-x)), rtol=1e-5)
    assert layers.Activation("relu").get_config()["activation"] == "relu"


def test_dropout_inference_is_identity_and_training_scales_survivors():
    drop = layers.Dropout(0.4)
    x = torch.ones(200, 500)
    assert drop(x) is x or torch.equal(drop(x), x)
    assert torch.equal(drop(x, training=False), x)
    out = drop(x, training=True).numpy()
    survivors = out[out != 0]
    np.testing.assert_allclose(survivors, 1 / 0.6, rtol=1e-6)
    n = out.size
    dropped = 1 - survivors.size / n
    assert abs(dropped - 0.4) < 6 * math.sqrt(0.4 * 0.6 / n)


def test_dropout_noise_shape_and_seed():
    x = torch.ones(8, 30, 6)
    a = layers.Dropout(0.5, noise_shape=(None, 1, 6), seed=3)
    b = layers.Dropout(0.5, noise_shape=(None, 1, 6), seed=3)
    out_a, out_b = a(x, training=True), b(x, training=True)
    assert torch.equal(out_a, out_b)  # same seed, same masks
    assert torch.equal(out_a, out_a[:, :1, :].expand_as(out_a))  # mask shared along the size-1 axis
    assert not torch.equal(a(x, training=True), out_a)  # the seeded stream advances
    assert set(np.unique(out_a.numpy())) <= {0.0, 2.0}


def test_dropout_bad_rate():
    with pytest.raises(ValueError, match="expected a value between 0 and 1"):
        layers.Dropout(1.5)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_flatten_uses_channels_last_order(data_format):
    x = RNG.normal(size=(2, 3, 4, 5)).astype(np.float32)
    out = layers.Flatten(data_format=data_format)(_t(x)).numpy()
    nhwc = x if data_format == "channels_last" else np.transpose(x, (0, 2, 3, 1))
    np.testing.assert_array_equal(out, nhwc.reshape(2, -1))


def test_reshape_and_permute():
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(layers.Reshape((4, -1))(_t(x)).numpy(), x.reshape(2, 4, 3))
    np.testing.assert_array_equal(layers.Permute((2, 1))(_t(x)).numpy(), np.transpose(x, (0, 2, 1)))
    with pytest.raises(ValueError, match=r"cannot reshape input of shape \(None, 3, 4\) to target_shape \(5, -1\)"):
        layers.Reshape((5, -1))(_t(x))
    with pytest.raises(ValueError, match="at most one -1"):
        layers.Reshape((-1, -1))
    with pytest.raises(ValueError, match="permutation"):
        layers.Permute((0, 1))


@pytest.mark.parametrize("kwargs", [{}, {"max_value": 1.0}, {"negative_slope": 0.1},
                                    {"threshold": 0.5, "negative_slope": 0.2, "max_value": 2.0}])
def test_relu_layer(kwargs):
    x = np.linspace(-3, 3, 61).reshape(1, -1)
    slope, cap, threshold = kwargs.get("negative_slope", 0.0), kwargs.get("max_value"), kwargs.get("threshold", 0.0)
    positive = np.where(x > threshold, x, 0.0)
    positive = positive if cap is None else np.clip(positive, 0, cap)
    expected = np.where(x > threshold, positive, slope * (x - threshold))
    np.testing.assert_allclose(layers.ReLU(**kwargs)(_t(x)).numpy(), expected, rtol=1e-6, atol=1e-6)


def test_leaky_relu_elu_softmax():
    x = RNG.normal(size=(3, 5))
    np.testing.assert_allclose(layers.LeakyReLU()(_t(x)).numpy(), np.where(x > 0, x, 0.3 * x), rtol=1e-6)
    np.testing.assert_allclose(layers.LeakyReLU(negative_slope=0.1)(_t(x)).numpy(), np.where(x > 0, x, 0.1 * x),
                               rtol=1e-6)
    np.testing.assert_allclose(layers.ELU(0.7)(_t(x)).numpy(), np.where(x > 0, x, 0.7 * np.expm1(x)), rtol=1e-5)
    e = np.exp(x - x.max(0))
    np.testing.assert_allclose(layers.Softmax(axis=0)(_t(x)).numpy(), e / e.sum(0), rtol=1e-5)
    mask = np.array([[1, 1, 0, 1, 0]] * 3, dtype=bool)
    masked = layers.Softmax()(_t(x), mask=torch.tensor(mask)).numpy()
    e = np.where(mask, np.exp(x), 0.0)
    np.testing.assert_allclose(masked, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_embedding_lookup_casts_float_indices_and_masks_zero():
    emb = layers.Embedding(10, 4, mask_zero=True)
    ids = np.array([[0, 3, 9], [2, 2, 0]])
    out = emb(torch.tensor(ids, dtype=torch.float32))
    table = emb.get_weights()[0]
    assert table.shape == (10, 4)
    assert np.abs(table).max() <= 0.05  # 'uniform' = RandomUniform(-0.05, 0.05)
    np.testing.assert_array_equal(out.detach().numpy(), table[ids])
    np.testing.assert_array_equal(emb.compute_mask(torch.tensor(ids)).numpy(), ids != 0)
    assert emb(torch.tensor(ids)).dtype == torch.float32


def test_lambda_layer_with_arguments_and_training():
    scale = layers.Lambda(lambda x, factor: x * factor, arguments={"factor": 3.0})
    np.testing.assert_array_equal(scale(torch.ones(2, 2)).numpy(), np.full((2, 2), 3.0))
    seen = []
    probe = layers.Lambda(lambda x, training=None: seen.append(training) or x)
    probe(torch.ones(1), training=True)
    assert seen == [True]


# ----- PReLU (Keras 3.15 numbers frozen in keras_layers_reference.json) -------------------------------------------
from tests.keras.layers._keras_reference import cases_of, check_case  # noqa: E402


@pytest.mark.parametrize("case_id", cases_of("PReLU"))
def test_prelu_matches_keras(case_id):
    check_case(case_id)


def test_prelu_shared_axes_and_errors():
    layer = layers.PReLU(shared_axes=[1, 2])
    layer(torch.ones(2, 3, 4, 5))
    assert tuple(layer.alpha.shape) == (1, 1, 5)
    with pytest.raises(ValueError, match="shared_axes holds 4"):
        layers.PReLU(shared_axes=4)(torch.ones(2, 3, 4))
    config = layers.PReLU(alpha_initializer="ones", shared_axes=2).get_config()
    assert config["shared_axes"] == [2]
    assert layers.PReLU.from_config(config).get_config()["shared_axes"] == [2]


@pytest.mark.parametrize("bad", [10, -1])
def test_an_embedding_index_out_of_range_names_the_index_the_range_and_the_layer(bad):
    import torchstrategy as tf

    layer = tf.keras.layers.Embedding(10, 4, name="words")
    indices = np.array([[1, 2, 3, 4], [5, 6, 7, bad]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"Embedding layer 'words': indices\[1,3\] = {bad} is not in \[0, 10\)"):
        layer(indices)
    assert layer(indices[:1]).shape == (1, 4, 4)


@pytest.mark.parametrize("shape,use_bias", [((6, 5), True), ((6, 5), False), ((2, 3, 5), True)])
def test_dense_gives_linears_outputs_and_gradients_exactly(shape, use_bias):
    # a 2-D input with a bias runs the addmm F.linear makes of it, straight: bitwise the same numbers
    torch.manual_seed(0)
    dense = layers.Dense(4, use_bias=use_bias)
    x = torch.randn(shape, requires_grad=True)
    out = dense(x)
    reference_x = x.detach().clone().requires_grad_(True)
    kernel = dense.kernel.detach().clone().requires_grad_(True)
    bias = dense.bias.detach().clone().requires_grad_(True) if use_bias else None
    reference = torch.nn.functional.linear(reference_x, kernel.t(), bias)
    assert torch.equal(out, reference)
    grad = torch.randn(out.shape)
    out.backward(grad)
    reference.backward(grad)
    assert torch.equal(x.grad, reference_x.grad) and torch.equal(dense.kernel.grad, kernel.grad)
    assert dense.kernel.grad.stride() == dense.kernel.stride()  # the optimizer's fused kernel takes it as it is
    if use_bias:
        assert torch.equal(dense.bias.grad, bias.grad)
