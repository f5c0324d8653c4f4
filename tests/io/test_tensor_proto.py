"""tf.io.serialize_tensor / parse_tensor against TensorProto bytes TF 2.21 wrote (frozen below, from
tools/tf_reference/iodata_reference.py), and the sparse forms serialize_sparse / serialize_many_sparse /
deserialize_many_sparse."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

STRINGS = np.array([b"ab", b"", b"xyz"], dtype=object)
# value, TF 2.21's serialize_tensor bytes (hex)
CASES = [
    (torch.tensor([1, 2], dtype=torch.int32), "080312041202080222080100000002000000"),
    (torch.tensor(1.5), "0801120022040000c03f"),
    (torch.tensor([[1], [2]]), "080912081202080212020801221001000000000000000200000000000000"),
    (torch.zeros(0, 3), "08011206120012020803"),
    (STRINGS, "0807120412020803420261624200420378797a"),
    (b"hi", "0807120042026869"),
    (torch.tensor([True, False]), "080a12041202080222020100"),
    (torch.tensor([1.0, -2.0], dtype=torch.float16), "08131204120208022204003c00c0"),
    (torch.tensor([1.0, -2.0], dtype=torch.bfloat16), "080e1204120208022204803f00c0"),
    (torch.tensor([1, 255], dtype=torch.uint8), "0804120412020802220201ff"),
    (torch.tensor([1 + 2j], dtype=torch.complex64), "080812041202080122080000803f00000040"),
]


@pytest.mark.parametrize("value, expected", CASES)
def test_serialize_tensor_writes_tfs_bytes_and_parses_them_back(value, expected):
    serialized = tf.io.serialize_tensor(value)
    assert serialized.shape == () and serialized.item().hex() == expected
    strings = not isinstance(value, torch.Tensor)
    parsed = tf.io.parse_tensor(bytes.fromhex(expected), tf.string if strings else value.dtype)
    if strings:
        assert np.asarray(parsed).tolist() == np.asarray(value, dtype=object).tolist()
    else:
        assert parsed.dtype == value.dtype and parsed.shape == value.shape and torch.equal(parsed, value)


def test_parse_tensor_reads_typed_value_fields_and_checks_the_dtype():
    # a TensorProto with float_val (field 5, packed) instead of tensor_content, shape [3], one value repeated
    proto = bytes.fromhex("0801" "1204120208 03".replace(" ", "")) + bytes.fromhex("2a04") + np.float32(2.5).tobytes()
    assert tf.io.parse_tensor(proto, tf.float32).tolist() == [2.5, 2.5, 2.5]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Type mismatch between parsed tensor \(float\) and dtype \(int32\)"):  # TF 2.21's words
        tf.io.parse_tensor(tf.io.serialize_tensor(torch.tensor([1.0])), tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not parse"):
        tf.io.parse_tensor(b"\x0a\xff", tf.float32)


def test_sparse_serialization_matches_tf():
    sparse = tf.SparseTensor([[0, 1], [1, 0], [1, 2]], [5, 6, 7], [2, 3])
    many = tf.io.serialize_many_sparse(sparse)
    assert many.shape == (2, 3)
    assert [item.hex() for item in many.reshape(-1)] == [  # TF 2.21
        "08091208120208011202080122080100000000000000", "0803120412020801220405000000",
        "080912041202080122080300000000000000",
        "080912081202080212020801221000000000000000000200000000000000", "080312041202080222080600000007000000",
        "080912041202080122080300000000000000"]
    back = tf.io.deserialize_many_sparse(many, tf.int32)
    assert back.indices.tolist() == [[0, 1], [1, 0], [1, 2]] and back.values.tolist() == [5, 6, 7]
    assert back.dense_shape.tolist() == [2, 3]
    one = tf.io.serialize_sparse(tf.SparseTensor([[0, 1]], [5], [2, 3]))
    assert [item.hex() for item in one] == [  # TF 2.21
        "080912081202080112020802221000000000000000000100000000000000", "0803120412020801220405000000",
        "0809120412020802221002000000000000000300000000000000"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank"):
        tf.io.serialize_many_sparse(tf.SparseTensor([[1]], [5], [3]))
