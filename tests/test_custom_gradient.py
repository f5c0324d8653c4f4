"""tf.custom_gradient / tf.grad_pass_through: the user's gradient is what GradientTape and backward() see."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))

    return tf.math.log1p(e), grad


def test_custom_gradient_is_used_by_the_tape():
    x = tf.Variable([0.0, 100.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(log1pexp(x))
    grad = tape.gradient(y, x)
    np.testing.assert_allclose(grad.numpy(), [0.5, 1.0])  # the numerically stable form, as TF's docs show
    assert float(log1pexp(tf.constant(0.0))) == pytest.approx(np.log(2.0))


def test_custom_gradient_with_variables_and_two_inputs():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def scaled(a, b):
        def grad(dy, variables=None):
            return (dy * 10, dy * 20), [dy * 30 for _ in variables]

        return a * b * w, grad

    a, b = torch.tensor(1.0, requires_grad=True), torch.tensor(2.0, requires_grad=True)
    with tf.GradientTape() as tape:
        out = scaled(a, b)
    assert float(out) == 6.0
    assert [float(g) for g in tape.gradient(out, [a, b, w])] == [10.0, 20.0, 30.0]


def test_custom_gradient_errors():
    w = tf.Variable(1.0)

    @tf.custom_gradient
    def uses_variable(x):
        return x * w, lambda dy: dy

    with pytest.raises(TypeError, match="variables"):
        uses_variable(torch.tensor(1.0, requires_grad=True))

    @tf.custom_gradient
    def no_grad_fn(x):
        return x

    with pytest.raises(TypeError, match="outputs, grad_fn"):
        no_grad_fn(torch.tensor(1.0))


def test_grad_pass_through_rounds_forward_and_passes_gradient():
    x = torch.tensor([0.4, 1.6], requires_grad=True)
    y = tf.grad_pass_through(torch.round)(x)
    assert y.tolist() == [0.0, 2.0]
    (y * tf.constant([2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [2.0, 3.0]
