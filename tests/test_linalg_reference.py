"""tf.linalg's solvers, LU, lstsq, pinv, rank, determinants, expm/logm, tridiagonal and tensor-diagonal ops
against TF 2.21 outputs frozen in linalg_reference.json (tools/tf_reference/math_linalg_reference.py)."""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest
import torch

import torchstrategy as tf

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("_tf_cases", os.path.join(_HERE, "_tf_cases.py"))
_cases = importlib.util.module_from_spec(_spec)
sys.modules.setdefault(_spec.name, _cases)
_spec.loader.exec_module(_cases)
CASES = _cases.load(os.path.join(_HERE, "linalg_reference.json"))


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{_cases.case_id(c)}" for i, c in enumerate(CASES)])
def test_matches_tf(case):
    _cases.check_case(tf, case)


def test_lu_returns_a_permutation_vector_that_gathers_rows():
    a = np.random.default_rng(0).normal(size=(2, 4, 4))
    packed, perm = tf.linalg.lu(a)
    assert perm.dtype == torch.int32 and sorted(perm[0].tolist()) == [0, 1, 2, 3]
    lower = np.tril(packed.numpy(), -1) + np.eye(4)
    np.testing.assert_allclose(lower @ np.triu(packed.numpy()), np.take_along_axis(a, perm.numpy()[..., None]
                                                                                   .astype(int), axis=1), atol=1e-12)
    np.testing.assert_allclose(tf.linalg.lu_reconstruct(packed, perm).numpy(), a, atol=1e-12)


def test_eigh_vectors_and_gradients():
    a = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    values, vectors = tf.linalg.eigh(a)
    np.testing.assert_allclose((vectors @ torch.diag(values) @ vectors.T).detach().numpy(), a.detach().numpy(),
                               atol=1e-6)
    np.testing.assert_allclose(values.detach().numpy(), [1.3819659, 3.6180334], rtol=1e-6)  # TF 2.21
    values.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.eye(2), atol=1e-6)  # d trace / dA


def test_eigh_tridiagonal_vectors_diagonalise():
    alpha, beta = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0])
    values, vectors = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)
    dense = np.diag(alpha) + np.diag(beta, 1) + np.diag(beta, -1)
    np.testing.assert_allclose(dense @ vectors.numpy(), vectors.numpy() * values.numpy(), atol=1e-10)


def test_lstsq_gradient_and_bad_input():
    a = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]], requires_grad=True)
    tf.linalg.lstsq(a, torch.ones(3, 1)).sum().backward()
    assert torch.isfinite(a.grad).all() and a.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="same number of rows"):
        tf.linalg.lstsq(np.ones((3, 2), np.float32), np.ones((2, 1), np.float32))
    with pytest.raises(TypeError, match="different dtypes"):
        tf.linalg.solve(np.eye(2, dtype=np.float32), np.ones((2, 1)))


def test_bad_input_is_refused_clearly():
    with pytest.raises(TypeError, match="complex64"):
        tf.linalg.logm(np.eye(2, dtype=np.float32))
    with pytest.raises(ValueError, match="square"):
        tf.linalg.solve(np.ones((2, 3), np.float32), np.ones((2, 1), np.float32))
    with pytest.raises(ValueError, match="size 3"):
        tf.linalg.cross(np.ones(2, np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match="s \\+ s"):
        tf.linalg.tensor_diag_part(np.ones((2, 3), np.float32))
    with pytest.raises(NotImplementedError, match="perturb_singular"):
        tf.linalg.tridiagonal_solve(np.ones((3, 2), np.float32), np.ones((2, 1), np.float32), perturb_singular=True)


def test_einsum_and_tensordot_are_the_top_level_ones():
    assert tf.linalg.einsum is tf.einsum and tf.linalg.tensordot is tf.tensordot
