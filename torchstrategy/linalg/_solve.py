"""tf.linalg's solvers and factorisation helpers: solve, triangular/banded/Cholesky/LU solves, lu and its
reconstruction/inverse, lstsq, pinv, matrix_rank, slogdet/logdet, eigh, expm/logm, cross, adjoint."""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import torch

from torchstrategy._tensor_convert import match_dtypes, require, to_tensor
from torchstrategy.dtypes import as_dtype

__all__ = ["adjoint", "cholesky_solve", "cross", "eigh", "eigvalsh", "expm", "logm", "logdet", "slogdet",
           "lstsq", "lu", "Lu", "lu_solve", "lu_reconstruct", "lu_matrix_inverse", "matrix_rank", "pinv", "solve",
           "triangular_solve", "banded_triangular_solve"]


def _matrix(x: Any, op: str, square: bool = False) -> torch.Tensor:
    tensor = require(to_tensor(x, op=op), "float", op)
    if tensor.dim() < 2:
        raise ValueError(f"{op} needs a matrix (rank >= 2), got shape {tuple(tensor.shape)}.")
    if square and tensor.shape[-1] != tensor.shape[-2]:
        raise ValueError(f"{op} needs square matrices, got shape {tuple(tensor.shape)}.")
    return tensor


def _system(matrix: Any, rhs: Any, op: str) -> tuple:
    a, b = match_dtypes([matrix, rhs], op)
    a, b = _matrix(a, op, square=True), _matrix(b, op)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{op}: matrix {tuple(a.shape)} and rhs {tuple(b.shape)} do not fit (rhs needs "
                         f"{a.shape[-1]} rows).")
    return a, b


