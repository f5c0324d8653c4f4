"""The legacy `tf.keras.backend` functions (`K.mean`, `K.set_value`, `K.int_shape`, `K.binary_crossentropy`...)
that custom losses, metrics and callbacks call, with TF 2.21 / Keras 3.15 semantics, on torch tensors."""
from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np
import torch
import torch.nn.functional as F

from torchstrategy import _context, array_ops, math_ops
from torchstrategy import nn as tf_nn
from torchstrategy import ops as tf_ops
from torchstrategy._tensor_convert import to_tensor as _tf_tensor
from torchstrategy.dtypes import as_dtype

__all__ = [
    "abs", "all", "any", "arange", "argmax", "argmin", "batch_dot", "batch_flatten", "batch_get_value",
    "batch_set_value", "bias_add", "binary_crossentropy", "cast", "cast_to_floatx", "categorical_crossentropy",
    "clip", "concatenate", "constant", "cos", "count_params", "cumprod", "cumsum", "dot", "dropout", "dtype",
    "elu", "equal", "eval", "exp", "expand_dims", "eye", "flatten", "gather", "get_value", "greater",
    "greater_equal", "hard_sigmoid", "image_data_format", "in_top_k", "int_shape", "is_float_dtype",
    "is_int_dtype", "is_keras_tensor", "is_sparse", "l2_normalize", "less", "less_equal", "log", "max",
    "maximum", "mean", "min", "minimum", "moving_average_update", "ndim", "not_equal", "one_hot", "ones",
    "ones_like", "permute_dimensions", "pow", "prod", "random_bernoulli", "random_normal", "random_uniform",
    "relu", "repeat", "repeat_elements", "reshape", "reverse", "round", "set_epsilon", "set_floatx",
    "set_image_data_format", "set_value", "shape", "sigmoid", "sign", "sin", "softmax", "softplus", "softsign",
    "sparse_categorical_crossentropy", "sqrt", "square", "squeeze", "stack", "standardize_dtype", "std",
    "stop_gradient", "sum", "switch", "tanh", "tile", "to_dense", "transpose", "truncated_normal", "update",
    "update_add", "update_sub", "var", "variable", "zeros", "zeros_like", "backend",
]

_FLOAT_NAMES = ("float16", "float32", "float64", "bfloat16")


def _config() -> Any:
    # Imported on use: backend.py re-exports this module at its end, so a top-level import would be circular.
    from torchstrategy.keras import backend as keras_backend

    return keras_backend


def _t(x: Any, op: str) -> torch.Tensor:
    return _tf_tensor(x, op=f"keras.backend.{op}")


def _floatx_dtype() -> torch.dtype:
    return as_dtype(_config().floatx())


# ----- configuration -----------------------------------------------------------------------------------


def set_floatx(value: str) -> None:
    """Sets the default float type ('float16', 'bfloat16', 'float32' or 'float64')."""
    if value not in _FLOAT_NAMES:
        raise ValueError(f"Unknown `floatx` value: {value!r}. Expected one of {list(_FLOAT_NAMES)}.")
    _context.set_keras_setting("floatx", str(value))


def set_epsilon(value: float) -> None:
    """Sets the fuzz factor `epsilon()` returns (losses and metrics read it at each call)."""
    _context.set_keras_setting("epsilon", float(value))


def image_data_format() -> str:
    """'channels_last' (the default) or 'channels_first'."""
    return _context.keras_setting("image_data_format")


def set_image_data_format(data_format: str) -> None:
    """Sets `image_data_format()`: 'channels_last' or 'channels_first'."""
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                         f"Received: data_format={data_format!r}")
    _context.set_keras_setting("image_data_format", str(data_format))


def backend() -> str:
    """The backend name a TF script sees: 'tensorflow' (torchstrategy stands in for TF; the real engine is torch)."""
    return "tensorflow"


