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


# ----- the whole of tf.sparse against TF 2.21 (tests/sparse_reference.json) --------------------------------
def test_every_case_matches_tf_2_21() -> None:
    from tests import _sparse_reference

    # TF does not check transpose's permutation (it returns repeated coordinates); ours refuses it
    failures = _sparse_reference.run(_sparse_reference.is_sparse_case, {"tf.sparse.transpose(st, [0, 0])": {
        "error": "ValueError", "message": "not a permutation"}})
    assert not failures, "\n".join(failures)


def test_the_reference_covers_every_tf_sparse_function() -> None:
    from tests import _sparse_reference

    cases = [case for case, _ in _sparse_reference.load()["cases"] if _sparse_reference.is_sparse_case(case)]
    for name in tf.sparse.__all__:
        if name not in ("SparseTensor", "SparseTensorValue"):
            assert any(f"tf.sparse.{name}(" in case for case in cases), name


def _random_sparse(rng: np.random.Generator, shape: tuple) -> tuple:
    dense = rng.standard_normal(shape).astype(np.float32) * (rng.random(shape) > 0.6)
    return tf.sparse.from_dense(dense), dense


def test_structure_ops_against_numpy() -> None:
    rng = np.random.default_rng(5)
    sp, dense = _random_sparse(rng, (4, 5, 6))
    np.testing.assert_array_equal(tf.sparse.to_dense(tf.sparse.reshape(sp, [10, -1])).numpy(), dense.reshape(10, -1))
    np.testing.assert_array_equal(tf.sparse.to_dense(tf.sparse.transpose(sp, [2, 0, 1])).numpy(),
                                  dense.transpose(2, 0, 1))
    np.testing.assert_array_equal(tf.sparse.to_dense(tf.sparse.slice(sp, [1, 2, 0], [2, 9, 3])).numpy(),
                                  dense[1:3, 2:, 0:3])
    other, other_dense = _random_sparse(rng, (4, 2, 6))
    np.testing.assert_array_equal(tf.sparse.to_dense(tf.sparse.concat(1, [sp, other])).numpy(),
                                  np.concatenate([dense, other_dense], axis=1))
    parts = tf.sparse.split(sp_input=sp, num_split=3, axis=2)
    np.testing.assert_array_equal(np.concatenate([tf.sparse.to_dense(p).numpy() for p in parts], axis=2), dense)
    np.testing.assert_allclose(tf.sparse.reduce_sum(sp, axis=[0, 2]).numpy(), dense.sum(axis=(0, 2)), rtol=1e-6)
    same, same_dense = _random_sparse(rng, (4, 5, 6))
    np.testing.assert_allclose(tf.sparse.to_dense(tf.sparse.add(sp, same)).numpy(), dense + same_dense, rtol=1e-6)
    np.testing.assert_allclose(tf.sparse.to_dense(tf.sparse.maximum(sp, same)).numpy(),
                               np.maximum(dense, same_dense), rtol=1e-6)


def test_string_values() -> None:
    words = tf.SparseTensor([[1, 0], [0, 1]], ["b", "a"], [2, 2])
    ordered = tf.sparse.reorder(words)
    assert ordered.values.tolist() == [b"a", b"b"] and ordered.indices.tolist() == [[0, 1], [1, 0]]
    assert tf.sparse.to_dense(ordered, default_value="").tolist() == [[b"", b"a"], [b"b", b""]]
    filled, empty = tf.sparse.fill_empty_rows(tf.SparseTensor([[1, 0]], ["x"], [2, 1]), "?")
    assert filled.values.tolist() == [b"?", b"x"] and empty.tolist() == [True, False]
    with pytest.raises(TypeError, match="numeric"):
        tf.sparse.reduce_sum(words)
