"""tf.strings over NumPy object arrays of bytes, with results frozen from TensorFlow 2.21."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def _strings(*items: bytes) -> np.ndarray:
    array = np.empty(len(items), dtype=object)
    array[:] = list(items)
    return array


def test_length_units() -> None:
    out = tf.strings.length([b"ab", "abc"])
    assert out.dtype == torch.int32 and out.tolist() == [2, 3]  # TF 2.21
    assert tf.strings.length("héllo").item() == 6  # TF 2.21: bytes
    assert tf.strings.length("héllo", unit="UTF8_CHAR").item() == 5
    assert tf.strings.length(np.array([["a", "bb"]], dtype=object)).shape == (1, 2)


def test_case_strip_substr() -> None:
    assert tf.strings.lower(["AB"]).tolist() == [b"ab"]
    assert tf.strings.upper(_strings(b"aB", b"c")).tolist() == [b"AB", b"C"]
    assert tf.strings.upper("é", encoding="utf-8").item() == "É".encode()
    assert tf.strings.lower("É").item() == "É".encode()  # ASCII only without an encoding, as TF
    assert tf.strings.strip([" a ", "\tb\n"]).tolist() == [b"a", b"b"]
    assert tf.strings.substr(["hello"], 1, 3).tolist() == [b"ell"]  # TF 2.21
    assert tf.strings.substr("hello", -3, 2).item() == b"ll"
    with pytest.raises(ValueError, match="out of range"):
        tf.strings.substr("hi", 5, 1)


def test_split_join_reduce_join() -> None:
    assert tf.strings.split("a,b", ",").tolist() == [b"a", b"b"]  # TF 2.21
    assert tf.strings.split(["a b", "c"]).to_list() == [[b"a", b"b"], [b"c"]]  # TF 2.21
    assert tf.strings.split(["a  b"], " ").to_list() == [[b"a", b"", b"b"]]  # TF 2.21: empty piece kept
    assert tf.strings.split("a  b").tolist() == [b"a", b"b"]
    assert tf.strings.split("a,b,c", ",", maxsplit=1).tolist() == [b"a", b"b,c"]
    assert tf.strings.join(["a", "b"], separator="-").item() == b"a-b"  # TF 2.21
    assert tf.strings.join([["a", "b"], ["c", "d"]]).tolist() == [b"ac", b"bd"]  # TF 2.21
    assert tf.strings.join([_strings(b"x", b"y"), "!"]).tolist() == [b"x!", b"y!"]  # broadcast
    assert tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator=",").tolist() == [b"a,b", b"c,d"]
    assert tf.strings.reduce_join(["a", "b"]).item() == b"ab"  # TF 2.21
    assert tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=0, keepdims=True).tolist() == [[b"ac", b"bd"]]


def test_regex() -> None:
    assert tf.strings.regex_replace(["aab"], "a+", "x").tolist() == [b"xb"]  # TF 2.21
    assert tf.strings.regex_replace(["aab"], "a", "x", replace_global=False).tolist() == [b"xab"]  # TF 2.21
    assert tf.strings.regex_replace("2024-01", r"(\d+)-(\d+)", r"\2/\1").item() == b"01/2024"
    assert tf.strings.regex_full_match(["ab", "abc"], "a.").tolist() == [True, False]


def test_numbers_in_and_out() -> None:
    parsed = tf.strings.to_number(["1.5", "2"])
    assert parsed.dtype == torch.float32 and parsed.tolist() == [1.5, 2.0]  # TF 2.21
    assert tf.strings.to_number(["1", "2"], out_type=tf.int32).dtype == torch.int32
    with pytest.raises(ValueError, match="not a valid"):
        tf.strings.to_number(["x"])  # TF 2.21 raises InvalidArgumentError
    assert tf.strings.as_string([1.5, 2.0]).tolist() == [b"1.500000", b"2.000000"]  # TF 2.21
    assert tf.strings.as_string([1, 2]).tolist() == [b"1", b"2"]
    assert tf.strings.as_string([True]).tolist() == [b"true"]
    assert tf.strings.as_string([1.5], precision=2).tolist() == [b"1.50"]
    assert tf.strings.as_string(torch.tensor([3], dtype=torch.int64), width=3, fill="0").tolist() == [b"003"]
    assert tf.strings.as_string(torch.tensor([1.0e6]), scientific=True, precision=1).tolist() == [b"1.0e+06"]


@pytest.mark.parametrize("call", [
    lambda: tf.strings.length([1, 2]), lambda: tf.strings.upper(3), lambda: tf.strings.lower(torch.tensor([1])),
    lambda: tf.strings.split(np.array([1.0])), lambda: tf.strings.join([1, "a"]),
])
def test_string_ops_refuse_numbers(call) -> None:
    with pytest.raises(TypeError, match="strings"):  # TF 2.21: TypeError, cannot convert to string
        call()


def test_string_dtype() -> None:
    assert tf.string == np.dtype(object) and tf.dtypes.string is tf.string
    assert tf.strings.lower(["A"]).dtype == tf.string
