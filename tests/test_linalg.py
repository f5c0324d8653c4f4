"""tf.linalg against NumPy, with TF 2.21's result layouts (svd returns s, u, v; qr a (q, r) tuple)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

RNG = np.random.default_rng(2)
A = RNG.standard_normal((3, 3)).astype(np.float64)
SPD = A @ A.T + 3 * np.eye(3)


def test_matvec_inv_det_trace() -> None:
    vector = RNG.standard_normal(3)
    np.testing.assert_allclose(tf.linalg.matvec(A, vector).numpy(), A @ vector)
    np.testing.assert_allclose(tf.linalg.matvec(A, vector, transpose_a=True).numpy(), A.T @ vector)
    np.testing.assert_allclose(tf.linalg.inv(A).numpy(), np.linalg.inv(A), rtol=1e-10)
    assert tf.linalg.det([[1.0, 2], [3, 4]]).item() == pytest.approx(-2.0)  # TF 2.21
    assert tf.linalg.trace([[1, 2], [3, 4]]).item() == 5 and tf.linalg.trace([[1, 2], [3, 4]]).dtype == torch.int32
    with pytest.raises(TypeError, match="does not take int32"):
        tf.linalg.inv([[1, 2], [3, 4]])  # TF 2.21 refuses integer inverses
    with pytest.raises(ValueError, match="matrix"):
        tf.linalg.det([1.0, 2.0])
    assert tf.linalg.matmul is tf.matmul and tf.linalg.eye is tf.eye


def test_norms() -> None:
    assert tf.linalg.norm([[3.0, 4.0]]).item() == 5.0  # TF 2.21
    assert tf.linalg.norm([[3.0, 4.0]], axis=1).tolist() == [5.0]
    assert tf.linalg.norm([[3.0, 4.0]], ord=1).item() == 7.0
    np.testing.assert_allclose(tf.norm(A, ord="fro", axis=[0, 1]).numpy(), np.linalg.norm(A, "fro"))
    np.testing.assert_allclose(tf.linalg.norm(A, ord=2, axis=[-2, -1]).numpy(), np.linalg.norm(A, 2))
    np.testing.assert_allclose(tf.linalg.norm(A, axis=0, keepdims=True).numpy(),
                               np.linalg.norm(A, axis=0, keepdims=True))


def test_diagonals_and_band_part() -> None:
    assert tf.linalg.diag([1, 2]).tolist() == [[1, 0], [0, 2]]  # TF 2.21
    assert tf.linalg.diag_part([[1, 2], [3, 4]]).tolist() == [1, 4]
    assert tf.linalg.set_diag(tf.zeros([2, 2]), [7.0, 8.0]).tolist() == [[7.0, 0.0], [0.0, 8.0]]
    ones = tf.ones([4, 4])
    np.testing.assert_array_equal(tf.linalg.band_part(ones, 0, -1).numpy(), np.triu(np.ones((4, 4))))
    np.testing.assert_array_equal(tf.linalg.band_part(ones, -1, 0).numpy(), np.tril(np.ones((4, 4))))
    np.testing.assert_array_equal(tf.linalg.band_part(ones, 1, 1).numpy(),
                                  np.triu(np.tril(np.ones((4, 4)), 1), -1))
    assert tf.linalg.matrix_transpose(np.zeros((2, 3, 4))).shape == (2, 4, 3)


def test_factorisations() -> None:
    q, r = tf.linalg.qr(A)
    np.testing.assert_allclose((q @ r).numpy(), A, atol=1e-10)
    np.testing.assert_allclose(np.triu(r.numpy()), r.numpy())
    assert tf.linalg.qr(A).q is not None
    s, u, v = tf.linalg.svd(A)
    np.testing.assert_allclose((u @ torch.diag(s) @ v.T).numpy(), A, atol=1e-10)  # v, not v^H, as TF
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(A, compute_uv=False))
    np.testing.assert_allclose(tf.linalg.svd(A, compute_uv=False).numpy(), np.linalg.svd(A, compute_uv=False))
    lower = tf.linalg.cholesky(SPD)
    np.testing.assert_allclose(lower.numpy(), np.linalg.cholesky(SPD), rtol=1e-10)
    np.testing.assert_allclose(tf.linalg.l2_normalize(A[0]).numpy(), A[0] / np.linalg.norm(A[0]))


def test_eig_eigvals_and_matrix_square_root():
    a = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    root = tf.matrix_square_root(a)
    np.testing.assert_allclose(root.numpy(), [[1.98157799243927, 0.2708323001861572],
                                              [0.27083224058151245, 1.7107456922531128]], rtol=1e-5)  # TF 2.21
    np.testing.assert_allclose((root @ root).numpy(), a, rtol=1e-5)
    values = tf.eigvals(a)
    assert values.dtype == torch.complex64
    np.testing.assert_allclose(np.sort(values.numpy().real), np.linalg.eigvalsh(a), rtol=1e-5)
    w, v = tf.eig(a)
    np.testing.assert_allclose((v @ torch.diag_embed(w) @ torch.linalg.inv(v)).numpy().real, a, rtol=1e-5, atol=1e-6)
