"""GradientTape, tf.function and the tf.nn loss-scaling helpers against closed-form math."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf


def test_gradient_matches_closed_form_for_a_polynomial():
    w = torch.tensor([1.5, -2.0], requires_grad=True)
    b = torch.tensor(0.5, requires_grad=True)
    with tf.GradientTape() as tape:
        y = (w ** 3).sum() + 4 * b * b
    dw, db = tape.gradient(y, [w, b])
    assert torch.allclose(dw, 3 * w.detach() ** 2)
    assert torch.allclose(db, 8 * b.detach())


def test_non_scalar_target_is_summed_as_tf_does():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with tf.GradientTape() as tape:
        y = x * x
    assert torch.allclose(tape.gradient(y, x), 2 * x.detach())


def test_watch_makes_a_constant_differentiable():
    x = tf.constant(3.0)
    assert not x.requires_grad
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x * x
    assert float(tape.gradient(y, x)) == pytest.approx(27.0)


def test_non_persistent_tape_refuses_a_second_gradient_call():
    x = torch.tensor(2.0, requires_grad=True)
    with tf.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.gradient(y, x)


def test_persistent_tape_gives_several_gradients():
    x = torch.tensor(2.0, requires_grad=True)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        z = y * y
    assert float(tape.gradient(z, x)) == pytest.approx(4 * 2.0 ** 3)
    assert float(tape.gradient(y, x)) == pytest.approx(2 * 2.0)


def test_unconnected_sources_give_none_or_zeros_and_nesting_is_kept():
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(2.0, requires_grad=True)
    with tf.GradientTape(persistent=True) as tape:
        y = a * 5
    grads = tape.gradient(y, {"a": a, "b": b})
    assert float(grads["a"]) == 5.0 and grads["b"] is None
    zeros = tape.gradient(y, [a, b], unconnected_gradients="zero")
    assert float(zeros[1]) == 0.0


def test_watching_an_integer_tensor_is_a_clear_error():
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError, match="floating"):
            tape.watch(torch.tensor([1, 2]))


def test_function_decorator_runs_the_python_function_both_spellings():
    calls = []

    @tf.function
    def square(x):
        calls.append(1)
        return x * x

    @tf.function(reduce_retracing=True)
    def cube(x):
        return x * x * x

    assert int(square(torch.tensor(3))) == 9 and calls == [1]
    assert int(cube(torch.tensor(2))) == 8
    assert square.python_function(4) == 16


def test_compute_average_loss_divides_by_the_global_batch():
    per_example = torch.tensor([1.0, 2.0, 3.0, 6.0])
    assert float(tf.nn.compute_average_loss(per_example)) == pytest.approx(12.0 / 4)
    assert float(tf.nn.compute_average_loss(per_example, global_batch_size=8)) == pytest.approx(12.0 / 8)
    weights = torch.tensor([1.0, 0.0, 1.0, 0.5])
    expected = (1.0 + 3.0 + 3.0) / 4
    assert float(tf.nn.compute_average_loss(per_example, sample_weight=weights)) == pytest.approx(expected)
    with pytest.raises(ValueError, match="positive"):
        tf.nn.compute_average_loss(per_example, global_batch_size=0)


def test_scale_regularization_loss_sums_and_divides_by_replicas():
    assert float(tf.nn.scale_regularization_loss([torch.tensor(1.0), torch.tensor(2.5)])) == pytest.approx(3.5)


def test_function_takes_tf_2_21_arguments():
    import inspect

    assert list(inspect.signature(tf.function).parameters) == [
        "func", "input_signature", "autograph", "jit_compile", "reduce_retracing", "experimental_implements",
        "experimental_autograph_options", "experimental_attributes", "experimental_relax_shapes",
        "experimental_compile", "experimental_follow_type_hints"]
    traced = tf.function(lambda x: x + 1, experimental_relax_shapes=True, experimental_follow_type_hints=True)
    assert int(traced(torch.tensor(1))) == 2
    with pytest.raises(TypeError, match="callable"):
        tf.function(3)


def test_unconnected_gradients_takes_tf_enum_and_strings_and_refuses_others():
    # TF 2.21: the default is tf.UnconnectedGradients.NONE; the enum's values 'none'/'zero' are accepted too
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    for zero in (tf.UnconnectedGradients.ZERO, "zero"):
        with tf.GradientTape() as tape:
            y = a * 5
        assert [float(g) for g in tape.gradient(y, [a, b], unconnected_gradients=zero)] == [5.0, 0.0]
    with tf.GradientTape() as tape:
        y = a * 5
    with pytest.raises(ValueError, match="unconnected_gradients: 'zeros'"):
        tape.gradient(y, [a, b], unconnected_gradients="zeros")
    with tf.GradientTape() as tape:
        y = a * 5
    assert tape.gradient(y, [a, b], unconnected_gradients=tf.UnconnectedGradients.NONE)[1] is None


def test_jacobian_and_batch_jacobian_match_tf():
    # TF 2.21: y = tanh(x @ w) * x[:, :2]; tape.jacobian(y, [w, u]) and tape.batch_jacobian(y, x), rounded to 5 places
    x = tf.Variable([[1., 2., 3.], [4., 5., 6.]])
    w = tf.Variable([[1., -1.], [0.5, 2.], [3., 0.]])
    u = tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as tape:
        y = torch.tanh(x @ w) * x[:, :2]
    jw, ju = tape.jacobian(y, [w, u])
    assert ju is None and tuple(jw.shape) == (2, 2, 3, 2)
    assert torch.allclose(jw[0, 1], torch.tensor([[0.0, 0.01973], [0.0, 0.03946], [0.0, 0.0592]]), atol=1e-5)
    assert torch.allclose(jw[1, 1], torch.tensor([[0.0, 0.00049], [0.0, 0.00061], [0.0, 0.00074]]), atol=1e-5)
    assert float(jw[0, 0].abs().sum()) < 1e-5
    batch = tape.batch_jacobian(y, x)
    want = torch.tensor([[[1.0, 0.0, 0.0], [-0.01973, 1.03452, 0.0]], [[1.0, 0.0, 0.0], [-0.00012, 1.00023, 0.0]]])
    assert tuple(batch.shape) == (2, 2, 3) and torch.allclose(batch, want, atol=1e-5)
    assert tuple(tape.jacobian(y, u, unconnected_gradients=tf.UnconnectedGradients.ZERO).shape) == (2, 2)
    with tf.GradientTape() as once:
        z = x * 2
    assert torch.equal(once.jacobian(z, x).reshape(6, 6), 2 * torch.eye(6))
    with pytest.raises(RuntimeError, match="non-persistent"):
        once.jacobian(z, x)
