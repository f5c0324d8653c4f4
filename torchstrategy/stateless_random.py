"""tf.random's stateless family on TF's Philox streams: uniform (float and int), normal and truncated normal give
TF's own numbers for a seed pair; categorical, gamma, poisson, binomial and shuffle are seeded from it."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._machinery import philox
from torchstrategy.dtypes import as_dtype

_UNIT_KINDS = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
               torch.float64: "float64"}
_INT_DTYPES = (torch.int32, torch.int64, torch.uint32, torch.uint64)
_ALGS = {"auto_select": 3, "philox": 1, "threefry": 2, 1: 1, 2: 2, 3: 3}


def seed_pair(seed: Any, op: str) -> tuple:
    """The two ints of a stateless seed (shape [2]); anything else is refused as TF does."""
    pair = seed.tolist() if isinstance(seed, (torch.Tensor, np.ndarray)) else seed
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise ValueError(f"{op}: seed must be a pair of ints (shape [2]), e.g. seed=[1, 2]; got {seed!r}.")
    return int(pair[0]), int(pair[1])


def check_alg(alg: Any, op: str) -> int:
    """TF's algorithm number for `alg` (names, numbers, tf.random.Algorithm); only Philox streams are made."""
    key = getattr(alg, "value", alg)
    key = key.lower() if isinstance(key, str) else key
    if key not in _ALGS:
        raise ValueError(f"{op}: unknown alg {alg!r}; use 'auto_select', 'philox' or 'threefry'.")
    if _ALGS[key] == 2:
        raise NotImplementedError(f"{op}: the ThreeFry algorithm is not provided; use 'philox' or 'auto_select' "
                                  "(which is Philox on CPU, as in TF).")
    return _ALGS[key]


def _shape(shape: Any) -> tuple:
    if isinstance(shape, (torch.Tensor, np.ndarray)):
        shape = shape.tolist()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(size) for size in shape)


def _count(shape: tuple) -> int:
    return int(np.prod(shape)) if shape else 1


def _scalar(value: Any, dtype: torch.dtype) -> torch.Tensor:
    return value.to(dtype) if isinstance(value, torch.Tensor) else torch.as_tensor(np.asarray(value)).to(dtype)


def stateless_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None, dtype: Any = torch.float32,
                      name: Optional[str] = None, alg: Any = "auto_select") -> torch.Tensor:
    """TF's numbers for this seed pair: floats in [minval, maxval) (maxval defaults to 1), integers in
    [minval, maxval) for int dtypes (minval=None and maxval=None: the dtype's full range)."""
    op = "tf.random.stateless_uniform"
    check_alg(alg, op)
    out_dtype = as_dtype(dtype)
    size = _shape(shape)
    key, counter = philox.key_counter(*seed_pair(seed, op))
    n = _count(size)
    if out_dtype in _INT_DTYPES:
        bits64 = out_dtype in (torch.int64, torch.uint64)
        if minval is None and maxval is None:
            raw = philox.full_int(key, counter, n, bits64)
            return torch.from_numpy(raw.copy()).to(out_dtype).reshape(size)
        if minval is None or maxval is None:
            raise ValueError(f"{op}: integer dtype {out_dtype} needs maxval (and minval), or neither for the full "
                             "range (TF: 'Must specify maxval for integer dtype').")
        low, high = int(_scalar(minval, torch.int64)), int(_scalar(maxval, torch.int64))
        if high <= low:
            raise ValueError(f"{op}: need minval < maxval, got [{low}, {high}).")
        raw = philox.uniform_int(key, counter, n, low, high, bits64)
        return torch.from_numpy(raw).to(out_dtype).reshape(size)
    if out_dtype not in _UNIT_KINDS:
        raise ValueError(f"{op}: dtype must be a float or int dtype, got {dtype!r}.")
    unit = torch.from_numpy(np.ascontiguousarray(philox.uniform_unit(key, counter, n, _UNIT_KINDS[out_dtype])))
    unit = unit.to(out_dtype).reshape(size)
    high = 1 if maxval is None else maxval
    low_t, high_t = _scalar(minval, out_dtype), _scalar(high, out_dtype)
    return unit * (high_t - low_t) + low_t


