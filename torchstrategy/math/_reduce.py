"""tf.math's reductions and scans: reduce_sum/prod/mean/max/min/any/all/logsumexp/variance/std, count_nonzero,
argmax/argmin, cumsum/cumprod and top_k, keeping the input dtype as TF does (an int mean stays an int)."""
from __future__ import annotations

import builtins
from typing import Any, NamedTuple, Optional

import torch

from torchstrategy.math._elementwise import _unary
from torchstrategy._tensor_convert import (
    dims,
    require,
    to_tensor,
)
from torchstrategy.dtypes import as_dtype
from torchstrategy.ragged import RaggedTensor
from torchstrategy.ragged import reduce as ragged_reduce


def _reduced(fn: Any, tensor: torch.Tensor, axis: Any, keepdims: bool) -> torch.Tensor:
    axes = dims(axis, tensor.dim())
    if axes is None:
        axes = tuple(builtins.range(tensor.dim()))
    if not axes:
        # Reducing over no axes (a scalar, or axis=[]): reduce a dummy leading axis of size 1.
        return fn(tensor.unsqueeze(0), (0,), False)
    return fn(tensor, axes, keepdims)


def _sum(tensor: torch.Tensor, axes: Optional[tuple], keepdims: bool) -> torch.Tensor:
    return tensor.sum() if axes is None else tensor.sum(dim=axes, keepdim=keepdims)


def reduce_sum(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
               ) -> torch.Tensor:
    """The sum over `axis` (all axes when None), keeping the input dtype (int32 stays int32).

    >>> reduce_sum([[1, 2], [3, 4]], axis=0).tolist()
    [4, 6]
    """
    if isinstance(input_tensor, RaggedTensor):  # tf.ragged's reduction (rows reduce their own items)
        return ragged_reduce(input_tensor, "sum", axis, keepdims)
    tensor = _unary(input_tensor, "numeric", "tf.math.reduce_sum")
    return _reduced(_sum, tensor, axis, keepdims).to(tensor.dtype)


def reduce_prod(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
                ) -> torch.Tensor:
    """The product over `axis`, keeping the input dtype."""
    if isinstance(input_tensor, RaggedTensor):  # tf.ragged's reduction (rows reduce their own items)
        return ragged_reduce(input_tensor, "prod", axis, keepdims)
    tensor = _unary(input_tensor, "numeric", "tf.math.reduce_prod")

    def prod(t: torch.Tensor, axes: Optional[tuple], keep: bool) -> torch.Tensor:
        if axes is None:
            return t.prod()
        for a in sorted((a % t.dim() for a in axes), reverse=True):
            t = t.prod(dim=a, keepdim=keep)
        return t

    return _reduced(prod, tensor, axis, keepdims).to(tensor.dtype)


