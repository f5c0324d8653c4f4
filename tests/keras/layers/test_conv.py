"""Conv1D/2D/3D on Keras layouts (NHWC inputs, HWIO kernels) against F.convNd on NCHW with OIHW
kernels and explicit TensorFlow 'same' padding, plus a direct NumPy convolution."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from torchstrategy.keras import layers

RNG = np.random.default_rng(1)


def _tf_same_pads(size, kernel, stride, dilation):
    """TensorFlow's rule: total = max((ceil(in/s) - 1) * s + (k - 1) * d + 1 - in, 0), extra after."""
    total = max((math.ceil(size / stride) - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def _reference_conv2d(x_nhwc, kernel_hwio, bias, stride, padding, dilation=1, groups=1):
    x = torch.tensor(x_nhwc).permute(0, 3, 1, 2).contiguous()
    w = torch.tensor(kernel_hwio).permute(3, 2, 0, 1).contiguous()
    if padding == "same":
        (top, bottom), (left, right) = (_tf_same_pads(x.shape[2], w.shape[2], stride, dilation),
                                        _tf_same_pads(x.shape[3], w.shape[3], stride, dilation))
        x = F.pad(x, (left, right, top, bottom))
    y = F.conv2d(x, w, torch.tensor(bias), stride=stride, dilation=dilation, groups=groups)
    return y.permute(0, 2, 3, 1).numpy()


def _build(layer, x, kernel, bias):
    layer(torch.tensor(x))
    layer.set_weights([kernel, bias])
    return layer(torch.tensor(x)).detach()


@pytest.mark.parametrize("size", [7, 8])
@pytest.mark.parametrize("kernel_size", [1, 2, 3, 4])
@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv2d_matches_reference(size, kernel_size, stride, padding):
    x = RNG.normal(size=(2, size, size + 1, 3)).astype(np.float32)
    kernel = RNG.normal(size=(kernel_size, kernel_size, 3, 4)).astype(np.float32)
    bias = RNG.normal(size=(4,)).astype(np.float32)
    layer = layers.Conv2D(4, kernel_size, strides=stride, padding=padding)
    out = _build(layer, x, kernel, bias)
    assert tuple(layer.kernel.shape) == (kernel_size, kernel_size, 3, 4)
    if padding == "same":
        assert out.shape[1:3] == (math.ceil(size / stride), math.ceil((size + 1) / stride))
    np.testing.assert_allclose(out.numpy(), _reference_conv2d(x, kernel, bias, stride, padding), rtol=1e-4, atol=1e-4)
    assert out.is_contiguous()  # NHWC result comes back contiguous (channels_last conv output)


@pytest.mark.parametrize("kernel_size,dilation", [(3, 2), (2, 3), (3, (1, 2))])
@pytest.mark.parametrize("padding", ["valid", "same"])
def test_conv2d_dilation(kernel_size, dilation, padding):
    x = RNG.normal(size=(1, 9, 10, 2)).astype(np.float32)
    kernel = RNG.normal(size=(kernel_size, kernel_size, 2, 3)).astype(np.float32)
    bias = np.zeros(3, np.float32)
    out = _build(layers.Conv2D(3, kernel_size, padding=padding, dilation_rate=dilation), x, kernel, bias)
    if isinstance(dilation, tuple):  # reference: F.conv2d with per-axis dilation
        xt = torch.tensor(x).permute(0, 3, 1, 2)
        pads = [_tf_same_pads(d, kernel_size, 1, r) if padding == "same" else (0, 0) for d, r in zip((9, 10), dilation)]
        xt = F.pad(xt, (*pads[1], *pads[0]))
        ref = F.conv2d(xt, torch.tensor(kernel).permute(3, 2, 0, 1), dilation=dilation).permute(0, 2, 3, 1).numpy()
    else:
        ref = _reference_conv2d(x, kernel, bias, 1, padding, dilation)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_conv2d_same_stride2_even_kernel_against_numpy_loops():
    x = RNG.normal(size=(1, 6, 5, 2))
    kernel = RNG.normal(size=(4, 2, 2, 3))
    layer = layers.Conv2D(3, (4, 2), strides=2, padding="same", dtype="float64")
    out = _build(layer, x, kernel, np.zeros(3)).numpy()
    # Direct definition: out[i, j] = sum over the window starting at i*s - pad_before (zeros outside).
    top, _ = _tf_same_pads(6, 4, 2, 1)
    left, _ = _tf_same_pads(5, 2, 2, 1)
    expected = np.zeros((1, 3, 3, 3))
    for i in range(3):
        for j in range(3):
            for di in range(4):
                for dj in range(2):
                    r, c = i * 2 - top + di, j * 2 - left + dj
                    if 0 <= r < 6 and 0 <= c < 5:
                        expected[0, i, j] += x[0, r, c] @ kernel[di, dj]
    np.testing.assert_allclose(out, expected, rtol=1e-10)


def test_conv2d_groups_and_channels_first():
    x = RNG.normal(size=(2, 6, 6, 4)).astype(np.float32)
    kernel = RNG.normal(size=(3, 3, 2, 6)).astype(np.float32)
    bias = RNG.normal(size=(6,)).astype(np.float32)
    grouped = _build(layers.Conv2D(6, 3, padding="same", groups=2), x, kernel, bias).numpy()
    np.testing.assert_allclose(grouped, _reference_conv2d(x, kernel, bias, 1, "same", groups=2), rtol=1e-4, atol=1e-4)
    x_nchw = np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)))
    first = _build(layers.Conv2D(6, 3, padding="same", groups=2, data_format="channels_first"), x_nchw, kernel, bias)
    np.testing.assert_allclose(np.transpose(first.numpy(), (0, 2, 3, 1)), grouped, rtol=1e-4, atol=1e-4)


