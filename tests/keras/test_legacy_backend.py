"""tf.keras.backend's legacy functions (K.*) against TF 2.21 (values and dtypes frozen in
keras_backend_ops_reference.json), K.set_value on weights and learning rates, K-written losses in fit,
and the top-level Keras 3 names (keras.Layer, keras.config, keras.version...)."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.keras import backend_ops_cases as cases
from tests.keras.test_ops import assert_matches

K = tf.keras.backend

with open(cases.REFERENCE) as _f:
    _REFERENCE = json.load(_f)


def _as_torch(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(array))


@pytest.mark.parametrize("case_id,name,args,kwargs", cases.BACKEND_CASES, ids=[c[0] for c in cases.BACKEND_CASES])
def test_backend_matches_tf(case_id, name, args, kwargs):
    expected = _REFERENCE["backend"][case_id]
    result = getattr(K, name)(*cases.resolve(list(args), _as_torch), **kwargs)
    assert_matches(result, expected, case_id)


def test_config_functions_round_trip_and_reach_the_losses():
    assert (K.floatx(), K.epsilon(), K.image_data_format()) == ("float32", 1e-7, "channels_last")
    try:
        K.set_epsilon(1e-2)
        # bce clips p to [eps, 1 - eps]: with eps = 0.01, p = 0 for a positive label costs -log(0.01 + 0.01)
        loss = tf.keras.losses.binary_crossentropy(np.array([[1.0]], np.float32), np.array([[0.0]], np.float32))
        np.testing.assert_allclose(float(loss[0]), -np.log(0.02), rtol=1e-6)
        K.set_floatx("float64")
        assert K.constant([1.0]).dtype == torch.float64 and tf.keras.ops.ones((1,)).dtype == torch.float64
        K.set_image_data_format("channels_first")
        assert tf.keras.config.image_data_format() == "channels_first"
    finally:
        K.set_epsilon(1e-7)
        K.set_floatx("float32")
        K.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="channels_first"):
        K.set_image_data_format("NHWC")
    with pytest.raises(ValueError, match="floatx"):
        K.set_floatx("float8")


def test_variables_values_and_shapes():
    v = K.variable([[1.0, 2.0], [3.0, 4.0]])
    assert v.dtype == torch.float32 and K.int_shape(v) == (2, 2) and K.count_params(v) == 4
    assert K.ndim(v) == 2 and K.dtype(v) == "float32"
    np.testing.assert_array_equal(K.shape(v).numpy(), [2, 2])
    K.set_value(v, np.ones((2, 2)))
    K.update_add(v, np.full((2, 2), 2.0))
    K.update_sub(v, np.ones((2, 2)))
    np.testing.assert_array_equal(K.get_value(v), np.full((2, 2), 2.0, np.float32))
    K.batch_set_value([(v, np.zeros((2, 2)))])
    assert K.batch_get_value([v])[0].sum() == 0
    assert K.get_value(K.zeros((2, 3))).shape == (2, 3) and float(K.get_value(K.eye(2)).sum()) == 2.0
    K.moving_average_update(v, np.full((2, 2), 10.0), 0.9)  # v -= (v - 10) * 0.1
    np.testing.assert_allclose(K.get_value(v), np.full((2, 2), 1.0), rtol=1e-6)
    with pytest.raises(ValueError, match="shape"):
        K.set_value(v, np.zeros(3))
    with pytest.raises(TypeError, match="needs a variable"):
        K.set_value(3.0, 1.0)


def test_set_value_on_keras_weights_and_learning_rate_changes_fit():
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.1), loss="mse")
    kernel = model.layers[0].kernel
    K.set_value(kernel, np.ones((3, 1)))
    K.set_value(model.layers[0].bias, np.zeros(1))
    np.testing.assert_array_equal(K.get_value(kernel), np.ones((3, 1), np.float32))
    K.set_value(model.optimizer.learning_rate, 1e-3)
    assert K.get_value(model.optimizer.learning_rate) == np.float32(1e-3)
    x, y = np.eye(3, dtype=np.float32), np.zeros((3, 1), np.float32)
    model.fit(x, y, batch_size=3, epochs=1, verbose=0, shuffle=False)
    assert all(group["lr"] == pytest.approx(1e-3) for group in model.optimizer.param_groups)
    # one full-batch SGD step on mse: dL/dw_i = 2 * (w_i - 0) / 3 = 2/3, so w = 1 - 1e-3 * 2/3
    np.testing.assert_allclose(K.get_value(kernel), np.full((3, 1), 1 - 1e-3 * 2 / 3), rtol=1e-6)


def _fit_with_loss(loss) -> np.ndarray:
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.5), loss=loss)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 4)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 16)]
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    return np.array(history.history["loss"] + [w.sum() for w in model.get_weights()])


def test_custom_loss_written_with_k_equals_the_torch_one_in_fit():
    def k_loss(y_true, y_pred):
        clipped = K.clip(y_pred, K.epsilon(), 1 - K.epsilon())
        return K.mean(K.square(y_pred - y_true), axis=-1) - K.sum(y_true * K.log(clipped), axis=-1)

    def torch_loss(y_true, y_pred):
        clipped = y_pred.clamp(1e-7, 1 - 1e-7)
        return ((y_pred - y_true) ** 2).mean(dim=-1) - (y_true * torch.log(clipped)).sum(dim=-1)

    np.testing.assert_allclose(_fit_with_loss(k_loss), _fit_with_loss(torch_loss), rtol=1e-6, atol=1e-6)


def test_randomness_is_seeded_shaped_and_typed():
    a, b = K.random_normal((1000,), mean=2.0, stddev=0.5, seed=3), K.random_normal((1000,), mean=2.0, stddev=0.5, seed=3)
    assert torch.equal(a, b) and a.dtype == torch.float32
    assert abs(float(a.mean()) - 2.0) < 0.1 and abs(float(a.std()) - 0.5) < 0.05
    u = K.random_uniform((2, 500), minval=-1.0, maxval=3.0, seed=1)
    assert u.shape == (2, 500) and float(u.min()) >= -1.0 and float(u.max()) < 3.0
    assert set(K.random_bernoulli((100,), p=0.5, seed=2).unique().tolist()) <= {0.0, 1.0}


def test_k_helpers_on_keras_tensors_and_gradients():
    inputs = tf.keras.Input((3,))
    assert K.is_keras_tensor(inputs) and not K.is_keras_tensor(torch.zeros(3))
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    (K.sum(K.stop_gradient(x) * x)).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, -2.0])
    assert K.switch(torch.tensor(True), lambda: 1, lambda: 2) == 1
    with pytest.raises(ValueError, match="1D"):
        K.softmax(torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="axis 0"):
        K.batch_dot(torch.ones(2, 3), torch.ones(2, 3), axes=0)


def test_top_level_keras3_names():
    keras = tf.keras
    assert keras.Layer is keras.layers.Layer and keras.InputSpec is keras.layers.InputSpec
    assert keras.Loss is keras.losses.Loss and keras.Metric is keras.metrics.Metric
    assert keras.Optimizer is keras.optimizers.Optimizer and keras.Initializer is keras.initializers.Initializer
    assert keras.Regularizer is keras.regularizers.Regularizer
    dense = keras.layers.Dense(2)
    dense.build((None, 3))
    assert isinstance(dense.kernel, keras.Variable)
    assert keras.version() == "3.15.1" and keras.config.backend() == "tensorflow" == K.backend()
    assert keras.config.floatx() == "float32" and keras.config.epsilon() == 1e-7
    assert keras.config.enable_unsafe_deserialization() is None


@pytest.mark.parametrize("case_id,name,args,kwargs", cases.BACKEND_CASES, ids=[c[0] for c in cases.BACKEND_CASES])
def test_backend_on_numpy_inputs_matches_tf(case_id, name, args, kwargs):
    expected = _REFERENCE["backend"][case_id]
    result = getattr(K, name)(*cases.resolve(list(args), lambda a: a), **kwargs)
    assert_matches(result, expected, case_id)
