"""Model, loss and tf.Variable results convert to NumPy as TF's eager tensors do (issue 21 point 3), while
autograd, GradientTape and fit keep working on them."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy import keras
from torchstrategy._machinery.eager import EagerTensor


def _model():
    keras.utils.set_random_seed(3)
    return keras.Sequential([keras.layers.Dense(3, input_shape=(4,)), keras.layers.Dense(2)])


X = np.arange(20, dtype=np.float32).reshape(5, 4) / 10
Y = np.linspace(0, 1, 10).reshape(5, 2)  # float64, as a NumPy user's labels usually are


def _expected(model):
    (k1, b1), (k2, b2) = [(layer.kernel.numpy(), layer.bias.numpy()) for layer in model.layers]
    return (X @ k1 + b1) @ k2 + b2


def test_model_outputs_convert_to_numpy_outside_any_tape():
    model = _model()
    out = model(X)
    np.testing.assert_allclose(np.asarray(out), _expected(model), rtol=1e-5)
    np.testing.assert_allclose(out.numpy(), _expected(model), rtol=1e-5)
    assert out.numpy().dtype == np.float32 and out.requires_grad  # recorded, as torch users expect
    # a NumPy operand on either side converts to the tensor's dtype, as in TF (float64 labels -> float32)
    right, left = model(X) - Y, Y - model(X)
    assert right.dtype == left.dtype == torch.float32
    np.testing.assert_allclose(right.numpy(), _expected(model) - Y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(left.numpy(), Y - _expected(model), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.trainable_variables[0].numpy(), model.layers[0].kernel.numpy())


def test_loss_object_result_converts_and_formats():
    model = _model()
    loss = keras.losses.MeanSquaredError()(Y, model(X))
    want = np.mean((_expected(model) - Y) ** 2)
    assert loss.numpy() == pytest.approx(want, rel=1e-5)
    assert float(loss) == pytest.approx(want, rel=1e-5)
    assert repr(loss).startswith("<tf.Tensor: shape=(), dtype=float32, numpy=")


def test_tape_gradients_are_plain_tensors_and_torch_backward_still_works():
    model = _model()
    with tf.GradientTape() as tape:
        loss = keras.losses.MeanSquaredError()(Y, model(X))
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(type(g) is torch.Tensor for g in grads)
    model.zero_grad()
    keras.losses.MeanSquaredError()(Y, model(X)).backward()
    for grad, variable in zip(grads, model.trainable_variables):
        np.testing.assert_allclose(variable.grad.numpy(), grad.numpy(), rtol=1e-6)
    # the analytic gradient of the last bias: mean over rows of 2 * (pred - y) / 2 outputs
    np.testing.assert_allclose(grads[-1].numpy(), (2 * (_expected(model) - Y) / Y.size).sum(0), rtol=1e-4)


def test_outputs_stay_plain_tensors_inside_strategy_run():
    model = _model()
    seen = tf.distribute.get_strategy().run(lambda x: type(model(x)), args=(torch.from_numpy(X),))
    assert seen is torch.Tensor
    assert isinstance(model(X), EagerTensor)


def test_variable_arithmetic_converts_like_tf():
    v = tf.Variable([1.0, 2.0])
    np.testing.assert_allclose((v * 2).numpy(), [2.0, 4.0])
    np.testing.assert_allclose(np.asarray(v * v), [1.0, 4.0])
    np.testing.assert_allclose((np.array([3.0, 3.0]) - v).numpy(), [2.0, 1.0])
    assert (np.array([3.0, 3.0]) - v).dtype == torch.float32
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v * v)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 4.0])
    assert repr(tf.Variable(2.5)).endswith("numpy=2.5>")


def test_fit_still_trains_with_eager_outputs_outside():
    model = _model()
    model.compile(optimizer="sgd", loss="mse")
    before = float(keras.losses.MeanSquaredError()(Y, model(X)))
    model.fit(X, Y, epochs=3, batch_size=5, verbose=0)
    assert float(keras.losses.MeanSquaredError()(Y, model(X))) < before


def test_numpy_functions_and_ufuncs_work_on_results_as_on_tf_tensors():
    model = _model()
    out = model(X)
    assert np.mean(out) == pytest.approx(_expected(model).mean(), rel=1e-5)  # np.mean(tf_tensor) works in TF
    assert isinstance(np.mean(out), np.floating) and np.argmax(out) == np.argmax(_expected(model))
    np.testing.assert_array_equal(np.isnan(out), np.zeros((5, 2), bool))
    np.testing.assert_allclose(np.stack([out, out]), np.stack([_expected(model)] * 2), rtol=1e-5)
    assert isinstance(np.ones((5, 2)) * out, EagerTensor)  # operators keep giving tensors
    v = tf.Variable([1.0, 3.0])
    assert np.mean(v) == 2.0 and np.allclose(v, [1.0, 3.0])


def test_gradients_come_back_plain_and_sparse_rows_are_not_wrapped():
    import torch

    from torchstrategy._machinery.eager import EagerTensor, as_eager

    table = torch.nn.Parameter(torch.randn(10, 3))
    loss = as_eager(torch.nn.functional.embedding(torch.tensor([2, 7, 7]), table, sparse=True)).sum()
    assert isinstance(loss, EagerTensor)
    (grad,) = torch.autograd.grad(loss, [table])  # an embedding's sparse row gradient: torch's default wrap fails
    assert type(grad) is torch.Tensor and grad.layout == torch.sparse_coo
    assert grad.to_dense()[7].tolist() == [2.0, 2.0, 2.0] and grad.to_dense()[0].abs().sum() == 0