def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
                ) -> torch.Tensor:
    """The mean over `axis`; integer inputs give an integer mean (truncated), as TF does."""
    if isinstance(input_tensor, RaggedTensor):  # tf.ragged's reduction (rows reduce their own items)
        return ragged_reduce(input_tensor, "mean", axis, keepdims)
    tensor = _unary(input_tensor, "numeric", "tf.math.reduce_mean")
    if tensor.is_floating_point() or tensor.is_complex():
        return _reduced(lambda t, a, k: t.mean() if a is None else t.mean(dim=a, keepdim=k), tensor, axis, keepdims)
    total = _reduced(_sum, tensor, axis, keepdims)
    count = builtins.max(tensor.numel() // builtins.max(total.numel(), 1), 1) if tensor.numel() else 1
    return torch.div(total, count, rounding_mode="trunc").to(tensor.dtype)


def _extreme(fn: Any, fill: float, tf_name: str) -> Any:
    def op(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
           ) -> torch.Tensor:
        if isinstance(input_tensor, RaggedTensor):  # tf.ragged's reduction (rows reduce their own items)
            return ragged_reduce(input_tensor, tf_name.rsplit("_", 1)[-1], axis, keepdims)
        tensor = _unary(input_tensor, "numeric", tf_name)
        if tensor.numel() == 0 and tensor.is_floating_point():
            # TF reduces an empty float tensor to the identity (-inf for max, inf for min).
            shape = list(tensor.shape)
            axes = dims(axis, tensor.dim()) or tuple(builtins.range(tensor.dim()))
            axes = {a % builtins.max(tensor.dim(), 1) for a in axes}
            out = [1 if i in axes else s for i, s in enumerate(shape)] if keepdims else \
                [s for i, s in enumerate(shape) if i not in axes]
            return torch.full(out, fill, dtype=tensor.dtype, device=tensor.device)
        return _reduced(lambda t, a, k: fn(t) if a is None else fn(t, dim=a, keepdim=k), tensor, axis, keepdims)

    op.__name__ = tf_name.rsplit(".", 1)[-1]
    op.__qualname__ = op.__name__
    op.__doc__ = f"`{tf_name}` over `axis` (all axes when None), keeping the input dtype."
    return op


reduce_max = _extreme(torch.amax, float("-inf"), "tf.math.reduce_max")
reduce_min = _extreme(torch.amin, float("inf"), "tf.math.reduce_min")


def reduce_any(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
               ) -> torch.Tensor:
    """Logical OR over `axis` (bool inputs only)."""
    if isinstance(input_tensor, RaggedTensor):  # tf.ragged's reduction (rows reduce their own items)
        return ragged_reduce(input_tensor, "any", axis, keepdims)
    tensor = input_tensor if isinstance(input_tensor, torch.Tensor) else to_tensor(input_tensor, torch.bool,
                                                                                   "tf.math.reduce_any")
    require(tensor, "bool", "tf.math.reduce_any")
    return _reduced(lambda t, a, k: t.any() if a is None else t.amax(dim=a, keepdim=k), tensor, axis, keepdims)


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
               ) -> torch.Tensor:
    """Logical AND over `axis` (bool inputs only)."""
    if isinstance(input_tensor, RaggedTensor):  # tf.ragged's reduction (rows reduce their own items)
        return ragged_reduce(input_tensor, "all", axis, keepdims)
    tensor = input_tensor if isinstance(input_tensor, torch.Tensor) else to_tensor(input_tensor, torch.bool,
                                                                                   "tf.math.reduce_all")
    require(tensor, "bool", "tf.math.reduce_all")
    return _reduced(lambda t, a, k: t.all() if a is None else t.amin(dim=a, keepdim=k), tensor, axis, keepdims)


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
                     ) -> torch.Tensor:
    """log(sum(exp(x))) over `axis`, computed stably (float inputs only)."""
    tensor = _unary(input_tensor, "real", "tf.math.reduce_logsumexp")
    return _reduced(lambda t, a, k: torch.logsumexp(t.reshape(-1), 0) if a is None else
                    torch.logsumexp(t, dim=a, keepdim=k), tensor, axis, keepdims)


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
                    ) -> torch.Tensor:
    """The population variance (divides by N, as TF) over `axis`; float inputs only."""
    tensor = _unary(input_tensor, "float", "tf.math.reduce_variance")
    # Mean of squared deviations, in TF's order of operations so float32 results agree to the last bit.
    centred = tensor - reduce_mean(tensor, axis, keepdims=True)
    squares = (centred * centred.conj()).real if centred.is_complex() else centred * centred
    return reduce_mean(squares, axis, keepdims)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
               ) -> torch.Tensor:
    """The population standard deviation over `axis`; float inputs only."""
    return torch.sqrt(reduce_variance(input_tensor, axis, keepdims))


def count_nonzero(input: Any, axis: Any = None, keepdims: Optional[bool] = None, dtype: Any = torch.int64,  # noqa: A002
                  name: Optional[str] = None) -> torch.Tensor:
    """How many elements are non-zero over `axis`, as `dtype` (int64 by default)."""
    tensor = to_tensor(input, op="tf.math.count_nonzero")
    nonzero = (tensor != 0).to(torch.int64)
    return _reduced(_sum, nonzero, axis, bool(keepdims)).to(as_dtype(dtype))


