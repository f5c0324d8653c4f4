"""`tf.random`: one call seeds every generator a training script touches (Python, NumPy,
torch CPU and CUDA), plus the few sampling functions scripts use."""
from __future__ import annotations

import random as _py_random
from typing import Any, Optional, Sequence

import numpy as np
import torch


def set_seed(seed: int) -> None:
    """Seeds Python's `random`, NumPy and torch (all devices), as `tf.random.set_seed` +
    `keras.utils.set_random_seed` do, so layer initialisation and shuffling repeat."""
    seed = int(seed)
    _py_random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def _generator(seed: Optional[int]) -> Optional[torch.Generator]:
    return None if seed is None else torch.Generator().manual_seed(int(seed))


def uniform(shape: Sequence[int], minval: float = 0.0, maxval: float = 1.0, dtype: Any = torch.float32,
            seed: Optional[int] = None) -> torch.Tensor:
    """Uniform samples in [minval, maxval)."""
    return torch.rand(tuple(shape), generator=_generator(seed), dtype=dtype) * (maxval - minval) + minval


def normal(shape: Sequence[int], mean: float = 0.0, stddev: float = 1.0, dtype: Any = torch.float32,
           seed: Optional[int] = None) -> torch.Tensor:
    """Normal samples with the given mean and standard deviation."""
    return torch.randn(tuple(shape), generator=_generator(seed), dtype=dtype) * stddev + mean


def shuffle(value: torch.Tensor, seed: Optional[int] = None) -> torch.Tensor:
    """`value` with its first dimension randomly permuted."""
    return value[torch.randperm(value.shape[0], generator=_generator(seed))]


def get_rng_state() -> dict:
    """The state of every global generator this process uses (Python, NumPy, torch CPU and CUDA)."""
    state = {"python": _py_random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    """Puts back what `get_rng_state` captured, so random draws continue exactly from there."""
    _py_random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