def stateless_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = torch.float32,
                     name: Optional[str] = None, alg: Any = "auto_select") -> torch.Tensor:
    """TF's normal numbers for this seed pair (Box-Muller over Philox), times stddev plus mean."""
    op = "tf.random.stateless_normal"
    check_alg(alg, op)
    out_dtype = as_dtype(dtype)
    if out_dtype not in _UNIT_KINDS:
        raise ValueError(f"{op}: dtype must be a float dtype, got {dtype!r}.")
    size = _shape(shape)
    key, counter = philox.key_counter(*seed_pair(seed, op))
    kind = "float64" if out_dtype == torch.float64 else "float32"
    draws = torch.from_numpy(np.ascontiguousarray(philox.normal(key, counter, _count(size), kind)))
    draws = draws.to(out_dtype).reshape(size)
    return draws * _scalar(stddev, out_dtype) + _scalar(mean, out_dtype)


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = torch.float32, name: Optional[str] = None,
                               alg: Any = "auto_select") -> torch.Tensor:
    """Normal numbers redrawn until within two standard deviations: TF's numbers for float32 (other float dtypes
    round the float32 draws, where TF draws in their own precision)."""
    op = "tf.random.stateless_truncated_normal"
    check_alg(alg, op)
    out_dtype = as_dtype(dtype)
    if out_dtype not in _UNIT_KINDS:
        raise ValueError(f"{op}: dtype must be a float dtype, got {dtype!r}.")
    size = _shape(shape)
    key, counter = philox.key_counter(*seed_pair(seed, op))
    draws = torch.from_numpy(philox.truncated_normal(key, counter, _count(size))).to(out_dtype).reshape(size)
    return draws * _scalar(stddev, out_dtype) + _scalar(mean, out_dtype)


def torch_generator(seed: Any, op: str) -> torch.Generator:
    """A torch generator fixed by the seed pair (through its Philox key), for the samplers whose TF streams are
    not reproduced: equal pairs give equal numbers in every process."""
    key, counter = philox.key_counter(*seed_pair(seed, op))
    return torch.Generator().manual_seed((key[0] << 32 | key[1]) ^ (counter[2] << 16) ^ counter[3])


def stateless_categorical(logits: Any, num_samples: int, seed: Any, dtype: Any = torch.int64,
                          name: Optional[str] = None) -> torch.Tensor:
    """`num_samples` class indices per row of [batch, classes] logits, fixed by the seed pair (not TF's numbers)."""
    op = "tf.random.stateless_categorical"
    table = logits if isinstance(logits, torch.Tensor) else torch.as_tensor(np.asarray(logits, dtype=np.float32))
    if table.dim() != 2:
        raise ValueError(f"{op}: logits must be [batch_size, num_classes], got shape {tuple(table.shape)}.")
    out_dtype = as_dtype(dtype)
    if out_dtype not in (torch.int32, torch.int64):
        raise ValueError(f"{op}: dtype must be int32 or int64, got {dtype!r}.")
    probs = torch.softmax(table.to(torch.float64), dim=-1)
    return torch.multinomial(probs, int(num_samples), replacement=True,
                             generator=torch_generator(seed, op)).to(out_dtype)


def _broadcast_params(shape: tuple, params: list, op: str) -> list:
    tensors = [_scalar(p, torch.float64) for p in params]
    try:
        return [t.expand(shape).contiguous() for t in tensors]
    except RuntimeError:
        raise ValueError(f"{op}: parameters of shapes {[tuple(t.shape) for t in tensors]} do not broadcast to the "
                         f"output shape {shape}.") from None


def stateless_gamma(shape: Any, seed: Any, alpha: Any, beta: Any = None, dtype: Any = torch.float32,
                    name: Optional[str] = None) -> torch.Tensor:
    """Gamma(alpha, rate=beta) samples of `shape` (which must end with the broadcast shape of alpha and beta),
    fixed by the seed pair (not TF's numbers)."""
    op = "tf.random.stateless_gamma"
    size = _shape(shape)
    concentration, rate = _broadcast_params(size, [alpha, 1.0 if beta is None else beta], op)
    gen = torch_generator(seed, op)
    draws = torch.distributions.Gamma(concentration, torch.ones_like(concentration))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 2**62, (), generator=gen)))
        values = draws.sample()
    return (values / rate).to(as_dtype(dtype))


