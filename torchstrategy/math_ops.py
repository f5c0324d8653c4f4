"""`tf.math`: element-wise arithmetic, comparisons, reductions, segment sums and friends with TF 2.21's
eager dtype rules (no promotion, int-only/float-only ops refuse the others), on torch tensors."""
from __future__ import annotations

import builtins
from typing import Any, NamedTuple, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import (
    DTypeError,
    dims,
    match_dtypes,
    require,
    to_tensor,
)
from torchstrategy.dtypes import as_dtype

__all__ = [
    "add", "subtract", "multiply", "divide", "truediv", "floordiv", "mod", "floormod", "pow", "negative", "abs",
    "sign", "sqrt", "rsqrt", "square", "exp", "log", "log1p", "sigmoid", "tanh", "softplus", "maximum", "minimum",
    "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and", "logical_or",
    "logical_not", "logical_xor", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
    "reduce_any", "reduce_all", "reduce_logsumexp", "reduce_std", "reduce_variance", "argmax", "argmin", "cumsum",
    "cumprod", "top_k", "TopKV2", "round", "floor", "ceil", "clip_by_value", "divide_no_nan", "l2_normalize",
    "add_n", "count_nonzero", "is_nan", "is_inf", "is_finite", "segment_sum", "unsorted_segment_sum", "bincount",
    "reciprocal", "squared_difference", "sin", "cos",
]


def _binary(x: Any, y: Any, op: str) -> tuple[torch.Tensor, torch.Tensor]:
    tx, ty = match_dtypes([x, y], op)
    return tx, ty


def _unary(x: Any, allowed: str, op: str) -> torch.Tensor:
    return require(to_tensor(x, op=op), allowed, op)


# ----- element-wise arithmetic -------------------------------------------------------------------------


