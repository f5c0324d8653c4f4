"""tnp's array creation against TF 2.21's frozen results: Python floats give float64, ints int64; zeros/ones/eye
default to float64; linspace/logspace take their dtype from start and stop (TF 2.21 with NumPy 2)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.experimental_numpy import _families
from torchstrategy.experimental_numpy import creation

tnp = tf.experimental.numpy


@pytest.mark.parametrize("name", _families.functions_with_cases(creation.__all__))
def test_matches_tf_2_21(name: str) -> None:
    _families.check_function(name)


def test_every_function_has_frozen_cases() -> None:
    assert set(_families.functions_with_cases(creation.__all__)) == set(creation.__all__)


def test_defaults_of_tf_2_21() -> None:
    assert tnp.asarray(1.5).dtype == torch.float64 and tnp.asarray(1).dtype == torch.int64
    assert tnp.zeros(2).dtype == torch.float64 and tnp.eye(2).dtype == torch.float64
    assert tnp.arange(3).dtype == torch.int64 and tnp.arange(3.0).dtype == torch.float64
    assert tnp.linspace(2, 3, 3, dtype=tnp.int32).dtype == torch.float64  # TF 2.21 ignores dtype here
    assert tnp.vander(torch.tensor([1, 2], dtype=torch.int32)).dtype == torch.int32  # NumPy: int64


def test_copies_and_pass_through() -> None:
    x = torch.ones(3)
    assert tnp.asarray(x) is x
    copied = tnp.array(x)
    copied[0] = 5.0
    assert x[0] == 1.0
    assert tnp.array(x, copy=False) is x
    assert tnp.asarray(x, dtype=tnp.float64).dtype == torch.float64
    assert tnp.array([torch.ones(2), torch.zeros(2)]).tolist() == [[1.0, 1.0], [0.0, 0.0]]


def test_linspace_retstep_and_endpoint_against_numpy() -> None:
    values, step = tnp.linspace(0.0, 1.0, 5, retstep=True)
    expected, expected_step = np.linspace(0.0, 1.0, 5, retstep=True)
    np.testing.assert_allclose(values.numpy(), expected, rtol=1e-15)
    assert float(step) == pytest.approx(expected_step)
    np.testing.assert_allclose(tnp.geomspace(-1, -1000, 4).numpy(), np.geomspace(-1, -1000, 4), rtol=1e-12)


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="not a dtype"):
        tnp.zeros(2, dtype="float77")
    with pytest.raises(ValueError, match="ragged"):
        tnp.array([torch.ones(2), torch.ones(3)])
    with pytest.raises(ValueError, match="step"):
        tnp.arange(0, 5, 0)
    with pytest.raises(ValueError, match="zero"):
        tnp.geomspace(0, 10, 3)
    with pytest.raises(NotImplementedError, match="shape"):
        tnp.full_like(torch.ones(2), 1, shape=(3,))
    with pytest.raises(TypeError, match="strings"):
        tnp.asarray(["a", "b"])
