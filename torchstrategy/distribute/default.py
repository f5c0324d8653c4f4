"""The default strategy: what `get_strategy()` returns outside any scope (one replica on the
first CUDA GPU if there is one, else the CPU), as TF's default strategy does."""
from __future__ import annotations

import contextlib
from typing import Iterator

import torch

from torchstrategy.distribute.strategy import Strategy


class DefaultStrategy(Strategy):
    """One replica on the default device; entering its scope does not make `has_strategy()` true."""

    def __init__(self) -> None:
        super().__init__(self._wired(torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")))

    @contextlib.contextmanager
    def scope(self) -> Iterator["Strategy"]:
        yield self
