"""tf.clip_by_norm and tf.clip_by_global_norm against TF 2.21 numbers (tools/tf_reference/tensors_reference.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_clip_by_norm_per_row_and_zero_input():
    out = tf.clip_by_norm(tf.constant([[3.0, 4.0], [0.3, 0.4]]), 1.0, axes=[1])
    np.testing.assert_allclose(out.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    assert tf.clip_by_norm(tf.constant([0.0, 0.0]), 1.0).tolist() == [0.0, 0.0]  # no NaN, as TF


def test_clip_by_global_norm_matches_tf_and_keeps_none():
    clipped, norm = tf.clip_by_global_norm([tf.constant([3.0]), None, tf.constant([[4.0, 12.0]])], 2.0)
    assert float(norm) == 13.0 and clipped[1] is None
    np.testing.assert_allclose(clipped[0].numpy(), [0.46153849363327026], rtol=1e-6)  # TF 2.21
    np.testing.assert_allclose(clipped[2].numpy(), [[0.6153846383094788, 1.846153974533081]], rtol=1e-6)
    same, _ = tf.clip_by_global_norm([tf.constant([0.1])], 2.0)
    assert same[0].tolist() == pytest.approx([0.1])


def test_clip_by_global_norm_non_finite_gives_nan_and_refuses_a_bare_tensor():
    clipped, norm = tf.clip_by_global_norm([tf.constant([math.inf])], 1.0)
    assert math.isinf(float(norm)) and math.isnan(float(clipped[0][0]))
    with pytest.raises(TypeError, match="sequence of tensors"):
        tf.clip_by_global_norm(tf.constant([1.0]), 1.0)
    grad = torch.tensor([3.0, 4.0], requires_grad=True)
    tf.clip_by_norm(grad, 1.0).sum().backward()  # differentiable, as the tape needs
    assert grad.grad is not None
