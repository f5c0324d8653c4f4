"""`tf.py_function` and `tf.numpy_function`: run a Python function on op inputs and convert its results
to the declared `Tout` dtypes (eager execution makes both plain calls here)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.dtypes import as_dtype, string

__all__ = ["py_function", "numpy_function"]


def _convert_out(value: Any, dtype: Any, op: str) -> Any:
    if dtype is string or (isinstance(dtype, np.dtype) and dtype == string):
        array = np.asarray(value, dtype=object)
        return array
    tensor = value if isinstance(value, torch.Tensor) else to_tensor(value, op=op)
    wanted = as_dtype(dtype)
    if tensor.dtype != wanted and not isinstance(value, (int, float, bool, list, tuple)):
        raise TypeError(f"{op}: the function returned a {tensor.dtype} value but Tout declares {wanted}; "
                        "return that dtype or fix Tout.")
    return tensor.to(wanted)


def _outputs(result: Any, Tout: Any, op: str) -> Any:
    if Tout is None:
        return None
    if isinstance(Tout, (list, tuple)):
        results = list(result) if isinstance(result, (list, tuple)) else [result]
        if len(results) != len(Tout):
            raise ValueError(f"{op}: Tout lists {len(Tout)} outputs but the function returned {len(results)}.")
        return [_convert_out(value, dtype, op) for value, dtype in zip(results, Tout)]
    return _convert_out(result, Tout, op)


def py_function(func: Optional[Callable] = None, inp: Any = None, Tout: Any = None, name: Optional[str] = None) -> Any:
    """Calls `func` on the inputs as tensors and returns its results as `Tout` (a dtype or a list of them).

    >>> py_function(lambda x: x * 2, [torch.tensor(3)], torch.int64).item()
    6
    """
    if not callable(func):
        raise TypeError(f"tf.py_function: func must be callable, got {func!r}.")
    args = [item if isinstance(item, (torch.Tensor, np.ndarray)) and getattr(item, "dtype", None) == object
            else to_tensor(item, op="tf.py_function") for item in (inp if isinstance(inp, (list, tuple)) else [inp])]
    return _outputs(func(*args), Tout, "tf.py_function")


def numpy_function(func: Optional[Callable] = None, inp: Any = None, Tout: Any = None, stateful: bool = True,
                   name: Optional[str] = None) -> Any:
    """Calls `func` on the inputs as NumPy arrays and returns its results as tensors of `Tout`."""
    if not callable(func):
        raise TypeError(f"tf.numpy_function: func must be callable, got {func!r}.")
    items = inp if isinstance(inp, (list, tuple)) else [inp]
    args = [item.detach().cpu().numpy() if isinstance(item, torch.Tensor) else np.asarray(item) for item in items]
    return _outputs(func(*args), Tout, "tf.numpy_function")