def _h(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(-1, -2).conj()


def adjoint(matrix: Any, name: Optional[str] = None) -> torch.Tensor:
    """The conjugate transpose of each matrix in the last two axes."""
    tensor = to_tensor(matrix, op="tf.linalg.adjoint")
    if tensor.dim() < 2:
        raise ValueError(f"tf.linalg.adjoint needs rank >= 2, got shape {tuple(tensor.shape)}.")
    return _h(tensor)


def solve(matrix: Any, rhs: Any, adjoint: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """X with matrix @ X = rhs (adjoint(matrix) @ X = rhs when `adjoint`)."""
    a, b = _system(matrix, rhs, "tf.linalg.solve")
    return torch.linalg.solve(_h(a) if adjoint else a, b)


def triangular_solve(matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                     name: Optional[str] = None) -> torch.Tensor:
    """X with matrix @ X = rhs, reading only matrix's lower (or upper) triangle; `adjoint` solves with
    adjoint(matrix) instead."""
    a, b = _system(matrix, rhs, "tf.linalg.triangular_solve")
    a = torch.tril(a) if lower else torch.triu(a)
    if adjoint:
        return torch.linalg.solve_triangular(_h(a), b, upper=bool(lower))
    return torch.linalg.solve_triangular(a, b, upper=not lower)


def banded_triangular_solve(bands: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                            name: Optional[str] = None) -> torch.Tensor:
    """triangular_solve for a banded matrix given as bands [..., K, M]: lower, row k is the k-th subdiagonal
    (the main diagonal first) padded on the left; upper, row K-1-k is the k-th superdiagonal (the main diagonal
    last) padded on the right (TF's LEFT_RIGHT alignment)."""
    op = "tf.linalg.banded_triangular_solve"
    band, b = match_dtypes([bands, rhs], op)
    band, b = _matrix(band, op), _matrix(b, op)
    k, m = band.shape[-2], band.shape[-1]
    if b.shape[-2] != m:
        raise ValueError(f"{op}: bands {tuple(band.shape)} describe {m}x{m} matrices but rhs has "
                         f"{b.shape[-2]} rows.")
    dense = torch.zeros(band.shape[:-2] + (m, m), dtype=band.dtype, device=band.device)
    for offset in range(min(k, m)):
        if lower:
            values = band[..., offset, offset:]
            dense = dense + torch.diag_embed(values, offset=-offset)
        else:
            values = band[..., k - 1 - offset, : m - offset]
            dense = dense + torch.diag_embed(values, offset=offset)
    return triangular_solve(dense, b, lower=lower, adjoint=adjoint)


def cholesky_solve(chol: Any, rhs: Any, name: Optional[str] = None) -> torch.Tensor:
    """X with A @ X = rhs given A's lower Cholesky factor `chol` (from tf.linalg.cholesky)."""
    factor, b = _system(chol, rhs, "tf.linalg.cholesky_solve")
    return torch.cholesky_solve(b, torch.tril(factor), upper=False)


def cross(a: Any, b: Any, name: Optional[str] = None) -> torch.Tensor:
    """The cross product of 3-vectors in the last axis (shapes [..., 3], one dtype)."""
    ta, tb = match_dtypes([a, b], "tf.linalg.cross")
    require(ta, "numeric", "tf.linalg.cross")
    if ta.dim() == 0 or ta.shape[-1] != 3 or tb.dim() == 0 or tb.shape[-1] != 3:
        raise ValueError(f"tf.linalg.cross needs vectors of size 3 in the last axis, got {tuple(ta.shape)} and "
                         f"{tuple(tb.shape)}.")
    return torch.linalg.cross(ta, tb, dim=-1)


def eigh(tensor: Any, name: Optional[str] = None) -> tuple:
    """(eigenvalues ascending, eigenvectors in columns) of self-adjoint matrices, reading the lower triangle."""
    values, vectors = torch.linalg.eigh(_matrix(tensor, "tf.linalg.eigh", square=True), UPLO="L")
    return values, vectors


def eigvalsh(tensor: Any, name: Optional[str] = None) -> torch.Tensor:
    """The eigenvalues (ascending) of self-adjoint matrices, reading the lower triangle."""
    return torch.linalg.eigvalsh(_matrix(tensor, "tf.linalg.eigvalsh", square=True), UPLO="L")


def expm(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The matrix exponential of square matrices."""
    return torch.linalg.matrix_exp(_matrix(input, "tf.linalg.expm", square=True))


def logm(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The principal matrix logarithm of complex64/complex128 square matrices (TF takes complex only), by
    eigendecomposition (diagonalisable matrices)."""
    matrix = _matrix(input, "tf.linalg.logm", square=True)
    if not matrix.is_complex():
        raise TypeError(f"tf.linalg.logm takes complex64 or complex128 matrices, got {matrix.dtype}; cast with "
                        "tf.cast(x, tf.complex64) first.")
    values, vectors = torch.linalg.eig(matrix)
    return vectors @ torch.diag_embed(torch.log(values)) @ torch.linalg.inv(vectors)


def slogdet(input: Any, name: Optional[str] = None) -> tuple:  # noqa: A002
    """(sign, log|det|) of square matrices; sign is 0 and log|det| -inf for singular ones."""
    sign, logabs = torch.linalg.slogdet(_matrix(input, "tf.linalg.slogdet", square=True))
    return sign, logabs


def logdet(matrix: Any, name: Optional[str] = None) -> torch.Tensor:
    """log(det(matrix)) of Hermitian positive-definite matrices, via the Cholesky factor (real result)."""
    factor = torch.linalg.cholesky(_matrix(matrix, "tf.linalg.logdet", square=True))
    return 2.0 * torch.log(torch.diagonal(factor, dim1=-2, dim2=-1).real).sum(-1)


def lstsq(matrix: Any, rhs: Any, l2_regularizer: Any = 0.0, fast: bool = True, name: Optional[str] = None
          ) -> torch.Tensor:
    """X minimising ||matrix @ X - rhs||^2 + l2_regularizer * ||X||^2. fast=True (TF's default) solves the
    regularised normal equations by Cholesky (A^H A + l2 I when rows >= cols, else A^H (A A^H + l2 I)^-1);
    fast=False gives the minimum-norm least-squares solution by SVD and, as TF 2.21's kernel does, leaves
    l2_regularizer out."""
    op = "tf.linalg.lstsq"
    a, b = match_dtypes([matrix, rhs], op)
    a, b = _matrix(a, op), _matrix(b, op)
    if a.shape[-2] != b.shape[-2]:
        raise ValueError(f"{op}: matrix {tuple(a.shape)} and rhs {tuple(b.shape)} need the same number of rows.")
    l2 = float(l2_regularizer.item() if isinstance(l2_regularizer, torch.Tensor) else l2_regularizer)
    if l2 < 0:
        raise ValueError(f"{op}: l2_regularizer must be >= 0, got {l2}.")
    rows, cols = a.shape[-2], a.shape[-1]
    if not fast:
        return torch.linalg.lstsq(a, b, driver="gelsd" if a.device.type == "cpu" else None).solution
    if rows >= cols:
        gram = _h(a) @ a + l2 * torch.eye(cols, dtype=a.dtype, device=a.device)
        return torch.cholesky_solve(_h(a) @ b, torch.linalg.cholesky(gram))
    gram = a @ _h(a) + l2 * torch.eye(rows, dtype=a.dtype, device=a.device)
    return _h(a) @ torch.cholesky_solve(b, torch.linalg.cholesky(gram))


class Lu(NamedTuple):
    """What `lu` returns: `lu` packs unit-lower L (below the diagonal) and U; `p` is the row permutation with
    L @ U == input[..., p, :]."""

    lu: torch.Tensor
    p: torch.Tensor


def lu(input: Any, output_idx_type: Any = torch.int32, name: Optional[str] = None) -> Lu:  # noqa: A002
    """The LU factorisation with partial pivoting, as TF lays it out: (lu, p) with p a permutation vector
    (not LAPACK's pivot swaps nor torch's P matrix)."""
    matrix = _matrix(input, "tf.linalg.lu", square=True)
    index_dtype = as_dtype(output_idx_type)
    if index_dtype not in (torch.int32, torch.int64):
        raise TypeError(f"tf.linalg.lu: output_idx_type must be tf.int32 or tf.int64, got {output_idx_type}.")
    perm_matrix, lower, upper = torch.linalg.lu(matrix)
    packed = torch.tril(lower, -1) + upper
    return Lu(packed, perm_matrix.real.argmax(dim=-2).to(index_dtype))


def _lu_parts(lower_upper: Any, perm: Any, op: str) -> tuple:
    packed = _matrix(lower_upper, op, square=True)
    order = to_tensor(perm, op=op)
    if order.is_floating_point() or tuple(order.shape) != tuple(packed.shape[:-1]):
        raise ValueError(f"{op}: perm must be an integer tensor of shape {tuple(packed.shape[:-1])}, got "
                         f"{order.dtype} {tuple(order.shape)}.")
    n = packed.shape[-1]
    unit_lower = torch.tril(packed, -1) + torch.eye(n, dtype=packed.dtype, device=packed.device)
    return packed, unit_lower, torch.triu(packed), order.to(torch.int64).to(packed.device)


def lu_solve(lower_upper: Any, perm: Any, rhs: Any, validate_args: bool = False, name: Optional[str] = None
             ) -> torch.Tensor:
    """X with A @ X = rhs, given A's factorisation (lower_upper, perm) from `lu`."""
    op = "tf.linalg.lu_solve"
    packed, unit_lower, upper, order = _lu_parts(lower_upper, perm, op)
    _, b = _system(packed, rhs, op)
    batch = torch.broadcast_shapes(packed.shape[:-2], b.shape[:-2])
    b = b.expand(batch + b.shape[-2:])
    order = order.expand(batch + order.shape[-1:])
    permuted = torch.gather(b, -2, order.unsqueeze(-1).expand(b.shape))
    y = torch.linalg.solve_triangular(unit_lower, permuted, upper=False, unitriangular=True)
    return torch.linalg.solve_triangular(upper, y, upper=True)


def lu_reconstruct(lower_upper: Any, perm: Any, validate_args: bool = False, name: Optional[str] = None
                   ) -> torch.Tensor:
    """The matrix A that `lu` factorised: rows of L @ U put back in their original order."""
    packed, unit_lower, upper, order = _lu_parts(lower_upper, perm, "tf.linalg.lu_reconstruct")
    product = unit_lower @ upper
    inverse = torch.argsort(order, dim=-1)
    return torch.gather(product, -2, inverse.unsqueeze(-1).expand(product.shape))


def lu_matrix_inverse(lower_upper: Any, perm: Any, validate_args: bool = False, name: Optional[str] = None
                      ) -> torch.Tensor:
    """The inverse of A given its factorisation (lower_upper, perm) from `lu`."""
    packed = _matrix(lower_upper, "tf.linalg.lu_matrix_inverse", square=True)
    identity = torch.eye(packed.shape[-1], dtype=packed.dtype, device=packed.device).expand(packed.shape)
    return lu_solve(packed, perm, identity)


def matrix_rank(a: Any, tol: Any = None, validate_args: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """The number of singular values above `tol` (default: max(rows, cols) * eps * largest singular value),
    as int32."""
    matrix = _matrix(a, "tf.linalg.matrix_rank")
    values = torch.linalg.svdvals(matrix)
    if tol is None:
        eps = torch.finfo(values.dtype).eps
        limit = max(matrix.shape[-2:]) * eps * values.amax(-1, keepdim=True)
    else:
        limit = torch.as_tensor(tol, dtype=values.dtype, device=values.device)
        limit = limit.unsqueeze(-1) if limit.dim() else limit
    return (values > limit).sum(-1).to(torch.int32)


def pinv(a: Any, rcond: Any = None, validate_args: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """The Moore-Penrose pseudo-inverse; singular values at most rcond * the largest are dropped (rcond
    defaults to 10 * max(rows, cols) * eps, as TF)."""
    matrix = _matrix(a, "tf.linalg.pinv")
    if matrix.is_complex():
        raise TypeError("tf.linalg.pinv takes float32 or float64 matrices (TF refuses complex ones).")
    if rcond is None:
        rcond = 10.0 * max(matrix.shape[-2:]) * torch.finfo(matrix.dtype).eps
    return torch.linalg.pinv(matrix, rtol=torch.as_tensor(rcond, dtype=matrix.dtype, device=matrix.device))
