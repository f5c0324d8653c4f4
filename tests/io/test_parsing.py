"""tf.io.parse_single_example / parse_example on Example bytes TF 2.21 serialized (frozen hex below),
checked against the values TF 2.21 parsed from them; missing and mismatched features raise clear errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.io.parsing import InvalidArgumentError

# TF 2.21 SerializeToString of:
#   0: {"x": int64 [1, 2], "s": bytes [b"a"]}   1: {"x": int64 [3]}
#   2: {"v": float [0.5, 2.0], "w": bytes [b"p", b"q\x00"]}   3: {"n": Feature()} (no kind)
SERIALIZED = [bytes.fromhex(h) for h in (
    "0a190a0b0a017812061a040a0201020a0a0a017312050a030a0161",
    "0a0c0a0a0a017812051a030a0103",
    "0a230a0e0a017712090a070a01700a0271000a110a0176120c120a0a080000003f00000040",
    "0a070a050a016e1200",
)]
SPEC = {"x": tf.io.VarLenFeature(tf.int64),
        "s": tf.io.FixedLenFeature([], "string", default_value=b"dflt"),
        "y": tf.io.FixedLenFeature([2], tf.float32, default_value=[0.5, 1.5])}


def test_parse_single_example_matches_tf() -> None:
    parsed = tf.io.parse_single_example(SERIALIZED[0], SPEC)
    # TF 2.21: x = SparseTensor(indices [[0], [1]], values [1, 2], dense_shape [2]); s = b'a'; y = [0.5, 1.5]
    assert parsed["x"].indices.tolist() == [[0], [1]] and parsed["x"].dense_shape.tolist() == [2]
    assert parsed["x"].values.dtype == torch.int64 and parsed["x"].values.tolist() == [1, 2]
    assert parsed["s"].shape == () and parsed["s"].item() == b"a"
    assert parsed["y"].dtype == torch.float32 and parsed["y"].tolist() == [0.5, 1.5]


def test_parse_example_batch_matches_tf() -> None:
    parsed = tf.io.parse_example(SERIALIZED[:2], SPEC)
    # TF 2.21: x indices [[0,0],[0,1],[1,0]], values [1,2,3], dense_shape [2,2]; s [b'a', b'dflt']; y twice
    assert parsed["x"].indices.tolist() == [[0, 0], [0, 1], [1, 0]]
    assert parsed["x"].values.tolist() == [1, 2, 3] and parsed["x"].dense_shape.tolist() == [2, 2]
    assert parsed["s"].tolist() == [b"a", b"dflt"]
    assert parsed["y"].shape == (2, 2) and parsed["y"].tolist() == [[0.5, 1.5], [0.5, 1.5]]


def test_strings_keep_trailing_nul_and_floats() -> None:
    parsed = tf.io.parse_example(SERIALIZED[:3], {"w": tf.io.VarLenFeature("string")})
    # TF 2.21: indices [[2,0],[2,1]], values [b'p', b'q\x00'], dense_shape [3, 2]
    assert parsed["w"].indices.tolist() == [[2, 0], [2, 1]] and parsed["w"].dense_shape.tolist() == [3, 2]
    assert parsed["w"].values.tolist() == [b"p", b"q\x00"]
    single = tf.io.parse_single_example(np.array(SERIALIZED[2], dtype=object),
                                        {"v": tf.io.FixedLenFeature([2], tf.float32),
                                         "w": tf.io.FixedLenFeature([2], "string")})
    assert single["v"].tolist() == [0.5, 2.0] and single["w"].tolist() == [b"p", b"q\x00"]


def test_shape_reshapes_and_empty_feature_is_absent() -> None:
    assert tf.io.parse_single_example(SERIALIZED[0], {"x": tf.io.FixedLenFeature([1, 2], tf.int64)})["x"].tolist() \
        == [[1, 2]]
    # TF 2.21: a Feature with no kind is absent: VarLen empty (indices shape (0, 1)), FixedLen takes its default
    empty = tf.io.parse_single_example(SERIALIZED[3], {"n": tf.io.VarLenFeature(tf.int64)})["n"]
    assert tuple(empty.indices.shape) == (0, 1) and empty.dense_shape.tolist() == [0]
    assert tf.io.parse_single_example(SERIALIZED[3], {"n": tf.io.FixedLenFeature([], tf.int64, 4)})["n"].item() == 4
    with pytest.raises(InvalidArgumentError, match="'n' .*required but could not be found"):
        tf.io.parse_single_example(SERIALIZED[3], {"n": tf.io.FixedLenFeature([], tf.int64)})


def test_missing_feature_without_default_names_it() -> None:
    with pytest.raises(InvalidArgumentError, match=r"feature 's' \(string\) is required.*default_value"):
        tf.io.parse_single_example(SERIALIZED[1], {"s": tf.io.FixedLenFeature([], "string")})
    with pytest.raises(InvalidArgumentError, match=r"example 1.*feature 's'"):
        tf.io.parse_example(SERIALIZED[:2], {"s": tf.io.FixedLenFeature([], "string")})


def test_mismatches_raise() -> None:
    with pytest.raises(InvalidArgumentError, match=r"'x' has 2 values.*shape \[3\] needs exactly 3"):
        tf.io.parse_single_example(SERIALIZED[0], {"x": tf.io.FixedLenFeature([3], tf.int64)})
    with pytest.raises(InvalidArgumentError, match="'x' holds int64 values but the spec asks for float32"):
        tf.io.parse_single_example(SERIALIZED[0], {"x": tf.io.FixedLenFeature([2], tf.float32)})
    with pytest.raises(ValueError, match="tf.int64, tf.float32 or tf.string"):
        tf.io.parse_single_example(SERIALIZED[0], {"x": tf.io.FixedLenFeature([2], torch.int32)})
    with pytest.raises(TypeError, match="SerializeToString"):
        tf.io.parse_single_example(tf.train.Example(), {"x": tf.io.VarLenFeature(tf.int64)})
    with pytest.raises(InvalidArgumentError, match="could not parse"):
        tf.io.parse_single_example(b"\x0a\x09", {"x": tf.io.VarLenFeature(tf.int64)})


def test_spec_reprs_follow_tf() -> None:
    assert repr(tf.io.VarLenFeature(tf.float32)).startswith("VarLenFeature(dtype=")
    assert tf.io.FixedLenFeature([], tf.int64) == tf.io.FixedLenFeature([], tf.int64, None)
