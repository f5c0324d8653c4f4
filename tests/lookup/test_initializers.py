"""tf.lookup's initializers against TF 2.21 (tests/sparse_reference.json): TextFileInitializer over whole lines,
line numbers (with value_index_offset) and tab-separated columns, TextFileIndex, and its errors (vocab_size
larger than the file, a column that is not of the key dtype, a missing file)."""
from __future__ import annotations

import pytest

import torchstrategy as tf
from tests import _sparse_reference


def test_every_case_matches_tf_2_21() -> None:
    failures = _sparse_reference.run(_sparse_reference.is_text_file_case)
    assert not failures, "\n".join(failures)


def test_key_value_initializer_dtypes() -> None:
    init = tf.lookup.KeyValueTensorInitializer([1, 5], [0.5, 1.5])
    assert init.key_dtype == tf.int32 and init.value_dtype == tf.float32  # TF 2.21: Python ints give int32
    cast = tf.lookup.KeyValueTensorInitializer([1, 5], [0, 1], key_dtype=tf.int64, value_dtype=tf.int64)
    assert cast.key_dtype == tf.int64 and cast.value_dtype == tf.int64


def test_missing_file(tmp_path) -> None:
    with pytest.raises(tf.errors.InvalidArgumentError, match="no such file"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(str(tmp_path / "nope.txt"), tf.string, 0, tf.int64,
                                                                1), -1)
    with pytest.raises(ValueError, match="line number must be an integer"):
        tf.lookup.TextFileInitializer("v.txt", tf.string, 0, tf.string, tf.lookup.TextFileIndex.LINE_NUMBER)
