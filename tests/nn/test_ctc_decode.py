"""tf.nn.ctc_greedy_decoder against TF 2.21 numbers (frozen below): repeats merged or kept, blank last by
default or at blank_index, lengths honoured."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from tests.nn._reference import arr

X = arr(8, 2, 4, offset=0.2) * 2
NEG_SUM = [[-9.437410354614258], [-6.950143337249756]]  # TF 2.21


@pytest.mark.parametrize("kwargs,indices,values,shape", [
    ({}, [[0, 0], [0, 1], [1, 0], [1, 1]], [0, 1, 0, 2], [2, 2]),
    ({"merge_repeated": False}, [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [1, 3], [1, 4]],
     [0, 0, 1, 0, 0, 0, 2, 2], [2, 5]),
    ({"blank_index": 0}, [[0, 0], [0, 1], [1, 0]], [3, 1, 2], [2, 2]),
])
def test_greedy_decoder_matches_tf(kwargs, indices, values, shape):
    (decoded,), neg_sum = tf.nn.ctc_greedy_decoder(X, [8, 5], **kwargs)
    assert isinstance(decoded, tf.SparseTensor)
    assert decoded.indices.tolist() == indices and decoded.values.tolist() == values
    assert decoded.values.dtype == torch.int64 and decoded.dense_shape.tolist() == shape
    torch.testing.assert_close(neg_sum, torch.tensor(NEG_SUM))


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="sequence_length"):
        tf.nn.ctc_greedy_decoder(X, [9, 1])
    with pytest.raises(ValueError, match="max_time, batch"):
        tf.nn.ctc_greedy_decoder(X[0], [1, 1])


def test_collapse_repeated_matches_tf():
    # TF 2.21: [[1, 2, 3, 0], [4, 0, 0, 0]] and [4, 1]; [[0], [4]] and [0, 1]
    out, lengths = tf.nn.collapse_repeated([[1, 1, 2, 2, 3, 0], [4, 4, 4, 5, 0, 0]], [6, 3])
    assert out.tolist() == [[1, 2, 3, 0], [4, 0, 0, 0]] and lengths.tolist() == [4, 1]
    assert out.dtype == torch.int32 and lengths.dtype == torch.int32
    out, lengths = tf.nn.collapse_repeated([[1, 1, 2], [4, 4, 4]], [0, 2])
    assert out.tolist() == [[0], [4]] and lengths.tolist() == [0, 1]


def test_ctc_unique_labels_matches_tf():
    # TF 2.21: [[3, 4, 0, 0, 0], [1, 2, 0, 0, 0]] (int64) and [[0, 1, 1, 0, 2], [0, 0, 1, 2, 2]] (int32)
    unique, index = tf.nn.ctc_unique_labels([[3, 4, 4, 3, 0], [1, 1, 2, 0, 0]])
    assert unique.tolist() == [[3, 4, 0, 0, 0], [1, 2, 0, 0, 0]] and unique.dtype == torch.int64
    assert index.tolist() == [[0, 1, 1, 0, 2], [0, 0, 1, 2, 2]] and index.dtype == torch.int32
