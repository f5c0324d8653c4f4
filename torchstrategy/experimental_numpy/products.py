"""tf.experimental.numpy's products: dot, matmul, tensordot, einsum, inner, outer, vdot, kron, cross and polyval,
with both operands promoted to TF's result_type first."""
from __future__ import annotations

from typing import Any

import torch

from torchstrategy.experimental_numpy._arrays import asarray, promote

__all__ = ["dot", "matmul", "tensordot", "einsum", "inner", "outer", "vdot", "kron", "cross", "polyval"]


def _mm(a: torch.Tensor, b: torch.Tensor, fn: Any) -> torch.Tensor:
    """fn on a and b, with bools computed as int8 and turned back (torch has no bool matmul)."""
    if a.dtype == torch.bool:
        return fn(a.to(torch.int8), b.to(torch.int8)) != 0
    return fn(a, b)


def _match(a: torch.Tensor, b: torch.Tensor, a_dim: int, b_dim: int, op: str) -> None:
    if a.shape[a_dim] != b.shape[b_dim]:
        raise ValueError(f"tnp.{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} are not aligned: "
                         f"{a.shape[a_dim]} (dim {a_dim}) != {b.shape[b_dim]} (dim {b_dim}).")


def dot(a: Any, b: Any) -> torch.Tensor:
    """NumPy's dot: a * b for scalars, the sum over a's last and b's last (1-D b) or second-to-last axis."""
    x, y = promote(a, b, op="dot")
    if x.dim() == 0 or y.dim() == 0:
        return _mm(x, y, torch.mul)
    other = -1 if y.dim() == 1 else -2
    _match(x, y, -1, other, "dot")
    return _mm(x, y, lambda p, q: torch.tensordot(p, q, dims=([p.dim() - 1], [q.dim() + other])))


def matmul(x1: Any, x2: Any) -> torch.Tensor:
    """The matrix product, with NumPy's broadcasting over leading axes and 1-D operands as vectors."""
    x, y = promote(x1, x2, op="matmul")
    if x.dim() == 0 or y.dim() == 0:
        raise ValueError("tnp.matmul: input operands must not be scalars (use tnp.multiply).")
    _match(x, y, -1, 0 if y.dim() == 1 else -2, "matmul")
    return _mm(x, y, torch.matmul)


def tensordot(a: Any, b: Any, axes: Any = 2) -> torch.Tensor:
    """The sum of products over `axes` (an int N: a's last N with b's first N; or two lists of axes)."""
    x, y = promote(a, b, op="tensordot")
    if isinstance(axes, torch.Tensor):
        axes = axes.tolist()
    if not isinstance(axes, int):
        first, second = axes
        first = [first] if isinstance(first, int) else list(first)
        second = [second] if isinstance(second, int) else list(second)
        axes = ([d % max(x.dim(), 1) for d in first], [d % max(y.dim(), 1) for d in second])
    try:
        return _mm(x, y, lambda p, q: torch.tensordot(p, q, dims=axes))
    except RuntimeError as error:
        raise ValueError(f"tnp.tensordot: shapes {tuple(x.shape)} and {tuple(y.shape)} do not match over axes "
                         f"{axes!r} ({error}).") from None


def einsum(subscripts: str, *operands: Any, **kwargs: Any) -> torch.Tensor:
    """Einstein summation over `subscripts` ('ij,jk->ik'); operands are promoted to one dtype
    (casting='safe') or taken as they are (casting='no'); `optimize` picks nothing here (torch plans it)."""
    unknown = set(kwargs) - {"casting", "optimize"}
    if unknown:
        raise TypeError(f"tnp.einsum got unexpected keyword arguments {sorted(unknown)}.")
    casting = kwargs.get("casting", "safe")
    optimize = kwargs.get("optimize", False)
    if casting not in ("safe", "no"):
        raise ValueError(f"tnp.einsum: casting must be 'safe' or 'no', got {casting!r}.")
    if optimize not in (False, True, "greedy", "optimal"):
        raise ValueError(f"tnp.einsum: optimize must be one of True, False, 'greedy', 'optimal', got {optimize!r}.")
    if not isinstance(subscripts, str):
        raise TypeError("tnp.einsum: the first argument must be the subscripts string, e.g. 'ij,jk->ik'.")
    tensors = promote(*operands, op="einsum") if casting == "safe" else [asarray(x, op="einsum") for x in operands]
    if tensors and tensors[0].dtype == torch.bool:
        return torch.einsum(subscripts, *[t.to(torch.int8) for t in tensors]) != 0
    return torch.einsum(subscripts, *tensors)


