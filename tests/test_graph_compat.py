"""tf.Assert, tf.gradients/hessians (refused eagerly, as TF), enums and value helpers of graph_compat."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_assert_raises_with_the_data_only_when_false():
    assert tf.Assert(tf.constant(True), ["fine"]) is None
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"x is, \[1 2\]"):
        tf.Assert(tf.constant(False), ["x is", tf.constant([1, 2])])
    with pytest.raises(TypeError, match="scalar bool"):
        tf.Assert(tf.constant([True, True]), ["x"])


def test_graph_only_gradients_are_refused_like_tf():
    with pytest.raises(RuntimeError, match="Use tf.GradientTape instead"):  # TF 2.21's eager message
        tf.gradients(tf.constant(1.0), tf.constant(1.0))
    with pytest.raises(RuntimeError, match="GradientTape"):
        tf.hessians(tf.constant(1.0), tf.constant(1.0))


def test_enums_and_helpers():
    assert tf.UnconnectedGradients.ZERO.value == "zero" and tf.AggregationMethod.DEFAULT == 0
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = tf.constant(2.0) * 3
    assert float(tape.gradient(y, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)) == 0.0
    np.testing.assert_array_equal(tf.make_ndarray(tf.constant([1, 2])), [1, 2])
    assert tf.complex64 is torch.complex64 and tf.double is torch.float64 and isinstance(tf.float32, tf.DType)
