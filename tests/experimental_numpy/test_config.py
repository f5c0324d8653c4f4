"""tnp.experimental_enable_numpy_behavior: prefer_float32 applies to tnp, the torch tensors are not patched
(a warning says what differs), TF's auto dtype conversion modes are refused by name."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy.experimental_numpy import _dtypes

tnp = tf.experimental.numpy


def test_prefer_float32_and_back() -> None:
    try:
        with pytest.warns(UserWarning, match="astype"):
            tnp.experimental_enable_numpy_behavior(prefer_float32=True)
        assert tnp.asarray([1.0, 2.0]).dtype == torch.float32
        assert tnp.add(torch.ones(1, dtype=torch.float16), 1.5).dtype == torch.float32  # TF 2.21
        assert tnp.zeros(2).dtype == torch.float64  # the dtype `float` is not a Python float value
        with pytest.warns(UserWarning):
            tnp.experimental_enable_numpy_behavior()
        assert tnp.asarray([1.0, 2.0]).dtype == torch.float64
    finally:
        _dtypes.set_prefer_float32(False)


def test_torch_tensors_are_not_patched() -> None:
    with pytest.warns(UserWarning):
        tnp.experimental_enable_numpy_behavior()
    assert not hasattr(torch.Tensor, "astype")
    x = tnp.ones((2, 3))
    assert x.T.shape == (3, 2) and x.reshape(3, 2).shape == (3, 2) and x.ravel().shape == (6,)


def test_unsupported_modes_are_named() -> None:
    with pytest.raises(NotImplementedError, match="dtype_conversion_mode='all'"):
        tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="all")
    with pytest.raises(ValueError, match="must be one of"):
        tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="bogus")
