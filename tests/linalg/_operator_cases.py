"""The LinearOperators tools/tf_reference/nn2_reference.py builds (same names, same numbers) and the check of one
against TF 2.21's numbers in tests/linalg/operator_reference.json: dense form, products, solves (both with adjoint),
determinants, diagonal, trace, shape and hints."""
from __future__ import annotations

import os

import numpy as np
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


def check_against_tf(name: str) -> None:
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
