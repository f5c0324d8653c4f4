"""tnp's selection and triangle functions against TF 2.21's frozen results (take clips out-of-range indices
by default, as TF does; NumPy would raise)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.experimental_numpy import _families
from torchstrategy.experimental_numpy import indexing

tnp = tf.experimental.numpy


@pytest.mark.parametrize("name", _families.functions_with_cases(indexing.__all__))
def test_matches_tf_2_21(name: str) -> None:
    _families.check_function(name)


def test_every_function_has_frozen_cases() -> None:
    assert set(_families.functions_with_cases(indexing.__all__)) == set(indexing.__all__)


def test_take_modes() -> None:
    values = torch.tensor([10.0, 20.0, 30.0])
    assert tnp.take(values, [5, -1]).tolist() == [30.0, 10.0]  # TF 2.21: clipped
    assert tnp.take(values, [4, -1], mode="wrap").tolist() == [20.0, 30.0]
    assert tnp.take(values, [-1], mode="raise").tolist() == [30.0]
    with pytest.raises(IndexError, match="out of range"):
        tnp.take(values, [3], mode="raise")


def test_take_along_axis_matches_numpy() -> None:
    data = np.random.default_rng(1).standard_normal((3, 5))
    order = np.argsort(data, axis=1)
    got = tnp.take_along_axis(torch.from_numpy(data), torch.from_numpy(order), axis=1)
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(data, order, axis=1))


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="indices must be integers"):
        tnp.take(torch.ones(3), [0.5])
    with pytest.raises(ValueError, match="both x and y"):
        tnp.where(torch.ones(2) > 0, 1)
    with pytest.raises(ValueError, match="at most one"):
        tnp.clip(torch.ones(2), None, None)
    with pytest.raises(ValueError, match="same length"):
        tnp.select([torch.ones(2) > 0], [])
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        tnp.diagonal(torch.ones(3))
