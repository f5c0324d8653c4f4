"""tf.nn.embedding_lookup against TF 2.21 (tests/nn/nn_reference.json): one table, 'div'-split shards,
max_norm clipping, gradients, and bad ids."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.nn._reference import arr, close

P = arr(5, 3)


def test_sharded_lookup_with_max_norm():
    close(tf.nn.embedding_lookup([P[:3], P[3:]], [[4, 0], [2, 3]], max_norm=0.8), "embedding")
    torch.testing.assert_close(tf.nn.embedding_lookup(P, np.array([4, 1])), torch.tensor(P[[4, 1]]))


def test_gradients_reach_the_table():
    table = torch.tensor(P, requires_grad=True)
    tf.nn.embedding_lookup(table, [1, 1, 2]).sum().backward()
    assert table.grad[1].tolist() == [2.0, 2.0, 2.0] and table.grad[0].abs().sum() == 0


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="'div' split"):
        tf.nn.embedding_lookup([P[:2], P[2:]], [0])
    with pytest.raises(ValueError, match="ids must lie"):
        tf.nn.embedding_lookup(P, [5])
    with pytest.raises(TypeError, match="integers"):
        tf.nn.embedding_lookup(P, [0.5])


def _sparse(values):
    return tf.SparseTensor([[0, 0], [0, 1], [2, 0]], values, [4, 2])


def test_embedding_lookup_sparse_combiners():
    # Numbers from TF 2.21 (tf.nn.embedding_lookup_sparse / safe_embedding_lookup_sparse on this table).
    table = np.arange(15, dtype=np.float32).reshape(5, 3)
    ids, weights = _sparse(np.array([1, 3, 4], np.int64)), _sparse(np.array([1.0, 2.0, 0.5], np.float32))
    mean = tf.nn.embedding_lookup_sparse(table, ids, None)
    torch.testing.assert_close(mean, torch.tensor([[6.0, 7, 8], [0, 0, 0], [12, 13, 14]]))
    sqrtn = tf.nn.embedding_lookup_sparse(table, ids, weights, combiner="sqrtn")
    torch.testing.assert_close(sqrtn, torch.tensor([[9.391485, 10.733126, 12.074767], [0, 0, 0], [12, 13, 14]]))
    safe = tf.nn.safe_embedding_lookup_sparse(table, ids, weights, combiner="sum")
    torch.testing.assert_close(safe, torch.tensor([[21.0, 24, 27], [0, 0, 0], [6, 6.5, 7], [0, 0, 0]]))
    filled = tf.nn.safe_embedding_lookup_sparse(table, ids, None, default_id=0)
    assert filled[1].tolist() == [0.0, 1.0, 2.0] and filled[3].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="combiner"):
        tf.nn.embedding_lookup_sparse(table, ids, None, combiner="max")
