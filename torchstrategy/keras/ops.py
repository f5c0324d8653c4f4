"""`tf.keras.ops` (Keras 3's backend-neutral ops): NumPy-style math, shape and neural-net functions with
Keras 3's names, argument names and dtype rules, eager on torch tensors (NumPy arrays and numbers accepted)."""
from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np
import torch
import torch.nn.functional as F

from torchstrategy.dtypes import as_dtype

_INT_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def _floatx() -> torch.dtype:
    from torchstrategy.keras import backend

    return as_dtype(backend.floatx())


def convert_to_tensor(x: Any, dtype: Any = None, sparse: Optional[bool] = None, ragged: Optional[bool] = None
                      ) -> torch.Tensor:
    """`x` as a torch tensor with Keras's rules: Python floats become floatx, Python ints int32, NumPy arrays
    keep their dtype.

    >>> convert_to_tensor([1, 2]).dtype
    torch.int32
    """
    if isinstance(x, torch.Tensor):
        tensor = x
    elif isinstance(x, (np.ndarray, np.generic)):
        array = np.asarray(x)
        tensor = torch.from_numpy(np.ascontiguousarray(array).copy())
    elif isinstance(x, (list, tuple)) and builtins.any(isinstance(item, torch.Tensor) for item in x):
        tensor = torch.stack([convert_to_tensor(item) for item in x])
    else:
        array = np.asarray(x)
        if array.dtype.kind in "OSU":
            raise TypeError(f"keras.ops.convert_to_tensor: cannot convert {x!r} to a numeric tensor.")
        if array.dtype.kind == "f":
            tensor = torch.as_tensor(array, dtype=_floatx())
        elif array.dtype.kind in "iu":
            fits = array.size == 0 or (array.min() >= -2 ** 31 and array.max() < 2 ** 31)
            tensor = torch.as_tensor(array, dtype=torch.int32 if fits else torch.int64)
        else:
            tensor = torch.as_tensor(array)
    return tensor if dtype is None else tensor.to(as_dtype(dtype))


_t = convert_to_tensor


def _pair(x: Any, y: Any) -> tuple[Any, Any]:
    """Two operands; a Python number stays a number so torch gives it the tensor's dtype (Keras's weak types)."""
    if isinstance(x, (int, float, bool)) and not isinstance(y, (int, float, bool)):
        return x, _t(y)
    if isinstance(y, (int, float, bool)) and not isinstance(x, (int, float, bool)):
        return _t(x), y
    return _t(x), _t(y)


def _float(x: Any) -> torch.Tensor:
    """Ints and bools become floatx before float-only ops (ops.sqrt(int) is float32 in Keras)."""
    tensor = _t(x)
    return tensor if tensor.dtype.is_floating_point or tensor.dtype.is_complex else tensor.to(_floatx())


def _axes(axis: Any) -> Any:
    if axis is None:
        return None
    return tuple(axis) if isinstance(axis, (list, tuple)) else int(axis)


