"""Small numeric conventions shared by the Keras layer: float type, fuzz factor, conversion.
Mirrors `keras.backend` (floatx, epsilon, clear_session) for what scripts actually call."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from torchstrategy import _context, dtypes


def floatx() -> str:
    """The default float type name ('float32'), as `keras.backend.floatx()`."""
    return _context.keras_setting("floatx")


def epsilon() -> float:
    """The fuzz factor Keras uses in losses and metrics (1e-7)."""
    return _context.keras_setting("epsilon")


def clear_session(free_memory: bool = True) -> None:
    """Resets default layer names, as `keras.backend.clear_session()` does; with `free_memory` (Keras 3's
    default) Python's garbage collector runs too."""
    _context.reset_names()
    if free_memory:
        import gc

        gc.collect()


def to_torch_dtype(dtype: Any) -> torch.dtype:
    """Maps 'float32', np.float32, torch.float32 ... to a torch dtype; None means floatx()."""
    return dtypes.as_dtype(floatx() if dtype is None else dtype)


def to_tensor(value: Any, dtype: Any = None) -> torch.Tensor:
    """Converts NumPy arrays, Python numbers and lists to torch tensors (no copy when possible)."""
    if isinstance(value, torch.Tensor):
        return value if dtype is None else value.to(to_torch_dtype(dtype))
    if isinstance(value, np.ndarray):
        if not value.flags.writeable or not value.flags.c_contiguous:
            value = np.ascontiguousarray(value).copy()
        tensor = torch.from_numpy(value)
    else:
        tensor = torch.as_tensor(value)
    return tensor if dtype is None else tensor.to(to_torch_dtype(dtype))


def full_value(tensor: torch.Tensor) -> torch.Tensor:
    """A variable's whole value as a plain tensor: a sharded one (DTensor) is gathered from every replica
    (a collective: every replica must call it), others are returned as they are, detached."""
    from torch.distributed.tensor import DTensor

    if isinstance(tensor, DTensor):
        from torchstrategy.distribute.parts.progress import job_collective

        with job_collective("gather of a sharded weight"):
            return tensor.detach().full_tensor()
    return tensor.detach()


def assign_full(target: torch.Tensor, value: torch.Tensor) -> None:
    """Copies a whole value into a variable; a sharded variable keeps only its own shard of it."""
    from torchstrategy.distribute.parts.sharding import is_sharded, placed_like

    with torch.no_grad():
        if is_sharded(target):
            target.copy_(placed_like(value, target))
        else:
            target.copy_(value.to(target.dtype))


# The legacy `keras.backend` functions (K.mean, K.set_value, ...) live in their own module; re-exported here
# so `tf.keras.backend.<name>` finds them. Imported last, after the functions that module reads on use.
from torchstrategy.keras._legacy_backend import *  # noqa: E402,F401,F403
