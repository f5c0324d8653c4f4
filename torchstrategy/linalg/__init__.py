"""`tf.linalg`: matrix products, inverses, determinants, norms, diagonals, band parts and the QR, SVD and
Cholesky factorisations, with TF's argument names and result layouts, on torch tensors. Solvers and LU live
in _solve, tridiagonal/tensor-diagonal helpers and global_norm in _structured, the LinearOperator family in
_operator*; this module re-exports them."""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import torch

from torchstrategy._tensor_convert import match_dtypes, require, to_tensor
from torchstrategy.array_ops import eye, matmul
from torchstrategy.array_ops import einsum  # noqa: F401  (tf.linalg.einsum is tf.einsum)
from torchstrategy.manip_ops import tensordot  # noqa: F401  (tf.linalg.tensordot is tf.tensordot)
from torchstrategy.math import l2_normalize
from torchstrategy.linalg._solve import *  # noqa: F401,F403
from torchstrategy.linalg._solve import __all__ as _solve_names
from torchstrategy.linalg._structured import *  # noqa: F401,F403
from torchstrategy.linalg._structured import __all__ as _structured_names
from torchstrategy.linalg import experimental  # noqa: F401  (tf.linalg.experimental)
from torchstrategy.linalg._operator import LinearOperator
from torchstrategy.linalg._operators import (LinearOperatorDiag, LinearOperatorFullMatrix, LinearOperatorHouseholder,
                                            LinearOperatorIdentity, LinearOperatorLowerTriangular,
                                            LinearOperatorPermutation, LinearOperatorScaledIdentity,
                                            LinearOperatorToeplitz, LinearOperatorTridiag, LinearOperatorZeros)
from torchstrategy.linalg._operators_circulant import (LinearOperatorCirculant, LinearOperatorCirculant2D,
                                                     LinearOperatorCirculant3D)
from torchstrategy.linalg._operators_composite import (LinearOperatorAdjoint, LinearOperatorBlockDiag,
                                                     LinearOperatorBlockLowerTriangular, LinearOperatorComposition,
                                                     LinearOperatorInversion, LinearOperatorKronecker,
                                                     LinearOperatorLowRankUpdate)

__all__ = ["matmul", "matvec", "inv", "det", "norm", "diag", "diag_part", "trace", "eye", "band_part",
           "l2_normalize", "qr", "svd", "cholesky", "Qr", "matrix_transpose", "set_diag"]
__all__ += ["eig", "eigvals", "sqrtm", "einsum", "tensordot", "normalize"]
__all__ += list(_solve_names) + list(_structured_names)
__all__ += [name for name in dir() if name.startswith("LinearOperator")]


def _matrix(x: Any, op: str, allowed: str = "float") -> torch.Tensor:
    tensor = require(to_tensor(x, op=op), allowed, op)
    if tensor.dim() < 2:
        raise ValueError(f"{op} needs a matrix (rank >= 2), got shape {tuple(tensor.shape)}.")
    return tensor


