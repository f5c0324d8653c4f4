"""tnp's products against TF 2.21's frozen results (operand promotion, vector/matrix cases, bool products)
and against NumPy on random data, with gradients."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.experimental_numpy import _families
from torchstrategy.experimental_numpy import products

tnp = tf.experimental.numpy


@pytest.mark.parametrize("name", _families.functions_with_cases(products.__all__))
def test_matches_tf_2_21(name: str) -> None:
    _families.check_function(name)


def test_every_function_has_frozen_cases() -> None:
    assert set(_families.functions_with_cases(products.__all__)) == set(products.__all__)


def test_against_numpy_on_random_data() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    np.testing.assert_allclose(tnp.matmul(ta, tb).numpy(), np.matmul(a, b), rtol=1e-12)
    np.testing.assert_allclose(tnp.dot(ta, tb).numpy(), np.dot(a, b), rtol=1e-12)
    np.testing.assert_allclose(tnp.tensordot(ta, tb, axes=1).numpy(), np.tensordot(a, b, axes=1), rtol=1e-12)
    np.testing.assert_allclose(tnp.einsum("bij,jk->bki", ta, tb).numpy(), np.einsum("bij,jk->bki", a, b),
                               rtol=1e-12)
    np.testing.assert_allclose(tnp.kron(tb, tb).numpy(), np.kron(b, b), rtol=1e-12)


def test_gradient_of_matmul() -> None:
    a = torch.ones((2, 3), dtype=torch.float64, requires_grad=True)
    tnp.sum(tnp.matmul(a, torch.arange(3.0, dtype=torch.float64))).backward()
    assert a.grad.tolist() == [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="not aligned"):
        tnp.dot(torch.ones((2, 3)), torch.ones((2, 3)))
    with pytest.raises(ValueError, match="scalars"):
        tnp.matmul(torch.ones(()), torch.ones(2))
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        tnp.cross(torch.ones(4), torch.ones(4))
    with pytest.raises(ValueError, match="casting"):
        tnp.einsum("i,i", torch.ones(2), torch.ones(2), casting="unsafe")
