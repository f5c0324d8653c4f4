"""Pooling layers against a NumPy window-by-window reference with TensorFlow 'valid'/'same'
semantics ('same' average counts only real elements), and the global pooling layers."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torchstrategy.keras import layers

RNG = np.random.default_rng(2)


def _numpy_pool(x, pool, strides, padding, mode):
    """x: (N, *spatial, C). Windows start at o*s - pad_before; only in-range elements take part."""
    spatial = x.shape[1:-1]
    outs, befores = [], []
    for n, k, s in zip(spatial, pool, strides):
        if padding == "valid":
            outs.append((n - k) // s + 1)
            befores.append(0)
        else:
            out = math.ceil(n / s)
            outs.append(out)
            befores.append(max((out - 1) * s + k - n, 0) // 2)
    result = np.zeros((x.shape[0], *outs, x.shape[-1]))
    for index in np.ndindex(*outs):
        window = tuple(slice(max(o * s - b, 0), min(o * s - b + k, n))
                       for o, s, b, k, n in zip(index, strides, befores, pool, spatial))
        block = x[(slice(None),) + window + (slice(None),)]
        axes = tuple(range(1, len(spatial) + 1))
        result[(slice(None),) + index + (slice(None),)] = block.max(axis=axes) if mode == "max" else block.mean(axis=axes)
    return result


@pytest.mark.parametrize("size", [5, 6, 7])
@pytest.mark.parametrize("pool,stride", [(2, None), (3, 1), (3, 2), (2, 3), ((3, 2), (2, 1))])
@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("mode", ["max", "avg"])
def test_pooling2d_matches_numpy(size, pool, stride, padding, mode):
    x = RNG.normal(size=(2, size, size + 1, 3))
    cls = layers.MaxPooling2D if mode == "max" else layers.AveragePooling2D
    layer = cls(pool_size=pool, strides=stride, padding=padding, dtype="float64")
    out = layer(torch.tensor(x)).numpy()
    pool_t = (pool, pool) if isinstance(pool, int) else pool
    stride_t = pool_t if stride is None else ((stride, stride) if isinstance(stride, int) else stride)
    np.testing.assert_allclose(out, _numpy_pool(x, pool_t, stride_t, padding, mode), rtol=1e-12)


@pytest.mark.parametrize("pool,stride,padding", [(2, None, "valid"), (3, 2, "same"), (2, 1, "same"), (4, 3, "same")])
@pytest.mark.parametrize("mode", ["max", "avg"])
def test_pooling1d_matches_numpy(pool, stride, padding, mode):
    x = RNG.normal(size=(2, 9, 4))
    cls = layers.MaxPooling1D if mode == "max" else layers.AveragePooling1D
    out = cls(pool, stride, padding, dtype="float64")(torch.tensor(x)).numpy()
    expected = _numpy_pool(x, (pool,), (pool if stride is None else stride,), padding, mode)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.parametrize("mode", ["max", "avg"])
def test_pooling3d_same(mode):
    x = RNG.normal(size=(1, 5, 4, 3, 2))
    cls = layers.MaxPooling3D if mode == "max" else layers.AveragePooling3D
    out = cls(pool_size=2, padding="same", dtype="float64")(torch.tensor(x)).numpy()
    np.testing.assert_allclose(out, _numpy_pool(x, (2, 2, 2), (2, 2, 2), "same", mode), rtol=1e-12)


def test_max_pool_same_never_picks_padding_on_negative_inputs():
    x = -np.abs(RNG.normal(size=(1, 5, 5, 1))) - 1.0
    out = layers.MaxPooling2D(2, padding="same", dtype="float64")(torch.tensor(x)).numpy()
    assert (out < -1.0).all()  # a zero from padding would have won otherwise


def test_pooling_channels_first_equals_channels_last():
    x = RNG.normal(size=(2, 6, 7, 3)).astype(np.float32)
    last = layers.AveragePooling2D(3, 2, "same")(torch.tensor(x)).numpy()
    first = layers.AveragePooling2D(3, 2, "same", data_format="channels_first")(
        torch.tensor(np.transpose(x, (0, 3, 1, 2)).copy())).numpy()
    np.testing.assert_allclose(np.transpose(first, (0, 2, 3, 1)), last, rtol=1e-6)


def test_global_pooling_2d_and_keepdims():
    x = RNG.normal(size=(2, 4, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(layers.GlobalAveragePooling2D()(torch.tensor(x)).numpy(), x.mean((1, 2)), rtol=1e-5)
    np.testing.assert_array_equal(layers.GlobalMaxPooling2D()(torch.tensor(x)).numpy(), x.max((1, 2)))
    kept = layers.GlobalAveragePooling2D(keepdims=True)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(kept, x.mean((1, 2), keepdims=True), rtol=1e-5)
    first = layers.GlobalMaxPooling2D(data_format="channels_first")(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(first, x.max((2, 3)))


def test_global_pooling_1d_with_mask():
    x = RNG.normal(size=(2, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(layers.GlobalAveragePooling1D()(torch.tensor(x)).numpy(), x.mean(1), rtol=1e-5)
    np.testing.assert_array_equal(layers.GlobalMaxPooling1D()(torch.tensor(x)).numpy(), x.max(1))
    mask = np.array([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=bool)
    out = layers.GlobalAveragePooling1D()(torch.tensor(x), mask=torch.tensor(mask)).numpy()
    expected = np.stack([x[0, :3].mean(0), x[1, :1].mean(0)])
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_pooling_errors():
    with pytest.raises(ValueError, match=r"must be a 4-D tensor.*\(None, 5, 3\)"):
        layers.MaxPooling2D()(torch.zeros(2, 5, 3))
    layer = layers.MaxPooling2D(name="pool")
    layer(torch.zeros(1, 4, 4, 2))
    with pytest.raises(ValueError, match=r"layer 'pool'.*expected ndim=4, found ndim=5"):
        layer(torch.zeros(1, 4, 4, 2, 1))
    with pytest.raises(ValueError, match="padding"):
        layers.AveragePooling2D(2, padding="full")
    with pytest.raises(ValueError, match="pool_size"):
        layers.MaxPooling2D(pool_size=0)


def test_pooling_config_round_trip():
    layer = layers.MaxPooling2D(pool_size=(3, 2), strides=1, padding="same")
    config = layer.get_config()
    assert config["pool_size"] == [3, 2] and config["strides"] == [1, 1] and config["padding"] == "same"
    assert layers.MaxPooling2D.from_config(config).get_config() == config
    assert layers.MaxPooling2D().strides == (2, 2)
