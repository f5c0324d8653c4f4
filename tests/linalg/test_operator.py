"""The LinearOperator base: cholesky and eigvals against TF 2.21 numbers, composition/inverse/adjoint algebra
against dense math, and the hint and shape checks with their messages."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.linalg._operator_cases import CASES, REF

L = tf.linalg


def test_cholesky_and_eigvals_match_tf():
    spd = CASES["full_spd"]
    REF.close(spd.cholesky().to_dense(), "full_spd_cholesky", atol=1e-3, rtol=1e-4)
    assert isinstance(spd.cholesky(), L.LinearOperatorLowerTriangular)
    REF.close(spd.eigvals(), "full_spd_eigvals", atol=1e-3, rtol=1e-4)


def test_operator_algebra_agrees_with_dense_math():
    full, diag = CASES["full"], CASES["diag"]
    product = full.matmul(diag)
    assert isinstance(product, L.LinearOperatorComposition)
    torch.testing.assert_close(product.to_dense(), full.to_dense() @ diag.to_dense())
    torch.testing.assert_close(full.inverse().to_dense(), torch.linalg.inv(full.to_dense()), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(full.H.to_dense(), full.to_dense().transpose(-1, -2))
    assert diag.adjoint() is diag  # real diagonal: self-adjoint
    torch.testing.assert_close(full.add_to_tensor(torch.ones(4, 4)), full.to_dense() + 1)
    torch.testing.assert_close(full.cond(), torch.linalg.cond(full.to_dense()), atol=1e-4, rtol=1e-4)
    assert full.batch_shape_tensor().tolist() == [2] and full.range_dimension == 4 and full.tensor_rank == 3


def test_hints_are_checked():
    with pytest.raises(ValueError, match="always non-singular"):
        L.LinearOperatorFullMatrix(np.eye(2, dtype=np.float32), is_positive_definite=True, is_non_singular=False)
    with pytest.raises(ValueError, match="always self adjoint"):
        L.LinearOperatorDiag([1.0, 2.0], is_self_adjoint=False)
    with pytest.raises(ValueError, match="Cholesky"):
        CASES["full"].cholesky()
    with pytest.raises(NotImplementedError, match="self_adjoint"):
        CASES["full"].eigvals()
    with pytest.raises(tf.errors.InvalidArgumentError, match="singular"):
        L.LinearOperatorFullMatrix(np.ones((2, 2), np.float32)).assert_non_singular()
    CASES["full_spd"].assert_positive_definite()
    with pytest.raises(ValueError, match=r"\[\.\.\., 4, R\]"):
        CASES["full"].matmul(torch.ones(3, 2))
