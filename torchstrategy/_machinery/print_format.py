"""How tf.print shows values: tensors as nested brackets with `summarize` edge items per axis, numbers in
TF's shortest round-trip form, booleans as 1/0 inside tensors, string tensors quoted; nests as Python shows them."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

__all__ = ["format_value"]


def _number(value: Any, dtype: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (bytes, np.bytes_)):
        return '"' + bytes(value).decode("utf-8", "backslashreplace") + '"'
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (float, np.floating)):
        digits = (6, 9) if dtype in (np.float32, np.float16) else (15, 17)
        for precision in digits:
            text = f"{float(value):.{precision}g}"
            if np.asarray(float(text), dtype=dtype) == np.asarray(value, dtype=dtype):
                return text
        return text
    if isinstance(value, (complex, np.complexfloating)):
        return f"({value.real:g},{value.imag:g})"
    return str(value)


def _array(array: Any, summarize: Optional[int], dtype: Any, depth: int = 0) -> str:
    if not isinstance(array, np.ndarray) or array.ndim == 0:
        item = array[()] if isinstance(array, np.ndarray) else array
        return _number(item.item() if isinstance(item, np.generic) and dtype is not np.object_ else item, dtype)
    n = array.shape[0]
    indices = list(range(n))
    if summarize is not None and n > 2 * summarize:
        indices = indices[:summarize] + [None] + indices[n - summarize:]
    parts = ["..." if i is None else _array(array[i], summarize, dtype, depth + 1) for i in indices]
    if array.ndim == 1:
        return "[" + " ".join(parts) + "]"
    return "[" + ("\n" + " " * (depth + 1)).join(parts) + "]"


def format_value(value: Any, summarize: Optional[int]) -> str:
    """`value` as tf.print writes it."""
    if isinstance(value, torch.Tensor):
        array = torch.Tensor.detach(value).cpu().numpy()
        return _array(array, summarize, array.dtype.type)
    if isinstance(value, np.ndarray):
        return _array(value, summarize, value.dtype.type)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {format_value(item, summarize)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)) and any(isinstance(item, (torch.Tensor, np.ndarray)) for item in value):
        inner = ", ".join(format_value(item, summarize) for item in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return str(value)
