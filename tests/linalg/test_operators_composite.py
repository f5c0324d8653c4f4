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


def test_hints_that_contradict_the_parts_are_refused():
    import numpy as np

    import torchstrategy as tf
    diag = tf.linalg.LinearOperatorDiag(np.array([1.0, 2.0], np.float32))
    with pytest.raises(ValueError, match="is_self_adjoint=False"):
        tf.linalg.LinearOperatorBlockDiag([diag, diag], is_self_adjoint=False)
    with pytest.raises(ValueError, match="is_self_adjoint=False"):
        tf.linalg.LinearOperatorKronecker([diag, diag], is_self_adjoint=False)
    assert tf.linalg.LinearOperatorBlockDiag([diag, diag]).is_self_adjoint is True