def stateless_poisson(shape: Any, seed: Any, lam: Any, dtype: Any = torch.int32,
                      name: Optional[str] = None) -> torch.Tensor:
    """Poisson(lam) samples of `shape` (ending with lam's shape), fixed by the seed pair (not TF's numbers)."""
    op = "tf.random.stateless_poisson"
    (rates,) = _broadcast_params(_shape(shape), [lam], op)
    return torch.poisson(rates, generator=torch_generator(seed, op)).to(as_dtype(dtype))


def stateless_binomial(shape: Any, seed: Any, counts: Any, probs: Any, output_dtype: Any = torch.int32,
                       name: Optional[str] = None) -> torch.Tensor:
    """Binomial(counts, probs) samples of `shape`, fixed by the seed pair (not TF's numbers)."""
    op = "tf.random.stateless_binomial"
    total, prob = _broadcast_params(_shape(shape), [counts, probs], op)
    gen = torch_generator(seed, op)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(0, 2**62, (), generator=gen)))
        values = torch.binomial(total, prob)
    return values.to(as_dtype(output_dtype))


def stateless_parameterized_truncated_normal(shape: Any, seed: Any, means: Any = 0.0, stddevs: Any = 1.0,
                                             minvals: Any = -2.0, maxvals: Any = 2.0,
                                             name: Optional[str] = None) -> torch.Tensor:
    """Normal(means, stddevs) samples restricted to [minvals, maxvals] (inverse-CDF sampling), fixed by the seed
    pair (not TF's numbers)."""
    op = "tf.random.stateless_parameterized_truncated_normal"
    size = _shape(shape)
    mean, std, low, high = _broadcast_params(size, [means, stddevs, minvals, maxvals], op)
    if bool((high <= low).any()):
        raise ValueError(f"{op}: every minval must be below its maxval.")
    normal = torch.distributions.Normal(0.0, 1.0)
    lo_cdf, hi_cdf = normal.cdf((low - mean) / std), normal.cdf((high - mean) / std)
    unit = torch.rand(size, generator=torch_generator(seed, op), dtype=torch.float64)
    z = normal.icdf((lo_cdf + unit * (hi_cdf - lo_cdf)).clamp(1e-300, 1 - 1e-16))
    dtype = means.dtype if isinstance(means, torch.Tensor) and means.is_floating_point() else torch.float32
    return (mean + std * z).clamp(low, high).to(dtype)


def stateless_shuffle(value: Any, seed: Any, alg: Any = "auto_select", name: Optional[str] = None) -> torch.Tensor:
    """`value` with its first dimension permuted, the permutation fixed by the seed pair (not TF's order)."""
    op = "tf.random.experimental.stateless_shuffle"
    check_alg(alg, op)
    tensor = value if isinstance(value, torch.Tensor) else torch.as_tensor(np.asarray(value))
    if tensor.dim() == 0:
        raise ValueError(f"{op}: value must have rank >= 1.")
    return tensor[torch.randperm(tensor.shape[0], generator=torch_generator(seed, op))]


def _int_tensor(value: Any) -> torch.Tensor:
    """Ints as TF converts them: tensors and NumPy arrays keep their dtype, Python ints and lists become int32."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (np.ndarray, np.integer)):
        return torch.as_tensor(np.asarray(value))
    return torch.as_tensor(np.asarray(value, dtype=np.int64)).to(torch.int32)


def split(seed: Any, num: int = 2, alg: Any = "auto_select") -> torch.Tensor:
    """`num` new seed pairs [num, 2] drawn from `seed` (TF's numbers; the dtype of `seed`, int32 for lists)."""
    tensor = _int_tensor(seed)
    dtype = torch.int64 if tensor.dtype == torch.int64 else torch.int32
    return stateless_uniform([int(num), 2], tensor, minval=None, maxval=None, dtype=dtype, alg=alg)


def fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> torch.Tensor:
    """A new seed pair [draw from `seed`, data] that mixes `data` in (TF's numbers; data's dtype, int32 for ints)."""
    value = _int_tensor(data)
    if value.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"tf.random.fold_in: data must be int32 or int64, got {value.dtype}.")
    first = stateless_uniform([], seed, minval=None, maxval=None, dtype=value.dtype, alg=alg)
    return torch.stack([first, value.reshape(())])