def standardize_dtype(dtype: Any = None) -> str:
    """A dtype (torch, NumPy, string; None = floatx) as Keras's string name, e.g. 'float32'."""
    return str(as_dtype(_config().floatx() if dtype is None else dtype)).replace("torch.", "")


def is_float_dtype(dtype: Any) -> bool:
    """True for float16/bfloat16/float32/float64."""
    return as_dtype(dtype).is_floating_point


def is_int_dtype(dtype: Any) -> bool:
    """True for the signed and unsigned integer dtypes."""
    d = as_dtype(dtype)
    return not d.is_floating_point and not d.is_complex and d is not torch.bool


# ----- values, variables and shapes ---------------------------------------------------------------------


def _assign(x: Any, value: Any, op: str) -> None:
    if hasattr(x, "assign"):  # Keras weights, tf.Variable, an optimizer's learning_rate
        target_dtype = getattr(x, "dtype", None)
        if isinstance(target_dtype, torch.dtype):
            value = np.asarray(value.detach().cpu() if isinstance(value, torch.Tensor) else value,
                               dtype=str(target_dtype).replace("torch.", "").replace("bfloat16", "float32"))
        x.assign(value)
        return
    if isinstance(x, torch.Tensor):
        new = torch.as_tensor(np.asarray(value), dtype=x.dtype, device=x.device)
        if tuple(new.shape) != tuple(x.shape):
            raise ValueError(f"keras.backend.{op}: the value has shape {tuple(new.shape)} but the variable has "
                             f"shape {tuple(x.shape)}; they must be equal.")
        with torch.no_grad():
            x.copy_(new)
        return
    raise TypeError(f"keras.backend.{op} needs a variable (a Keras weight, a tf.Variable, a torch tensor or an "
                    f"optimizer's learning_rate); got {type(x).__name__}.")


def set_value(x: Any, value: Any) -> None:
    """Sets variable `x` to `value` in place; also `K.set_value(model.optimizer.learning_rate, 1e-4)`.

    >>> w = variable([1.0, 2.0]); set_value(w, [3.0, 4.0]); get_value(w)
    array([3., 4.], dtype=float32)
    """
    _assign(x, value, "set_value")


def get_value(x: Any) -> Any:
    """A tensor or variable as a NumPy array (a learning rate as np.float32); anything else as it is."""
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy().copy()
    if hasattr(x, "numpy"):
        return x.numpy()
    return x


eval = get_value


def batch_get_value(tensors: Sequence[Any]) -> list:
    """`[get_value(t) for t in tensors]`."""
    return [get_value(t) for t in tensors]


def batch_set_value(tuples: Sequence[tuple]) -> None:
    """`set_value(x, value)` for each `(x, value)` pair."""
    for x, value in tuples:
        _assign(x, value, "batch_set_value")


def variable(value: Any, dtype: Any = None, name: Optional[str] = None, constraint: Any = None) -> Any:
    """A `tf.Variable` holding `value` (dtype defaults to floatx)."""
    from torchstrategy.variables import Variable as TFVariable

    tensor = torch.as_tensor(get_value(value) if isinstance(value, torch.Tensor) else np.asarray(value),
                             dtype=as_dtype(_config().floatx() if dtype is None else dtype))
    return TFVariable(tensor, name=name, constraint=constraint)


