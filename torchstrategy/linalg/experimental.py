"""`tf.linalg.experimental`: conjugate_gradient, TF's preconditioned CG loop for self-adjoint positive definite
LinearOperators on torch tensors (stops when every residual is below tol * |rhs|, or after max_iter steps)."""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import torch

from torchstrategy.linalg._operator import LinearOperator, as_tensor

__all__ = ["conjugate_gradient"]


class CGState(NamedTuple):
    """The loop state TF returns: steps taken, solution, residual, search direction, r^H (M r)."""

    i: torch.Tensor
    x: torch.Tensor
    r: torch.Tensor
    p: torch.Tensor
    gamma: torch.Tensor


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return ((a.conj() if a.is_complex() else a) * b).sum(-1)


def conjugate_gradient(operator: LinearOperator, rhs: Any, preconditioner: Optional[LinearOperator] = None,
                       x: Any = None, tol: float = 1e-05, max_iter: int = 20,
                       name: str = "conjugate_gradient") -> CGState:
    """Solves operator @ x = rhs for a self-adjoint positive definite operator by conjugate gradients, from x
    (zeros by default), optionally preconditioned by an approximate inverse; returns the final CGState."""
    op = "tf.linalg.experimental.conjugate_gradient"
    if not isinstance(operator, LinearOperator):
        raise TypeError(f"{op}: operator must be a tf.linalg.LinearOperator, got {type(operator).__name__}.")
    if not (operator.is_self_adjoint and operator.is_positive_definite):
        raise ValueError(f"{op}: expected a self-adjoint, positive definite operator (hint is_self_adjoint=True and "
                         "is_positive_definite=True).")
    b = as_tensor(rhs, operator.dtype, op)
    batch = torch.broadcast_shapes(b.shape[:-1], tuple(operator.batch_shape))
    if preconditioner is not None:
        batch = torch.broadcast_shapes(batch, tuple(preconditioner.batch_shape))
    r = b.expand(batch + b.shape[-1:])
    limit = tol * torch.linalg.vector_norm(r, dim=-1)
    if x is None:
        x = torch.zeros_like(r)
    else:
        x = as_tensor(x, operator.dtype, op)
        r = b - operator.matvec(x)
    p = r if preconditioner is None else preconditioner.matvec(r)
    gamma = _dot(r, p)
    i = 0
    while i < int(max_iter) and bool((torch.linalg.vector_norm(r, dim=-1) > limit).any()):
        z = operator.matvec(p)
        alpha = gamma / _dot(p, z)
        x = x + alpha.unsqueeze(-1) * p
        r = r - alpha.unsqueeze(-1) * z
        q = r if preconditioner is None else preconditioner.matvec(r)
        new_gamma = _dot(r, q)
        p = q + (new_gamma / gamma).unsqueeze(-1) * p
        gamma = new_gamma
        i += 1
    return CGState(torch.tensor(i, dtype=torch.int32), x, r, p, gamma)
