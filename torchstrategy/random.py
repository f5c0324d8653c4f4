"""`tf.random`: one call seeds every generator a training script touches (Python, NumPy, torch CPU and
CUDA) and the stateful samplers; the stateless family (TF's Philox numbers), Generator and the candidate samplers
live in their own modules and are named here."""
from __future__ import annotations

import contextlib
import hashlib
import random as _py_random
from typing import Any, Iterator, Optional

import numpy as np
import torch

from torchstrategy.candidate_sampling import (all_candidate_sampler, fixed_unigram_candidate_sampler,  # noqa: F401
                                             learned_unigram_candidate_sampler, log_uniform_candidate_sampler,
                                             uniform_candidate_sampler)
from torchstrategy.dtypes import as_dtype
from torchstrategy.random_generator import (Algorithm, Generator, create_rng_state, get_global_generator,  # noqa: F401
                                           set_global_generator)
from torchstrategy.stateless_random import (fold_in, split, stateless_binomial, stateless_categorical,  # noqa: F401
                                           stateless_gamma, stateless_normal, stateless_parameterized_truncated_normal,
                                           stateless_poisson, stateless_truncated_normal, stateless_uniform)
from torchstrategy import random_experimental as experimental  # noqa: F401  (tf.random.experimental)


def set_seed(seed: int) -> None:
    """Seeds Python's `random`, NumPy and torch (all devices), as `tf.random.set_seed` +
    `keras.utils.set_random_seed` do, so layer initialisation and shuffling repeat."""
    seed = int(seed)
    _py_random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def _generator(seed: Optional[int]) -> Optional[torch.Generator]:
    return None if seed is None else torch.Generator().manual_seed(int(seed))


def _shape(shape: Any) -> tuple:
    if isinstance(shape, (torch.Tensor, np.ndarray)):
        shape = shape.tolist()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(size) for size in shape)


def _float_dtype(dtype: Any, op: str) -> torch.dtype:
    resolved = as_dtype(dtype)
    if not resolved.is_floating_point:
        raise ValueError(f"{op}: dtype must be a float dtype (float16, bfloat16, float32, float64), got {dtype!r}.")
    return resolved


def _uniform(shape: tuple, minval: Any, maxval: Any, dtype: Any, generator: Optional[torch.Generator],
             op: str) -> torch.Tensor:
    resolved = as_dtype(dtype)
    if resolved in (torch.int32, torch.int64):
        if maxval is None:
            raise ValueError(f"{op}: integer dtype {resolved} needs maxval (minval defaults to 0), as in TF.")
        low, high = int(minval), int(maxval)
        if high <= low:
            raise ValueError(f"{op}: need minval < maxval for integers, got [{low}, {high}).")
        return torch.randint(low, high, shape, generator=generator, dtype=resolved)
    resolved = _float_dtype(dtype, op)
    high = 1.0 if maxval is None else maxval
    # Sample in float32/float64 and scale there, so half-precision outputs keep their range.
    base = torch.float64 if resolved == torch.float64 else torch.float32
    unit = torch.rand(shape, generator=generator, dtype=base)
    return (unit * (_as_float(high, base) - _as_float(minval, base)) + _as_float(minval, base)).to(resolved)


def _as_float(value: Any, dtype: torch.dtype) -> Any:
    return value.to(dtype) if isinstance(value, torch.Tensor) else torch.as_tensor(np.asarray(value), dtype=dtype)


def _normal(shape: tuple, mean: Any, stddev: Any, dtype: Any, generator: Optional[torch.Generator],
            op: str) -> torch.Tensor:
    resolved = _float_dtype(dtype, op)
    base = torch.float64 if resolved == torch.float64 else torch.float32
    draws = torch.randn(shape, generator=generator, dtype=base)
    return (draws * _as_float(stddev, base) + _as_float(mean, base)).to(resolved)


def _truncated_normal(shape: tuple, mean: Any, stddev: Any, dtype: Any, generator: Optional[torch.Generator],
                      op: str) -> torch.Tensor:
    resolved = _float_dtype(dtype, op)
    base = torch.float64 if resolved == torch.float64 else torch.float32
    draws = torch.randn(shape, generator=generator, dtype=base)
    # Redraw anything beyond two standard deviations, as TF's truncated normal does.
    outside = draws.abs() > 2
    while bool(outside.any()):
        draws[outside] = torch.randn(int(outside.sum()), generator=generator, dtype=base)
        outside = draws.abs() > 2
    return (draws * _as_float(stddev, base) + _as_float(mean, base)).to(resolved)


