"""tf.nn convolutions against TF 2.21 (tests/nn/nn_reference.json): SAME/VALID/explicit padding, strides,
dilations, groups, transposes, depthwise/separable/atrous, bias_add, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.nn._reference import TF_VERSION, arr, close

X = arr(2, 7, 6, 3)
W = arr(3, 2, 3, 4, offset=1.0)


def test_fixture_is_tf_2_21():
    assert TF_VERSION.startswith("2.21")


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [1, 2])
def test_conv2d_padding_and_strides(pad, stride):
    close(tf.nn.conv2d(X, W, stride, pad), f"conv2d_{pad}_s{stride}")


def test_conv2d_dilation_explicit_padding_and_groups():
    close(tf.nn.conv2d(X, W, 1, "SAME", dilations=2), "conv2d_dil2")
    close(tf.nn.conv2d(X, W, [1, 2, 1, 1], [[0, 0], [1, 2], [0, 1], [0, 0]]), "conv2d_explicit")
    close(tf.nn.conv2d(arr(1, 5, 5, 4), arr(3, 3, 2, 4, offset=2.0), 1, "SAME"), "conv2d_groups")


def test_conv1d_conv3d_convolution():
    close(tf.nn.conv1d(arr(2, 9, 3), arr(4, 3, 2, offset=1.0), 2, "SAME"), "conv1d_SAME_s2")
    close(tf.nn.conv3d(arr(1, 5, 4, 6, 2), arr(2, 3, 2, 2, 3, offset=1.0), [1, 2, 2, 2, 1], "SAME"),
          "conv3d_SAME_s2")
    close(tf.nn.convolution(X, W, strides=[1, 2]), "convolution_VALID")


def test_nchw_matches_nhwc():
    nchw = tf.nn.conv2d(np.transpose(X, (0, 3, 1, 2)), W, [1, 1, 2, 2], "SAME", data_format="NCHW")
    close(nchw.permute(0, 2, 3, 1), "conv2d_SAME_s2")


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_conv2d_transpose(pad):
    shape = [2, 14, 12, 5] if pad == "SAME" else [2, 15, 13, 5]
    close(tf.nn.conv2d_transpose(X, arr(3, 3, 5, 3, offset=0.5), shape, 2, pad), f"conv2d_transpose_{pad}")


def test_transpose_with_extra_rows_and_1d():
    close(tf.nn.conv2d_transpose(X, arr(3, 3, 5, 3, offset=0.5), [2, 16, 14, 5], 2, "VALID"),
          "conv2d_transpose_VALID_extra")
    close(tf.nn.conv1d_transpose(arr(2, 5, 3), arr(3, 2, 3, offset=1.0), [2, 10, 2], 2), "conv1d_transpose")
    close(tf.nn.conv_transpose(arr(2, 5, 3), arr(3, 2, 3, offset=1.0), [2, 10, 2], 2), "conv1d_transpose")


def test_depthwise_separable_atrous():
    dw = arr(3, 3, 3, 2, offset=0.3)
    close(tf.nn.depthwise_conv2d(X, dw, [1, 2, 2, 1], "SAME"), "depthwise_SAME_s2")
    close(tf.nn.depthwise_conv2d(X, dw, [1, 1, 1, 1], "VALID", dilations=[2, 1]), "depthwise_dil")
    close(tf.nn.separable_conv2d(X, dw, arr(1, 1, 6, 4, offset=0.9), [1, 1, 1, 1], "SAME"), "separable")
    close(tf.nn.atrous_conv2d(X, W, 2, "SAME"), "atrous")


def test_bias_add():
    close(tf.nn.bias_add(arr(2, 3, 4), np.array([1.0, 2.0, 3.0], np.float32), "NCHW"), "bias_add_nchw")
    out = tf.nn.bias_add(torch.zeros(2, 3), torch.tensor([1.0, 2.0, 3.0]))
    assert torch.equal(out, torch.tensor([[1.0, 2.0, 3.0]] * 2))


def test_gradients_flow_to_input_and_filters():
    x = torch.tensor(X, requires_grad=True)
    w = torch.tensor(W, requires_grad=True)
    tf.nn.conv2d(x, w, 2, "SAME").sum().backward()
    assert x.grad.shape == x.shape and w.grad.abs().sum() > 0


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.conv2d(X, W, 1, "SAME", data_format="NHCW")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv2d(X, W, 1, "FULL")
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.conv2d(X[0], W, 1, "SAME")
    with pytest.raises(ValueError, match="batch and channel"):
        tf.nn.conv2d(X, W, [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="input of spatial size"):
        tf.nn.conv2d_transpose(X, arr(3, 3, 5, 3), [2, 20, 12, 5], 2)


@pytest.mark.parametrize("pad,shape", [("SAME", [2, 7, 6, 5]), ("VALID", [2, 11, 10, 5])])
def test_atrous_conv2d_transpose(pad, shape):
    close(tf.nn.atrous_conv2d_transpose(X, arr(3, 3, 5, 3, offset=0.5), shape, 2, pad), f"atrous_transpose_{pad}")


def test_depthwise_backprops():
    dw, grad = arr(3, 3, 3, 2, offset=0.3), arr(2, 4, 3, 6, offset=1.3)
    close(tf.nn.depthwise_conv2d_backprop_input([2, 7, 6, 3], dw, grad, [1, 2, 2, 1], "SAME"), "dw_backprop_input",
          atol=1e-4)
    close(tf.nn.depthwise_conv2d_backprop_filter(X, [3, 3, 3, 2], grad, [1, 2, 2, 1], "SAME"), "dw_backprop_filter",
          atol=1e-4)
    with pytest.raises(ValueError, match="out_backprop has shape"):
        tf.nn.depthwise_conv2d_backprop_filter(X, [3, 3, 3, 2], grad[:, :2], [1, 2, 2, 1], "SAME")
