"""keras.ops' products and norms (keras.ops.numpy's matmul, dot, tensordot, einsum, outer, vdot, cross and
keras.ops.linalg's norm), with NumPy's rules: operands promoted to one dtype, ints stay ints."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras.ops._core import _axes, _float, _joined


def matmul(x1: Any, x2: Any) -> torch.Tensor:
    """Matrix product with NumPy's broadcasting rules; ints stay ints."""
    a, b = _joined([x1, x2])
    return torch.matmul(a, b)


def dot(x1: Any, x2: Any) -> torch.Tensor:
    """np.dot: scalars multiply, 1-D inner product, else contraction of x1's last axis with x2's second-to-last."""
    a, b = _joined([x1, x2])
    if a.dim() == 0 or b.dim() == 0:
        return a * b
    if b.dim() == 1:
        return torch.tensordot(a, b, dims=([a.dim() - 1], [0]))
    return torch.tensordot(a, b, dims=([a.dim() - 1], [b.dim() - 2]))


def tensordot(x1: Any, x2: Any, axes: Any = 2) -> torch.Tensor:
    a, b = _joined([x1, x2])
    return torch.tensordot(a, b, dims=axes)


def einsum(subscripts: str, *operands: Any, **kwargs: Any) -> torch.Tensor:
    """Einstein summation (Keras passes `kwargs` to the backend; torch.einsum takes none, so they are unused)."""
    return torch.einsum(subscripts, *_joined(operands))


def outer(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _joined([x1, x2])
    return torch.outer(a.reshape(-1), b.reshape(-1))


def vdot(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _joined([x1, x2])
    return torch.vdot(a.reshape(-1), b.reshape(-1))


def cross(x1: Any, x2: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Optional[int] = None
          ) -> torch.Tensor:
    """The cross product of 3-vectors along `axisa`/`axisb` (or `axis` for all), put at `axisc`, as np.cross."""
    a, b = _joined([x1, x2])
    if axis is not None:
        axisa = axisb = axisc = axis
    out = torch.linalg.cross(torch.movedim(a, axisa, -1), torch.movedim(b, axisb, -1))
    return torch.movedim(out, -1, axisc)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """np.linalg.norm: the 2-norm of the flattened input by default, a vector or matrix norm over `axis`."""
    tensor = _float(x)
    if axis is None and ord is None:
        result = torch.linalg.vector_norm(tensor.reshape(-1))
        return result.reshape((1,) * tensor.dim()) if keepdims else result
    axes = _axes(axis)
    if axes is None:
        axes = tuple(range(tensor.dim()))
    if isinstance(axes, int) or len(axes) == 1:
        return torch.linalg.vector_norm(tensor, ord=2 if ord is None else ord, dim=axes, keepdim=keepdims)
    return torch.linalg.matrix_norm(tensor, ord="fro" if ord is None else ord, dim=axes, keepdim=keepdims)