def inner(a: Any, b: Any) -> torch.Tensor:
    """The sum of products over the last axes (a * b when one is a scalar)."""
    x, y = promote(a, b, op="inner")
    if x.dim() == 0 or y.dim() == 0:
        return _mm(x, y, torch.mul)
    _match(x, y, -1, -1, "inner")
    return _mm(x, y, lambda p, q: torch.tensordot(p, q, dims=([p.dim() - 1], [q.dim() - 1])))


def outer(a: Any, b: Any) -> torch.Tensor:
    """The outer product of the flattened inputs: out[i, j] = a[i] * b[j]."""
    x, y = promote(a, b, op="outer")
    return _mm(x.reshape(-1, 1), y.reshape(-1), torch.mul)


def vdot(a: Any, b: Any) -> torch.Tensor:
    """The dot product of the flattened inputs, conjugating the first when complex."""
    x, y = promote(a, b, op="vdot")
    x, y = x.reshape(-1), y.reshape(-1)
    if x.is_complex():
        x = torch.conj(x)
    _match(x, y, 0, 0, "vdot")
    return _mm(x, y, lambda p, q: torch.sum(p * q, dtype=p.dtype))


def kron(a: Any, b: Any) -> torch.Tensor:
    """The Kronecker product: blocks of b scaled by each value of a."""
    x, y = promote(a, b, op="kron")
    if x.dtype == torch.bool:
        return torch.kron(x.to(torch.int8), y.to(torch.int8)) != 0
    return torch.kron(x, y)


def _last(value: torch.Tensor, axis: int, op: str) -> torch.Tensor:
    if value.dim() == 0:
        raise ValueError(f"tnp.{op}: the inputs must be arrays of vectors, got a scalar.")
    dim = axis % value.dim()
    return torch.movedim(value, dim, -1)


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None) -> torch.Tensor:
    """The cross product of (arrays of) 2- or 3-vectors along axisa/axisb (or `axis`), put at axisc."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = promote(a, b, op="cross")
    x, y = _last(x, axisa, "cross"), _last(y, axisb, "cross")
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(f"tnp.cross: incompatible dimensions for cross product (dimension must be 2 or 3), got "
                         f"{x.shape[-1]} and {y.shape[-1]}.")
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]
    if x.shape[-1] == 2:
        x = torch.cat([x, torch.zeros_like(x[..., :1])], dim=-1)
    if y.shape[-1] == 2:
        y = torch.cat([y, torch.zeros_like(y[..., :1])], dim=-1)
    x, y = torch.broadcast_tensors(x, y)
    out = torch.linalg.cross(x, y, dim=-1)
    return torch.movedim(out, -1, axisc % out.dim())


def polyval(p: Any, x: Any) -> torch.Tensor:
    """The polynomial with coefficients `p` (highest power first) at `x`, by Horner's rule."""
    coefficients, points = promote(p, x, op="polyval")
    if coefficients.dim() == 0:
        coefficients = coefficients.reshape(1)
    out = torch.zeros_like(points) if coefficients.shape[0] else torch.zeros_like(points)
    for index in range(coefficients.shape[0]):
        out = out * points + coefficients[index]
    return torch.broadcast_to(out, torch.broadcast_shapes(out.shape, points.shape)).clone()
