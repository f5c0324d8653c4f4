"""LinearOperatorCirculant and Circulant2D against TF 2.21 numbers (tests/linalg/operator_reference.json),
and the convolution kernel."""
from __future__ import annotations

import pytest

from tests.linalg._operator_cases import check_against_tf


@pytest.mark.parametrize("name", ['circulant', 'circulant2d'])
def test_matches_tf(name):
    check_against_tf(name)


def test_convolution_kernel_matches_tf():
    from tests.linalg._operator_cases import CASES, REF
    REF.close(CASES["circulant"].convolution_kernel(), "circulant_kernel")