def add(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x + y; both must have one dtype (Python values take the other input's dtype).

    >>> add([1, 2], 3).tolist()
    [4, 5]
    """
    tx, ty = _binary(x, y, "tf.math.add")
    return tx + ty


def subtract(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x - y with one dtype."""
    tx, ty = _binary(x, y, "tf.math.subtract")
    return tx - ty


def multiply(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x * y with one dtype."""
    tx, ty = _binary(x, y, "tf.math.multiply")
    return tx * ty


def truediv(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x / y; integers are divided as floats (int8/int16/uint8 -> float32, int32/int64 -> float64, as TF).

    >>> truediv(7, 2).dtype
    torch.float64
    """
    tx, ty = _binary(x, y, "tf.math.truediv")
    require(tx, "numeric", "tf.math.truediv")
    if not (tx.is_floating_point() or tx.is_complex()):
        wide = tx.dtype in (torch.int32, torch.int64, torch.uint32, torch.uint64)
        target = torch.float64 if wide else torch.float32
        tx, ty = tx.to(target), ty.to(target)
    return tx / ty


def divide(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x / y, which is `truediv` (integers give floats)."""
    return truediv(x, y)


def floordiv(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """floor(x / y), keeping the dtype (ints stay ints)."""
    tx, ty = _binary(x, y, "tf.math.floordiv")
    require(tx, "numeric", "tf.math.floordiv")
    return torch.div(tx, ty, rounding_mode="floor")


def floormod(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x - floor(x / y) * y: the remainder has the sign of y, as Python's `%`."""
    tx, ty = _binary(x, y, "tf.math.floormod")
    require(tx, "numeric", "tf.math.floormod")
    return torch.remainder(tx, ty)


mod = floormod


def pow(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A001  (tf.math.pow)
    """x ** y with one dtype; integers to negative integer powers are refused as in TF."""
    tx, ty = _binary(x, y, "tf.math.pow")
    if not (tx.is_floating_point() or tx.is_complex()) and tx.dtype != torch.bool and bool((ty < 0).any()):
        raise DTypeError("tf.math.pow: integers to negative integer powers are not allowed; cast x to a float "
                         "dtype first.")
    return torch.pow(tx, ty)


def negative(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """-x (signed dtypes only)."""
    return -_unary(x, "signed", "tf.math.negative")


def abs(x: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A001  (tf.math.abs)
    """|x|, keeping the dtype."""
    return torch.abs(_unary(x, "numeric", "tf.math.abs"))


def sign(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """-1, 0 or 1 by the sign of x, keeping the dtype."""
    return torch.sign(_unary(x, "numeric", "tf.math.sign"))


def square(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """x * x, keeping the dtype."""
    tensor = _unary(x, "numeric", "tf.math.square")
    return tensor * tensor


def squared_difference(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """(x - y) ** 2 with one dtype."""
    tx, ty = _binary(x, y, "tf.math.squared_difference")
    return (tx - ty) * (tx - ty)


def _float_unary(fn: Any, tf_name: str) -> Any:
    def op(x: Any, name: Optional[str] = None) -> torch.Tensor:
        return fn(_unary(x, "float", tf_name))

    op.__name__ = tf_name.rsplit(".", 1)[-1]
    op.__qualname__ = op.__name__
    op.__doc__ = f"`{tf_name}` element-wise; float (or complex) inputs only, ints are refused as in TF."
    return op


sqrt = _float_unary(torch.sqrt, "tf.math.sqrt")
rsqrt = _float_unary(torch.rsqrt, "tf.math.rsqrt")
exp = _float_unary(torch.exp, "tf.math.exp")
log = _float_unary(torch.log, "tf.math.log")
log1p = _float_unary(torch.log1p, "tf.math.log1p")
sigmoid = _float_unary(torch.sigmoid, "tf.math.sigmoid")
tanh = _float_unary(torch.tanh, "tf.math.tanh")
softplus = _float_unary(torch.nn.functional.softplus, "tf.math.softplus")
reciprocal = _float_unary(torch.reciprocal, "tf.math.reciprocal")
sin = _float_unary(torch.sin, "tf.math.sin")
cos = _float_unary(torch.cos, "tf.math.cos")
floor = _float_unary(torch.floor, "tf.math.floor")
ceil = _float_unary(torch.ceil, "tf.math.ceil")


def round(x: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A001  (tf.math.round)
    """Rounds half to even (0.5 -> 0, 1.5 -> 2) as TF does; integer tensors come back unchanged."""
    tensor = _unary(x, "numeric", "tf.math.round")
    return torch.round(tensor) if tensor.is_floating_point() else tensor


def maximum(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise max with one dtype."""
    tx, ty = _binary(x, y, "tf.math.maximum")
    return torch.maximum(tx, ty)


def minimum(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """Element-wise min with one dtype."""
    tx, ty = _binary(x, y, "tf.math.minimum")
    return torch.minimum(tx, ty)


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: Optional[str] = None) -> torch.Tensor:
    """t clipped into [clip_value_min, clip_value_max]; the bounds take t's dtype.

    >>> clip_by_value([1, 5, 9], 2, 6).tolist()
    [2, 5, 6]
    """
    tensor, low, high = match_dtypes([t, clip_value_min, clip_value_max], "tf.clip_by_value")
    return torch.minimum(torch.maximum(tensor, low), high)


def divide_no_nan(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x / y, but 0 wherever y == 0 (integers divide as floats, as in `truediv`)."""
    quotient = truediv(x, y)
    _, ty = _binary(x, y, "tf.math.divide_no_nan")
    return torch.where(ty == 0, torch.zeros_like(quotient), quotient)


def add_n(inputs: Any, name: Optional[str] = None) -> torch.Tensor:
    """The element-wise sum of a list of same-shape, same-dtype tensors."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("tf.math.add_n needs a non-empty list of tensors.")
    tensors = match_dtypes(list(inputs), "tf.math.add_n")
    if len({tuple(tensor.shape) for tensor in tensors}) > 1:
        raise ValueError(f"tf.math.add_n: all inputs need one shape, got {[tuple(t.shape) for t in tensors]}.")
    total = tensors[0].clone()
    for tensor in tensors[1:]:
        total = total + tensor
    return total


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: Optional[str] = None,
                 dim: Any = None) -> torch.Tensor:
    """x / sqrt(max(sum(x ** 2, axis), epsilon)) (float inputs only).

    >>> l2_normalize([3.0, 4.0]).tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    tensor = _unary(x, "float", "tf.math.l2_normalize")
    axis = dim if axis is None else axis
    axes = dims(axis, tensor.dim())
    squares = (tensor * tensor).sum(dim=axes, keepdim=True) if axes else (tensor * tensor).sum()
    eps = torch.tensor(epsilon, dtype=squares.dtype, device=squares.device)
    return tensor * torch.rsqrt(torch.maximum(squares, eps))


# ----- comparisons and logic ---------------------------------------------------------------------------


def _compare(fn: Any, tf_name: str) -> Any:
    def op(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
        tx, ty = _binary(x, y, tf_name)
        return fn(tx, ty)

    op.__name__ = tf_name.rsplit(".", 1)[-1]
    op.__qualname__ = op.__name__
    op.__doc__ = f"`{tf_name}` element-wise, a bool tensor; both inputs need one dtype."
    return op


greater = _compare(torch.gt, "tf.math.greater")
greater_equal = _compare(torch.ge, "tf.math.greater_equal")
less = _compare(torch.lt, "tf.math.less")
less_equal = _compare(torch.le, "tf.math.less_equal")
_tensor_equal = _compare(torch.eq, "tf.math.equal")
_tensor_not_equal = _compare(torch.ne, "tf.math.not_equal")


def _is_string(value: Any) -> bool:
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "SU" or (value.dtype == object and value.size > 0 and
                                            isinstance(value.reshape(-1)[0], (str, bytes)))
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, (str, bytes)) for v in value)


def _string_compare(x: Any, y: Any, op: str) -> torch.Tensor:
    from torchstrategy.strings import _strings

    left, right = np.broadcast_arrays(_strings(x, op), _strings(y, op))
    same = np.array([a == b for a, b in zip(left.reshape(-1), right.reshape(-1))], dtype=bool)
    return torch.from_numpy(same.reshape(left.shape))


def equal(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x == y element-wise, a bool tensor; both inputs need one dtype. Strings (object arrays of bytes,
    str or bytes) compare with strings, as tf.equal on tf.string tensors.

    >>> equal([1, 2], 2).tolist()
    [False, True]
    """
    if _is_string(x) or _is_string(y):
        return _string_compare(x, y, "tf.math.equal")
    return _tensor_equal(x, y)


def not_equal(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
    """x != y element-wise (strings compare with strings, as in `equal`)."""
    if _is_string(x) or _is_string(y):
        return ~_string_compare(x, y, "tf.math.not_equal")
    return _tensor_not_equal(x, y)


def _logical(fn: Any, tf_name: str) -> Any:
    def op(x: Any, y: Any, name: Optional[str] = None) -> torch.Tensor:
        tx, ty = match_dtypes([to_tensor(x, torch.bool, tf_name) if not isinstance(x, torch.Tensor) else x,
                               y if isinstance(y, torch.Tensor) else to_tensor(y, torch.bool, tf_name)], tf_name)
        return fn(require(tx, "bool", tf_name), require(ty, "bool", tf_name))

    op.__name__ = tf_name.rsplit(".", 1)[-1]
    op.__qualname__ = op.__name__
    op.__doc__ = f"`{tf_name}` element-wise on bool tensors (other dtypes are refused, as in TF)."
    return op


logical_and = _logical(torch.logical_and, "tf.math.logical_and")
logical_or = _logical(torch.logical_or, "tf.math.logical_or")
logical_xor = _logical(torch.logical_xor, "tf.math.logical_xor")


def logical_not(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """NOT x on a bool tensor."""
    tensor = x if isinstance(x, torch.Tensor) else to_tensor(x, torch.bool, "tf.math.logical_not")
    return torch.logical_not(require(tensor, "bool", "tf.math.logical_not"))


def is_nan(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """True where x is NaN (float inputs only)."""
    return torch.isnan(_unary(x, "real", "tf.math.is_nan"))


def is_inf(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """True where x is +-inf (float inputs only)."""
    return torch.isinf(_unary(x, "real", "tf.math.is_inf"))


def is_finite(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """True where x is neither NaN nor inf (float inputs only)."""
    return torch.isfinite(_unary(x, "real", "tf.math.is_finite"))


# ----- reductions --------------------------------------------------------------------------------------


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
    tensor = _unary(input_tensor, "numeric", "tf.math.reduce_sum")
    return _reduced(_sum, tensor, axis, keepdims).to(tensor.dtype)


def reduce_prod(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
                ) -> torch.Tensor:
    """The product over `axis`, keeping the input dtype."""
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
    tensor = _unary(input_tensor, "numeric", "tf.math.reduce_mean")
    if tensor.is_floating_point() or tensor.is_complex():
        return _reduced(lambda t, a, k: t.mean() if a is None else t.mean(dim=a, keepdim=k), tensor, axis, keepdims)
    total = _reduced(_sum, tensor, axis, keepdims)
    count = builtins.max(tensor.numel() // builtins.max(total.numel(), 1), 1) if tensor.numel() else 1
    return torch.div(total, count, rounding_mode="trunc").to(tensor.dtype)


def _extreme(fn: Any, fill: float, tf_name: str) -> Any:
    def op(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
           ) -> torch.Tensor:
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
    tensor = input_tensor if isinstance(input_tensor, torch.Tensor) else to_tensor(input_tensor, torch.bool,
                                                                                   "tf.math.reduce_any")
    require(tensor, "bool", "tf.math.reduce_any")
    return _reduced(lambda t, a, k: t.any() if a is None else t.amax(dim=a, keepdim=k), tensor, axis, keepdims)


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Optional[str] = None
               ) -> torch.Tensor:
    """Logical AND over `axis` (bool inputs only)."""
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


def count_nonzero(input: Any, axis: Any = None, keepdims: bool = False, dtype: Any = torch.int64,  # noqa: A002
                  name: Optional[str] = None) -> torch.Tensor:
    """How many elements are non-zero over `axis`, as `dtype` (int64 by default)."""
    tensor = to_tensor(input, op="tf.math.count_nonzero")
    nonzero = (tensor != 0).to(torch.int64)
    return _reduced(_sum, nonzero, axis, keepdims).to(as_dtype(dtype))


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


# ----- segments and counts -----------------------------------------------------------------------------


def _segment_reduce(data: torch.Tensor, ids: torch.Tensor, num_segments: int, op: str) -> torch.Tensor:
    if tuple(ids.shape) != tuple(data.shape[: ids.dim()]):
        raise ValueError(f"{op}: segment_ids of shape {tuple(ids.shape)} must match the leading dims of data, "
                         f"{tuple(data.shape)}.")
    flat_ids = ids.reshape(-1).to(torch.int64)
    rows = data.reshape((flat_ids.numel(),) + tuple(data.shape[ids.dim():]))
    keep = (flat_ids >= 0) & (flat_ids < num_segments)
    out = torch.zeros((num_segments,) + tuple(data.shape[ids.dim():]), dtype=data.dtype, device=data.device)
    flat_ids = flat_ids.to(data.device)
    keep = keep.to(data.device)
    return out.index_add_(0, flat_ids[keep], rows[keep])


def segment_sum(data: Any, segment_ids: Any, name: Optional[str] = None) -> torch.Tensor:
    """Sums rows of `data` sharing a (sorted) segment id; the output has max(id) + 1 rows.

    >>> segment_sum([1, 2, 3, 4], [0, 0, 2, 2]).tolist()
    [3, 0, 7]
    """
    tensor = _unary(data, "numeric", "tf.math.segment_sum")
    ids = to_tensor(segment_ids, op="tf.math.segment_sum")
    if ids.dim() != 1 or ids.is_floating_point():
        raise ValueError("tf.math.segment_sum: segment_ids must be a 1-D integer tensor.")
    if ids.numel() and (bool((ids[1:] < ids[:-1]).any()) or int(ids.min()) < 0):
        raise ValueError("tf.math.segment_sum: segment_ids must be sorted and non-negative; use "
                         "tf.math.unsorted_segment_sum for unsorted ids.")
    count = int(ids.max()) + 1 if ids.numel() else 0
    return _segment_reduce(tensor, ids, count, "tf.math.segment_sum")


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None
                         ) -> torch.Tensor:
    """Sums entries of `data` into `num_segments` rows by id; negative ids are dropped, as in TF."""
    tensor = _unary(data, "numeric", "tf.math.unsorted_segment_sum")
    ids = to_tensor(segment_ids, op="tf.math.unsorted_segment_sum")
    if ids.is_floating_point():
        raise TypeError("tf.math.unsorted_segment_sum: segment_ids must be integers.")
    if ids.numel() and int(ids.max()) >= int(num_segments):
        raise ValueError(f"tf.math.unsorted_segment_sum: segment id {int(ids.max())} is out of range "
                         f"[0, {int(num_segments)}).")
    return _segment_reduce(tensor, ids, int(num_segments), "tf.math.unsorted_segment_sum")


def bincount(arr: Any, weights: Any = None, minlength: Optional[int] = None, maxlength: Optional[int] = None,
             dtype: Any = torch.int32, name: Optional[str] = None, axis: Any = None,
             binary_output: bool = False) -> torch.Tensor:
    """Counts of each value in the non-negative int tensor `arr` (weighted sums with `weights`).
    The length is max(arr) + 1, at least `minlength` and at most `maxlength`; values past it are dropped.

    >>> bincount([1, 1, 3]).tolist()
    [0, 2, 0, 1]
    """
    values = to_tensor(arr, op="tf.math.bincount")
    if values.is_floating_point() or values.dtype == torch.bool:
        raise TypeError(f"tf.math.bincount needs integer values, got {values.dtype}.")
    if axis not in (None, 0):
        raise NotImplementedError("tf.math.bincount: only axis=None (count over all values) is supported.")
    flat = values.reshape(-1).to(torch.int64)
    if flat.numel() and int(flat.min()) < 0:
        raise ValueError("tf.math.bincount: values must be non-negative.")
    length = int(flat.max()) + 1 if flat.numel() else 0
    if minlength is not None:
        length = builtins.max(length, int(minlength))
    if maxlength is not None:
        length = builtins.min(length, int(maxlength))
    keep = flat < length
    if weights is None:
        out_dtype = as_dtype(dtype)
        counts = torch.zeros(length, dtype=torch.int64, device=flat.device).index_add_(0, flat[keep], torch.ones_like(flat[keep]))
        return (counts > 0).to(out_dtype) if binary_output else counts.to(out_dtype)
    w = to_tensor(weights, op="tf.math.bincount").reshape(-1)
    if w.numel() != flat.numel():
        raise ValueError(f"tf.math.bincount: weights need one entry per value ({flat.numel()}), got {w.numel()}.")
    w = w.to(flat.device)
    return torch.zeros(length, dtype=w.dtype, device=flat.device).index_add_(0, flat[keep], w[keep])
