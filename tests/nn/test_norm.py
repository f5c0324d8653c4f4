"""tf.nn moments, weighted/sufficient statistics, batch_normalization, l2_normalize and lrn against TF 2.21
(tests/nn/nn_reference.json) and NumPy."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.nn._reference import arr, close

X = arr(2, 7, 6, 3)


def test_moments_and_weighted_moments():
    mean, var = tf.nn.moments(X, [0, 1, 2])
    close(mean, "moments_mean")
    close(var, "moments_var")
    np.testing.assert_allclose(var.numpy(), X.reshape(-1, 3).var(0), rtol=1e-5)
    fw = arr(2, 7, 6, 1, offset=3.0) ** 2
    mean, var = tf.nn.weighted_moments(X, [1, 2], fw, keepdims=True)
    close(mean, "wmoments_mean")
    close(var, "wmoments_var")


def test_sufficient_statistics_round_trip():
    count, mean_ss, var_ss, shift = tf.nn.sufficient_statistics(X, [0, 2], shift=0.5)
    close(count, "suff_count")
    close(mean_ss, "suff_mean_ss", atol=1e-4)
    close(var_ss, "suff_var_ss", atol=1e-4)
    mean, var = tf.nn.normalize_moments(count, mean_ss, var_ss, shift)
    close(mean, "norm_moments_mean")
    close(var, "norm_moments_var")
    assert tf.nn.sufficient_statistics(X, [0])[3] is None


def test_batch_normalization_l2_normalize_lrn():
    close(tf.nn.batch_normalization(X, 0.1, 2.0, 0.5, 1.5, 1e-3), "batch_normalization")
    close(tf.nn.l2_normalize(X, axis=[1, 3]), "l2_normalize")
    close(tf.nn.l2_normalize(X), "l2_normalize_all")
    close(tf.nn.lrn(arr(2, 3, 4, 8), depth_radius=2, bias=1.5, alpha=0.3, beta=0.75), "lrn")


def test_gradients_flow_and_bad_input():
    x = torch.tensor(X, requires_grad=True)
    tf.nn.batch_normalization(x, *tf.nn.moments(x, [0, 1, 2]), None, None, 1e-3).square().sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()
    with pytest.raises(ValueError, match="out of range"):
        tf.nn.moments(X, [4])
    with pytest.raises(TypeError, match="floating-point"):
        tf.nn.l2_normalize(np.array([1, 2], np.int32))
    with pytest.raises(ValueError, match="4-D"):
        tf.nn.lrn(X[0])


def test_batch_norm_with_global_normalization():
    close(tf.nn.batch_norm_with_global_normalization(X, 0.1, 2.0, 0.5, 1.5, 1e-3, False), "bn_global")
