"""tf.bitwise against NumPy's integer bit operations."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf


def test_bitwise_ops_match_numpy_and_refuse_floats():
    a, b = np.array([12, -7, 255], np.int32), np.array([10, 3, 1], np.int32)
    assert tf.bitwise.bitwise_and(a, b).tolist() == (a & b).tolist()
    assert tf.bitwise.bitwise_or(a, b).tolist() == (a | b).tolist()
    assert tf.bitwise.bitwise_xor(a, b).tolist() == (a ^ b).tolist()
    assert tf.bitwise.invert(a).tolist() == (~a).tolist()
    assert tf.bitwise.left_shift(a, b).tolist() == (a << b).tolist()
    assert tf.bitwise.right_shift(a, b).tolist() == (a >> b).tolist()
    with pytest.raises(TypeError, match="integer"):
        tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([1.0]))