def matvec(a: Any, b: Any, transpose_a: bool = False, adjoint_a: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """The matrix-vector product a @ b over the last axes (a: [..., M, N], b: [..., N])."""
    ta, tb = match_dtypes([a, b], "tf.linalg.matvec")
    return matmul(ta, tb.unsqueeze(-1), transpose_a=transpose_a, adjoint_a=adjoint_a).squeeze(-1)


def inv(input: Any, adjoint: bool = False, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The inverse of each square matrix (float inputs only)."""
    matrix = _matrix(input, "tf.linalg.inv")
    out = torch.linalg.inv(matrix)
    return out.transpose(-1, -2).conj() if adjoint else out


def det(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The determinant of each square matrix."""
    return torch.linalg.det(_matrix(input, "tf.linalg.det"))


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: Optional[bool] = None,  # noqa: A002
         name: Optional[str] = None) -> torch.Tensor:
    """A vector norm (axis None or an int: over all entries or that axis) or a matrix norm (axis a pair:
    'fro', 'euclidean' = spectral, 1, inf). ord 'euclidean' on vectors is the 2-norm, as TF.

    >>> norm([[3.0, 4.0]]).item()
    5.0
    """
    keepdims = bool(keepdims)
    values = require(to_tensor(tensor, op="tf.norm"), "float", "tf.norm")
    if isinstance(axis, (list, tuple)) and len(axis) == 2:
        matrix_ord = {"euclidean": 2, "fro": "fro"}.get(ord, ord) if isinstance(ord, str) else ord
        return torch.linalg.matrix_norm(values, ord=matrix_ord, dim=tuple(axis), keepdim=keepdims)
    vector_ord = 2 if ord in ("euclidean", "fro") else ord
    if axis is None:
        out = torch.linalg.vector_norm(values.reshape(-1), ord=vector_ord)
        return out.reshape([1] * values.dim()) if keepdims else out
    dim = axis[0] if isinstance(axis, (list, tuple)) else axis
    return torch.linalg.vector_norm(values, ord=vector_ord, dim=int(dim), keepdim=keepdims)


def _check_align(align: str, op: str) -> None:
    if align not in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
        raise ValueError(f"{op}: align must be one of 'RIGHT_LEFT', 'LEFT_RIGHT', 'LEFT_LEFT', 'RIGHT_RIGHT'; "
                         f"got {align!r}.")


def diag(diagonal: Any, name: str = "diag", k: int = 0, num_rows: int = -1, num_cols: int = -1,
         padding_value: Any = 0, align: str = "RIGHT_LEFT") -> torch.Tensor:
    """A (batched) square matrix with `diagonal` on its k-th diagonal and zeros elsewhere (`k` one int, so
    `align`, which places diagonals of a k range, changes nothing)."""
    _check_align(align, "tf.linalg.diag")
    values = to_tensor(diagonal, op="tf.linalg.diag")
    out = torch.diag_embed(values, offset=int(k))
    return out if padding_value == 0 else torch.where(torch.diag_embed(torch.ones_like(values, dtype=torch.bool),
                                                                       offset=int(k)), out,
                                                       torch.full_like(out, padding_value))


def diag_part(input: Any, name: str = "diag_part", k: int = 0, padding_value: Any = 0,  # noqa: A002
              align: str = "RIGHT_LEFT") -> torch.Tensor:
    """The k-th diagonal of each matrix in the last two axes."""
    _check_align(align, "tf.linalg.diag_part")
    return torch.diagonal(_matrix(input, "tf.linalg.diag_part", "numeric"), offset=int(k), dim1=-2, dim2=-1)


def set_diag(input: Any, diagonal: Any, name: str = "set_diag", k: int = 0,  # noqa: A002
             align: str = "RIGHT_LEFT") -> torch.Tensor:
    """A copy of `input` whose main diagonal is `diagonal`."""
    _check_align(align, "tf.linalg.set_diag")
    matrix, values = match_dtypes([input, diagonal], "tf.linalg.set_diag")
    out = matrix.clone()
    torch.diagonal(out, offset=int(k), dim1=-2, dim2=-1).copy_(values)
    return out


def trace(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """The sum of each matrix's main diagonal, keeping the dtype."""
    matrix = _matrix(x, "tf.linalg.trace", "numeric")
    return torch.diagonal(matrix, dim1=-2, dim2=-1).sum(-1).to(matrix.dtype)


def band_part(input: Any, num_lower: int, num_upper: int, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """Keeps `num_lower` diagonals below and `num_upper` above the main one (-1: all of them), zeros the rest.

    >>> band_part(torch.ones(3, 3), 0, -1).tolist()[2]
    [0.0, 0.0, 1.0]
    """
    matrix = _matrix(input, "tf.linalg.band_part", "numeric")
    rows = torch.arange(matrix.shape[-2], device=matrix.device).unsqueeze(-1)
    cols = torch.arange(matrix.shape[-1], device=matrix.device).unsqueeze(0)
    keep = torch.ones(matrix.shape[-2:], dtype=torch.bool, device=matrix.device)
    if int(num_lower) >= 0:
        keep &= (rows - cols) <= int(num_lower)
    if int(num_upper) >= 0:
        keep &= (cols - rows) <= int(num_upper)
    return torch.where(keep, matrix, torch.zeros_like(matrix))


class Qr(NamedTuple):
    """What `qr` returns: orthonormal `q` and upper-triangular `r` with q @ r = input."""

    q: torch.Tensor
    r: torch.Tensor


def qr(input: Any, full_matrices: bool = False, name: Optional[str] = None) -> Qr:  # noqa: A002
    """The QR factorisation of each matrix (reduced unless `full_matrices`)."""
    q, r = torch.linalg.qr(_matrix(input, "tf.linalg.qr"), mode="complete" if full_matrices else "reduced")
    return Qr(q, r)


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True, name: Optional[str] = None) -> Any:
    """Singular values `s` (descending) and, when `compute_uv`, `u` and `v` with
    tensor = u @ diag(s) @ adjoint(v); returns (s, u, v) as TF does (note: v, not v^H)."""
    matrix = _matrix(tensor, "tf.linalg.svd")
    if not compute_uv:
        return torch.linalg.svdvals(matrix)
    u, s, vh = torch.linalg.svd(matrix, full_matrices=full_matrices)
    return s, u, vh.transpose(-1, -2).conj()


def cholesky(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The lower-triangular Cholesky factor L (L @ L^H = input) of each positive-definite matrix."""
    return torch.linalg.cholesky(_matrix(input, "tf.linalg.cholesky"))


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> torch.Tensor:
    """Swaps the last two axes of each matrix."""
    out = _matrix(a, "tf.linalg.matrix_transpose", "numeric").transpose(-1, -2)
    return out.conj() if conjugate else out



def eig(tensor: Any, name: Optional[str] = None) -> tuple:
    """(eigenvalues, eigenvectors) of square matrices, complex (complex64 for float32 input), as tf.linalg.eig."""
    matrix = _matrix(tensor, "tf.linalg.eig")
    values, vectors = torch.linalg.eig(matrix)
    return values, vectors


def eigvals(tensor: Any, name: Optional[str] = None) -> torch.Tensor:
    """The eigenvalues of square matrices, complex, as tf.linalg.eigvals."""
    return torch.linalg.eigvals(_matrix(tensor, "tf.linalg.eigvals"))


def sqrtm(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The principal square root S of square matrices A (S @ S = A), real for real input with no eigenvalue on
    the negative real axis (tf.linalg.sqrtm, tf.matrix_square_root)."""
    matrix = _matrix(input, "tf.linalg.sqrtm")
    values, vectors = torch.linalg.eig(matrix)
    root = vectors @ torch.diag_embed(torch.sqrt(values)) @ torch.linalg.inv(vectors)
    return root if matrix.is_complex() else root.real.to(matrix.dtype)


def normalize(tensor: Any, ord: Any = "euclidean", axis: Any = None, name: Optional[str] = None) -> tuple:  # noqa: A002
    """(tensor / norm, norm) with the norm of `norm(tensor, ord, axis, keepdims=True)`."""
    size = norm(tensor, ord=ord, axis=axis, keepdims=True)
    values = to_tensor(tensor, op="tf.linalg.normalize")
    return values / size, size
