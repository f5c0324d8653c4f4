"""The top-level tf array ops (where, fill, gather, split, pad, sort, matmul, ...) against NumPy, with
dtypes and results frozen from TensorFlow 2.21 where TF's rules matter."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

RNG = np.random.default_rng(1)
M = RNG.standard_normal((3, 4)).astype(np.float32)


def test_where_both_forms() -> None:
    assert tf.where([True, False]).tolist() == [[0]] and tf.where([True, False]).dtype == torch.int64  # TF 2.21
    assert tf.where([True, False], [1, 2], [3, 4]).tolist() == [1, 4]
    picked = tf.where([True, False], 1.0, 2)
    assert picked.dtype == torch.float32 and picked.tolist() == [1.0, 2.0]  # TF 2.21
    np.testing.assert_array_equal(tf.where(M > 0, M, 0.0).numpy(), np.where(M > 0, M, 0.0))
    with pytest.raises(ValueError, match="both x and y"):
        tf.where([True], [1])
    with pytest.raises(TypeError, match="dtype"):
        tf.where([True], tf.constant([1]), tf.constant([1.0]))


def test_fill_like_and_eye() -> None:
    assert tf.fill([2], 3).dtype == torch.int32 and tf.fill([2], 3.0).dtype == torch.float32  # TF 2.21
    assert tf.fill([2, 1], 7).tolist() == [[7], [7]]
    assert tf.zeros_like(np.array([1.0, 2])).dtype == torch.float64
    assert tf.ones_like([1, 2], dtype=tf.float32).tolist() == [1.0, 1.0]
    batch = tf.eye(2, 3, batch_shape=[2], dtype=tf.int32)
    assert batch.shape == (2, 2, 3) and batch.dtype == torch.int32
    np.testing.assert_array_equal(batch[1].numpy(), np.eye(2, 3))
    assert tf.eye(2).dtype == torch.float32


def test_size_rank_identity_stop_gradient() -> None:
    assert tf.size([[1, 2]]).item() == 2 and tf.size([[1, 2]]).dtype == torch.int32
    assert tf.rank([[1, 2]]).item() == 2 and tf.rank([[1, 2]]).dtype == torch.int32
    weight = torch.tensor([2.0], requires_grad=True)
    (tf.identity(weight) * 3 + tf.stop_gradient(weight) * 5).sum().backward()
    assert weight.grad.tolist() == [3.0]  # the stop_gradient branch adds nothing


def test_tile_transpose_reverse_broadcast() -> None:
    assert tf.tile([1, 2], [2]).tolist() == [1, 2, 1, 2]
    np.testing.assert_array_equal(tf.tile(M, [2, 3]).numpy(), np.tile(M, (2, 3)))
    with pytest.raises(ValueError, match="one multiple per axis"):
        tf.tile(M, [2])
    assert tf.transpose([[1, 2]]).tolist() == [[1], [2]]
    assert tf.transpose(tf.zeros([2, 3, 4]), perm=[2, 0, 1]).shape == (4, 2, 3)  # TF 2.21
    np.testing.assert_array_equal(tf.reverse(M, [1]).numpy(), M[:, ::-1])
    assert tf.broadcast_to([1, 2], [2, 2]).tolist() == [[1, 2], [1, 2]]


def test_gather_and_gather_nd() -> None:
    assert tf.gather([[1, 2], [3, 4]], [1, 0], axis=1).tolist() == [[2, 1], [4, 3]]  # TF 2.21
    assert tf.gather([[1, 2], [3, 4]], [[0], [1]], batch_dims=1, axis=1).tolist() == [[1], [4]]  # TF 2.21
    index = np.array([[2, 0], [1, 1]])
    np.testing.assert_array_equal(tf.gather(M, index).numpy(), np.take(M, index, axis=0))
    np.testing.assert_array_equal(tf.gather(M, index, axis=1).numpy(), np.take(M, index, axis=1))
    with pytest.raises(ValueError, match="indices must lie"):
        tf.gather(M, [5])
    assert tf.gather_nd([[1, 2], [3, 4]], [[1, 0]]).tolist() == [3]  # TF 2.21
    assert tf.gather_nd(M, [[1]]).tolist() == [M[1].tolist()]
    assert tf.gather_nd([[[1, 2]], [[3, 4]]], [[[0, 1]], [[0, 0]]], batch_dims=1).tolist() == [[2], [3]]
    with pytest.raises(TypeError, match="integers"):
        tf.gather(M, [0.5])


def test_scatter_update() -> None:
    out = tf.tensor_scatter_nd_update(tf.zeros([3]), [[0], [2]], [5.0, 6.0])
    assert out.tolist() == [5.0, 0.0, 6.0]


def test_matmul_and_einsum() -> None:
    assert tf.matmul([[1, 2]], [[3], [4]]).tolist() == [[11]]  # TF 2.21: int32 matmul
    assert tf.matmul([[1, 2]], [[3], [4]]).dtype == torch.int32
    with pytest.raises(TypeError, match="different dtypes"):
        tf.matmul(tf.constant([[1, 2]]), tf.constant([[3.0], [4.0]]))
    batch = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    other = RNG.standard_normal((2, 5, 4)).astype(np.float32)
    np.testing.assert_allclose(tf.matmul(batch, other, transpose_b=True).numpy(),
                               batch @ other.transpose(0, 2, 1), rtol=1e-5)
    np.testing.assert_allclose(tf.matmul(batch, other.transpose(0, 2, 1), transpose_a=False).numpy(),
                               batch @ other.transpose(0, 2, 1), rtol=1e-5)
    np.testing.assert_allclose(tf.einsum("bij,bkj->bik", batch, other).numpy(),
                               np.einsum("bij,bkj->bik", batch, other), rtol=1e-5)
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.matmul([1.0, 2.0], [[1.0], [2.0]])


def test_split_unstack_boolean_mask() -> None:
    parts = tf.split(tf.range(6), 3)
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3], [4, 5]] and parts[0].dtype == torch.int32  # TF 2.21
    assert [p.tolist() for p in tf.split(tf.range(6), [1, -1])] == [[0], [1, 2, 3, 4, 5]]
    with pytest.raises(ValueError, match="equal parts"):
        tf.split(tf.range(5), 2)
    assert [t.tolist() for t in tf.unstack(tf.constant([[1, 2], [3, 4]]), axis=1)] == [[1, 3], [2, 4]]
    assert tf.boolean_mask([[1, 2], [3, 4]], [True, False]).tolist() == [[1, 2]]  # TF 2.21
    mask = M > 0
    np.testing.assert_array_equal(tf.boolean_mask(M, mask).numpy(), M[mask])
    np.testing.assert_array_equal(tf.boolean_mask(M, mask[0], axis=1).numpy(), M[:, mask[0]])


def test_pad_modes() -> None:
    assert tf.pad([[1]], [[1, 0], [0, 1]], constant_values=9).tolist() == [[9, 9], [1, 9]]  # TF 2.21
    assert tf.pad([[1, 2], [3, 4]], [[1, 1], [1, 1]], mode="REFLECT").tolist() == \
        [[4, 3, 4, 3], [2, 1, 2, 1], [4, 3, 4, 3], [2, 1, 2, 1]]  # TF 2.21
    np.testing.assert_array_equal(tf.pad(M, [[0, 2], [1, 1]], mode="SYMMETRIC").numpy(),
                                  np.pad(M, [[0, 2], [1, 1]], mode="symmetric"))
    with pytest.raises(ValueError, match="paddings"):
        tf.pad(M, [[1, 1]])


def test_sort_argsort() -> None:
    assert tf.sort([3, 1, 2], direction="DESCENDING").tolist() == [3, 2, 1]
    assert tf.argsort([3, 1, 2]).tolist() == [1, 2, 0] and tf.argsort([3, 1, 2]).dtype == torch.int32  # TF 2.21
    np.testing.assert_array_equal(tf.sort(M, axis=0).numpy(), np.sort(M, axis=0))
    with pytest.raises(ValueError, match="ASCENDING"):
        tf.sort([1], direction="up")


def test_linspace_and_range_dtypes() -> None:
    assert tf.linspace(0.0, 1.0, 3).tolist() == [0.0, 0.5, 1.0] and tf.linspace(0.0, 1.0, 3).dtype == torch.float32
    assert tf.linspace(0, 1, 3).dtype == torch.float64  # TF 2.21
    rows = tf.linspace([0.0, 10.0], [1.0, 20.0], 3)
    np.testing.assert_allclose(rows.numpy(), np.linspace([0.0, 10.0], [1.0, 20.0], 3))
    assert tf.range(5).dtype == torch.int32 and tf.range(5.0).dtype == torch.float32  # TF 2.21
    assert tf.range(1, 10, 3).tolist() == [1, 4, 7]