def test_conv2d_gradients_reach_kernel_and_bias():
    layer = layers.Conv2D(2, 3, strides=2, padding="same")
    x = torch.randn(2, 5, 5, 3, requires_grad=True)
    layer(x).square().sum().backward()
    assert layer.kernel.grad.shape == (3, 3, 3, 2) and layer.bias.grad.shape == (2,)
    assert x.grad.shape == x.shape and x.grad.abs().sum() > 0


@pytest.mark.parametrize("padding", ["valid", "same", "causal"])
@pytest.mark.parametrize("stride,dilation", [(1, 1), (2, 1), (1, 2)])
def test_conv1d_matches_reference(padding, stride, dilation):
    x = RNG.normal(size=(2, 11, 3)).astype(np.float32)
    kernel = RNG.normal(size=(4, 3, 5)).astype(np.float32)
    bias = RNG.normal(size=(5,)).astype(np.float32)
    out = _build(layers.Conv1D(5, 4, strides=stride, padding=padding, dilation_rate=dilation), x, kernel, bias)
    xt = torch.tensor(x).permute(0, 2, 1)
    if padding == "same":
        xt = F.pad(xt, _tf_same_pads(11, 4, stride, dilation))
    elif padding == "causal":
        xt = F.pad(xt, (3 * dilation, 0))
    ref = F.conv1d(xt, torch.tensor(kernel).permute(2, 1, 0), torch.tensor(bias), stride, dilation=dilation)
    np.testing.assert_allclose(out.numpy(), ref.permute(0, 2, 1).numpy(), rtol=1e-4, atol=1e-4)


def test_conv1d_causal_output_ignores_future_steps():
    layer = layers.Conv1D(2, 3, padding="causal")
    x = torch.randn(1, 10, 2)
    changed = x.clone()
    changed[:, 6:] += 5.0
    assert torch.allclose(layer(x)[:, :6], layer(changed)[:, :6])
    assert not torch.allclose(layer(x)[:, 6:], layer(changed)[:, 6:])


