"""Keras's hashing layers with TF's hash functions: Hashing (FarmHash Fingerprint64 buckets, or SipHash-2-4
with a `salt`) and HashedCrossing (TF's `sparse.cross_hashed` of feature pairs), with categorical outputs."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._machinery.farmhash import fingerprint64
from torchstrategy._machinery.siphash import fingerprint_cat64, siphash24
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.categorical import _check_mode, _check_sparse, _encode_categorical

_CROSS_KEY = 0xDECAFCAFFE  # TF's default hash_key of sparse.cross_hashed
_MASK = (1 << 64) - 1


def _as_array(inputs: Any) -> np.ndarray:
    if isinstance(inputs, torch.Tensor):
        return inputs.detach().cpu().numpy()
    array = np.asarray(inputs)
    if array.dtype.kind == "O" and array.size and isinstance(array.flat[0], (bytes, str)):
        return array.astype(bytes if isinstance(array.flat[0], bytes) else str)
    return array


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (np.str_, str)):
        return str(value).encode("utf-8")
    return str(int(value)).encode("ascii")  # TF's as_string of an integer (floats are cast to int64 first)


class Hashing(Layer):
    """Hashes strings or integers into `num_bins` bins: FarmHash Fingerprint64 mod bins as TF's
    `to_hash_bucket_fast`, or SipHash-2-4 keyed by `salt` (`to_hash_bucket_strong`); with `mask_value`,
    bin 0 is kept for it.

    >>> Hashing(num_bins=3)(np.array([["A"], ["B"], ["C"]])).tolist()
    [[1], [0], [1]]
    """

    _float_policy_only = False

    def __init__(self, num_bins: int, mask_value: Any = None, salt: Any = None, output_mode: str = "int",
                 sparse: bool = False, **kwargs: Any) -> None:
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. "
                             f"Received: num_bins={num_bins}.")
        if output_mode == "int" and self._dtype_policy.name not in ("int32", "int64"):
            raise ValueError(f"When `output_mode=\"int\"`, `dtype` should be an integer type, 'int32' or 'in64'. "
                             f"Received: dtype={kwargs['dtype']}")
        _check_mode("Hashing", output_mode)
        if sparse and output_mode == "int":
            raise ValueError("`sparse` may only be true if `output_mode` is `\"one_hot\"`, `\"multi_hot\"`, or "
                             f"`\"count\"`. Received: sparse={sparse} and output_mode={output_mode}")
        _check_sparse("Hashing", sparse)
        self.num_bins, self.mask_value, self.output_mode, self.sparse = num_bins, mask_value, output_mode, sparse
        self.strong_hash = salt is not None
        self.salt = None
        if salt is not None:
            if isinstance(salt, (tuple, list)) and len(salt) == 2:
                self.salt = list(salt)
            elif isinstance(salt, int):
                self.salt = [salt, salt]
            else:
                raise ValueError("The `salt` argument for `Hashing` can only be a tuple of size 2 integers, or a "
                                 f"single integer. Received: salt={salt}.")
        self.built = True

    def _cast_inputs(self, inputs: Any) -> Any:
        return inputs  # strings and integers pass through untouched

    def _bins(self, values: np.ndarray) -> np.ndarray:
        bins = self.num_bins
        masked = None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            masked = values == self.mask_value
        if values.dtype.kind == "f":
            values = values.astype(np.int64)
        key = None if self.salt is None else (self.salt[0], self.salt[1])
        flat = [(siphash24(key, _as_bytes(v)) if key is not None else fingerprint64(_as_bytes(v))) % bins
                for v in values.reshape(-1).tolist()]
        out = np.asarray(flat, dtype=np.int64).reshape(values.shape)
        if masked is not None:
            out = np.where(masked, 0, out + 1)
        return out

    def call(self, inputs: Any) -> torch.Tensor:
        values = _as_array(inputs)
        if self.output_mode == "one_hot" and values.ndim and values.shape[-1] == 1:
            values = values.squeeze(-1)
        indices = torch.from_numpy(self._bins(values))
        return _encode_categorical(indices, self.output_mode, self.num_bins, self._compute_torch_dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        if self.output_mode == "int":
            return tuple(input_shape)
        if len(input_shape) == 0:
            return (self.num_bins,)
        return tuple(input_shape[:-1]) + (self.num_bins,)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt, "mask_value": self.mask_value,
                "output_mode": self.output_mode, "sparse": self.sparse}


def _feature_hash(value: Any) -> int:
    if isinstance(value, (bytes, str, np.str_)):
        return fingerprint64(_as_bytes(value))
    return int(value) & _MASK  # TF hashes an integer feature as its own 64 bits


class HashedCrossing(Layer):
    """Crosses two or more categorical features (strings or integers, one value per sample) into
    `num_bins` bins with TF's `sparse.cross_hashed` fingerprints.

    >>> HashedCrossing(num_bins=5)((np.array(["A", "B"]), np.array([101, 102]))).shape
    torch.Size([2])
    """

    _float_policy_only = False

    def __init__(self, num_bins: int, output_mode: str = "int", sparse: bool = False, name: Optional[str] = None,
                 dtype: Any = None, **kwargs: Any) -> None:
        if output_mode == "int" and dtype is None:
            dtype = "int64"
        super().__init__(name=name, dtype=dtype, **kwargs)
        _check_sparse("HashedCrossing", sparse)
        _check_mode("HashedCrossing", output_mode, ("int", "one_hot"))
        self.num_bins, self.output_mode, self.sparse = num_bins, output_mode, sparse
        self.built = True

    def _cast_inputs(self, inputs: Any) -> Any:
        return inputs  # strings and integers pass through untouched

    def call(self, inputs: Any) -> torch.Tensor:
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"`HashedCrossing` should be called on a list or tuple of at least two inputs. "
                             f"Received: inputs={inputs}")
        arrays = [_as_array(x) for x in inputs]
        first = arrays[0].shape
        if any(a.shape != first for a in arrays):
            raise ValueError(f"Inputs must have the same shape. Received: inputs shapes "
                             f"{[a.shape for a in arrays]}")
        if len(first) > 2 or (len(first) == 2 and first[-1] != 1):
            raise ValueError(f"All `HashedCrossing` inputs should have shape `()`, `(batch_size)` or "
                             f"`(batch_size, 1)`. Received: inputs shapes {[a.shape for a in arrays]}")
        for a in arrays:
            if a.dtype.kind not in "iuSU":
                raise ValueError(f"All `HashedCrossing` inputs should have an integer or string dtype. Received: "
                                 f"dtype {a.dtype}")
        columns = [a.reshape(-1).tolist() for a in arrays]
        crossed = []
        for row in zip(*columns):
            value = _CROSS_KEY
            for feature in row:
                value = fingerprint_cat64(value, _feature_hash(feature))
            crossed.append(value % self.num_bins)
        indices = torch.tensor(crossed, dtype=torch.int64).reshape(first)
        dtype = self._compute_torch_dtype
        return _encode_categorical(indices, self.output_mode, self.num_bins, dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        shape = tuple(input_shape[0])
        if self.output_mode == "one_hot":
            if shape and shape[-1] == 1 and len(shape) > 1:
                shape = shape[:-1]
            return shape + (self.num_bins,)
        return shape

    def get_config(self) -> dict:
        return {"num_bins": self.num_bins, "output_mode": self.output_mode, "sparse": self.sparse,
                "name": self.name, "dtype": self._dtype_policy.name}
