"""Keys and values of tf.lookup tables as torchstrategy holds tensors: strings as NumPy object arrays of bytes,
numbers as torch tensors; turned into Python keys for a dict, and back into a tensor of the table's value dtype."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from torchstrategy._tensor_convert import as_bytes, to_tensor
from torchstrategy.dtypes import as_dtype

STRING = np.dtype(object)


def dtype_of(spec: Any) -> Any:
    """A dtype spelling as a torch dtype, or NumPy's object dtype for tf.string."""
    if spec is None:
        return None
    if isinstance(spec, np.dtype) and spec.kind in "OSU" or spec in (str, bytes, "string"):
        return STRING
    return as_dtype(spec)


def dtype_name(dtype: Any) -> str:
    return "string" if dtype is STRING else str(dtype).replace("torch.", "")


def is_strings(value: Any) -> bool:
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "OSU"
    return isinstance(value, (list, tuple)) and bool(value) and is_strings(value[0])


def as_array(value: Any, dtype: Any, what: str) -> Any:
    """`value` as the table's form of `dtype` (bytes object array, or a tensor), refusing a mismatch as TF."""
    if is_strings(value):
        array = np.asarray(value, dtype=object)
        out = np.empty(array.shape, dtype=object)
        for index, item in np.ndenumerate(array):
            out[index] = as_bytes(item, what)
        if dtype is not None and dtype is not STRING:
            raise ValueError(f"{what}: Tensor conversion requested dtype {dtype_name(dtype)} for strings.")
        return out
    tensor = to_tensor(value, dtype if dtype is not STRING and not isinstance(value, torch.Tensor) else None, op=what)
    if dtype is STRING:
        raise ValueError(f"{what}: Tensor conversion requested dtype string for Tensor with dtype "
                         f"{dtype_name(tensor.dtype)}.")
    if dtype is not None and tensor.dtype != dtype:
        raise ValueError(f"{what}: Tensor conversion requested dtype {dtype_name(dtype)} for Tensor with dtype "
                         f"{dtype_name(tensor.dtype)}.")
    return tensor


def array_dtype(array: Any) -> Any:
    return STRING if isinstance(array, np.ndarray) else array.dtype


def python_items(array: Any) -> list:
    """The items of a key/value array as Python values (bytes, int, float, bool)."""
    if isinstance(array, np.ndarray):
        return list(array.reshape(-1))
    return array.detach().cpu().reshape(-1).tolist()


def build(items: list, dtype: Any, shape: tuple) -> Any:
    """Python values as an array of `dtype` and `shape` (an object array of bytes for strings)."""
    if dtype is STRING:
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(shape)
    return torch.tensor(items, dtype=dtype).reshape(shape)


def check_keys(keys: Any, key_dtype: Any, what: str) -> Any:
    """Lookup keys as an array of the table's key dtype; another dtype is a TypeError, as in TF."""
    given = STRING if is_strings(keys) else to_tensor(keys, op=what).dtype
    if isinstance(keys, (list, tuple)) and not is_strings(keys) and key_dtype is not STRING:
        given = key_dtype  # Python numbers take the table's dtype, as TF converts them
    if given != key_dtype:
        raise TypeError(f"Dtype of argument `keys` must be {dtype_name(key_dtype)}, received: {dtype_name(given)}")
    return as_array(keys, key_dtype, what)
