"""tf.data.experimental: Counter, assert_cardinality and the older transformation forms; the element_spec of
a distributed dataset. Expected values from TF 2.21.0 (run in its venv; noted per assertion)."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf

E = tf.data.experimental


def test_counter():
    assert [int(x) for x in E.Counter(start=2, step=3).take(3)] == [2, 5, 8]  # TF 2.21
    assert int(E.Counter().cardinality()) == E.INFINITE_CARDINALITY
    assert E.Counter(dtype=tf.int32).element_spec.dtype == torch.int32


def test_assert_cardinality():
    ds = tf.data.Dataset.range(5).apply(E.assert_cardinality(5))
    assert [int(x) for x in ds] == [0, 1, 2, 3, 4] and int(ds.cardinality()) == 5
    # TF 2.21: FailedPreconditionError, "... expected to contain 3 elements but contained at least 4 elements."
    with pytest.raises(tf.errors.FailedPreconditionError, match="expected to contain 3 elements but contained at "
                                                                "least 4"):
        list(tf.data.Dataset.range(5).apply(E.assert_cardinality(3)))
    with pytest.raises(tf.errors.FailedPreconditionError, match="expected to contain 7 elements but contained only 5"):
        list(tf.data.Dataset.range(5).apply(E.assert_cardinality(7)))


def test_older_transformation_forms():
    assert [b.tolist() for b in tf.data.Dataset.range(6).apply(E.map_and_batch(lambda x: x * 2, 4))] == [
        [0, 2, 4, 6], [8, 10]]  # TF 2.21
    assert [(int(i), int(x)) for i, x in tf.data.Dataset.range(3).apply(E.enumerate_dataset(5))] == [
        (5, 0), (6, 1), (7, 2)]
    assert [int(x) for x in tf.data.Dataset.range(6).apply(E.take_while(lambda x: x < 3))] == [0, 1, 2]
    assert [(int(a), int(b)) for a, b in E.from_list([(1, 2), (3, 4)])] == [(1, 2), (3, 4)]
    assert int(E.at(tf.data.Dataset.range(5, 10), 2)) == 7
    with pytest.raises(tf.errors.OutOfRangeError):
        E.at(tf.data.Dataset.range(2), 5)
    assert E.get_structure(tf.data.Dataset.range(3)).dtype == torch.int64
    assert E.enable_debug_mode() is None


def test_distributed_dataset_element_spec():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    ds = tf.data.Dataset.from_tensor_slices(([[1.0, 2.0]] * 8, [1] * 8)).batch(4, drop_remainder=True)
    spec = strategy.experimental_distribute_dataset(ds).element_spec
    # TF 2.21 (one replica): (TensorSpec(shape=(4, 2), float32), TensorSpec(shape=(4,), int32))
    assert [(tuple(s.shape), s.dtype) for s in spec] == [((4, 2), torch.float32), ((4,), torch.int32)]