def _arg(fn: Any, tf_name: str) -> Any:
    def op(input: Any, axis: Any = None, output_type: Any = torch.int64,  # noqa: A002
           name: Optional[str] = None) -> torch.Tensor:
        tensor = _unary(input, "numeric", tf_name)
        out_dtype = as_dtype(output_type)
        if out_dtype not in (torch.int32, torch.int64, torch.int16, torch.uint16):
            raise TypeError(f"{tf_name}: output_type must be tf.int32 or tf.int64, got {output_type!r}.")
        axes = dims(0 if axis is None else axis, tensor.dim())
        return fn(tensor, dim=axes[0]).to(out_dtype)

    op.__name__ = tf_name.rsplit(".", 1)[-1]
    op.__qualname__ = op.__name__
    op.__doc__ = f"`{tf_name}` along `axis` (0 when None, as TF), as `output_type` (int64 by default)."
    return op


argmax = _arg(torch.argmax, "tf.math.argmax")
argmin = _arg(torch.argmin, "tf.math.argmin")


# ----- scans and top_k ----------------------------------------------------------------------------------------


def _scan(fn: Any, tensor: torch.Tensor, axis: int, exclusive: bool, reverse: bool, identity: int
          ) -> torch.Tensor:
    axis = dims(axis, tensor.dim())[0]
    if reverse:
        tensor = tensor.flip(axis)
    out = fn(tensor, dim=axis).to(tensor.dtype)
    if exclusive:
        pad_shape = list(tensor.shape)
        pad_shape[axis] = 1
        pad = torch.full(pad_shape, identity, dtype=tensor.dtype, device=tensor.device)
        out = torch.cat([pad, out.narrow(axis, 0, tensor.shape[axis] - 1)], dim=axis)
    return out.flip(axis) if reverse else out


def cumsum(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False, name: Optional[str] = None
           ) -> torch.Tensor:
    """Running sums along `axis`; `exclusive` leaves each element out, `reverse` runs from the end.

    >>> cumsum([1, 2, 3], exclusive=True, reverse=True).tolist()
    [5, 3, 0]
    """
    return _scan(torch.cumsum, _unary(x, "numeric", "tf.math.cumsum"), axis, exclusive, reverse, 0)


def cumprod(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False, name: Optional[str] = None
            ) -> torch.Tensor:
    """Running products along `axis` (see `cumsum`)."""
    return _scan(torch.cumprod, _unary(x, "numeric", "tf.math.cumprod"), axis, exclusive, reverse, 1)


class TopKV2(NamedTuple):
    """What `top_k` returns: the k largest `values` along the last axis and their int32 `indices`."""

    values: torch.Tensor
    indices: torch.Tensor


def top_k(input: Any, k: int = 1, sorted: bool = True, index_type: Any = torch.int32,  # noqa: A002
          name: Optional[str] = None) -> TopKV2:
    """The k largest entries along the last axis, ties broken by lower index.

    >>> top_k([1, 3, 2], k=2).indices.tolist()
    [1, 2]
    """
    tensor = _unary(input, "numeric", "tf.math.top_k")
    if tensor.dim() == 0 or not 0 <= int(k) <= tensor.shape[-1]:
        raise ValueError(f"tf.math.top_k: k={k} must be in [0, {tensor.shape[-1] if tensor.dim() else 0}] for "
                         f"an input of shape {tuple(tensor.shape)} (it needs rank >= 1).")
    # A stable descending sort keeps equal values in index order, as TF's top_k does.
    order = torch.sort(tensor, dim=-1, descending=True, stable=True).indices[..., : int(k)]
    return TopKV2(torch.gather(tensor, -1, order), order.to(as_dtype(index_type)))
