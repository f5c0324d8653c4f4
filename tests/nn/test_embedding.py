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
