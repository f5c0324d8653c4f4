"""tf.conv and tf.conv2d_backprop_filter_v2 / input_v2 against TF 2.21 (tests/extra_reference.json; TF has no
CPU kernel for the v2 backprops, so its GradientTape gradients of tf.nn.conv2d are the reference)."""
from __future__ import annotations

import os

import pytest

import torchstrategy as tf
from tests._reference_arrays import Reference
from tests.nn._reference import arr

REF = Reference(os.path.join(os.path.dirname(__file__), "extra_reference.json"))
X, W = arr(2, 7, 6, 3), arr(3, 2, 3, 4, offset=1.0)


def test_backprops_match_tf():
    g = arr(2, 4, 3, 4, offset=0.5)
    REF.close(tf.conv2d_backprop_filter_v2(X, W, g, [1, 2, 2, 1], "SAME"), "bp_filter", atol=1e-4)
    REF.close(tf.conv2d_backprop_input_v2(X, W, g, [1, 2, 2, 1], "SAME"), "bp_input", atol=1e-4)
    ge = arr(2, 3, 4, 4, offset=0.5)
    REF.close(tf.conv2d_backprop_filter_v2(X, W, ge, [1, 2, 2, 1], "EXPLICIT",
                                           explicit_paddings=[0, 0, 1, 0, 1, 2, 0, 0]), "bp_filter_explicit",
              atol=1e-4)
    with pytest.raises(ValueError, match="out_backprop"):
        tf.conv2d_backprop_input_v2(X, W, ge, [1, 2, 2, 1], "SAME")


def test_conv_matches_tf():
    REF.close(tf.conv(arr(2, 3, 7, 6, 3), W, [1, 2, 1, 1], "VALID", batch_dims=2), "conv_batch2", atol=1e-4)
    REF.close(tf.conv(arr(2, 5, 5, 4), arr(3, 3, 4, 2, offset=2.0), [1, 1, 1, 1], "SAME", dilations=[1, 2, 1, 1]),
              "conv_dilated", atol=1e-4)
    with pytest.raises(ValueError, match="batch dimensions"):
        tf.conv(X, W, [1, 1, 1, 1], "SAME", batch_dims=2)
