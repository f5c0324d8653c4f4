"""The tf.linalg.LinearOperator family against TF 2.21 numbers (tests/linalg/operator_reference.json, from
tools/tf_reference/nn2_reference.py): dense form, products, solves (both with adjoint), determinants, diagonal,
trace, shape and hints for every operator, built from the same numbers as there."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests._reference_arrays import Reference
from tests.nn._reference import arr

REF = Reference(os.path.join(os.path.dirname(__file__), "operator_reference.json"))
L = tf.linalg


def operator_cases() -> dict:
    a = arr(2, 4, 4) + 4 * np.eye(4, dtype=np.float32)
    spd = np.einsum("bij,bkj->bik", a, a).astype(np.float32)
    d = np.abs(arr(2, 4, offset=0.5)) + 0.5
    lo = arr(4, 4, offset=1.5) + 3 * np.eye(4, dtype=np.float32)
    small = arr(2, 2, offset=0.2) + 2 * np.eye(2, dtype=np.float32)
    return {
        "full": L.LinearOperatorFullMatrix(a),
        "full_spd": L.LinearOperatorFullMatrix(spd, is_self_adjoint=True, is_positive_definite=True),
        "diag": L.LinearOperatorDiag(d),
        "identity": L.LinearOperatorIdentity(4, batch_shape=[2]),
        "scaled": L.LinearOperatorScaledIdentity(4, np.array([1.5, -2.0], np.float32)),
        "tril": L.LinearOperatorLowerTriangular(lo),
        "householder": L.LinearOperatorHouseholder(arr(4, offset=0.8)),
        "permutation": L.LinearOperatorPermutation(np.array([2, 0, 3, 1], np.int32)),
        "toeplitz": L.LinearOperatorToeplitz(arr(4, offset=0.1) + np.array([3, 0, 0, 0], np.float32),
                                             arr(4, offset=0.1) * np.array([1, -1, 0.5, 2], np.float32)),
        "tridiag": L.LinearOperatorTridiag(arr(3, 4, offset=0.3) + np.array([[0], [3], [0]], np.float32)),
        "circulant": L.LinearOperatorCirculant(np.array([4.0, 1 + 1j, 2.0, 1 - 1j], np.complex64),
                                               input_output_dtype=tf.float32),
        "circulant2d": L.LinearOperatorCirculant2D((np.abs(arr(2, 3, offset=0.4)) + 1).astype(np.complex64),
                                                   input_output_dtype=tf.complex64),
        "composition": L.LinearOperatorComposition([L.LinearOperatorFullMatrix(lo), L.LinearOperatorDiag(d[0])]),
        "blockdiag": L.LinearOperatorBlockDiag([L.LinearOperatorFullMatrix(small), L.LinearOperatorDiag(d[0, :2])]),
        "blocklower": L.LinearOperatorBlockLowerTriangular(
            [[L.LinearOperatorFullMatrix(small)],
             [L.LinearOperatorFullMatrix(arr(2, 2, offset=2.2)), L.LinearOperatorDiag(d[0, :2])]]),
        "kronecker": L.LinearOperatorKronecker([L.LinearOperatorFullMatrix(small),
                                                L.LinearOperatorFullMatrix(small.T.copy())]),
        "lowrank": L.LinearOperatorLowRankUpdate(L.LinearOperatorDiag(d[0]), arr(4, 2, offset=0.9),
                                                 diag_update=np.array([0.5, 2.0], np.float32)),
        "adjoint": L.LinearOperatorAdjoint(L.LinearOperatorFullMatrix(lo)),
        "inversion": L.LinearOperatorInversion(L.LinearOperatorFullMatrix(lo)),
    }


CASES = operator_cases()
_HINT = {None: -1, False: 0, True: 1}


@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_matches_tf(name):
    op = CASES[name]
    n = op.shape[-1]
    x = torch.tensor(arr(*(list(op.batch_shape) + [n, 3]), offset=0.25)).to(op.dtype)
    tol = 2e-4
    REF.close(op.to_dense(), f"{name}_dense", atol=tol, rtol=tol)
    REF.close(op.matmul(x), f"{name}_matmul", atol=tol, rtol=tol)
    REF.close(op.matmul(x, adjoint=True), f"{name}_matmul_adj", atol=tol, rtol=tol)
    REF.close(op.matvec(x[..., 0]), f"{name}_matvec", atol=tol, rtol=tol)
    REF.close(op.solve(x), f"{name}_solve", atol=tol, rtol=tol)
    REF.close(op.solve(x, adjoint=True), f"{name}_solve_adj", atol=tol, rtol=tol)
    REF.close(op.determinant(), f"{name}_det", atol=tol, rtol=tol)
    REF.close(op.log_abs_determinant(), f"{name}_logdet", atol=tol, rtol=tol)
    REF.close(op.diag_part(), f"{name}_diag", atol=tol, rtol=tol)
    REF.close(op.trace(), f"{name}_trace", atol=tol, rtol=tol)
    assert list(op.shape) == REF.ref(f"{name}_shape").tolist()
    hints = [_HINT[h] for h in (op.is_non_singular, op.is_self_adjoint, op.is_positive_definite, op.is_square)]
    assert hints == REF.ref(f"{name}_hints").tolist()


def test_cholesky_eigvals_and_kernel_match_tf():
    spd = CASES["full_spd"]
    REF.close(spd.cholesky().to_dense(), "full_spd_cholesky", atol=1e-3, rtol=1e-4)
    assert isinstance(spd.cholesky(), L.LinearOperatorLowerTriangular)
    REF.close(spd.eigvals(), "full_spd_eigvals", atol=1e-3, rtol=1e-4)
    REF.close(CASES["circulant"].convolution_kernel(), "circulant_kernel")


def test_conjugate_gradient_matches_tf():
    state = L.experimental.conjugate_gradient(CASES["full_spd"], arr(2, 4, offset=0.5), max_iter=3)
    REF.close(state.x, "cg_x", atol=1e-4, rtol=1e-3)
    REF.close(state.r, "cg_r", atol=1e-3, rtol=1e-3)
    assert int(state.i) == int(REF.ref("cg_i"))


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
    zeros = L.LinearOperatorZeros(2, 3)
    assert zeros.to_dense().shape == (2, 3) and zeros.matmul(torch.ones(3, 5)).shape == (2, 5)
    with pytest.raises(NotImplementedError, match="singular"):
        L.LinearOperatorZeros(3).solve(torch.ones(3, 1))
