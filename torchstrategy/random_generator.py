"""`tf.random.Generator` on TF's Philox state ([counter_lo, counter_hi, key], int64): uniform, normal, truncated
normal and full-range ints give TF's numbers, and each call moves the counter on as TF's does."""
from __future__ import annotations

import enum
import os
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy._machinery import philox
from torchstrategy.dtypes import as_dtype
from torchstrategy.stateless_random import check_alg

_STATE_SIZE = 3  # Philox: two counter words and the key, each 64 bits
#: How far one op moves the counter per output element (TF's reserve of 256 blocks per element).
_SKIP_PER_ELEMENT = 256


class Algorithm(enum.Enum):
    """The counter-based RNG algorithms TF names (only PHILOX streams are produced here)."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def create_rng_state(seed: Any, alg: Any) -> torch.Tensor:
    """The int64 state [3] an RNG of `alg` starts from for `seed`: an int is cut into 64-bit words, low first;
    a shorter list is padded with zeros on the left, as TF does."""
    check_alg(alg, "tf.random.create_rng_state")
    if isinstance(seed, (int, np.integer)):
        value, words = int(seed), []
        for _ in range(_STATE_SIZE):
            words.append(value & (2**64 - 1))
            value >>= 64
    else:
        words = [int(v) % 2**64 for v in (seed.tolist() if isinstance(seed, (torch.Tensor, np.ndarray)) else seed)]
        words = words[:_STATE_SIZE]
        words = [0] * (_STATE_SIZE - len(words)) + words
    signed = [w - 2**64 if w >= 2**63 else w for w in words]
    return torch.tensor(signed, dtype=torch.int64)


def _split64(value: int) -> tuple:
    value %= 2**64
    return value & 0xFFFFFFFF, value >> 32


class Generator:
    """tf.random.Generator: a Philox stream held in `state`; from_seed(s) gives TF's numbers for s.

    >>> g = Generator.from_seed(1)
    >>> g.normal([2]).shape
    torch.Size([2])
    """

    def __init__(self, copy_from: Optional["Generator"] = None, state: Any = None, alg: Any = None):
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("Generator: give copy_from alone, or state and alg.")
            self._state, self._alg = copy_from.state.clone(), copy_from.algorithm
            return
        if state is None:
            raise ValueError("Generator: give copy_from or state (or use Generator.from_seed / "
                             "from_non_deterministic_state).")
        self._alg = check_alg(Algorithm.PHILOX if alg is None else alg, "tf.random.Generator")
        self._state = create_rng_state(state, self._alg)

    @classmethod
    def from_seed(cls, seed: Any, alg: Any = None) -> "Generator":
        """A generator whose stream is fixed by `seed` (an int or ints)."""
        return cls(state=create_rng_state(seed, Algorithm.PHILOX if alg is None else alg), alg=alg)

    @classmethod
    def from_state(cls, state: Any, alg: Any) -> "Generator":
        """A generator starting from `state` ([counter_lo, counter_hi, key])."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key: Any, counter: Any, alg: Any) -> "Generator":
        """A generator with Philox `key` (an int) and `counter` (two ints)."""
        words = [int(c) for c in (counter.tolist() if isinstance(counter, torch.Tensor) else counter)]
        return cls(state=words + [int(key)], alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> "Generator":
        """A generator started from the operating system's entropy."""
        words = [int.from_bytes(os.urandom(8), "little") for _ in range(_STATE_SIZE)]
        return cls(state=words, alg=alg)

    @property
    def state(self) -> torch.Tensor:
        """The int64 state [counter_lo, counter_hi, key] (a copy)."""
        return self._state.clone()

    @property
    def algorithm(self) -> int:
        """1 (Philox)."""
        return self._alg

    @property
    def key(self) -> torch.Tensor:
        """The Philox key (the state's last word)."""
        return self._state[-1].clone()

    def reset(self, state: Any) -> None:
        """Replaces the state."""
        self._state = create_rng_state(state, self._alg)

    def reset_from_seed(self, seed: Any) -> None:
        """Restarts the stream as `from_seed(seed)` would."""
        self._state = create_rng_state(seed, self._alg)

    def reset_from_key_counter(self, key: Any, counter: Any) -> None:
        """Restarts the stream at Philox `key` and `counter`."""
        self._state = Generator.from_key_counter(key, counter, self._alg).state

    def skip(self, delta: int) -> torch.Tensor:
        """Moves the stream on as `delta` drawn numbers would; returns the state from before."""
        before = self.state
        self._advance(int(delta))
        return before

    def _key_counter(self) -> tuple:
        low, high, key = self._state.tolist()
        c0, c1 = _split64(low)
        c2, c3 = _split64(high)
        return _split64(key), (c0, c1, c2, c3)

    def _advance(self, elements: int) -> None:
        low, high, key = (v % 2**64 for v in self._state.tolist())
        total = (high << 64 | low) + elements * _SKIP_PER_ELEMENT
        low, high = total % 2**64, (total >> 64) % 2**64
        self._state = create_rng_state([low, high, key], self._alg)

    def _draw(self, shape: Any, make: Any) -> torch.Tensor:
        size = tuple(int(s) for s in (shape.tolist() if isinstance(shape, torch.Tensor) else
                                      ([shape] if isinstance(shape, int) else shape)))
        count = int(np.prod(size)) if size else 1
        key, counter = self._key_counter()
        values = make(key, counter, count)
        self._advance(count)
        return torch.from_numpy(np.ascontiguousarray(values)).reshape(size)

    def uniform(self, shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = torch.float32,
                name: Optional[str] = None) -> torch.Tensor:
        """Uniform numbers in [minval, maxval) (maxval defaults to 1 for floats; integer dtypes need it)."""
        out = as_dtype(dtype)
        if out in (torch.int32, torch.int64):
            if maxval is None:
                raise ValueError("Generator.uniform: integer dtypes need maxval (minval defaults to 0).")
            low, high = int(minval), int(maxval)
            if high <= low:
                raise ValueError(f"Generator.uniform: need minval < maxval, got [{low}, {high}).")
            bits64 = out == torch.int64
            return self._draw(shape, lambda k, c, n: philox.uniform_int(k, c, n, low, high, bits64)).to(out)
        kinds = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
                 torch.float64: "float64"}
        if out not in kinds:
            raise ValueError(f"Generator.uniform: dtype must be a float or int dtype, got {dtype!r}.")
        unit = self._draw(shape, lambda k, c, n: philox.uniform_unit(k, c, n, kinds[out])).to(out)
        high = 1 if maxval is None else maxval
        low_t, high_t = torch.as_tensor(minval).to(out), torch.as_tensor(high).to(out)
        return unit * (high_t - low_t) + low_t

    def uniform_full_int(self, shape: Any, dtype: Any = torch.uint64, name: Optional[str] = None) -> torch.Tensor:
        """Integers over the whole range of `dtype` (int32, int64, uint32 or uint64)."""
        out = as_dtype(dtype)
        if out not in (torch.int32, torch.int64, torch.uint32, torch.uint64):
            raise ValueError(f"Generator.uniform_full_int: dtype must be an int dtype, got {dtype!r}.")
        bits64 = out in (torch.int64, torch.uint64)
        raw = self._draw(shape, lambda k, c, n: philox.full_int(k, c, n, bits64))
        return raw.to(out) if out in (torch.int32, torch.int64) else raw.view(out)

    def normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = torch.float32,
               name: Optional[str] = None) -> torch.Tensor:
        """Normal numbers with the given mean and standard deviation."""
        out = as_dtype(dtype)
        kind = "float64" if out == torch.float64 else "float32"
        draws = self._draw(shape, lambda k, c, n: philox.normal(k, c, n, kind)).to(out)
        return draws * torch.as_tensor(stddev).to(out) + torch.as_tensor(mean).to(out)

    def truncated_normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = torch.float32,
                         name: Optional[str] = None) -> torch.Tensor:
        """Normal numbers redrawn until within two standard deviations of the mean."""
        out = as_dtype(dtype)
        draws = self._draw(shape, philox.truncated_normal).to(out)
        return draws * torch.as_tensor(stddev).to(out) + torch.as_tensor(mean).to(out)

    def binomial(self, shape: Any, counts: Any, probs: Any, dtype: Any = torch.int32,
                 name: Optional[str] = None) -> torch.Tensor:
        """Binomial(counts, probs) samples (seeded from this stream; not TF's numbers)."""
        from torchstrategy.stateless_random import stateless_binomial
        return stateless_binomial(shape, self.make_seeds(1)[:, 0], counts, probs, output_dtype=dtype)

    def make_seeds(self, count: int = 1) -> torch.Tensor:
        """An int64 [2, count] tensor of seed pairs for the stateless functions ([key, 0] per column)."""
        keys = self.uniform_full_int([int(count)], dtype=torch.int64)
        return torch.stack([keys, torch.zeros_like(keys)])

    def split(self, count: int = 1) -> list:
        """`count` new generators, each with a key drawn from this stream and a zero counter."""
        keys = self.uniform_full_int([int(count)], dtype=torch.int64).tolist()
        return [Generator(state=[0, 0, key], alg=self._alg) for key in keys]


def get_global_generator() -> Generator:
    """The process's global Generator (made from OS entropy on first use)."""
    generator = _context.global_rng_generator()
    if generator is None:
        generator = Generator.from_non_deterministic_state()
        _context.set_global_rng_generator(generator)
    return generator


def set_global_generator(generator: Generator) -> None:
    """Makes `generator` the process's global Generator."""
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator needs a tf.random.Generator, got {type(generator).__name__}.")
    _context.set_global_rng_generator(generator)
