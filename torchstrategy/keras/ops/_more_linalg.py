"""keras.ops.linalg: decompositions (cholesky, qr, svd, eig, eigh, lu_factor), inverses and solves
(inv, pinv, solve, solve_triangular, lstsq, cholesky_inverse), det/slogdet/logdet and matrix_rank."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras.ops._core import _float


def cholesky(x: Any, upper: bool = False) -> torch.Tensor:
    """The Cholesky factor of symmetric positive-definite `x` (lower, or upper with `upper`)."""
    return torch.linalg.cholesky(_float(x), upper=upper)


def cholesky_inverse(x: Any, upper: bool = False) -> torch.Tensor:
    """The inverse of the matrix whose Cholesky factor is `x`."""
    return torch.cholesky_inverse(_float(x), upper=upper)


def det(x: Any) -> torch.Tensor:
    return torch.linalg.det(_float(x))


def slogdet(x: Any) -> tuple:
    """(sign, log|det|) of square matrices."""
    sign, logabs = torch.linalg.slogdet(_float(x))
    return sign, logabs


def logdet(x: Any) -> torch.Tensor:
    """log(det(x)) (NaN for a negative determinant)."""
    return torch.logdet(_float(x))


def eig(x: Any) -> tuple:
    """(eigenvalues, eigenvectors) of square matrices (complex)."""
    return tuple(torch.linalg.eig(_float(x)))


def eigh(x: Any) -> tuple:
    """(eigenvalues ascending, eigenvectors) of symmetric/Hermitian matrices."""
    return tuple(torch.linalg.eigh(_float(x)))


def inv(x: Any) -> torch.Tensor:
    return torch.linalg.inv(_float(x))


def pinv(x: Any, rcond: Optional[float] = None) -> torch.Tensor:
    """The Moore-Penrose pseudo-inverse (singular values below rcond * largest are dropped)."""
    tensor = _float(x)
    if rcond is None:
        return torch.linalg.pinv(tensor)
    return torch.linalg.pinv(tensor, rtol=rcond)


def lstsq(a: Any, b: Any, rcond: Optional[float] = None) -> torch.Tensor:
    """The least-squares solution of a @ x = b."""
    A, B = _float(a), _float(b)
    vector = B.ndim == 1
    solution = torch.linalg.lstsq(A, B.unsqueeze(-1) if vector else B, rcond=rcond, driver="gelsd").solution
    return solution.squeeze(-1) if vector else solution


def lu_factor(x: Any) -> tuple:
    """(LU, pivots) of square matrices; pivots are 0-based, as Keras gives them."""
    lu, pivots = torch.linalg.lu_factor(_float(x))
    return lu, (pivots - 1).to(torch.int32)


def matrix_rank(x: Any, tol: Optional[float] = None) -> torch.Tensor:
    tensor = _float(x)
    return torch.linalg.matrix_rank(tensor, atol=tol).to(torch.int32) if tol is not None else \
        torch.linalg.matrix_rank(tensor).to(torch.int32)


def qr(x: Any, mode: str = "reduced") -> tuple:
    """(q, r) with mode 'reduced' or 'complete'."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"`mode` argument value not supported. Expected one of {{'reduced', 'complete'}}. "
                         f"Received: mode={mode}")
    return tuple(torch.linalg.qr(_float(x), mode=mode))


def solve(a: Any, b: Any) -> torch.Tensor:
    """x with a @ x = b."""
    A, B = _float(a), _float(b)
    return torch.linalg.solve(A, B.to(A.dtype))


def solve_triangular(a: Any, b: Any, lower: bool = False) -> torch.Tensor:
    """x with a @ x = b for triangular `a` (lower or upper)."""
    A, B = _float(a), _float(b).to(_float(a).dtype)
    vector = B.ndim == A.ndim - 1
    out = torch.linalg.solve_triangular(A, B.unsqueeze(-1) if vector else B, upper=not lower)
    return out.squeeze(-1) if vector else out


def svd(x: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """(u, s, vh), or only s without `compute_uv`."""
    tensor = _float(x)
    if not compute_uv:
        return torch.linalg.svdvals(tensor)
    return tuple(torch.linalg.svd(tensor, full_matrices=full_matrices))
