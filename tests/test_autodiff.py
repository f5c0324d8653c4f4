"""tf.autodiff: ForwardAccumulator's JVPs equal torch.func.jvp's forward-mode results (computed in each test),
TF's behaviours for primals, unconnected values and nesting under GradientTape; GradientTape is tf.GradientTape."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf


def _layer_fn(w, b, x):
    return torch.tanh(x @ w + b).sum(dim=1) ** 2


def test_jvp_of_a_computation_on_variables_equals_forward_mode():
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    w, b = tf.Variable(torch.randn(3, 2)), tf.Variable(torch.randn(2))
    tangents = (torch.randn(3, 2), torch.randn(2))
    with tf.autodiff.ForwardAccumulator(primals=(w, b), tangents=tangents) as acc:
        y = _layer_fn(w, b, x)
    _, want = torch.func.jvp(lambda w_, b_: _layer_fn(w_, b_, x), (w.detach(), b.detach()), tangents)
    torch.testing.assert_close(acc.jvp(y), want)
    torch.testing.assert_close(acc.jvp({"twice": y}), {"twice": want})  # any nest of tensors
    torch.testing.assert_close(acc.jvp(w), tangents[0])  # a primal's JVP is its tangent (TF)


def test_unconnected_values_give_none_or_zeros():
    x = torch.tensor([1.0, 2.0])
    other = torch.tensor(3.0, requires_grad=True)
    with tf.autodiff.ForwardAccumulator(x, torch.tensor([1.0, 1.0])) as acc:
        unrelated = other * 2.0
    assert acc.jvp(unrelated) is None and acc.jvp(torch.tensor(5.0)) is None
    assert acc.jvp(unrelated, unconnected_gradients=tf.UnconnectedGradients.ZERO).tolist() == 0.0


def test_hessian_vector_product_with_a_tape_outside_the_accumulator():
    # TF's documented pattern: GradientTape around ForwardAccumulator gives H @ v
    x = tf.Variable([1.0, 2.0, 3.0])
    v = torch.tensor([1.0, 0.0, -1.0])
    with tf.GradientTape() as tape:
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            y = (x ** 3).sum() + x[0] * x[1]
        jvp = acc.jvp(y)
    hvp = tape.gradient(jvp, x)
    hessian = torch.autograd.functional.hessian(lambda t: (t ** 3).sum() + t[0] * t[1], x.detach())
    torch.testing.assert_close(hvp, hessian @ v)


def test_bad_primals_and_tangents_are_refused_before_any_work():
    with pytest.raises(ValueError, match="shape"):
        tf.autodiff.ForwardAccumulator(torch.zeros(2), torch.zeros(3))
    with pytest.raises(ValueError, match="no derivative"):
        tf.autodiff.ForwardAccumulator(torch.zeros(2, dtype=torch.int32), torch.zeros(2, dtype=torch.int32))
    with pytest.raises(TypeError, match="tensors or variables"):
        tf.autodiff.ForwardAccumulator([1.0], [1.0])
    assert tf.autodiff.GradientTape is tf.GradientTape
