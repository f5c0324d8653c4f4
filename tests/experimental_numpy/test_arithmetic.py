"""tnp's two-input elementwise functions against TF 2.21's frozen results over every pair of input kinds
(tensors of 8 dtypes, Python scalars, Python lists), which pins TF's promotion rules."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.experimental_numpy import _families
from torchstrategy.experimental_numpy import arithmetic

tnp = tf.experimental.numpy


@pytest.mark.parametrize("name", _families.functions_with_cases(arithmetic.__all__))
def test_matches_tf_2_21(name: str) -> None:
    _families.check_function(name)


def test_every_function_has_frozen_cases() -> None:
    assert set(_families.functions_with_cases(arithmetic.__all__)) == set(arithmetic.__all__)


def test_promotion_rules_of_tf_2_21() -> None:
    i32 = torch.tensor([1, 2], dtype=torch.int32)
    f32 = torch.tensor([1.0, 2.0], dtype=torch.float32)
    assert tnp.add(i32, f32).dtype == torch.float64  # NumPy's rule (torch would say float32)
    assert tnp.add(i32, 2).dtype == torch.int32  # a Python int is weak
    assert tnp.add(i32, 1.5).dtype == torch.float64
    assert tnp.add(f32, 1.5).dtype == torch.float32
    assert tnp.add(f32, [1.0, 2.0]).dtype == torch.float32  # TF reads a Python list's items as weak scalars
    assert tnp.add(torch.tensor([1], dtype=torch.int8), torch.tensor([1], dtype=torch.uint8)).dtype == torch.int16
    # TF's true division: 8/16-bit integers divide in float32, wider ones in float64
    assert tnp.true_divide(torch.tensor([1], dtype=torch.int8), 2).dtype == torch.float32
    assert tnp.true_divide(i32, i32).dtype == torch.float64
    assert tnp.divide(torch.tensor([True]), torch.tensor([True])).dtype == torch.float64


def test_numpy_operands_mix_in() -> None:
    out = tnp.multiply(np.array([1.0, 2.0], dtype=np.float32), torch.tensor([3.0], dtype=torch.float64))
    assert out.dtype == torch.float64 and out.tolist() == [3.0, 6.0]
    assert tnp.floor_divide(torch.tensor([7, -7]), torch.tensor([0, 2])).tolist() == [0, -4]  # NumPy: 0 where /0


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="integers"):
        tnp.gcd(torch.tensor([1.5]), 2)
    with pytest.raises(TypeError, match="complex"):
        tnp.greater(torch.tensor([1j]), 0)
    with pytest.raises(ValueError, match="negative integer powers"):
        tnp.power(torch.tensor([2]), -1)
    with pytest.raises(TypeError, match="strings"):
        tnp.add(torch.ones(2), "x")
