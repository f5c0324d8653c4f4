"""tf.constant / tf.convert_to_tensor (strings, dtype_hint), tf.shape / tf.size / tf.rank with TF 2.21's signatures
and dtypes, tf.one_hot's on/off values, axis and out-of-range rows, and tf.print's output as TF writes it."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_constant_of_strings_is_a_string_tensor():
    scalar = tf.constant("abc")
    assert isinstance(scalar, np.ndarray) and scalar.dtype == tf.string and scalar.shape == () and scalar[()] == b"abc"
    nested = tf.constant([["a", b"b"], ["c", "d"]])
    assert nested.shape == (2, 2) and nested.reshape(-1).tolist() == [b"a", b"b", b"c", b"d"]
    assert tf.constant("x", shape=[2]).tolist() == [b"x", b"x"]
    assert tf.constant(["a"], dtype=tf.string).tolist() == [b"a"]
    assert tf.strings.length(tf.constant(["ab", "héllo"])).tolist() == [2, 6]  # the tf.strings ops take it
    assert tf.convert_to_tensor(["a", "b"]).tolist() == [b"a", b"b"]
    assert tf.convert_to_tensor(nested) is nested
    with pytest.raises(TypeError, match="to_number"):
        tf.constant("a", dtype=tf.float32)


def test_constant_shape_fills_and_checks():
    assert tf.constant(1.0, shape=[2, 2]).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert tf.constant([1, 2, 3, 4], shape=[2, 2]).tolist() == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="expected 3 elements"):
        tf.constant([1, 2], shape=[3])


def test_convert_to_tensor_dtype_hint():
    assert tf.convert_to_tensor(3, dtype_hint=tf.float32).dtype == torch.float32
    assert tf.convert_to_tensor(3.5, dtype_hint=tf.int32).dtype == torch.float32  # hint does not fit: ignored
    assert tf.convert_to_tensor([1, 2]).dtype == torch.int32


def test_shape_size_rank_are_int32_tensors():
    shape = tf.shape(input=np.zeros((2, 3)))
    assert isinstance(shape, torch.Tensor) and shape.dtype == torch.int32 and shape.tolist() == [2, 3]
    assert tf.shape([[1]], out_type=tf.int64).dtype == torch.int64  # TF 2.21
    assert tf.shape(tf.constant(["a", "b", "c"])).tolist() == [3]
    assert tf.size([[1, 2]]).dtype == torch.int32 and int(tf.size(tf.constant([["a"], ["b"]]))) == 2
    assert int(tf.size([[1, 2]], out_type=tf.int64)) == 2 and tf.size([[1]], out_type=tf.int64).dtype == torch.int64
    assert int(tf.rank(tf.constant("s"))) == 0 and tf.rank([[1]]).dtype == torch.int32
    with pytest.raises(TypeError, match="out_type"):
        tf.shape([1], out_type=tf.float32)


def _printed(*args, **kwargs):
    stream = io.StringIO()
    tf.print(*args, output_stream=stream, **kwargs)
    return stream.getvalue()


def test_print_writes_what_tf_writes():  # TF 2.21's outputs for the same calls
    assert _printed(tf.reshape(tf.range(30), [5, 6]), summarize=2) == \
        "[[0 1 ... 4 5]\n [6 7 ... 10 11]\n ...\n [18 19 ... 22 23]\n [24 25 ... 28 29]]\n"
    assert _printed("loss:", tf.constant(0.1234567), [tf.constant(1), 2], tf.constant([True, False]),
                    tf.constant(["a", "b"]), sep="|", end="!\n") == 'loss:|0.123456702|[1, 2]|[1 0]|["a" "b"]!\n'
    assert _printed(tf.constant([1.0, 2.5e-10, 3.14159265, 1e20])) == "[1 2.5e-10 3.14159274 1e+20]\n"
    assert _printed(tf.range(10)) == "[0 1 2 ... 7 8 9]\n" and _printed(tf.range(10), summarize=-1).count(" ") == 9


def test_print_goes_to_stderr_by_default_and_to_files(capsys, tmp_path):
    tf.print("hello", tf.constant(2))
    captured = capsys.readouterr()
    assert captured.err == "hello 2\n" and captured.out == ""
    target = tmp_path / "log.txt"
    tf.print(tf.constant([1, 2]), output_stream=f"file://{target}")
    assert target.read_text() == "[1 2]\n"
    with pytest.raises(TypeError, match="unexpected keyword"):
        tf.print(1, colour="red")


def test_one_hot_on_off_values_and_out_of_range_rows():
    out = tf.one_hot([0, 3, -1], 3, on_value=5, off_value=-1)
    assert out.dtype == torch.int32  # TF 2.21: int32, from on_value
    assert out.tolist() == [[5, -1, -1], [-1, -1, -1], [-1, -1, -1]]


def test_one_hot_axis_zero():
    out = tf.one_hot([0, 2], 3, axis=0)
    assert out.dtype == torch.float32
    assert out.tolist() == [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]


def test_convert_to_tensor_dtype_hint():
    assert tf.convert_to_tensor(1, dtype_hint=tf.float32).dtype == torch.float32
    assert tf.convert_to_tensor(1).dtype == torch.int32


def test_layout_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="layout"):
        tf.zeros((2,), layout=object())
