"""tf.linalg's structured-matrix helpers: tensor_diag/tensor_diag_part, tridiagonal matmul/solve (compact,
sequence and matrix formats), eigh_tridiagonal, and the norm helpers global_norm and normalize."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import match_dtypes, require, to_tensor

__all__ = ["tensor_diag", "tensor_diag_part", "tridiagonal_matmul", "tridiagonal_solve", "eigh_tridiagonal",
           "global_norm"]


def tensor_diag(diagonal: Any, name: Optional[str] = None) -> torch.Tensor:
    """A tensor of shape diagonal.shape + diagonal.shape with out[i..., i...] = diagonal[i...], zeros elsewhere."""
    values = to_tensor(diagonal, op="tf.linalg.tensor_diag")
    if values.dim() == 0:
        raise ValueError("tf.linalg.tensor_diag needs a tensor of rank >= 1.")
    return torch.diag(values.reshape(-1)).reshape(tuple(values.shape) * 2)


def tensor_diag_part(input: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The inverse of tensor_diag: for input of shape s + s, the tensor of shape s with out[i...] =
    input[i..., i...]."""
    tensor = to_tensor(input, op="tf.linalg.tensor_diag_part")
    half = tensor.dim() // 2
    if tensor.dim() == 0 or tensor.dim() % 2 or tensor.shape[:half] != tensor.shape[half:]:
        raise ValueError(f"tf.linalg.tensor_diag_part needs an even-rank tensor of shape s + s, got "
                         f"{tuple(tensor.shape)}.")
    size = int(torch.tensor(tensor.shape[:half]).prod())
    return torch.diagonal(tensor.reshape(size, size)).reshape(tensor.shape[:half])


def _tridiagonal_dense(diagonals: Any, diagonals_format: str, op: str) -> torch.Tensor:
    """The dense [..., M, M] matrix for TF's tridiagonal formats ('compact': [..., 3, M] rows superdiagonal,
    diagonal, subdiagonal, with the superdiagonal's last and the subdiagonal's first entry ignored; 'sequence':
    that as a list of three [..., M] tensors; 'matrix': already dense, only its tridiagonal band is read)."""
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
            raise ValueError(f"{op}: diagonals_format='sequence' needs a list of three tensors "
                             "(superdiagonal, diagonal, subdiagonal).")
        parts = match_dtypes(list(diagonals), op)
        diagonals = torch.stack(torch.broadcast_tensors(*parts), dim=-2)
        diagonals_format = "compact"
    tensor = require(to_tensor(diagonals, op=op), "float", op)
    if diagonals_format == "matrix":
        if tensor.dim() < 2 or tensor.shape[-1] != tensor.shape[-2]:
            raise ValueError(f"{op}: diagonals_format='matrix' needs square matrices, got {tuple(tensor.shape)}.")
        m = tensor.shape[-1]
        rows = torch.arange(m, device=tensor.device)
        band = (rows.unsqueeze(-1) - rows.unsqueeze(0)).abs() <= 1
        return torch.where(band, tensor, torch.zeros_like(tensor))
    if diagonals_format != "compact":
        raise ValueError(f"{op}: diagonals_format must be 'compact', 'sequence' or 'matrix', got "
                         f"{diagonals_format!r}.")
    if tensor.dim() < 2 or tensor.shape[-2] != 3:
        raise ValueError(f"{op}: diagonals_format='compact' needs shape [..., 3, M], got {tuple(tensor.shape)}.")
    upper, main, lower = tensor[..., 0, :-1], tensor[..., 1, :], tensor[..., 2, 1:]
    return torch.diag_embed(main) + torch.diag_embed(upper, offset=1) + torch.diag_embed(lower, offset=-1)


def tridiagonal_matmul(diagonals: Any, rhs: Any, diagonals_format: str = "compact", name: Optional[str] = None
                       ) -> torch.Tensor:
    """A @ rhs for the tridiagonal A described by `diagonals` (rhs [..., M, N])."""
    op = "tf.linalg.tridiagonal_matmul"
    dense = _tridiagonal_dense(diagonals, diagonals_format, op)
    b = to_tensor(rhs, op=op)
    dense, b = match_dtypes([dense, b], op)
    if b.dim() < 2 or b.shape[-2] != dense.shape[-1]:
        raise ValueError(f"{op}: rhs needs shape [..., {dense.shape[-1]}, N], got {tuple(b.shape)}.")
    return dense @ b


