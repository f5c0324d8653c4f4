"""tf.linalg.experimental.conjugate_gradient against TF 2.21 numbers (tests/linalg/operator_reference.json)."""
from __future__ import annotations

import torchstrategy as tf
from tests.linalg._operator_cases import CASES, REF
from tests.nn._reference import arr

L = tf.linalg


def test_conjugate_gradient_matches_tf():
    state = L.experimental.conjugate_gradient(CASES["full_spd"], arr(2, 4, offset=0.5), max_iter=3)
    REF.close(state.x, "cg_x", atol=1e-4, rtol=1e-3)
    REF.close(state.r, "cg_r", atol=1e-3, rtol=1e-3)
    assert int(state.i) == int(REF.ref("cg_i"))


def test_conjugate_gradient_converges_and_checks_its_operator():
    import pytest
    import torch

    spd = CASES["full_spd"]
    rhs = torch.tensor(arr(2, 4, offset=0.5))
    state = L.experimental.conjugate_gradient(spd, rhs, max_iter=50, tol=1e-6)
    torch.testing.assert_close(state.x, torch.linalg.solve(spd.to_dense(), rhs), atol=1e-4, rtol=1e-4)
    assert int(state.i) <= 8  # exact in at most n = 4 steps per batch member, up to rounding
    with pytest.raises(ValueError, match="self-adjoint, positive definite"):
        L.experimental.conjugate_gradient(CASES["full"], rhs)