def constant(value: Any, dtype: Any = None, shape: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """`tf.constant(value, dtype)` with dtype defaulting to floatx."""
    return tf_ops.constant(value, dtype=_config().floatx() if dtype is None else dtype, shape=shape)


def zeros(shape: Any, dtype: Any = None, name: Optional[str] = None) -> Any:
    """Zeros of `shape` (floatx by default); a variable when every dimension is known, as in Keras."""
    return variable(np.zeros(tuple(shape) if not isinstance(shape, int) else (shape,)), dtype, name)


def ones(shape: Any, dtype: Any = None, name: Optional[str] = None) -> Any:
    """Ones of `shape` (floatx by default), as a variable."""
    return variable(np.ones(tuple(shape) if not isinstance(shape, int) else (shape,)), dtype, name)


def eye(size: int, dtype: Any = None, name: Optional[str] = None) -> Any:
    """The identity matrix as a variable (floatx by default)."""
    return variable(np.eye(size), dtype, name)


def zeros_like(x: Any, dtype: Any = None, name: Optional[str] = None) -> torch.Tensor:
    return array_ops.zeros_like(x, dtype=dtype)


def ones_like(x: Any, dtype: Any = None, name: Optional[str] = None) -> torch.Tensor:
    return array_ops.ones_like(x, dtype=dtype)


def cast(x: Any, dtype: Any) -> torch.Tensor:
    """`x` converted to `dtype`."""
    return tf_ops.cast(x, dtype)


def cast_to_floatx(x: Any) -> Any:
    """Tensors become floatx tensors; other values become floatx NumPy arrays."""
    if isinstance(x, torch.Tensor):
        return x.to(_floatx_dtype())
    return np.asarray(x, dtype=_config().floatx())


def dtype(x: Any) -> str:
    """The dtype name of `x`, e.g. 'float32'."""
    return standardize_dtype(_t(x, "dtype").dtype)


def ndim(x: Any) -> int:
    """The rank of `x`."""
    return _t(x, "ndim").dim()


def int_shape(x: Any) -> Optional[tuple]:
    """The static shape as a tuple of ints, e.g. (2, 3)."""
    try:
        return tuple(int(d) for d in x.shape)
    except (AttributeError, TypeError):
        return None


def shape(x: Any) -> torch.Tensor:
    """The dynamic shape as an int32 tensor (as `tf.shape`)."""
    return torch.tensor(list(_t(x, "shape").shape), dtype=torch.int32)


def count_params(x: Any) -> int:
    """The number of elements of `x`."""
    return int(np.prod(int_shape(x) or ()))


def is_keras_tensor(x: Any) -> bool:
    """True for the symbolic tensors of the functional API (`keras.Input(...)` and layer outputs on them)."""
    from torchstrategy.keras.layers.input_layer import KerasTensor

    return isinstance(x, KerasTensor)


def is_sparse(tensor: Any) -> bool:
    return isinstance(tensor, torch.Tensor) and tensor.is_sparse


def to_dense(tensor: Any) -> Any:
    return tensor.to_dense() if is_sparse(tensor) else tensor


def update(x: Any, new_x: Any) -> Any:
    """Assigns `new_x` to variable `x`; returns `x`."""
    _assign(x, new_x, "update")
    return x


def update_add(x: Any, increment: Any) -> Any:
    """`x.assign_add(increment)`; returns `x`."""
    _assign(x, get_value(x) + np.asarray(get_value(increment)), "update_add")
    return x


def update_sub(x: Any, decrement: Any) -> Any:
    """`x.assign_sub(decrement)`; returns `x`."""
    _assign(x, get_value(x) - np.asarray(get_value(decrement)), "update_sub")
    return x


def moving_average_update(x: Any, value: Any, momentum: float) -> Any:
    """`x -= (x - value) * (1 - momentum)`; returns `x`."""
    current = get_value(x)
    _assign(x, current - (current - np.asarray(get_value(value), current.dtype)) * (1 - momentum),
            "moving_average_update")
    return x


def stop_gradient(variables: Any) -> Any:
    """`x` detached from the graph (a list or tuple gives a list)."""
    if isinstance(variables, (list, tuple)):
        return [array_ops.stop_gradient(v) for v in variables]
    return array_ops.stop_gradient(variables)


# ----- element-wise math ---------------------------------------------------------------------------------

abs = math_ops.abs
exp = math_ops.exp
log = math_ops.log
square = math_ops.square
sign = math_ops.sign
round = math_ops.round
sin = math_ops.sin
cos = math_ops.cos
tanh = math_ops.tanh
softplus = math_ops.softplus
maximum = math_ops.maximum
minimum = math_ops.minimum
equal = math_ops.equal
not_equal = math_ops.not_equal
greater = math_ops.greater
greater_equal = math_ops.greater_equal
less = math_ops.less
less_equal = math_ops.less_equal


def pow(x: Any, a: Any) -> torch.Tensor:
    """x ** a (a takes x's dtype)."""
    return math_ops.pow(x, a)


def sqrt(x: Any) -> torch.Tensor:
    """sqrt(max(x, 0)): negatives give 0, not NaN (Keras clamps first)."""
    tensor = _t(x, "sqrt")
    return math_ops.sqrt(tensor.clamp_min(0))


def sigmoid(x: Any) -> torch.Tensor:
    return math_ops.sigmoid(x)


def softsign(x: Any) -> torch.Tensor:
    """x / (1 + |x|)."""
    return F.softsign(_t(x, "softsign"))


def hard_sigmoid(x: Any) -> torch.Tensor:
    """clip(0.2 * x + 0.5, 0, 1) (the Keras 2 legacy slope)."""
    return (_t(x, "hard_sigmoid") * 0.2 + 0.5).clamp(0.0, 1.0)


def elu(x: Any, alpha: float = 1.0) -> torch.Tensor:
    return F.elu(_t(x, "elu"), alpha=alpha)


def relu(x: Any, alpha: float = 0.0, max_value: Optional[float] = None, threshold: float = 0.0) -> torch.Tensor:
    """max(x, 0) with Keras's extras: `alpha` slope below `threshold`, clipped at `max_value`.

    >>> relu(torch.tensor([-2.0, 1.0, 8.0]), alpha=0.1, max_value=6.0)
    tensor([-0.2000,  1.0000,  6.0000])
    """
    tensor = _t(x, "relu")
    negative_part = F.relu(threshold - tensor) if alpha != 0.0 else None
    out = tensor * (tensor > threshold).to(tensor.dtype) if threshold != 0 else F.relu(tensor)
    if max_value is not None:
        out = out.clamp(0, max_value)
    if negative_part is not None:
        out = out - alpha * negative_part
    return out


def softmax(x: Any, axis: Any = -1) -> torch.Tensor:
    """Softmax over `axis` (an int or a list of axes); rank-1 inputs are refused, as in Keras."""
    tensor = _t(x, "softmax")
    if tensor.dim() <= 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input of shape {tuple(tensor.shape)}.")
    if isinstance(axis, int):
        return torch.softmax(tensor, dim=axis)
    axes = tuple(axis)
    shifted = torch.exp(tensor - tensor.amax(dim=axes, keepdim=True))
    return shifted / shifted.sum(dim=axes, keepdim=True)


def clip(x: Any, min_value: Any, max_value: Any) -> torch.Tensor:
    """Clips into [min_value, max_value]; None means unbounded and max < min is raised to min (Keras)."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)) and max_value < min_value:
        max_value = min_value
    tensor = _t(x, "clip")
    lo = -np.inf if min_value is None else min_value
    hi = np.inf if max_value is None else max_value
    if not tensor.dtype.is_floating_point:
        return tensor.clamp(None if min_value is None else lo, None if max_value is None else hi)
    return math_ops.clip_by_value(tensor, lo, hi)


def l2_normalize(x: Any, axis: Any = None) -> torch.Tensor:
    """x / sqrt(max(sum(x**2, axis), 1e-12))."""
    return math_ops.l2_normalize(x, axis=axis)


# ----- reductions ----------------------------------------------------------------------------------------


def _bool_to_floatx(x: Any, op: str) -> torch.Tensor:
    tensor = _t(x, op)
    return tensor.to(_floatx_dtype()) if tensor.dtype is torch.bool else tensor


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return math_ops.reduce_sum(x, axis, keepdims)


def prod(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return math_ops.reduce_prod(x, axis, keepdims)


def max(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return math_ops.reduce_max(x, axis, keepdims)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    return math_ops.reduce_min(x, axis, keepdims)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Mean over `axis` (all axes by default); booleans are averaged as floatx; ints stay ints (TF)."""
    return math_ops.reduce_mean(_bool_to_floatx(x, "mean"), axis, keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Population variance (ddof 0) over `axis`."""
    return math_ops.reduce_variance(_bool_to_floatx(x, "var"), axis, keepdims)


def std(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Population standard deviation (ddof 0) over `axis`."""
    return math_ops.reduce_std(_bool_to_floatx(x, "std"), axis, keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Logical OR over `axis` of `x` cast to bool."""
    return math_ops.reduce_any(_t(x, "any").to(torch.bool), axis, keepdims)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> torch.Tensor:
    """Logical AND over `axis` of `x` cast to bool."""
    return math_ops.reduce_all(_t(x, "all").to(torch.bool), axis, keepdims)


def argmax(x: Any, axis: int = -1) -> torch.Tensor:
    """Index of the largest value along `axis` (last by default), int64."""
    return math_ops.argmax(x, axis)


def argmin(x: Any, axis: int = -1) -> torch.Tensor:
    return math_ops.argmin(x, axis)


def cumsum(x: Any, axis: int = 0) -> torch.Tensor:
    return math_ops.cumsum(x, axis=axis)


def cumprod(x: Any, axis: int = 0) -> torch.Tensor:
    return math_ops.cumprod(x, axis=axis)


def in_top_k(predictions: Any, targets: Any, k: int) -> torch.Tensor:
    """For each row, whether the target's score is among the k largest (ties count as in, as TF)."""
    scores = _t(predictions, "in_top_k")
    labels = _t(targets, "in_top_k").to(torch.int64).to(scores.device)
    target_scores = scores.gather(1, labels.unsqueeze(1))
    above = (scores > target_scores).sum(dim=1)
    return (above < k) & torch.isfinite(target_scores.squeeze(1))


# ----- shapes and layout ---------------------------------------------------------------------------------


def reshape(x: Any, shape: Any) -> torch.Tensor:
    return tf_ops.reshape(x, shape)


def flatten(x: Any) -> torch.Tensor:
    """`x` as a 1-D tensor."""
    return _t(x, "flatten").reshape(-1)


def batch_flatten(x: Any) -> torch.Tensor:
    """`x` as (batch, everything else)."""
    tensor = _t(x, "batch_flatten")
    return tensor.reshape(tensor.shape[0], -1)


def expand_dims(x: Any, axis: int = -1) -> torch.Tensor:
    """Inserts a size-1 axis at `axis` (at the end by default)."""
    return tf_ops.expand_dims(x, axis)


def squeeze(x: Any, axis: int) -> torch.Tensor:
    """Removes the size-1 axis `axis` (required, unlike tf.squeeze)."""
    return tf_ops.squeeze(x, [axis])


def permute_dimensions(x: Any, pattern: Sequence[int]) -> torch.Tensor:
    return array_ops.transpose(x, perm=list(pattern))


def transpose(x: Any) -> torch.Tensor:
    """All axes reversed."""
    return array_ops.transpose(x)


def concatenate(tensors: Sequence[Any], axis: int = -1) -> torch.Tensor:
    """Joins tensors along `axis` (the last by default)."""
    return tf_ops.concat(list(tensors), axis)


def stack(x: Sequence[Any], axis: int = 0) -> torch.Tensor:
    return tf_ops.stack(list(x), axis)


def tile(x: Any, n: Any) -> torch.Tensor:
    """Repeats `x` `n[i]` times along axis i (an int tiles a rank-1 `x`)."""
    return array_ops.tile(x, [n] if isinstance(n, int) else n)


def repeat_elements(x: Any, rep: int, axis: int) -> torch.Tensor:
    """Each slice along `axis` repeated `rep` times in place: [1, 2] -> [1, 1, 2, 2]."""
    return torch.repeat_interleave(_t(x, "repeat_elements"), rep, dim=axis)


def repeat(x: Any, n: int) -> torch.Tensor:
    """(batch, features) -> (batch, n, features)."""
    tensor = _t(x, "repeat")
    if tensor.dim() != 2:
        raise ValueError(f"Expected input `x` to have rank 2. Received: rank(x)={tensor.dim()}")
    return tensor.unsqueeze(1).expand(-1, n, -1).clone()


def reverse(x: Any, axes: Any) -> torch.Tensor:
    return array_ops.reverse(x, [axes] if isinstance(axes, int) else list(axes))


def gather(reference: Any, indices: Any) -> torch.Tensor:
    """Rows of `reference` at `indices` (axis 0)."""
    return array_ops.gather(reference, indices)


def one_hot(indices: Any, num_classes: int) -> torch.Tensor:
    """float32 one-hot vectors on a new last axis (out-of-range indices give all zeros, as TF)."""
    return tf_ops.one_hot(indices, num_classes)


def switch(condition: Any, then_expression: Any, else_expression: Any) -> Any:
    """A scalar condition picks one branch (callables are called lazily); a tensor condition selects
    element-wise, broadcast over the expressions' trailing axes."""
    cond = _t(condition, "switch").to(torch.bool)
    if cond.dim() == 0:
        chosen = then_expression if bool(cond) else else_expression
        return chosen() if callable(chosen) else chosen
    then_value = then_expression() if callable(then_expression) else then_expression
    else_value = else_expression() if callable(else_expression) else else_expression
    then_t, else_t = _t(then_value, "switch"), _t(else_value, "switch")
    if cond.dim() > then_t.dim():
        raise ValueError("Rank of `condition` should be less than or equal to rank of `then_expression` and "
                         f"`else_expression`. ndim(condition)={cond.dim()}, ndim(then_expression)={then_t.dim()}")
    if cond.dim() > 1:  # Keras aligns a rank>1 condition with the leading axes; rank 1 broadcasts as usual
        cond = cond.reshape(tuple(cond.shape) + (1,) * (then_t.dim() - cond.dim()))
    return torch.where(cond.to(then_t.device), then_t, else_t)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = "int32") -> torch.Tensor:
    """`range` as a tensor (int32 by default); a negative `start` without `stop` gives an empty tensor."""
    if stop is None:
        start, stop = 0, builtins.max(start, 0)
    return torch.arange(start, stop, step).to(as_dtype(dtype))


# ----- linear algebra ------------------------------------------------------------------------------------


def dot(x: Any, y: Any) -> torch.Tensor:
    """Keras's dot: matmul for rank <= 2; for higher ranks it contracts x's last axis with y's
    second-to-last, giving shape x.shape[:-1] + y.shape[:-2] + y.shape[-1:]."""
    a, b = _t(x, "dot"), _t(y, "dot")
    if a.dim() > 2 or b.dim() > 2:
        return torch.tensordot(a, b, dims=([a.dim() - 1], [b.dim() - 2 if b.dim() >= 2 else 0]))
    return array_ops.matmul(a, b)


def batch_dot(x: Any, y: Any, axes: Any = None) -> torch.Tensor:
    """Per-sample dot product over `axes` (default: x's last with y's last (rank 2) or second-to-last).

    >>> batch_dot(torch.ones(32, 20), torch.ones(32, 20), axes=1).shape
    torch.Size([32, 1])
    """
    a, b = _t(x, "batch_dot"), _t(y, "batch_dot")
    if a.dim() < 2 or b.dim() < 2:
        raise ValueError(f"Cannot do batch_dot on inputs with rank < 2. Received shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}.")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"Cannot do batch_dot on inputs with different batch sizes: {tuple(a.shape)} and "
                         f"{tuple(b.shape)}.")
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [a.dim() - 1, b.dim() - 1 if b.dim() == 2 else b.dim() - 2]
    if builtins.any(isinstance(ax, (list, tuple)) for ax in axes):
        raise ValueError(f"Multiple target dimensions are not supported. Expected: None, int, (int, int). "
                         f"Provided: {axes}")
    a0, a1 = [ax + (n if ax < 0 else 0) for ax, n in zip(axes, (a.dim(), b.dim()))]
    if 0 in (a0, a1):
        raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not batched, add a dummy "
                         "batch dimension with K.expand_dims(x, 0).")
    if a.shape[a0] != b.shape[a1]:
        raise ValueError(f"Cannot do batch_dot on inputs with shapes {tuple(a.shape)} and {tuple(b.shape)} with "
                         f"axes={[a0, a1]}: x.shape[{a0}] != y.shape[{a1}] ({a.shape[a0]} != {b.shape[a1]}).")
    a_free = [d for d in range(1, a.dim()) if d != a0]
    b_free = [d for d in range(1, b.dim()) if d != a1]
    a_moved = a.permute([0] + a_free + [a0]).reshape(a.shape[0], -1, a.shape[a0])
    b_moved = b.permute([0, a1] + b_free).reshape(b.shape[0], b.shape[a1], -1)
    out = torch.bmm(a_moved, b_moved)
    out_shape = [a.shape[0]] + [a.shape[d] for d in a_free] + [b.shape[d] for d in b_free]
    if len(out_shape) == 1:  # both rank 2: Keras keeps a trailing axis of size 1
        out_shape.append(1)
    return out.reshape(out_shape)


