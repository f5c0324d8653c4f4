"""tnp's reductions and orderings against TF 2.21's frozen results: axis/keepdims/dtype, the integer widening
(sums to int64/uint64, means to float64, cumsum of uint8 to int64 as TF), NaN handling."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.experimental_numpy import _families
from torchstrategy.experimental_numpy import reductions

tnp = tf.experimental.numpy


@pytest.mark.parametrize("name", _families.functions_with_cases(reductions.__all__))
def test_matches_tf_2_21(name: str) -> None:
    _families.check_function(name)


def test_every_function_has_frozen_cases() -> None:
    assert set(_families.functions_with_cases(reductions.__all__)) == set(reductions.__all__)


def test_against_numpy_on_random_data() -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 4, 5))
    x = torch.from_numpy(data)
    for axis in (None, 0, 1, -1, (0, 2)):
        for name in ("sum", "prod", "mean", "amax", "amin", "var"):
            np.testing.assert_allclose(getattr(tnp, name)(x, axis=axis).numpy(), getattr(np, name)(data, axis=axis),
                                       rtol=1e-12)
        np.testing.assert_allclose(tnp.std(x, axis=axis, keepdims=True).numpy(),
                                   np.std(data, axis=axis, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(tnp.var(x, axis=1, ddof=1).numpy(), np.var(data, axis=1, ddof=1), rtol=1e-12)
    np.testing.assert_array_equal(tnp.argsort(x, axis=1).numpy(), np.argsort(data, axis=1, kind="stable"))
    np.testing.assert_allclose(tnp.cumprod(x, axis=2).numpy(), np.cumprod(data, axis=2), rtol=1e-12)


def test_uint64_sums_wrap_as_numpy() -> None:
    big = np.array([2**63, 2**63 + 5], dtype=np.uint64)
    assert tnp.sum(torch.from_numpy(big)).dtype == torch.uint64
    assert int(tnp.sum(torch.from_numpy(big)).to(torch.int64)) == 5  # (2**64 + 5) mod 2**64


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(NotImplementedError, match="out"):
        tnp.mean(torch.ones(2), out=torch.ones(()))
    with pytest.raises(ValueError, match="out of bounds"):
        tnp.sum(torch.ones((2, 2)), axis=2)
    with pytest.raises(NotImplementedError, match="order"):
        tnp.sort(torch.ones(2), order="x")
    with pytest.raises(ValueError, match="empty"):
        tnp.argmax(torch.ones(0))
    with pytest.raises(TypeError, match="axis must be an int"):
        tnp.sum(torch.ones(2), axis=0.5)
