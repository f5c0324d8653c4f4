"""tnp.random: TF 2.21's dtypes and shapes (frozen), seeding through tf.random.set_seed, and the samples'
distributions (moments over many draws), plus bad input."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from tests.experimental_numpy import _families
from torchstrategy.experimental_numpy import random as tnp_random

tnp = tf.experimental.numpy


@pytest.mark.parametrize("name", _families.functions_with_cases([f"random.{n}" for n in tnp_random.__all__]))
def test_dtype_and_shape_match_tf_2_21(name: str) -> None:
    _families.check_function(name)


def test_seed_repeats_draws() -> None:
    tnp.random.seed(7)
    first = (tnp.random.rand(3), tnp.random.randn(2), tnp.random.randint(0, 100, size=4))
    tnp.random.seed(7)
    second = (tnp.random.rand(3), tnp.random.randn(2), tnp.random.randint(0, 100, size=4))
    for a, b in zip(first, second):
        assert torch.equal(a, b)


def test_distributions() -> None:
    tnp.random.seed(0)
    uniform = tnp.random.uniform(2.0, 4.0, size=20000)
    assert uniform.dtype == torch.float64 and 2.0 <= float(uniform.min()) and float(uniform.max()) < 4.0
    assert abs(float(uniform.mean()) - 3.0) < 0.03
    normal = tnp.random.standard_normal((20000,))
    assert abs(float(normal.mean())) < 0.03 and abs(float(normal.std()) - 1.0) < 0.03
    counts = tnp.random.poisson(3.0, size=20000)
    assert counts.dtype == torch.int64 and abs(float(counts.double().mean()) - 3.0) < 0.05
    ints = tnp.random.randint(5, size=5000)
    assert set(ints.tolist()) == {0, 1, 2, 3, 4}
    assert tnp.random.uniform(torch.zeros(2, 3), 1.0).shape == (2, 3)


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="int32 or int64"):
        tnp.random.randint(0, 5, dtype=tnp.float32)
    with pytest.raises(ValueError, match="low >= high"):
        tnp.random.randint(5, 5)
    with pytest.raises(ValueError, match="integers"):
        tnp.random.seed("x")
    with pytest.raises(ValueError, match="non-negative"):
        tnp.random.poisson(-1.0)
