"""tf.train.Example and its parts: bytes identical to TF 2.21's protobuf encoding (frozen below as hex
from TF 2.21.0's SerializeToString), parsing TF's bytes back, and the protobuf-like mutation API."""
from __future__ import annotations

import pytest

import torchstrategy as tf
from torchstrategy.io.example import DecodeError

F, E = tf.train.Feature, tf.train.Example


def _example(feature: dict) -> E:
    return E(features=tf.train.Features(feature=feature))


# (our message, TF 2.21's serialization of the same message)
TF_BYTES = {
    "int64 incl. negative and large": (
        _example({"x": F(int64_list=tf.train.Int64List(value=[1, 2, -3, 300, 2**62]))}),
        "0a220a200a0178121b1a190a170102fdffffffffffffffff01ac02808080808080808040"),
    "float": (_example({"f": F(float_list=tf.train.FloatList(value=[1.5, -0.25, 3.0e10]))}),
              "0a170a150a01661210120e0a0c0000c03f000080be7684df50"),
    "bytes incl. empty and utf-8 str": (
        _example({"b": F(bytes_list=tf.train.BytesList(value=[b"ab", b"", "h\u00e9llo"]))}),
        "0a170a150a016212100a0e0a0261620a000a0668c3a96c6c6f"),
    "empty Int64List": (_example({"e": F(int64_list=tf.train.Int64List())}), "0a090a070a016512021a00"),
    "Feature with no kind": (_example({"n": F()}), "0a070a050a016e1200"),
    "empty Features": (E(features=tf.train.Features()), "0a00"),
    "empty Example": (E(), ""),
}


@pytest.mark.parametrize("case", sorted(TF_BYTES))
def test_serialization_is_tf_bytes(case: str) -> None:
    message, tf_hex = TF_BYTES[case]
    assert message.SerializeToString().hex() == tf_hex


@pytest.mark.parametrize("case", sorted(TF_BYTES))
def test_parsing_tf_bytes_round_trips(case: str) -> None:
    message, tf_hex = TF_BYTES[case]
    parsed = E.FromString(bytes.fromhex(tf_hex))
    assert parsed == message
    assert parsed.SerializeToString().hex() == tf_hex


def test_parsed_values() -> None:
    parsed = E.FromString(bytes.fromhex(TF_BYTES["int64 incl. negative and large"][1]))
    assert list(parsed.features.feature["x"].int64_list.value) == [1, 2, -3, 300, 2**62]
    assert parsed.features.feature["x"].WhichOneof("kind") == "int64_list"
    floats = E.FromString(bytes.fromhex(TF_BYTES["float"][1])).features.feature["f"].float_list.value
    assert list(floats) == [1.5, -0.25, pytest.approx(3.0e10, rel=1e-7)]


def test_multi_key_tf_bytes_parse() -> None:
    # TF 2.21 wrote the map entries in its hash order (alpha, zeta, mid) for insertion order zeta, alpha, mid.
    tf_hex = ("0a300a110a05616c706861120812060a040000803f0a0d0a047a65746112051a030a01070a0c0a036d696412050a"
              "030a016d")
    parsed = E.FromString(bytes.fromhex(tf_hex))
    ours = _example({"zeta": F(int64_list=tf.train.Int64List(value=[7])),
                     "alpha": F(float_list=tf.train.FloatList(value=[1.0])),
                     "mid": F(bytes_list=tf.train.BytesList(value=[b"m"]))})
    assert parsed == ours
    assert sorted(parsed.features.feature) == ["alpha", "mid", "zeta"]
    assert len(ours.SerializeToString()) == len(bytes.fromhex(tf_hex))


def test_mutation_creates_fields_as_protobuf() -> None:
    example = E()
    assert example.SerializeToString() == b""
    _ = example.features.feature  # reading alone adds nothing
    assert not example.HasField("features") and example.SerializeToString() == b""
    example.features.feature["k"].int64_list.value.append(5)
    # TF 2.21: the same mutation serializes to this
    assert example.SerializeToString().hex() == "0a0c0a0a0a016b12051a030a0105"
    feature = example.features.feature["k"]
    feature.float_list.value.extend([2.0])  # the oneof switches to the last member written
    assert feature.WhichOneof("kind") == "float_list" and not feature.HasField("int64_list")


def test_parse_from_string_replaces_and_copy_from() -> None:
    message, tf_hex = TF_BYTES["float"]
    target = _example({"other": F(int64_list=tf.train.Int64List(value=[1]))})
    assert target.ParseFromString(bytes.fromhex(tf_hex)) == len(tf_hex) // 2
    assert list(target.features.feature) == ["f"]
    copy = E()
    copy.CopyFrom(message)
    assert copy == message and copy is not message


def test_bad_values_and_bytes_raise() -> None:
    with pytest.raises(TypeError, match="Int64List value must be an integer"):
        tf.train.Int64List(value=["1"])
    with pytest.raises(ValueError, match="out of the int64 range"):
        tf.train.Int64List(value=[2**63])
    with pytest.raises(TypeError, match="BytesList value must be bytes or str"):
        tf.train.BytesList(value=[3])
    with pytest.raises(TypeError, match="tf.train.Int64List"):
        F(int64_list=[1, 2])
    with pytest.raises(DecodeError):
        E.FromString(b"\x0a\x05\x0a")  # a length running past the end
