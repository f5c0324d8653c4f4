"""tf.nn.isotonic_regression against TF 2.21 numbers (frozen below): decreasing, increasing, axis 0,
segment ids, and gradients through the block means."""
from __future__ import annotations

import numpy as np
import torch

import torchstrategy as tf

X = np.array([[1.0, 3, 2, 4, 0.5, 0.7], [3, 2, 1, 5, 6, 0]], np.float32)
DECREASING = [[2.5, 2.5, 2.5, 2.5, 0.6, 0.6], [3.4, 3.4, 3.4, 3.4, 3.4, 0.0]]  # TF 2.21
DECREASING_IDS = [[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 1]]
INCREASING = [[1.0, 2.04, 2.04, 2.04, 2.04, 2.04], [2.0, 2.0, 2.0, 3.6666667, 3.6666667, 3.6666667]]
INCREASING_IDS = [[0, 1, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1]]


def test_decreasing_increasing_and_axis():
    out, ids = tf.nn.isotonic_regression(X)
    np.testing.assert_allclose(out.numpy(), DECREASING, rtol=1e-6)
    assert ids.dtype == torch.int32 and ids.tolist() == DECREASING_IDS
    out, ids = tf.nn.isotonic_regression(X, decreasing=False)
    np.testing.assert_allclose(out.numpy(), INCREASING, rtol=1e-6)
    assert ids.tolist() == INCREASING_IDS
    out, ids = tf.nn.isotonic_regression(X.T, axis=0)
    np.testing.assert_allclose(out.numpy().T, DECREASING, rtol=1e-6)
    assert ids.T.tolist() == DECREASING_IDS


def test_gradient_averages_over_each_block():
    x = torch.tensor(X, requires_grad=True)
    tf.nn.isotonic_regression(x)[0][0, 0].backward()
    torch.testing.assert_close(x.grad[0], torch.tensor([0.25, 0.25, 0.25, 0.25, 0.0, 0.0]))