def _keep_int(result: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    # torch widens int32 sums/products to int64; Keras keeps the input's int dtype (bools sum as int32).
    if source.dtype is torch.bool:
        return result.to(torch.int32)
    if source.dtype in _INT_DTYPES:
        return result.to(source.dtype)
    return result


# ----- creation --------------------------------------------------------------------------------------------


def _shape(shape: Any) -> tuple:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def zeros(shape: Any, dtype: Any = None) -> torch.Tensor:
    """Zeros of `shape` (floatx by default)."""
    return torch.zeros(_shape(shape), dtype=_floatx() if dtype is None else as_dtype(dtype))


def ones(shape: Any, dtype: Any = None) -> torch.Tensor:
    return torch.ones(_shape(shape), dtype=_floatx() if dtype is None else as_dtype(dtype))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> torch.Tensor:
    """`shape` filled with `fill_value`, floatx unless `dtype` says otherwise (Keras 3)."""
    return torch.full(_shape(shape), _t(fill_value).item(), dtype=_floatx() if dtype is None else as_dtype(dtype))


def zeros_like(x: Any, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    return torch.zeros_like(tensor, dtype=None if dtype is None else as_dtype(dtype))


def ones_like(x: Any, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    return torch.ones_like(tensor, dtype=None if dtype is None else as_dtype(dtype))


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    return torch.full_like(tensor, float(fill_value) if tensor.dtype.is_floating_point else fill_value,
                           dtype=None if dtype is None else as_dtype(dtype))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> torch.Tensor:
    """Like np.arange; int32 for int arguments, floatx when any is a float."""
    if stop is None:
        start, stop = 0, start
    is_float = builtins.any(isinstance(v, float) for v in (start, stop, step))
    out_dtype = as_dtype(dtype) if dtype is not None else (_floatx() if is_float else torch.int32)
    return torch.arange(start, stop, step, dtype=torch.float64 if is_float else torch.int64).to(out_dtype)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0) -> Any:
    """`num` evenly spaced values from start to stop (floatx by default)."""
    out_dtype = _floatx() if dtype is None else as_dtype(dtype)
    values = np.linspace(float(start), float(stop), num, endpoint=endpoint, retstep=retstep)
    if retstep:
        return torch.as_tensor(values[0], dtype=out_dtype), values[1]
    return torch.as_tensor(values, dtype=out_dtype)


def eye(N: int, M: Optional[int] = None, k: int = 0, dtype: Any = None) -> torch.Tensor:
    return torch.as_tensor(np.eye(N, M, k), dtype=_floatx() if dtype is None else as_dtype(dtype))


def identity(n: int, dtype: Any = None) -> torch.Tensor:
    return eye(n, dtype=dtype)


def tri(N: int, M: Optional[int] = None, k: int = 0, dtype: Any = None) -> torch.Tensor:
    return torch.as_tensor(np.tri(N, M, k), dtype=_floatx() if dtype is None else as_dtype(dtype))


def copy(x: Any) -> torch.Tensor:
    return _t(x).clone()


def array(x: Any, dtype: Any = None) -> torch.Tensor:
    return _t(x, dtype)


def cast(x: Any, dtype: Any) -> torch.Tensor:
    """`x` converted to `dtype`."""
    return _t(x).to(as_dtype(dtype))


def convert_to_numpy(x: Any) -> np.ndarray:
    tensor = _t(x)
    return tensor.detach().cpu().numpy()


def is_tensor(x: Any) -> bool:
    return isinstance(x, torch.Tensor)


def dtype(x: Any) -> str:
    """The dtype name of `x`, e.g. 'float32'."""
    return str(_t(x).dtype).replace("torch.", "")


def shape(x: Any) -> tuple:
    """The shape as a tuple of ints (Keras 3 gives a tuple, not a tensor)."""
    return tuple(int(d) for d in _t(x).shape)


def ndim(x: Any) -> int:
    return _t(x).dim()


def size(x: Any) -> int:
    return _t(x).numel()


def stop_gradient(variable: Any) -> torch.Tensor:
    return _t(variable).detach()


# ----- element-wise ----------------------------------------------------------------------------------------


def add(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    return torch.add(a, b)


def subtract(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    return torch.subtract(a, b)


def multiply(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    return torch.multiply(a, b)


def divide(x1: Any, x2: Any) -> torch.Tensor:
    """True division; ints divide as floatx (Keras), not float64 as NumPy."""
    a, b = _pair(x1, x2)
    a = _float(a) if isinstance(a, torch.Tensor) else a
    b = _float(b) if isinstance(b, torch.Tensor) else b
    return torch.true_divide(a, b)


true_divide = divide


def divide_no_nan(x1: Any, x2: Any) -> torch.Tensor:
    """x1 / x2, with 0 where x2 == 0."""
    quotient = divide(x1, x2)
    return torch.where(_t(x2).to(quotient.device) == 0, torch.zeros_like(quotient), quotient)


def floor_divide(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    return torch.floor_divide(a, b)


def mod(x1: Any, x2: Any) -> torch.Tensor:
    """Remainder with the divisor's sign (NumPy's mod)."""
    a, b = _pair(x1, x2)
    return torch.remainder(a, b)


def power(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    return torch.pow(a, b)


def negative(x: Any) -> torch.Tensor:
    return torch.neg(_t(x))


def abs(x: Any) -> torch.Tensor:
    return torch.abs(_t(x))


absolute = abs


def sign(x: Any) -> torch.Tensor:
    return torch.sign(_t(x))


def square(x: Any) -> torch.Tensor:
    tensor = _t(x)
    return torch.square(tensor.to(torch.int32) if tensor.dtype is torch.bool else tensor)


def _float_op(fn: Any, name: str) -> Any:
    def op(x: Any) -> torch.Tensor:
        return fn(_float(x))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Element-wise `{name}`; int and bool inputs give floatx (Keras 3)."
    return op


sqrt = _float_op(torch.sqrt, "sqrt")
rsqrt = _float_op(torch.rsqrt, "rsqrt")
exp = _float_op(torch.exp, "exp")
expm1 = _float_op(torch.expm1, "expm1")
log = _float_op(torch.log, "log")
log1p = _float_op(torch.log1p, "log1p")
log2 = _float_op(torch.log2, "log2")
log10 = _float_op(torch.log10, "log10")
sin = _float_op(torch.sin, "sin")
cos = _float_op(torch.cos, "cos")
tan = _float_op(torch.tan, "tan")
arcsin = _float_op(torch.asin, "arcsin")
arccos = _float_op(torch.acos, "arccos")
arctan = _float_op(torch.atan, "arctan")
sinh = _float_op(torch.sinh, "sinh")
cosh = _float_op(torch.cosh, "cosh")
tanh = _float_op(torch.tanh, "tanh")
erf = _float_op(torch.erf, "erf")
sigmoid = _float_op(torch.sigmoid, "sigmoid")
softplus = _float_op(F.softplus, "softplus")
softsign = _float_op(F.softsign, "softsign")
silu = _float_op(F.silu, "silu")
swish = silu
relu6 = _float_op(F.relu6, "relu6")
log_sigmoid = _float_op(F.logsigmoid, "log_sigmoid")
reciprocal = _float_op(torch.reciprocal, "reciprocal")
ceil = _float_op(torch.ceil, "ceil")
floor = _float_op(torch.floor, "floor")
hard_silu = _float_op(F.hardswish, "hard_silu")
selu = _float_op(F.selu, "selu")


def relu(x: Any) -> torch.Tensor:
    return F.relu(_t(x))


def leaky_relu(x: Any, negative_slope: float = 0.2) -> torch.Tensor:
    """x for x >= 0, negative_slope * x below (Keras's default slope is 0.2)."""
    return F.leaky_relu(_float(x), negative_slope)


def elu(x: Any, alpha: float = 1.0) -> torch.Tensor:
    return F.elu(_float(x), alpha)


def gelu(x: Any, approximate: bool = True) -> torch.Tensor:
    """GELU; Keras's default is the tanh approximation."""
    return F.gelu(_float(x), approximate="tanh" if approximate else "none")


def hard_sigmoid(x: Any) -> torch.Tensor:
    """relu6(x + 3) / 6 (Keras 3's slope, 1/6; the legacy K.hard_sigmoid uses 0.2)."""
    return F.hardsigmoid(_float(x))


hard_swish = hard_silu


def round(x: Any, decimals: int = 0) -> torch.Tensor:
    """Half to even, as np.round."""
    return torch.round(_t(x), decimals=decimals)


def trunc(x: Any) -> torch.Tensor:
    return torch.trunc(_t(x))


def clip(x: Any, x_min: Any, x_max: Any) -> torch.Tensor:
    """Clips into [x_min, x_max]; bools are clipped as int32."""
    tensor = _t(x)
    if tensor.dtype is torch.bool:
        tensor = tensor.to(torch.int32)
    return torch.clamp(tensor, x_min, x_max)


def maximum(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    a = a if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=b.dtype)
    b = b if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=a.dtype)
    return torch.maximum(a, b)


def minimum(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _pair(x1, x2)
    a = a if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=b.dtype)
    b = b if isinstance(b, torch.Tensor) else torch.tensor(b, dtype=a.dtype)
    return torch.minimum(a, b)


def _compare(fn: Any, name: str) -> Any:
    def op(x1: Any, x2: Any) -> torch.Tensor:
        a, b = _pair(x1, x2)
        return fn(a, b)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Element-wise `{name}` (broadcasting), a bool tensor."
    return op


equal = _compare(torch.eq, "equal")
not_equal = _compare(torch.ne, "not_equal")
greater = _compare(torch.gt, "greater")
greater_equal = _compare(torch.ge, "greater_equal")
less = _compare(torch.lt, "less")
less_equal = _compare(torch.le, "less_equal")


def logical_and(x1: Any, x2: Any) -> torch.Tensor:
    return torch.logical_and(_t(x1), _t(x2))


def logical_or(x1: Any, x2: Any) -> torch.Tensor:
    return torch.logical_or(_t(x1), _t(x2))


def logical_xor(x1: Any, x2: Any) -> torch.Tensor:
    return torch.logical_xor(_t(x1), _t(x2))


def logical_not(x: Any) -> torch.Tensor:
    return torch.logical_not(_t(x))


def isnan(x: Any) -> torch.Tensor:
    return torch.isnan(_t(x))


def isinf(x: Any) -> torch.Tensor:
    return torch.isinf(_t(x))


def isfinite(x: Any) -> torch.Tensor:
    return torch.isfinite(_t(x))


def isclose(x1: Any, x2: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> torch.Tensor:
    a, b = _t(x1), _t(x2)
    return torch.isclose(a, b.to(a.dtype), rtol=rtol, atol=atol, equal_nan=equal_nan)


def where(condition: Any, x1: Any = None, x2: Any = None) -> Any:
    """Element-wise choice; with only `condition`, the indices of its true entries (a tuple per axis)."""
    cond = _t(condition).to(torch.bool)
    if x1 is None and x2 is None:
        return tuple(torch.nonzero(cond, as_tuple=True))
    if x1 is None or x2 is None:
        raise ValueError("keras.ops.where: give both `x1` and `x2`, or neither.")
    a, b = _pair(x1, x2)
    return torch.where(cond, a, b)


def nan_to_num(x: Any, nan: float = 0.0, posinf: Optional[float] = None, neginf: Optional[float] = None
               ) -> torch.Tensor:
    return torch.nan_to_num(_t(x), nan=nan, posinf=posinf, neginf=neginf)


# ----- reductions ------------------------------------------------------------------------------------------


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Sum over `axis` (all by default); int inputs keep their dtype, bools sum as int32."""
    tensor = _t(x)
    axes = _axes(axis)
    result = tensor.sum() if axes is None and not keepdims else torch.sum(
        tensor, dim=axes if axes is not None else tuple(range(tensor.dim())), keepdim=keepdims)
    return _keep_int(result, tensor)


def prod(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    result = tensor
    if axis is None:
        result = tensor.prod()
        if keepdims:
            result = result.reshape((1,) * tensor.dim())
    else:
        for a in sorted((axis if isinstance(axis, (list, tuple)) else [axis]), key=lambda a: -(a % tensor.dim())):
            result = result.prod(dim=a, keepdim=keepdims)
    result = _keep_int(result, tensor)
    return result if dtype is None else result.to(as_dtype(dtype))


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Mean over `axis` (all by default); int and bool inputs give floatx."""
    tensor = _float(x)
    axes = _axes(axis)
    if axes is None:
        axes = tuple(range(tensor.dim()))
    return torch.mean(tensor, dim=axes, keepdim=keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Population variance (ddof 0)."""
    tensor = _float(x)
    axes = _axes(axis)
    return torch.var(tensor, dim=axes if axes is not None else tuple(range(tensor.dim())), correction=0,
                     keepdim=keepdims)


def std(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Population standard deviation (ddof 0)."""
    return torch.sqrt(var(x, axis, keepdims))


def _extreme(tensor: torch.Tensor, axis: Any, keepdims: bool, fn: Any, initial: Any) -> torch.Tensor:
    axes = _axes(axis)
    if axes is None:
        axes = tuple(range(tensor.dim()))
    if tensor.dim() == 0:
        result = tensor
    else:
        result = fn(tensor, dim=axes, keepdim=keepdims)
    if initial is not None:
        result = torch.maximum(result, torch.tensor(initial, dtype=result.dtype)) if fn is torch.amax else \
            torch.minimum(result, torch.tensor(initial, dtype=result.dtype))
    return result


def max(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> torch.Tensor:
    return _extreme(_t(x), axis, keepdims, torch.amax, initial)


def min(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> torch.Tensor:
    return _extreme(_t(x), axis, keepdims, torch.amin, initial)


amax = max
amin = min


def any(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _t(x).to(torch.bool)
    axes = _axes(axis)
    return torch.any(tensor, dim=axes if axes is not None else tuple(range(tensor.dim())), keepdim=keepdims) \
        if tensor.dim() else tensor


def all(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _t(x).to(torch.bool)
    axes = _axes(axis)
    return torch.all(tensor, dim=axes if axes is not None else tuple(range(tensor.dim())), keepdim=keepdims) \
        if tensor.dim() else tensor


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _float(x)
    axes = _axes(axis)
    return torch.logsumexp(tensor, dim=axes if axes is not None else tuple(range(tensor.dim())), keepdim=keepdims)


def argmax(x: Any, axis: Optional[int] = None, keepdims: bool = False) -> torch.Tensor:
    """Index of the largest value (over the flattened input when axis is None), int32 (Keras 3)."""
    tensor = _t(x)
    return torch.argmax(tensor, dim=axis, keepdim=keepdims if axis is not None else False).to(torch.int32)


def argmin(x: Any, axis: Optional[int] = None, keepdims: bool = False) -> torch.Tensor:
    tensor = _t(x)
    return torch.argmin(tensor, dim=axis, keepdim=keepdims if axis is not None else False).to(torch.int32)


def cumsum(x: Any, axis: Optional[int] = None, dtype: Any = None) -> torch.Tensor:
    """Running sum along `axis` (the flattened input when None); int inputs keep their dtype."""
    tensor = _t(x)
    source = tensor.reshape(-1) if axis is None else tensor
    result = _keep_int(torch.cumsum(source, dim=0 if axis is None else axis), tensor)
    return result if dtype is None else result.to(as_dtype(dtype))


def cumprod(x: Any, axis: Optional[int] = None, dtype: Any = None) -> torch.Tensor:
    tensor = _t(x)
    source = tensor.reshape(-1) if axis is None else tensor
    result = _keep_int(torch.cumprod(source, dim=0 if axis is None else axis), tensor)
    return result if dtype is None else result.to(as_dtype(dtype))


def count_nonzero(x: Any, axis: Any = None) -> torch.Tensor:
    """Number of non-zero entries, int32."""
    tensor = _t(x)
    return torch.count_nonzero(tensor, dim=_axes(axis)).to(torch.int32)


def top_k(x: Any, k: int, sorted: bool = True) -> tuple:
    """(values, indices) of the k largest entries of the last axis; indices are int32."""
    values, indices = torch.topk(_t(x), k, dim=-1, largest=True, sorted=True)
    return values, indices.to(torch.int32)


def in_top_k(targets: Any, predictions: Any, k: int) -> torch.Tensor:
    """Whether each target's score is among the row's k largest (Keras 3 argument order: targets first)."""
    scores = _t(predictions)
    labels = _t(targets).to(torch.int64)
    target_scores = scores.gather(1, labels.unsqueeze(1))
    return (scores > target_scores).sum(dim=1) < k


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


def median(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """The median (the mean of the two middle values for even counts, as NumPy)."""
    tensor = _float(x)
    return torch.quantile(tensor.reshape(-1) if axis is None else tensor, 0.5,
                          dim=None if axis is None else axis, keepdim=keepdims and axis is not None)


def quantile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: bool = False) -> torch.Tensor:
    tensor = _float(x)
    return torch.quantile(tensor, torch.as_tensor(q, dtype=tensor.dtype), dim=axis, keepdim=keepdims,
                          interpolation=method)


def average(x: Any, axis: Any = None, weights: Any = None) -> torch.Tensor:
    tensor = _float(x)
    if weights is None:
        return mean(tensor, axis)
    w = _t(weights).to(tensor.dtype)
    if axis is not None and w.dim() == 1 and tensor.dim() > 1:
        w = w.reshape([-1 if d == axis % tensor.dim() else 1 for d in range(tensor.dim())])
    return (tensor * w).sum(dim=axis) / (w * torch.ones_like(tensor)).sum(dim=axis)


# ----- shapes and indexing ---------------------------------------------------------------------------------


def reshape(x: Any, newshape: Any) -> torch.Tensor:
    return _t(x).reshape(_shape(newshape))


def transpose(x: Any, axes: Any = None) -> torch.Tensor:
    """All axes reversed, or permuted by `axes`."""
    tensor = _t(x)
    return tensor.permute(tuple(range(tensor.dim()))[::-1] if axes is None else tuple(axes))


def swapaxes(x: Any, axis1: int, axis2: int) -> torch.Tensor:
    return torch.swapaxes(_t(x), axis1, axis2)


def moveaxis(x: Any, source: Any, destination: Any) -> torch.Tensor:
    return torch.movedim(_t(x), source, destination)


def expand_dims(x: Any, axis: Any) -> torch.Tensor:
    tensor = _t(x)
    for a in sorted(axis if isinstance(axis, (list, tuple)) else [axis]):
        tensor = tensor.unsqueeze(a)
    return tensor


def squeeze(x: Any, axis: Any = None) -> torch.Tensor:
    """Removes size-1 axes (all of them, or those in `axis`; a non-1 axis is an error)."""
    tensor = _t(x)
    if axis is None:
        return tensor.squeeze()
    axes = axis if isinstance(axis, (list, tuple)) else [axis]
    for a in axes:
        if tensor.shape[a] != 1:
            raise ValueError(f"keras.ops.squeeze: axis {a} has size {tensor.shape[a]}, not 1.")
    return tensor.squeeze(tuple(axes))


def ravel(x: Any) -> torch.Tensor:
    return _t(x).reshape(-1)


def _joined(xs: Sequence[Any]) -> list:
    tensors = [_t(x) for x in xs]
    common = tensors[0].dtype
    for t in tensors[1:]:
        common = torch.promote_types(common, t.dtype)
    return [t.to(common) for t in tensors]


def concatenate(xs: Sequence[Any], axis: int = 0) -> torch.Tensor:
    """Joins along an existing axis (axis 0 by default, as NumPy)."""
    return torch.cat(_joined(xs), dim=axis)


def append(x1: Any, x2: Any, axis: Optional[int] = None) -> torch.Tensor:
    """x2 appended to x1 along `axis` (both flattened when None)."""
    if axis is None:
        return concatenate([ravel(x1), ravel(x2)])
    return concatenate([x1, x2], axis)


def stack(x: Sequence[Any], axis: int = 0) -> torch.Tensor:
    return torch.stack(_joined(x), dim=axis)


def hstack(xs: Sequence[Any]) -> torch.Tensor:
    return torch.hstack(_joined(xs))


def vstack(xs: Sequence[Any]) -> torch.Tensor:
    return torch.vstack(_joined(xs))


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """NumPy's split: an int is a count of equal parts, a list gives the cut points."""
    tensor = _t(x)
    if isinstance(indices_or_sections, int):
        if tensor.shape[axis] % indices_or_sections:
            raise ValueError(f"keras.ops.split: axis {axis} of size {tensor.shape[axis]} does not divide into "
                             f"{indices_or_sections} equal parts.")
        return list(torch.tensor_split(tensor, indices_or_sections, dim=axis))
    return list(torch.tensor_split(tensor, list(indices_or_sections), dim=axis))


def unstack(x: Any, num: Optional[int] = None, axis: int = 0) -> list:
    return list(torch.unbind(_t(x), dim=axis))


def tile(x: Any, repeats: Any) -> torch.Tensor:
    return torch.tile(_t(x), tuple(repeats) if isinstance(repeats, (list, tuple)) else (repeats,))


def repeat(x: Any, repeats: Any, axis: Optional[int] = None) -> torch.Tensor:
    """np.repeat: each element repeated (the flattened input when axis is None)."""
    tensor = _t(x)
    reps = repeats if isinstance(repeats, int) else _t(repeats).to(torch.int64)
    return torch.repeat_interleave(tensor.reshape(-1) if axis is None else tensor, reps,
                                   dim=0 if axis is None else axis)


def flip(x: Any, axis: Any = None) -> torch.Tensor:
    tensor = _t(x)
    axes = tuple(range(tensor.dim())) if axis is None else (axis if isinstance(axis, (list, tuple)) else (axis,))
    return torch.flip(tensor, dims=tuple(axes))


def roll(x: Any, shift: Any, axis: Any = None) -> torch.Tensor:
    tensor = _t(x)
    if axis is None:
        return torch.roll(tensor.reshape(-1), shift).reshape(tensor.shape)
    return torch.roll(tensor, shift, dims=axis)


def broadcast_to(x: Any, shape: Any) -> torch.Tensor:
    return torch.broadcast_to(_t(x), _shape(shape)).clone()


def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = None) -> torch.Tensor:
    """np.pad with `pad_width` as ((before, after), ...) per axis; modes constant, reflect, symmetric, edge."""
    tensor = _t(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (tensor.dim(), 2))
    if mode == "constant":
        flat = [int(v) for pair in widths[::-1] for v in pair]
        return F.pad(tensor, flat, value=0 if constant_values is None else constant_values)
    numpy_mode = {"reflect": "reflect", "symmetric": "symmetric", "edge": "edge"}.get(mode)
    if numpy_mode is None:
        raise ValueError(f"keras.ops.pad: unknown mode {mode!r}; use 'constant', 'reflect', 'symmetric' or 'edge'.")
    padded = np.pad(tensor.detach().cpu().numpy(), widths, mode=numpy_mode)
    return torch.from_numpy(padded).to(tensor.device)


def take(x: Any, indices: Any, axis: Optional[int] = None) -> torch.Tensor:
    """Entries at `indices` along `axis` (the flattened input when None); negative indices count from the end."""
    tensor = _t(x)
    idx = _t(indices).to(torch.int64)
    source = tensor.reshape(-1) if axis is None else tensor
    dim = 0 if axis is None else axis % tensor.dim()
    idx = torch.where(idx < 0, idx + source.shape[dim], idx)
    out = torch.index_select(source, dim, idx.reshape(-1))
    return out.reshape(source.shape[:dim] + idx.shape + source.shape[dim + 1:])


def take_along_axis(x: Any, indices: Any, axis: Optional[int] = None) -> torch.Tensor:
    tensor = _t(x)
    idx = _t(indices).to(torch.int64)
    if axis is None:
        return torch.take_along_dim(tensor.reshape(-1), idx.reshape(-1))
    return torch.take_along_dim(tensor, idx, dim=axis)


def sort(x: Any, axis: int = -1) -> torch.Tensor:
    return torch.sort(_t(x), dim=axis).values


def argsort(x: Any, axis: int = -1) -> torch.Tensor:
    """Stable ascending order indices, int32."""
    return torch.argsort(_t(x), dim=axis, stable=True).to(torch.int32)


def unique(x: Any, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           axis: Optional[int] = None, size: Optional[int] = None) -> Any:
    return torch.unique(_t(x), sorted=True, return_inverse=return_inverse, return_counts=return_counts, dim=axis)


def tril(x: Any, k: int = 0) -> torch.Tensor:
    return torch.tril(_t(x), diagonal=k)


def triu(x: Any, k: int = 0) -> torch.Tensor:
    return torch.triu(_t(x), diagonal=k)


def diag(x: Any, k: int = 0) -> torch.Tensor:
    return torch.diag(_t(x), diagonal=k)


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> torch.Tensor:
    return torch.diagonal(_t(x), offset=offset, dim1=axis1, dim2=axis2)


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> torch.Tensor:
    tensor = _t(x)
    return _keep_int(torch.diagonal(tensor, offset=offset, dim1=axis1, dim2=axis2).sum(-1), tensor)


def nonzero(x: Any) -> tuple:
    return tuple(t.to(torch.int32) for t in torch.nonzero(_t(x), as_tuple=True))


def one_hot(x: Any, num_classes: int, axis: int = -1, dtype: Any = None, sparse: bool = False) -> torch.Tensor:
    """One-hot vectors (floatx by default) on a new `axis`; negative or too-large labels give all zeros."""
    labels = _t(x).to(torch.int64)
    valid = (labels >= 0) & (labels < num_classes)
    encoded = F.one_hot(torch.where(valid, labels, torch.zeros_like(labels)), num_classes)
    encoded = encoded * valid.unsqueeze(-1).to(encoded.dtype)
    encoded = encoded.to(_floatx() if dtype is None else as_dtype(dtype))
    return encoded if axis == -1 else torch.movedim(encoded, -1, axis)


def multi_hot(inputs: Any, num_classes: int, axis: int = -1, dtype: Any = None, sparse: bool = False
              ) -> torch.Tensor:
    """For each row of labels, a vector with 1 at every label present."""
    labels = _t(inputs)
    encoded = one_hot(labels, num_classes, dtype=dtype)
    reduced = encoded.amax(dim=-2) if labels.dim() > 1 else encoded.amax(dim=0)
    return reduced if axis == -1 else torch.movedim(reduced, -1, axis)


def slice(inputs: Any, start_indices: Any, shape: Any) -> torch.Tensor:
    tensor = _t(inputs)
    index = tuple(builtins.slice(int(s), int(s) + int(n)) for s, n in zip(start_indices, shape))
    return tensor[index]


# ----- linear algebra --------------------------------------------------------------------------------------


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


def einsum(subscripts: str, *operands: Any) -> torch.Tensor:
    return torch.einsum(subscripts, *_joined(operands))


def outer(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _joined([x1, x2])
    return torch.outer(a.reshape(-1), b.reshape(-1))


def vdot(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _joined([x1, x2])
    return torch.vdot(a.reshape(-1), b.reshape(-1))


def cross(x1: Any, x2: Any) -> torch.Tensor:
    a, b = _joined([x1, x2])
    return torch.linalg.cross(a, b)


# ----- neural-net ops --------------------------------------------------------------------------------------


def softmax(x: Any, axis: Any = -1) -> torch.Tensor:
    """Softmax over `axis` (an int or a tuple of axes)."""
    tensor = _float(x)
    if isinstance(axis, int):
        return torch.softmax(tensor, dim=axis)
    axes = tuple(axis)
    return torch.exp(tensor - torch.logsumexp(tensor, dim=axes, keepdim=True))


def log_softmax(x: Any, axis: Any = -1) -> torch.Tensor:
    tensor = _float(x)
    if isinstance(axis, int):
        return torch.log_softmax(tensor, dim=axis)
    return tensor - torch.logsumexp(tensor, dim=tuple(axis), keepdim=True)


def normalize(x: Any, axis: int = -1, order: int = 2, epsilon: Optional[float] = None) -> torch.Tensor:
    """x / max(||x||_order over axis, epsilon); epsilon defaults to keras.config.epsilon()."""
    from torchstrategy.keras import backend

    tensor = _float(x)
    eps = backend.epsilon() if epsilon is None else epsilon
    norms = torch.linalg.vector_norm(tensor, ord=order, dim=axis, keepdim=True)
    return tensor / norms.clamp_min(eps)


def moments(x: Any, axes: Any, keepdims: bool = False, synchronized: bool = False) -> tuple:
    """(mean, variance) over `axes`."""
    tensor = _float(x)
    dims = tuple(axes) if isinstance(axes, (list, tuple)) else (axes,)
    return (torch.mean(tensor, dim=dims, keepdim=keepdims),
            torch.var(tensor, dim=dims, correction=0, keepdim=keepdims))


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> torch.Tensor:
    """Element-wise binary cross-entropy (probabilities clipped to [eps, 1-eps]); no mean."""
    from torchstrategy.keras import backend

    output_t = _float(output)
    target_t = _t(target).to(output_t.dtype)
    if from_logits:
        return F.binary_cross_entropy_with_logits(output_t, target_t, reduction="none")
    eps = backend.epsilon()
    probs = output_t.clamp(eps, 1.0 - eps)
    return -(target_t * torch.log(probs) + (1 - target_t) * torch.log(1 - probs))


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1) -> torch.Tensor:
    """Cross-entropy of one-hot/soft targets over `axis` (probabilities renormalized and clipped)."""
    from torchstrategy.keras import backend

    output_t = _float(output)
    target_t = _t(target).to(output_t.dtype)
    if tuple(target_t.shape) != tuple(output_t.shape):
        raise ValueError(f"keras.ops.categorical_crossentropy: target shape {tuple(target_t.shape)} and output "
                         f"shape {tuple(output_t.shape)} must be equal.")
    if from_logits:
        return -(target_t * torch.log_softmax(output_t, dim=axis)).sum(dim=axis)
    eps = backend.epsilon()
    probs = (output_t / output_t.sum(dim=axis, keepdim=True)).clamp(eps, 1.0 - eps)
    return -(target_t * torch.log(probs)).sum(dim=axis)


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1
                                    ) -> torch.Tensor:
    """Cross-entropy of integer targets (a trailing axis of size 1 is dropped)."""
    from torchstrategy.keras import backend

    output_t = _float(output)
    labels = _t(target).to(torch.int64)
    if labels.dim() == output_t.dim() and labels.shape[-1] == 1:
        labels = labels.squeeze(-1)
    moved = output_t.movedim(axis, -1)
    if from_logits:
        log_probs = torch.log_softmax(moved, dim=-1)
    else:
        eps = backend.epsilon()
        probs = moved / moved.sum(dim=-1, keepdim=True)
        log_probs = torch.log(probs.clamp(eps, 1.0 - eps))
    return -log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
