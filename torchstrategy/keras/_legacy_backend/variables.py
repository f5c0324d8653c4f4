"""The legacy backend's values, variables and static facts: K.variable, K.set_value / K.get_value (also on an
optimizer's learning rate), the update_* functions, constants, casts, int_shape, count_params."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy import array_ops
from torchstrategy import ops as tf_ops
from torchstrategy.dtypes import as_dtype
from torchstrategy.keras._legacy_backend.settings import _config, _floatx_dtype, _t, standardize_dtype


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
