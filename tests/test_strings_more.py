"""tf.strings ngrams, format, bytes_split, unsorted_segment_join, to_hash_bucket and to_hash_bucket_strong against
TF 2.21 (tests/random_strings_reference.json, from tools/tf_reference/nn2_reference.py)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import torchstrategy as tf
from tests._reference_arrays import Reference

REF = Reference(os.path.join(os.path.dirname(__file__), "random_strings_reference.json"))
WORDS = np.array([b"hello", b"", b"tensorflow strings", b"abcdefgh", b"abcdefghi"], dtype=object)
TOKS = np.array([b"a", b"b", b"c", b"d"], dtype=object)


def test_hash_buckets_are_tfs():
    REF.close(tf.strings.to_hash_bucket(WORDS, 1000), "hash_bucket")
    REF.close(tf.strings.to_hash_bucket_strong(WORDS, 1000, [17, 2**40 + 3]), "hash_bucket_strong")
    with pytest.raises(ValueError, match="two ints"):
        tf.strings.to_hash_bucket_strong(WORDS, 10, [1])


def test_ngrams_match_tf():
    REF.close(tf.strings.ngrams(TOKS, 2), "ngrams_2")
    REF.close(tf.strings.ngrams(TOKS, [2, 3], separator="_", pad_values=("<", ">")), "ngrams_23_pad")
    REF.close(tf.strings.ngrams(TOKS, 3, pad_values="#", padding_width=1), "ngrams_pad1")
    ragged = tf.ragged.constant([[b"a", b"b", b"c"], [b"x"], []])
    out = tf.strings.ngrams(ragged, 2, preserve_short_sequences=True)
    REF.close(np.asarray(out.flat_values, dtype=object), "ngrams_short_values")
    REF.close(out.row_splits, "ngrams_short_splits")


def test_format_split_and_segment_join_match_tf():
    out = tf.strings.format("x={} and {}", (tf.constant([1.5, 2.0, 3.25, 4.0, 5.0]), tf.constant([[1, 2], [3, 4]])))
    assert out.item() == REF.ref("format").item()
    with pytest.raises(ValueError, match="placeholders"):
        tf.strings.format("{} {}", [tf.constant(1)])
    pieces = tf.strings.bytes_split([b"ab", b"c"])
    assert pieces.to_list() == [[b"a", b"b"], [b"c"]]
    assert tf.strings.bytes_split(b"xyz").tolist() == [b"x", b"y", b"z"]
    joined = tf.strings.unsorted_segment_join(np.array([b"a", b"b", b"c", b"d"], dtype=object), [1, 0, 1, 2], 4,
                                              separator="+")
    REF.close(joined, "segment_join")
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids"):
        tf.strings.unsorted_segment_join(np.array([b"a"], dtype=object), [-1], 2)