def test_conv3d_same_matches_reference():
    x = RNG.normal(size=(1, 5, 6, 4, 2)).astype(np.float32)
    kernel = RNG.normal(size=(2, 3, 2, 2, 3)).astype(np.float32)
    bias = RNG.normal(size=(3,)).astype(np.float32)
    out = _build(layers.Conv3D(3, (2, 3, 2), strides=2, padding="same"), x, kernel, bias)
    pads = [_tf_same_pads(n, k, 2, 1) for n, k in zip((5, 6, 4), (2, 3, 2))]
    xt = F.pad(torch.tensor(x).permute(0, 4, 1, 2, 3), (*pads[2], *pads[1], *pads[0]))
    ref = F.conv3d(xt, torch.tensor(kernel).permute(4, 3, 0, 1, 2), torch.tensor(bias), stride=2)
    np.testing.assert_allclose(out.numpy(), ref.permute(0, 2, 3, 4, 1).numpy(), rtol=1e-4, atol=1e-4)


def test_conv2d_wrong_input_after_build_names_layer_and_shapes():
    layer = layers.Conv2D(4, 3, name="stem")
    layer(torch.zeros(1, 8, 8, 3))
    with pytest.raises(ValueError, match=r"layer 'stem'.*axis -1.*value 3.*\(None, 8, 8, 3\).*\(None, 8, 8, 5\)"):
        layer(torch.zeros(1, 8, 8, 5))
    with pytest.raises(ValueError, match=r"layer 'stem'.*expected ndim=4, found ndim=3"):
        layer(torch.zeros(8, 8, 3))


def test_conv_bad_arguments_and_first_call_rank():
    with pytest.raises(ValueError, match="must be a 4-D tensor"):
        layers.Conv2D(2, 3)(torch.zeros(8, 8, 3))
    with pytest.raises(ValueError, match="dilation_rate > 1"):
        layers.Conv2D(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="groups"):
        layers.Conv2D(3, 3, groups=2)
    with pytest.raises(ValueError, match="divisible by groups"):
        layers.Conv2D(4, 3, groups=2)(torch.zeros(1, 5, 5, 3))
    with pytest.raises(ValueError, match="padding"):
        layers.Conv2D(2, 3, padding="causal")
    with pytest.raises(ValueError, match="kernel_size"):
        layers.Conv2D(2, (3, 3, 3))


def test_conv2d_config_round_trip_and_default_weights():
    layer = layers.Conv2D(8, (3, 2), strides=(2, 1), padding="same", activation="relu", name="c")
    x = torch.randn(2, 7, 7, 3)
    layer(x)
    kernel, bias = layer.get_weights()
    fan_in, fan_out = 3 * 2 * 3, 3 * 2 * 8
    assert np.abs(kernel).max() <= math.sqrt(6 / (fan_in + fan_out))
    np.testing.assert_array_equal(bias, 0)
    clone = layers.Conv2D.from_config(layer.get_config())
    clone(x)
    clone.set_weights(layer.get_weights())
    assert torch.allclose(clone(x), layer(x))
    assert clone.get_config() == layer.get_config()


@pytest.mark.parametrize("multiplier,stride,padding", [(1, 1, "same"), (2, 2, "same"), (3, 1, "valid")])
def test_depthwise_conv2d_matches_per_channel_numpy(multiplier, stride, padding):
    x = RNG.normal(size=(2, 7, 6, 3))
    kernel = RNG.normal(size=(3, 3, 3, multiplier))
    bias = RNG.normal(size=(3 * multiplier,))
    layer = layers.DepthwiseConv2D(3, strides=stride, padding=padding, depth_multiplier=multiplier, dtype="float64")
    out = _build(layer, x, kernel, bias).numpy()
    assert tuple(layer.depthwise_kernel.shape) == (3, 3, 3, multiplier)
    # Output channel c * multiplier + m: input channel c convolved with kernel[..., c, m] alone.
    expected = np.concatenate([
        _reference_conv2d(x[..., c:c + 1], kernel[:, :, c:c + 1, :], bias[c * multiplier:(c + 1) * multiplier],
                          stride, padding)
        for c in range(3)], axis=-1)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10)
    clone = layers.DepthwiseConv2D.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config() and "depthwise_initializer" in layer.get_config()


