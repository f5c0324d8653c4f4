"""tf.py_function and tf.numpy_function: inputs arrive as tensors / NumPy arrays, outputs come back
as the declared Tout dtypes."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_py_function_gets_tensors_and_casts_to_tout() -> None:
    seen = []

    def double(x):
        seen.append(type(x))
        return x * 2

    out = tf.py_function(double, [tf.constant(3)], tf.int32)
    assert out.item() == 6 and out.dtype == torch.int32 and seen == [torch.Tensor]  # TF 2.21: 6, int32
    pair = tf.py_function(lambda a, b: (a + b, float(a * b)), [2.0, 3.0], [tf.float32, tf.float64])
    assert [p.item() for p in pair] == [5.0, 6.0] and pair[1].dtype == torch.float64
    assert tf.py_function(lambda x: None, [1], None) is None
    with pytest.raises(ValueError, match="Tout lists 2 outputs"):
        tf.py_function(lambda x: x, [1], [tf.int32, tf.int32])
    with pytest.raises(TypeError, match="Tout declares"):
        tf.py_function(lambda x: x, [tf.constant([1.5])], tf.int32)


def test_numpy_function_gets_arrays() -> None:
    out = tf.numpy_function(lambda x: x * 2, [np.int64(3)], tf.int64)
    assert out.item() == 6 and out.dtype == torch.int64  # TF 2.21
    kinds = []
    tf.numpy_function(lambda x: kinds.append(type(x)) or x, [torch.ones(2)], tf.float32)
    assert kinds == [np.ndarray]
    words = tf.numpy_function(lambda x: np.array([b"a", b"b"], dtype=object), [1], tf.string)
    assert words.tolist() == [b"a", b"b"]
    with pytest.raises(TypeError, match="callable"):
        tf.numpy_function(3, [1], tf.int32)
