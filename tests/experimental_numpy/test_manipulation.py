"""tnp's shape functions against TF 2.21's frozen results: reshape (C and F order), joining with promotion,
splitting, tile/repeat/broadcast, flips and rolls, pad's three modes, atleast_nd, shape/size."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.experimental_numpy import _families
from torchstrategy.experimental_numpy import manipulation

tnp = tf.experimental.numpy


@pytest.mark.parametrize("name", _families.functions_with_cases(manipulation.__all__))
def test_matches_tf_2_21(name: str) -> None:
    _families.check_function(name)


def test_every_function_has_frozen_cases() -> None:
    assert set(_families.functions_with_cases(manipulation.__all__)) == set(manipulation.__all__)


@pytest.mark.parametrize("mode", ["constant", "reflect", "symmetric"])
def test_pad_against_numpy(mode: str) -> None:
    data = np.arange(12.0).reshape(3, 4)
    for widths in (1, (1, 2), ((2, 1), (0, 3)), ((3, 3), (4, 5))):
        if mode == "reflect" and widths == ((3, 3), (4, 5)):
            widths = ((2, 2), (3, 3))
        np.testing.assert_array_equal(tnp.pad(torch.from_numpy(data), widths, mode).numpy(),
                                      np.pad(data, widths, mode))


def test_split_and_concatenate_round_trip() -> None:
    data = torch.arange(24.0).reshape(4, 6)
    parts = tnp.split(data, [1, 4], axis=1)
    assert [tuple(p.shape) for p in parts] == [(4, 1), (4, 3), (4, 2)]
    assert torch.equal(tnp.concatenate(parts, axis=1), data)
    assert tnp.shape(data) == (4, 6) and tnp.ndim(data) == 2 and tnp.size(data) == 24


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="cannot reshape"):
        tnp.reshape(torch.ones(6), (4, 2))
    with pytest.raises(ValueError, match="equal division"):
        tnp.split(torch.ones(5), 2)
    with pytest.raises(ValueError, match="same shape"):
        tnp.stack([torch.ones(2), torch.ones(3)])
    with pytest.raises(ValueError, match="unsupported padding mode"):
        tnp.pad(torch.ones(2), 1, "edge")
    with pytest.raises(ValueError, match="size not equal to one"):
        tnp.squeeze(torch.ones((2, 1)), axis=0)
    with pytest.raises(NotImplementedError, match="axis"):
        tnp.size(torch.ones(2), axis=0)