def test_zero_padding2d():
    x = RNG.normal(size=(1, 3, 4, 2)).astype(np.float32)
    out = layers.ZeroPadding2D(((1, 2), (0, 3)))(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (1, 2), (0, 3), (0, 0))))
    out = layers.ZeroPadding2D(1, data_format="channels_first")(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))))
    with pytest.raises(ValueError, match="padding"):
        layers.ZeroPadding2D((1, 2, 3))


# ----- convolution_op (Keras 3's BaseConv method) -------------------------------------------------------------

def test_convolution_op_uses_the_layers_strides_padding_on_a_given_kernel():
    """Numbers from Keras 3.15 (TF 2.21): Conv2D(2, 3, strides=2, padding='same') on arange(50) inputs, a kernel of
    ones for filter 0 and twos for filter 1; no bias is added even though the layer has one."""
    conv = layers.Conv2D(2, 3, strides=2, padding="same")
    x = np.arange(50, dtype="float32").reshape(2, 5, 5, 1)
    conv.build(x.shape)
    kernel = np.ones((3, 3, 1, 2), "float32")
    kernel[..., 1] = 2.0
    with torch.no_grad():
        conv.bias.fill_(100.0)
    out = np.asarray(conv.convolution_op(x, kernel))
    assert out.shape == (2, 3, 3, 2)
    np.testing.assert_array_equal(out[0, :, :, 0], [[12, 27, 24], [63, 108, 81], [72, 117, 84]])
    np.testing.assert_array_equal(out[1, 1, 1], [333, 666])


def test_convolution_op_groups_and_3d():
    """Keras 3.15: groups=2 with a 1x1 kernel of ones sums each group's two channels; Conv3D valid shapes."""
    grouped = layers.Conv2D(4, 1, groups=2)
    x = np.arange(8, dtype="float32").reshape(1, 1, 2, 4)
    grouped.build(x.shape)
    np.testing.assert_array_equal(np.asarray(grouped.convolution_op(x, np.ones((1, 1, 2, 4), "float32"))),
                                  [[[[1, 1, 5, 5], [9, 9, 13, 13]]]])
    conv3d = layers.Conv3D(1, 2)
    conv3d.build((1, 3, 3, 3, 1))
    assert tuple(conv3d.convolution_op(np.ones((1, 3, 3, 3, 1), "float32"),
                                       np.ones((2, 2, 2, 1, 1), "float32")).shape) == (1, 2, 2, 2, 1)


def test_an_overridden_convolution_op_is_what_call_uses_then_the_bias():
    """The weight-standardisation pattern: call() convolves through the subclass's convolution_op, then adds bias."""
    class Standardised(layers.Conv2D):
        def convolution_op(self, inputs, kernel):
            mean = kernel.mean(dim=(0, 1, 2), keepdim=True)
            var = kernel.var(dim=(0, 1, 2), unbiased=False, keepdim=True)
            return super().convolution_op(inputs, (kernel - mean) / torch.sqrt(var + 1e-5))

    layer = Standardised(3, 3, padding="same", bias_initializer="ones")
    x = RNG.standard_normal((2, 6, 6, 4)).astype("float32")
    out = layer(x)
    kernel = layer.kernel.detach()
    standardised = (kernel - kernel.mean(dim=(0, 1, 2), keepdim=True)) / torch.sqrt(
        kernel.var(dim=(0, 1, 2), unbiased=False, keepdim=True) + 1e-5)
    plain = layers.Conv2D(3, 3, padding="same", use_bias=False)
    plain.build(x.shape)
    expected = np.asarray(plain.convolution_op(x, standardised)) + 1.0
    np.testing.assert_allclose(np.asarray(out.detach()), expected, rtol=1e-5, atol=1e-5)
    raw = np.asarray(plain.convolution_op(x, kernel)) + 1.0  # what call() gives when convolution_op is ignored
    assert not np.allclose(np.asarray(out.detach()), raw, atol=1e-3)


def test_convolution_op_on_a_causal_conv1d_raises_as_keras_does():
    conv = layers.Conv1D(1, 2, padding="causal")
    conv.build((1, 6, 1))
    with pytest.raises(ValueError, match="padding.*CAUSAL"):
        conv.convolution_op(np.ones((1, 6, 1), "float32"), np.ones((2, 1, 1), "float32"))