def tridiagonal_solve(diagonals: Any, rhs: Any, diagonals_format: str = "compact", transpose_rhs: bool = False,
                      conjugate_rhs: bool = False, name: Optional[str] = None, partial_pivoting: bool = True,
                      perturb_singular: bool = False) -> torch.Tensor:
    """X with A @ X = rhs for the tridiagonal A (rhs [..., M, K] or [..., M]; `transpose_rhs` takes rhs as
    [..., K, M], and X still comes back [..., M, K], as TF). Solved with partial pivoting; a singular A is an error."""
    op = "tf.linalg.tridiagonal_solve"
    if perturb_singular:
        raise NotImplementedError(f"{op}(perturb_singular=True) is not supported; leave it False.")
    dense = _tridiagonal_dense(diagonals, diagonals_format, op)
    dense, b = match_dtypes([dense, to_tensor(rhs, op=op)], op)
    if conjugate_rhs:
        b = b.conj()
    vector = b.dim() == dense.dim() - 1
    if vector:
        b = b.unsqueeze(-1)
    elif transpose_rhs:
        b = b.transpose(-1, -2)
    if b.shape[-2] != dense.shape[-1]:
        raise ValueError(f"{op}: rhs has {b.shape[-2]} rows for {dense.shape[-1]}x{dense.shape[-1]} matrices.")
    out = torch.linalg.solve(dense, b)
    return out.squeeze(-1) if vector else out


def eigh_tridiagonal(alpha: Any, beta: Any, eigvals_only: bool = True, select: str = "a", select_range: Any = None,
                     tol: Any = None, name: Optional[str] = None) -> Any:
    """Eigenvalues (ascending) and, unless `eigvals_only`, eigenvectors (columns) of the self-adjoint
    tridiagonal matrix with diagonal `alpha` [n] and subdiagonal `beta` [n-1]. select 'a' takes all, 'v' those
    in (lo, hi], 'i' indices lo..hi inclusive (select_range=(lo, hi))."""
    op = "tf.linalg.eigh_tridiagonal"
    diag = require(to_tensor(alpha, op=op), "float", op)
    off = to_tensor(beta, op=op).to(diag.dtype) if diag.is_complex() else to_tensor(beta, op=op)
    if diag.dim() != 1 or off.dim() != 1 or off.numel() != max(diag.numel() - 1, 0):
        raise ValueError(f"{op}: alpha must be [n] and beta [n-1], got {tuple(diag.shape)} and {tuple(off.shape)}.")
    if not diag.is_complex() and off.dtype != diag.dtype:
        raise TypeError(f"{op}: alpha ({diag.dtype}) and beta ({off.dtype}) need one dtype.")
    if select not in ("a", "v", "i"):
        raise ValueError(f"{op}: select must be 'a', 'v' or 'i', got {select!r}.")
    if select != "a" and (select_range is None or len(select_range) != 2):
        raise ValueError(f"{op}: select={select!r} needs select_range=(lo, hi).")
    dense = torch.diag_embed(diag) + torch.diag_embed(off.conj(), offset=1) + torch.diag_embed(off, offset=-1)
    values, vectors = torch.linalg.eigh(dense, UPLO="L")
    if select == "v":
        lo, hi = float(select_range[0]), float(select_range[1])
        keep = (values > lo) & (values <= hi)
        values, vectors = values[keep], vectors[:, keep]
    elif select == "i":
        lo, hi = int(select_range[0]), int(select_range[1])
        values, vectors = values[lo:hi + 1], vectors[:, lo:hi + 1]
    return values if eigvals_only else (values, vectors)


def global_norm(t_list: Any, name: Optional[str] = None) -> torch.Tensor:
    """sqrt(sum of squared L2 norms) of a list of float tensors (None entries are skipped), as a scalar."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError("tf.linalg.global_norm needs a list (or tuple) of tensors.")
    tensors = [require(to_tensor(t, op="tf.linalg.global_norm"), "float", "tf.linalg.global_norm")
               for t in t_list if t is not None]
    if not tensors:
        return torch.tensor(0.0)
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise TypeError(f"tf.linalg.global_norm: tensors have different dtypes {sorted(map(str, dtypes))}.")
    total = sum((t.abs() ** 2).sum() for t in tensors)
    return torch.sqrt(total)