def bias_add(x: Any, bias: Any, data_format: Optional[str] = None) -> torch.Tensor:
    """x + bias, on the channel axis given by `data_format` (default image_data_format())."""
    tensor, b = _t(x, "bias_add"), _t(bias, "bias_add")
    data_format = image_data_format() if data_format is None else data_format
    if data_format == "channels_first" and tensor.dim() > 2 and b.dim() == 1:
        return tensor + b.reshape((1, -1) + (1,) * (tensor.dim() - 2))
    return tensor + b


# ----- cross-entropies (element-wise / per-sample, the legacy argument order: target first) ----------------


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> torch.Tensor:
    """Element-wise binary cross-entropy (no mean over the last axis, unlike keras.losses)."""
    output_t = _t(output, "binary_crossentropy")
    target_t = _tf_tensor(target, output_t.dtype, "keras.backend.binary_crossentropy").to(output_t.dtype)
    if from_logits:
        return tf_nn.sigmoid_cross_entropy_with_logits(target_t, output_t)
    eps = _config().epsilon()
    probs = output_t.clamp(eps, 1.0 - eps)
    return -(target_t * torch.log(probs + eps) + (1 - target_t) * torch.log(1 - probs + eps))


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1) -> torch.Tensor:
    """Cross-entropy of one-hot/soft `target` against `output` (probabilities, renormalized and clipped)."""
    output_t = _t(output, "categorical_crossentropy")
    target_t = _tf_tensor(target, output_t.dtype, "keras.backend.categorical_crossentropy").to(output_t.dtype)
    if tuple(target_t.shape) != tuple(output_t.shape):
        raise ValueError(f"keras.backend.categorical_crossentropy: target shape {tuple(target_t.shape)} and output "
                         f"shape {tuple(output_t.shape)} must be equal.")
    if from_logits:
        return tf_nn.softmax_cross_entropy_with_logits(target_t, output_t, axis=axis)
    eps = _config().epsilon()
    probs = (output_t / output_t.sum(dim=axis, keepdim=True)).clamp(eps, 1.0 - eps)
    return -(target_t * torch.log(probs)).sum(dim=axis)


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1,
                                    ignore_class: Optional[int] = None) -> torch.Tensor:
    """Cross-entropy of integer `target` against `output` (probabilities, clipped to [eps, 1-eps], then
    log-softmaxed, as Keras does); shape output.shape without `axis`."""
    from torchstrategy.keras.losses import (
        sparse_categorical_crossentropy as _keras_sparse_ce,
    )

    output_t = _t(output, "sparse_categorical_crossentropy")
    return _keras_sparse_ce(target, output_t, from_logits=from_logits, axis=axis, ignore_class=ignore_class)


