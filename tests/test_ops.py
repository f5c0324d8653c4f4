"""tf.one_hot's on/off values, axis and out-of-range rows, and convert_to_tensor's dtype_hint, against
TF 2.21.0 (numbers frozen from the reference env)."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf


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
