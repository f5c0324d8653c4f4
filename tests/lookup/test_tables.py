"""tf.lookup's tables against TF 2.21 (tests/sparse_reference.json): StaticHashTable over string and integer keys,
StaticVocabularyTable's out-of-vocabulary buckets (TF's FarmHash), the mutable tables of tf.lookup.experimental,
and the errors TF gives (wrong key dtype, a default of another dtype, a reserved key)."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from tests import _sparse_reference


def test_every_case_matches_tf_2_21() -> None:
    failures = _sparse_reference.run(_sparse_reference.is_table_case)
    assert not failures, "\n".join(failures)


def test_tables_in_a_dataset_pipeline() -> None:
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["cat", "dog"], [0, 1]), -1)
    dataset = tf.data.Dataset.from_tensor_slices(["dog", "emu", "cat"]).map(lambda word: table.lookup(word))
    assert [int(x) for x in dataset] == [1, -1, 0]


def test_mutable_table_round_trip() -> None:
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=0.0)
    table.insert(torch.arange(5), torch.arange(5, dtype=torch.float32) / 2)
    assert table.lookup(torch.tensor([4, 9])).tolist() == [2.0, 0.0] and int(table.size()) == 5
    keys, values = table.export()
    assert sorted(zip(keys.tolist(), values.tolist())) == [(k, k / 2) for k in range(5)]


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="num_oov_buckets"):
        tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(["a"], [0]), 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="1 keys but 2 values"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1, 2]), -1)
    with pytest.raises(TypeError, match="must be string"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1).lookup(torch.tensor([1]))