# ----- randomness ----------------------------------------------------------------------------------------


def _generator(seed: Optional[int]) -> Optional[torch.Generator]:
    if seed is None:
        return None
    generator = torch.Generator()
    generator.manual_seed(int(seed))
    return generator


def _shape_tuple(shape: Any) -> tuple:
    return (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)


def random_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                  seed: Optional[int] = None) -> torch.Tensor:
    """Normal samples (floatx by default); `seed` makes them repeatable (torch's stream, not TF's)."""
    out = torch.randn(_shape_tuple(shape), generator=_generator(seed), dtype=torch.float32)
    return (out * stddev + mean).to(as_dtype(_config().floatx() if dtype is None else dtype))


def random_uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None,
                   seed: Optional[int] = None) -> torch.Tensor:
    """Uniform samples in [minval, maxval) (floatx by default)."""
    out = torch.rand(_shape_tuple(shape), generator=_generator(seed), dtype=torch.float32)
    return (out * (maxval - minval) + minval).to(as_dtype(_config().floatx() if dtype is None else dtype))


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: Optional[int] = None) -> torch.Tensor:
    """Normal samples redrawn beyond two standard deviations."""
    out = torch.empty(_shape_tuple(shape), dtype=torch.float32)
    torch.nn.init.trunc_normal_(out, 0.0, 1.0, -2.0, 2.0, generator=_generator(seed))
    return (out * stddev + mean).to(as_dtype(_config().floatx() if dtype is None else dtype))


