"""rebatch, sparse_batch (dense_to_sparse_batch), group_by_reducer and pad_to_cardinality against TF 2.21's
results (frozen from tools/tf_reference/iodata_reference.py)."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf

Dataset = tf.data.Dataset


def _ragged_rows():
    return Dataset.from_generator(lambda: iter([[1, 2, 3], [4], [0, 6]]),
                                  output_signature=tf.TensorSpec([None], tf.int32))


def test_rebatch_as_tf():
    assert [b.tolist() for b in Dataset.range(7).batch(4).rebatch([2, 1, 1])] == [[0, 1], [2], [3], [4, 5], [6]]
    dropped = Dataset.range(7).batch(4).rebatch(3, drop_remainder=True)
    assert [b.tolist() for b in dropped] == [[0, 1, 2], [3, 4, 5]]
    assert dropped.element_spec == tf.TensorSpec((3,), tf.int64)
    assert int(Dataset.range(7).batch(4).rebatch(3).cardinality()) == tf.data.UNKNOWN_CARDINALITY  # as TF 2.21
    pairs = Dataset.from_tensor_slices(({"a": [1, 2, 3]}, [4, 5, 6])).batch(2).rebatch(3)
    first = next(iter(pairs))
    assert first[0]["a"].tolist() == [1, 2, 3] and first[1].tolist() == [4, 5, 6]
    with pytest.raises(ValueError, match="batch_size"):
        Dataset.range(3).batch(2).rebatch(0)


def test_sparse_batch_as_tf():
    batches = list(_ragged_rows().sparse_batch(2, [5]))
    assert [b.indices.tolist() for b in batches] == [[[0, 0], [0, 1], [0, 2], [1, 0]], [[0, 0], [0, 1]]]
    assert [b.values.tolist() for b in batches] == [[1, 2, 3, 4], [0, 6]]  # zeros are kept, as TF
    assert [b.dense_shape.tolist() for b in batches] == [[2, 5], [1, 5]]
    widest = list(_ragged_rows().apply(tf.data.experimental.dense_to_sparse_batch(2, [None])))
    assert [b.dense_shape.tolist() for b in widest] == [[2, 3], [1, 2]]
    with pytest.raises(tf.errors.DataLossError, match=r"Input element had shape \(\[3\]\) that is larger"):
        list(_ragged_rows().sparse_batch(2, [2]))
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):  # TF 2.21's words
        _ragged_rows().sparse_batch(2, [-1])


def test_group_by_reducer_and_pad_to_cardinality_as_tf():
    reducer = tf.data.experimental.Reducer(lambda key: torch.tensor(0, dtype=torch.int64), lambda s, x: s + x,
                                           lambda s: s)
    sums = Dataset.range(10).apply(tf.data.experimental.group_by_reducer(lambda x: x % 3, reducer))
    assert [int(s) for s in sums] == [18, 12, 15]
    with pytest.raises(TypeError, match="int64"):
        list(Dataset.range(3).apply(tf.data.experimental.group_by_reducer(lambda x: x > 1, reducer)))
    padded = list(Dataset.from_tensor_slices({"a": [1, 2]}).apply(tf.data.experimental.pad_to_cardinality(4)))
    assert [(int(e["a"]), bool(e["valid"])) for e in padded] == [(1, True), (2, True), (0, False), (0, False)]
    assert padded[2]["a"].dtype == torch.int32
    with pytest.raises(ValueError, match="more than cardinality=1"):
        Dataset.from_tensor_slices({"a": [1, 2]}).apply(tf.data.experimental.pad_to_cardinality(1))
    with pytest.raises(ValueError, match="must be dicts"):
        Dataset.range(2).apply(tf.data.experimental.pad_to_cardinality(3))
