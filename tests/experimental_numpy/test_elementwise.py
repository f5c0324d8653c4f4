"""tnp's one-input elementwise functions against TF 2.21's frozen results (NumPy's where TF equals NumPy), plus
what a test per case cannot show: gradients flow, inputs are left alone, bad input is refused clearly."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.experimental_numpy import _families
from torchstrategy.experimental_numpy import elementwise

tnp = tf.experimental.numpy


@pytest.mark.parametrize("name", _families.functions_with_cases(elementwise.__all__))
def test_matches_tf_2_21(name: str) -> None:
    _families.check_function(name)


def test_every_function_has_frozen_cases() -> None:
    assert set(_families.functions_with_cases(elementwise.__all__)) == set(elementwise.__all__)


def test_float_functions_give_integers_float64_as_tf() -> None:
    # NumPy: sqrt(int8) is float16, sqrt(int16) float32; TF 2.21's tnp computes every non-float in float64
    for dtype in (torch.int8, torch.int16, torch.int32, torch.uint8, torch.bool):
        assert tnp.sqrt(torch.ones(2, dtype=dtype)).dtype == torch.float64
    assert tnp.floor(torch.tensor([3], dtype=torch.int32)).dtype == torch.float64  # TF 2.21 (NumPy keeps int32)
    assert tnp.sqrt(torch.ones(2, dtype=torch.float16)).dtype == torch.float16


def test_gradient_flows_through() -> None:
    x = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
    y = tnp.sum(tnp.exp(x) * tnp.sin(x))
    y.backward()
    expected = np.exp([0.5, 2.0]) * (np.sin([0.5, 2.0]) + np.cos([0.5, 2.0]))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_inputs_are_not_changed_and_results_are_torch() -> None:
    x = torch.tensor([1.0, -2.0])
    out = tnp.abs(x)
    assert isinstance(out, torch.Tensor) and isinstance(out, tnp.ndarray)
    assert x.tolist() == [1.0, -2.0] and out.tolist() == [1.0, 2.0]
    assert tnp.positive(x) is not x


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="strings"):
        tnp.sqrt("abc")
    with pytest.raises(TypeError, match="complex"):
        tnp.floor(torch.tensor([1 + 1j]))
    with pytest.raises(TypeError, match="bool"):
        tnp.negative(torch.tensor([True]))
    with pytest.raises(TypeError, match="integers or bools"):
        tnp.bitwise_not(torch.tensor([1.5]))
    with pytest.raises(NotImplementedError, match="out"):
        tnp.sign(torch.ones(2), out=torch.ones(2))
