"""The leaf LinearOperators (FullMatrix, Diag, Identity, ScaledIdentity, LowerTriangular, Householder,
Permutation, Toeplitz, Tridiag) against TF 2.21 numbers (tests/linalg/operator_reference.json)."""
from __future__ import annotations

import pytest

from tests.linalg._operator_cases import check_against_tf


@pytest.mark.parametrize("name", [
    "full", "full_spd", "diag", "identity", "scaled", "tril", "householder", "permutation", "toeplitz",
    "tridiag"
])
def test_matches_tf(name):
    check_against_tf(name)


def test_zeros_operator():
    import torch

    from torchstrategy import linalg as L
    zeros = L.LinearOperatorZeros(2, 3)
    assert zeros.to_dense().shape == (2, 3) and zeros.matmul(torch.ones(3, 5)).shape == (2, 5)
    with pytest.raises(NotImplementedError, match="singular"):
        L.LinearOperatorZeros(3).solve(torch.ones(3, 1))
