"""tf.nn.dilation2d and erosion2d against TF 2.21 (tests/nn/nn_reference.json): SAME/VALID, strides, rates."""
from __future__ import annotations

import pytest

import torchstrategy as tf
from tests.nn._reference import arr, close

X = arr(2, 7, 6, 3)
MW = arr(3, 2, 3, offset=0.7)


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_dilation_and_erosion(pad):
    close(tf.nn.dilation2d(X, MW, [1, 2, 1, 1], pad, "NHWC", [1, 1, 2, 1]), f"dilation2d_{pad}")
    close(tf.nn.erosion2d(X, MW, [1, 1, 2, 1], pad, "NHWC", [1, 2, 1, 1]), f"erosion2d_{pad}")


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="NHWC"):
        tf.nn.dilation2d(X, MW, 1, "SAME", "NCHW", 1)
    with pytest.raises(ValueError, match="filters must be"):
        tf.nn.erosion2d(X, MW[..., :2], 1, "SAME", "NHWC", 1)
