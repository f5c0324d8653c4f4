"""tf.nn space_to_depth, depth_to_space and space_to_batch against TF 2.21 (tests/nn/nn_reference.json)."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from tests.nn._reference import arr, close


def test_space_to_depth_and_back():
    x = arr(2, 4, 6, 3)
    close(tf.nn.space_to_depth(x, 2), "space_to_depth")
    assert torch.equal(tf.nn.depth_to_space(tf.nn.space_to_depth(x, 2), 2), torch.tensor(x))
    close(tf.nn.depth_to_space(arr(2, 2, 3, 12), 2), "depth_to_space")
    nchw = tf.nn.space_to_depth(torch.tensor(x).permute(0, 3, 1, 2), 2, data_format="NCHW")
    close(nchw.permute(0, 2, 3, 1), "space_to_depth")


def test_space_to_batch():
    close(tf.nn.space_to_batch(arr(2, 3, 5, 2), [2, 3], [[1, 0], [0, 1]]), "space_to_batch")


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="multiples of block_size"):
        tf.nn.space_to_depth(arr(1, 3, 4, 1), 2)
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.depth_to_space(arr(1, 2, 2, 4), 2, data_format="NWHC")
    with pytest.raises(ValueError, match="not a multiple"):
        tf.nn.space_to_batch(arr(1, 3, 3, 1), [2, 2], [[0, 0], [0, 0]])


def _nn2_reference():
    import os

    from tests._reference_arrays import Reference
    return Reference(os.path.join(os.path.dirname(__file__), "nn2_reference.json"))


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_with_space_to_batch_matches_tf(pad):
    # TF 2.21: a dilated convolution run through space_to_batch (tests/nn/nn2_reference.json).
    x, filt = arr(2, 6, 8, 3), arr(3, 3, 3, 2, offset=0.6)
    out = tf.nn.with_space_to_batch(x, [2, 2], pad, lambda inp, n, p: tf.nn.convolution(inp, filt, padding=p),
                                    filter_shape=[3, 3])
    _nn2_reference().close(out, f"wstb_{pad}", atol=1e-4)
    direct = tf.nn.convolution(x, filt, padding=pad, dilations=2)
    torch.testing.assert_close(out, direct, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="filter_shape"):
        tf.nn.with_space_to_batch(x, [2, 2], "SAME", lambda inp, n, p: inp)