def _categorical(logits: Any, num_samples: int, dtype: Any, generator: Optional[torch.Generator],
                 op: str) -> torch.Tensor:
    table = logits if isinstance(logits, torch.Tensor) else torch.as_tensor(np.asarray(logits, dtype=np.float32))
    if table.dim() != 2:
        raise ValueError(f"{op}: logits must be [batch_size, num_classes], got shape {tuple(table.shape)}.")
    out_dtype = as_dtype(dtype)
    if out_dtype not in (torch.int32, torch.int64):
        raise ValueError(f"{op}: dtype must be int32 or int64, got {dtype!r}.")
    probs = torch.softmax(table.to(torch.float64), dim=-1)
    return torch.multinomial(probs, int(num_samples), replacement=True, generator=generator).to(out_dtype)


def uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = torch.float32,
            seed: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:
    """Uniform samples in [minval, maxval) (maxval defaults to 1 for floats; integer dtypes need it).

    >>> uniform([3], maxval=5, dtype=torch.int32, seed=1).dtype
    torch.int32
    """
    return _uniform(_shape(shape), minval, maxval, dtype, _generator(seed), "tf.random.uniform")


def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = torch.float32,
           seed: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:
    """Normal samples with the given mean and standard deviation."""
    return _normal(_shape(shape), mean, stddev, dtype, _generator(seed), "tf.random.normal")


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = torch.float32,
                     seed: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:
    """Normal samples redrawn until they lie within two standard deviations of the mean."""
    return _truncated_normal(_shape(shape), mean, stddev, dtype, _generator(seed), "tf.random.truncated_normal")


def categorical(logits: Any, num_samples: int, dtype: Any = None, seed: Optional[int] = None,
                name: Optional[str] = None) -> torch.Tensor:
    """`num_samples` class indices per row of `logits` ([batch, classes], unnormalised log-probabilities);
    int64 unless `dtype` says otherwise."""
    dtype = torch.int64 if dtype is None else dtype
    return _categorical(logits, num_samples, dtype, _generator(seed), "tf.random.categorical")


def shuffle(value: Any, seed: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:
    """`value` with its first dimension randomly permuted."""
    tensor = value if isinstance(value, torch.Tensor) else torch.as_tensor(np.asarray(value))
    return tensor[torch.randperm(tensor.shape[0], generator=_generator(seed))]


def gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = torch.float32, seed: Optional[int] = None,
          name: Optional[str] = None) -> torch.Tensor:
    """Gamma(alpha, rate=beta) samples of shape `shape + broadcast(alpha, beta).shape`, as TF."""
    resolved = _float_dtype(dtype, "tf.random.gamma")
    concentration = _as_float(alpha, torch.float64)
    rate = torch.ones_like(concentration) if beta is None else _as_float(beta, torch.float64)
    concentration, rate = torch.broadcast_tensors(concentration, rate)
    full = _shape(shape) + tuple(concentration.shape)
    # torch's gamma sampler has no generator argument: draw inside a forked RNG when a seed is given.
    with _seeded(seed):
        draws = torch._standard_gamma(concentration.expand(full).contiguous())
    return (draws / rate).to(resolved)


def poisson(shape: Any, lam: Any, dtype: Any = torch.float32, seed: Optional[int] = None,
            name: Optional[str] = None) -> torch.Tensor:
    """Poisson(lam) samples of shape `shape + lam.shape`, as `dtype` (float or int)."""
    rates = _as_float(lam, torch.float64)
    full = _shape(shape) + tuple(rates.shape)
    with _seeded(seed):
        draws = torch.poisson(rates.expand(full).contiguous())
    return draws.to(as_dtype(dtype))


@contextlib.contextmanager
def _seeded(seed: Optional[int]) -> Iterator[None]:
    """Runs a block under a fixed CPU seed and then puts the global CPU stream back (None: no change)."""
    if seed is None:
        yield
        return
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(int(seed))
        yield


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


def rng_fingerprint() -> int:
    """A 63-bit number that depends on the state of every global generator of this process (as
    `get_rng_state` captures it), read without drawing from any of them."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(repr(_py_random.getstate()).encode())
    kind, keys, position, has_gauss, gauss = np.random.get_state()
    digest.update(f"{kind}/{position}/{has_gauss}/{gauss}".encode() + np.ascontiguousarray(keys).tobytes())
    digest.update(torch.get_rng_state().numpy().tobytes())
    return int.from_bytes(digest.digest(), "little") >> 1


def set_derived_seed(seed: int, *keys: int) -> None:
    """Seeds every global generator (as `set_seed`) from `seed` and `keys` mixed by a hash: the same
    arguments give the same streams in any process, other keys give unrelated ones."""
    text = "/".join(str(int(part)) for part in (seed, *keys))
    digest = hashlib.blake2b(f"torchstrategy.derived_seed/{text}".encode(), digest_size=8).digest()
    set_seed(int.from_bytes(digest, "little") >> 1)
