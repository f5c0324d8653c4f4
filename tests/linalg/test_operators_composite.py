"""The LinearOperators built from others (Composition, BlockDiag, BlockLowerTriangular, Kronecker,
LowRankUpdate, Adjoint, Inversion) against TF 2.21 numbers (tests/linalg/operator_reference.json)."""
from __future__ import annotations

import pytest

from tests.linalg._operator_cases import check_against_tf


@pytest.mark.parametrize("name", [
    "composition", "blockdiag", "blocklower", "kronecker", "lowrank", "adjoint", "inversion"
])
def test_matches_tf(name):
    check_against_tf(name)
