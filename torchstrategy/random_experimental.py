"""`tf.random.experimental`: the Generator API and stateless helpers under their experimental names, plus
index_shuffle and stateless_shuffle (seeded permutations; TF's own orders are not reproduced)."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from torchstrategy.random_generator import (Algorithm, Generator, create_rng_state, get_global_generator,
                                            set_global_generator)
from torchstrategy.stateless_random import fold_in, split, stateless_shuffle, torch_generator

__all__ = ["Algorithm", "Generator", "create_rng_state", "get_global_generator", "set_global_generator",
           "index_shuffle", "stateless_fold_in", "stateless_shuffle", "stateless_split"]


def stateless_split(seed: Any, num: int = 2, alg: Any = "auto_select") -> torch.Tensor:
    """Same as tf.random.split."""
    return split(seed, num, alg)


def stateless_fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> torch.Tensor:
    """Same as tf.random.fold_in."""
    return fold_in(seed, data, alg)


def index_shuffle(index: Any, seed: Any, max_index: Any) -> torch.Tensor:
    """The position of each `index` in a permutation of [0, max_index] fixed by the 3 ints of `seed` (a bijection
    for one seed; not TF's permutation). Builds the permutation, so max_index must fit in memory."""
    op = "tf.random.experimental.index_shuffle"
    words = seed.tolist() if isinstance(seed, (torch.Tensor, np.ndarray)) else list(seed)
    if len(words) != 3:
        raise ValueError(f"{op}: seed must hold 3 ints, got {seed!r}.")
    top = int(max_index.item() if isinstance(max_index, torch.Tensor) else max_index)
    if not 0 <= top < 2**26:
        raise ValueError(f"{op}: max_index must lie in [0, 2**26) here (the permutation is built), got {top}.")
    values = index if isinstance(index, torch.Tensor) else torch.as_tensor(np.asarray(index))
    if values.numel() and (int(values.min()) < 0 or int(values.max()) > top):
        raise ValueError(f"{op}: every index must lie in [0, max_index={top}].")
    generator = torch_generator([int(words[0]) ^ (int(words[2]) << 20), int(words[1])], op)
    perm = torch.randperm(top + 1, generator=generator)
    return perm[values.long()].to(values.dtype)
