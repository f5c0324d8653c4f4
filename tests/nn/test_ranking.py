"""tf.nn.top_k (tf.math.top_k reached as tf.nn), in_top_k and zero_fraction against TF 2.21
(tests/nn/nn_reference.json)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.nn._reference import arr, close, ref

F = arr(3, 5) * 3


def test_top_k_sorted_values_and_int32_indices():
    result = tf.nn.top_k(F, 3)
    close(result.values, "top_k_values")
    assert result.indices.dtype == torch.int32
    np.testing.assert_array_equal(result.indices.numpy(), ref("top_k_indices"))
    values, indices = tf.nn.top_k(torch.tensor([1.0, 3.0, 3.0, 2.0]), 2, sorted=False)
    assert indices.tolist() == [1, 2] and values.tolist() == [3.0, 3.0]


def test_in_top_k_and_zero_fraction():
    np.testing.assert_array_equal(tf.nn.in_top_k([1, 4, 0], F, 2).numpy(), ref("in_top_k"))
    close(tf.nn.zero_fraction(np.array([0.0, 1.0, 0.0, 3.0], np.float32)), "zero_fraction")


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match=r"k=6 must be in \[0, 5\]"):
        tf.nn.top_k(F, 6)
    with pytest.raises(ValueError, match="predictions must be"):
        tf.nn.in_top_k([1], F, 2)


def test_approx_max_k_exact_and_min_k():
    x = np.array([[1.0, 5, 3, 5, 2], [0, -1, 4, 2, 2]], np.float32)
    values, indices = tf.nn.approx_max_k(x, 2)  # TF 2.21: [[5, 5], [4, 2]] and [[1, 3], [2, 3]] (int32)
    assert values.tolist() == [[5.0, 5.0], [4.0, 2.0]] and indices.tolist() == [[1, 3], [2, 3]]
    assert indices.dtype == torch.int32
    values, indices = tf.nn.approx_min_k(x, 1, reduction_dimension=0)
    assert values.tolist() == [[0.0, -1.0, 3.0, 2.0, 2.0]] and indices.tolist() == [[1, 1, 0, 1, 0]]