def random_bernoulli(shape: Any, p: float = 0.0, dtype: Any = None, seed: Optional[int] = None) -> torch.Tensor:
    """1 with probability p, else 0 (floatx by default)."""
    draws = torch.rand(_shape_tuple(shape), generator=_generator(seed))
    return (draws <= p).to(as_dtype(_config().floatx() if dtype is None else dtype))


def dropout(x: Any, level: float, noise_shape: Any = None, seed: Optional[int] = None) -> torch.Tensor:
    """Zeroes each entry with probability `level` and scales the rest by 1 / (1 - level)."""
    tensor = _t(x, "dropout")
    mask_shape = tuple(tensor.shape) if noise_shape is None else _shape_tuple(noise_shape)
    keep = torch.rand(mask_shape, generator=_generator(seed)).to(tensor.device) >= level
    return tensor * keep.to(tensor.dtype) / (1.0 - level)




# ----- keras.config and keras.version (Keras 3's top-level names) -----------------------------------------

_KERAS_VERSION = "3.15.1"  # the Keras that TF 2.21 ships with, whose API this package follows


def version() -> str:
    """The Keras version a TF 2.21 script sees: '3.15.1'."""
    return _KERAS_VERSION


def _enable_unsafe_deserialization() -> None:
    # Nothing to unlock: this package's deserialization never runs Python lambdas from files.
    return None


class _KerasConfig:
    """`keras.config`: floatx, epsilon, image data format and the backend name (see `backend()`)."""

    floatx = staticmethod(lambda: _config().floatx())
    set_floatx = staticmethod(set_floatx)
    epsilon = staticmethod(lambda: _config().epsilon())
    set_epsilon = staticmethod(set_epsilon)
    image_data_format = staticmethod(image_data_format)
    set_image_data_format = staticmethod(set_image_data_format)
    backend = staticmethod(backend)
    enable_unsafe_deserialization = staticmethod(_enable_unsafe_deserialization)


config = _KerasConfig()
