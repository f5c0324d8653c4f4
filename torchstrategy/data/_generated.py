"""Generated Dataset sources: `Dataset.random` (tf.data.experimental.RandomDataset: endless pseudorandom int64
scalars) and `Dataset.counter` (start, start + step, ...), attached to Dataset by dataset.py."""
from __future__ import annotations

import random
import threading
from typing import Any, Iterator, Optional

import torch

from torchstrategy.data import _state, _structure
from torchstrategy.data._structure import TensorSpec
from torchstrategy.data.dataset import INFINITE_CARDINALITY, Dataset
from torchstrategy.dtypes import as_dtype


class RandomDataset(Dataset):
    """`tf.data.experimental.RandomDataset(seed=None, rerandomize_each_iteration=None)`: an endless stream of
    pseudorandom int64 scalars in [0, 2**32), as TF's (the numbers themselves are this library's own stream,
    not TF's Philox output).

    The same seed gives the same stream. Without a seed one is drawn from torch's global generator when the
    dataset is built (torch.manual_seed / tf.random.set_seed first makes it repeatable). Every pass repeats the
    stream unless rerandomize_each_iteration=True, which gives pass k its own stream.

    >>> a = [int(x) for x in Dataset.random(seed=4).take(3)]
    >>> a == [int(x) for x in Dataset.random(seed=4).take(3)]
    True
    """

    def __init__(self, seed: Optional[int] = None, rerandomize_each_iteration: Optional[bool] = None,
                 name: Optional[str] = None):
        super().__init__()
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            if isinstance(seed, torch.Tensor) and seed.dim() == 0:
                seed = int(seed)
            else:
                raise TypeError(f"Dataset.random: seed must be an int or None, got {seed!r}.")
        self._seed = int(seed) if seed is not None else int(torch.randint(0, 2**62, (1,)).item())
        self._rerandomize = bool(rerandomize_each_iteration)
        self._passes = 0
        self._lock = threading.Lock()

    def _take_pass(self) -> int:
        with self._lock:
            current = self._passes if self._rerandomize else 0
            if self._rerandomize and not _structure.is_peeking():
                self._passes += 1
        return current

    def _iterate_elements(self) -> Iterator[Any]:
        rng = random.Random(f"torchstrategy.random/{self._seed}/{self._take_pass()}")
        while True:
            yield torch.tensor(rng.getrandbits(32), dtype=torch.int64)

    def _cardinality(self) -> int:
        return INFINITE_CARDINALITY

    def _spec(self, peek: bool = False) -> Any:
        return TensorSpec((), torch.int64)

    def _state_config(self) -> dict:
        return {"rerandomize_each_iteration": self._rerandomize}

    def _op_state(self) -> Optional[dict]:
        return {"seed": self._seed, "passes": self._passes}

    def _op_state_loader(self, state: Any, where: str) -> Any:
        if not isinstance(state, dict):
            raise ValueError(f"{where}: the state has no seed/pass counter for a RandomDataset; it comes from a "
                             f"different pipeline or is damaged.")
        seed = _state.check_int(state.get("seed"), where, "the random seed")
        passes = _state.check_int(state.get("passes"), where, "the random pass counter")

        def apply() -> None:
            with self._lock:
                self._seed, self._passes = seed, passes
        return apply


def random_dataset(seed: Optional[int] = None, rerandomize_each_iteration: Optional[bool] = None,
                   name: Optional[str] = None) -> Dataset:
    """`Dataset.random(seed=None, rerandomize_each_iteration=None)`: endless pseudorandom int64 scalars in
    [0, 2**32) (see RandomDataset)."""
    return RandomDataset(seed, rerandomize_each_iteration, name)


def counter(start: Any = 0, step: Any = 1, dtype: Any = torch.int64, name: Optional[str] = None) -> Dataset:
    """`Dataset.counter(start=0, step=1, dtype=tf.int64)`: start, start + step, start + 2 * step, ... forever.

    >>> [int(x) for x in Dataset.counter(start=2, step=5).take(3)]
    [2, 7, 12]
    """
    kind = as_dtype(dtype)
    begin, stride = torch.as_tensor(start), torch.as_tensor(step)

    def value(n: torch.Tensor, _: Any) -> torch.Tensor:
        return (begin + n * stride).to(kind)

    return Dataset.range(1).repeat().enumerate().map(value)
