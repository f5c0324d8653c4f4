"""tf.SparseTensor and tf.sparse basics against dense NumPy, with TF 2.21's dtypes."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.io.parsing import SparseTensor as ParsedSparseTensor


def test_round_trip_and_defaults() -> None:
    sparse = tf.SparseTensor([[0, 1]], [5], [2, 2])
    dense = tf.sparse.to_dense(sparse)
    assert dense.tolist() == [[0, 5], [0, 0]] and dense.dtype == torch.int32  # TF 2.21
    assert sparse.indices.dtype == torch.int64 and sparse.dtype == torch.int32
    assert tf.sparse.to_dense(sparse, default_value=-1).tolist() == [[-1, 5], [-1, -1]]
    matrix = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, 0.0]], np.float32)
    back = tf.sparse.from_dense(matrix)
    assert back.indices.tolist() == [[0, 1], [1, 0]] and back.dense_shape.tolist() == [2, 3]
    np.testing.assert_array_equal(tf.sparse.to_dense(back).numpy(), matrix)
    assert isinstance(back, ParsedSparseTensor)  # the same family tf.io.VarLenFeature parsing returns
    with pytest.raises(ValueError, match="one row per value"):
        tf.SparseTensor([[0, 1]], [1, 2], [2, 2])


def test_sparse_dense_matmul() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((4, 3)).astype(np.float32) * (rng.random((4, 3)) > 0.5)
    other = rng.standard_normal((3, 2)).astype(np.float32)
    out = tf.sparse.sparse_dense_matmul(tf.sparse.from_dense(matrix), other)
    np.testing.assert_allclose(out.numpy(), matrix @ other, rtol=1e-5, atol=1e-6)
    out = tf.sparse.sparse_dense_matmul(tf.SparseTensor([[0, 1]], [5.0], [2, 2]), tf.ones([2, 1]))
    assert out.tolist() == [[5.0], [0.0]]  # TF 2.21
    with pytest.raises(TypeError, match="dtype"):
        tf.sparse.sparse_dense_matmul(tf.SparseTensor([[0, 1]], [5], [2, 2]), tf.ones([2, 1]))
