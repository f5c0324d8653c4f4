"""`tf.fingerprint`: TF's FarmHash Fingerprint64 of each row of a tensor, as 8 little-endian uint8 bytes."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._machinery.farmhash import fingerprint64
from torchstrategy._tensor_convert import as_bytes, to_tensor

__all__ = ["fingerprint"]


def _row_bytes(row: Any) -> bytes:
    if isinstance(row, (bytes, str, np.bytes_, np.str_)):  # one element of a vector of strings
        return as_bytes(row, "tf.fingerprint")
    row = np.asarray(row)
    if row.dtype == object:  # strings: a lone string hashes as is; several hash their fingerprints' bytes
        items = [as_bytes(item, "tf.fingerprint") for item in row.reshape(-1)]
        if row.ndim == 0:
            return items[0]
        return b"".join(fingerprint64(item).to_bytes(8, "little") for item in items)
    return np.ascontiguousarray(row).astype(row.dtype.newbyteorder("<"), copy=False).tobytes()


def fingerprint(data: Any, method: str = "farmhash64", name: Optional[str] = None) -> torch.Tensor:
    """A [rows, 8] uint8 tensor: the Fingerprint64 of each data[i] (its bytes; strings by their contents), the
    same bytes TF gives.

    >>> fingerprint(torch.tensor([[1, 2]], dtype=torch.int32)).tolist()
    [[76, 18, 253, 133, 168, 204, 240, 10]]
    """
    if method != "farmhash64":
        raise ValueError(f"tf.fingerprint: method must be 'farmhash64', got {method!r}.")
    if isinstance(data, np.ndarray) and data.dtype.kind in "OSU":
        array = data.astype(object)
    else:
        array = torch.Tensor.detach(to_tensor(data, op="tf.fingerprint")).cpu().numpy()
    if array.ndim < 1:
        raise ValueError("tf.fingerprint needs data of rank >= 1 (one fingerprint per row).")
    rows = [fingerprint64(_row_bytes(array[i])).to_bytes(8, "little") for i in range(array.shape[0])]
    out = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), 8)
    return torch.from_numpy(out.copy())
