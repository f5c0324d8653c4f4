"""tf.make_tensor_proto: TF's TensorProto bytes for each way TF writes a value, read back by tf.make_ndarray, and
TF's errors. The bytes were written by TF 2.21's tf.make_tensor_proto(...).SerializeToString()."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf

CASES = [  # (arguments, TF 2.21's bytes (hex), tf.make_ndarray of them)
    (dict(values=[1.0, 2.0], shape=[2]), "080112041202080222080000803f00000040", [1.0, 2.0]),  # tensor_content
    (dict(values=1, shape=[2, 3]), "0803120812020802120208033a0101", [[1, 1, 1], [1, 1, 1]]),  # int_val, filled
    (dict(values=[1, 2], shape=[4]), "08031204120208043a020102", [1, 2, 2, 2]),  # padded with the last value
    (dict(values=1, shape=[2, 2], allow_broadcast=True), "0803120812020802120208023a0101", [[1, 1], [1, 1]]),
    (dict(values="ab"), "0807120042026162", b"ab"),  # string_val
    (dict(values=[b"a", b"bc"]), "080712041202080242016142026263", [b"a", b"bc"]),
    (dict(values=np.arange(3, dtype=np.int64)),
     "08091204120208032218000000000000000001000000000000000200000000000000", [0, 1, 2]),
    (dict(values=[1, 2], dtype="float16"), "08131204120208022204003c0040", [1.0, 2.0]),
    (dict(values=np.float32(3)), "080112002a0400004040", 3.0),  # a scalar: float_val
    (dict(values=[True, False]), "080a1204120208025a020100", [True, False]),  # bool_val
]


@pytest.mark.parametrize("arguments, expected, value", CASES)
def test_bytes_and_value_are_tfs(arguments, expected, value):
    proto = tf.make_tensor_proto(**arguments)
    assert proto.SerializeToString().hex() == expected
    assert tf.make_ndarray(proto).tolist() == value
    shape = arguments.get("shape", np.shape(arguments["values"]))
    assert [dim.size for dim in proto.tensor_shape.dim] == list(shape)


def test_dtype_number_and_text_form():
    proto = tf.make_tensor_proto([1.0, 2.0])
    assert proto.dtype == 1 and proto.ByteSize() == 18
    assert repr(proto).startswith("dtype: float\ntensor_shape {\n  dim {\n    size: 2\n  }\n}")


@pytest.mark.parametrize("arguments, error, message", [
    (dict(values=[1, 2, 3], shape=[2]), ValueError, "Too many elements provided. Takes at most 2, but got 3."),
    (dict(values=[1, 2], shape=[1, 2], verify_shape=True), TypeError, r"Expected Tensor's shape: \(1, 2\), but got \(2,\)."),
    (dict(values=[1, 2], shape=[4], allow_broadcast=True), TypeError, r"Expected Tensor's shape: \(4,\), but got \(2,\)."),
    (dict(values=1.5, dtype="int32"), TypeError, "Expected int32, but got 1.5 of type 'float'."),
])
def test_bad_input_gives_tfs_errors(arguments, error, message):
    with pytest.raises(error, match=message):
        tf.make_tensor_proto(**arguments)
