"""Keras weight initializers (Zeros ... GlorotUniform, Orthogonal) producing torch tensors,
with Keras fan rules, seeds, and `get`/`serialize`/`deserialize`, as `tf.keras.initializers`."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

import torch

from torchstrategy.keras._serialization import name_and_kwargs, serialize_object
from torchstrategy.keras import backend

# Standard deviation of a unit normal truncated to [-2, 2]; VarianceScaling divides by it so the
# truncated samples keep the requested variance.
_TRUNCATED_STDDEV_FACTOR = 0.87962566103423978


def _compute_fans(shape: Sequence[int]) -> tuple[float, float]:
    """(fan_in, fan_out) for Dense (in, out) and conv (..., in, out) kernels, as Keras."""
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = math.prod(shape[:-2])
    return float(shape[-2] * receptive), float(shape[-1] * receptive)


def _float_dtype(dtype: Any, who: str) -> torch.dtype:
    torch_dtype = backend.to_torch_dtype(dtype)
    if not torch_dtype.is_floating_point:
        raise ValueError(f"{who} can only fill floating-point weights, but was asked for dtype {torch_dtype}.")
    return torch_dtype


class Initializer:
    """Base class: `init(shape, dtype=None) -> torch.Tensor`, plus `get_config`/`from_config`."""

    def __call__(self, shape: Sequence[int], dtype: Any = None, **kwargs: Any) -> torch.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(shape, dtype=None).")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> "Initializer":
        config = dict(config)
        config.pop("dtype", None)  # Keras 1-style configs carry a dtype we take at call time
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        return f"{type(self).__name__}({args})"


class Zeros(Initializer):
    """All zeros."""

    def __call__(self, shape: Sequence[int], dtype: Any = None, **kwargs: Any) -> torch.Tensor:
        return torch.zeros(tuple(shape), dtype=backend.to_torch_dtype(dtype))


class Ones(Initializer):
    """All ones."""

    def __call__(self, shape: Sequence[int], dtype: Any = None, **kwargs: Any) -> torch.Tensor:
        return torch.ones(tuple(shape), dtype=backend.to_torch_dtype(dtype))


class Constant(Initializer):
    """Every element equal to `value`."""

    def __init__(self, value: float = 0.0) -> None:
        self.value = value

    def __call__(self, shape: Sequence[int], dtype: Any = None, **kwargs: Any) -> torch.Tensor:
        return torch.full(tuple(shape), float(self.value), dtype=backend.to_torch_dtype(dtype))

    def get_config(self) -> dict:
        return {"value": self.value}


class _RandomInitializer(Initializer):
    """Seeded -> a fresh `torch.Generator(seed)` per call (same values every call, as Keras 2);
    unseeded -> torch's global RNG, so `torch.manual_seed` makes runs reproducible."""

    def __init__(self, seed: Optional[int] = None) -> None:
        if seed is not None and not isinstance(seed, int):
            raise ValueError(f"{type(self).__name__}: seed must be an int or None, got {seed!r}.")
        self.seed = seed

    def _generator(self) -> Optional[torch.Generator]:
        return None if self.seed is None else torch.Generator().manual_seed(self.seed)

    def _sample(self, shape: tuple, dtype: torch.dtype, generator: Optional[torch.Generator]) -> torch.Tensor:
        raise NotImplementedError

    def __call__(self, shape: Sequence[int], dtype: Any = None, **kwargs: Any) -> torch.Tensor:
        target = _float_dtype(dtype, type(self).__name__)
        # Sample in float32 at least: low-precision CPU kernels (erfinv, qr) are not all available.
        work = torch.float64 if target == torch.float64 else torch.float32
        return self._sample(tuple(int(d) for d in shape), work, self._generator()).to(target)

    def get_config(self) -> dict:
        return {"seed": self.seed}


def _uniform(shape: tuple, low: float, high: float, dtype: torch.dtype, gen: Optional[torch.Generator]) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype).uniform_(low, high, generator=gen)


def _normal(shape: tuple, mean: float, std: float, dtype: torch.dtype, gen: Optional[torch.Generator]) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype).normal_(mean, std, generator=gen)


def _truncated_normal(shape: tuple, mean: float, std: float, dtype: torch.dtype, gen: Optional[torch.Generator]) -> torch.Tensor:
    out = torch.empty(shape, dtype=dtype)
    return torch.nn.init.trunc_normal_(out, mean, std, mean - 2 * std, mean + 2 * std, generator=gen)


class RandomNormal(_RandomInitializer):
    """Normal(mean, stddev); Keras defaults mean=0, stddev=0.05."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Optional[int] = None) -> None:
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def _sample(self, shape: tuple, dtype: torch.dtype, gen: Optional[torch.Generator]) -> torch.Tensor:
        return _normal(shape, self.mean, self.stddev, dtype, gen)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(_RandomInitializer):
    """Uniform[minval, maxval); Keras defaults -0.05, 0.05."""

    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: Optional[int] = None) -> None:
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def _sample(self, shape: tuple, dtype: torch.dtype, gen: Optional[torch.Generator]) -> torch.Tensor:
        return _uniform(shape, self.minval, self.maxval, dtype, gen)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    """Normal(mean, stddev) with samples beyond 2 stddev re-drawn; Keras default stddev 0.05."""

    def _sample(self, shape: tuple, dtype: torch.dtype, gen: Optional[torch.Generator]) -> torch.Tensor:
        return _truncated_normal(shape, self.mean, self.stddev, dtype, gen)


class VarianceScaling(_RandomInitializer):
    """Samples with variance `scale / n`, n = fan_in, fan_out or their average (`mode`).

    distribution: 'truncated_normal' (stddev corrected for the truncation), 'untruncated_normal',
    or 'uniform' (limit sqrt(3 * scale / n)). 'normal' means 'truncated_normal', as in Keras.
    """

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")

    def __init__(
        self, scale: float = 1.0, mode: str = "fan_in", distribution: str = "truncated_normal",
        seed: Optional[int] = None, input_axes: Optional[Sequence[int]] = None,
        output_axes: Optional[Sequence[int]] = None,
    ) -> None:
        super().__init__(seed)
        # Keras 3: with both given, fan_in/fan_out are the products of those axes of the weight's shape
        self.input_axes = None if input_axes is None else [int(a) for a in input_axes]
        self.output_axes = None if output_axes is None else [int(a) for a in output_axes]
        if scale <= 0.0:
            raise ValueError(f"VarianceScaling: scale must be a positive float, got {scale}.")
        if mode not in self._MODES:
            raise ValueError(f"VarianceScaling: invalid mode {mode!r}; valid modes are {list(self._MODES)}.")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(
                f"VarianceScaling: invalid distribution {distribution!r}; valid ones are {list(self._DISTRIBUTIONS)}."
            )
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def _sample(self, shape: tuple, dtype: torch.dtype, gen: Optional[torch.Generator]) -> torch.Tensor:
        if self.input_axes is not None and self.output_axes is not None:
            fan_in = math.prod(int(shape[a]) for a in self.input_axes)
            fan_out = math.prod(int(shape[a]) for a in self.output_axes)
        else:
            fan_in, fan_out = _compute_fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, fan)
        if self.distribution == "truncated_normal":
            return _truncated_normal(shape, 0.0, math.sqrt(variance) / _TRUNCATED_STDDEV_FACTOR, dtype, gen)
        if self.distribution == "untruncated_normal":
            return _normal(shape, 0.0, math.sqrt(variance), dtype, gen)
        limit = math.sqrt(3.0 * variance)
        return _uniform(shape, -limit, limit, dtype, gen)

    def get_config(self) -> dict:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed,
                "input_axes": self.input_axes, "output_axes": self.output_axes}


class _FixedVarianceScaling(VarianceScaling):
    """A VarianceScaling preset whose only argument is `seed` (GlorotUniform, HeNormal, ...)."""

    _PRESET: tuple = (1.0, "fan_in", "truncated_normal")

    def __init__(self, seed: Optional[int] = None, input_axes: Optional[Sequence[int]] = None,
                 output_axes: Optional[Sequence[int]] = None) -> None:
        super().__init__(*self._PRESET, seed=seed, input_axes=input_axes, output_axes=output_axes)

    def get_config(self) -> dict:
        return {"seed": self.seed, "input_axes": self.input_axes, "output_axes": self.output_axes}


class GlorotUniform(_FixedVarianceScaling):
    """Uniform[-limit, limit], limit = sqrt(6 / (fan_in + fan_out)). The Keras default kernel init."""

    _PRESET = (1.0, "fan_avg", "uniform")


class GlorotNormal(_FixedVarianceScaling):
    """Truncated normal, stddev = sqrt(2 / (fan_in + fan_out))."""

    _PRESET = (1.0, "fan_avg", "truncated_normal")


class HeNormal(_FixedVarianceScaling):
    """Truncated normal, stddev = sqrt(2 / fan_in)."""

    _PRESET = (2.0, "fan_in", "truncated_normal")


class HeUniform(_FixedVarianceScaling):
    """Uniform[-limit, limit], limit = sqrt(6 / fan_in)."""

    _PRESET = (2.0, "fan_in", "uniform")


class LecunNormal(_FixedVarianceScaling):
    """Truncated normal, stddev = sqrt(1 / fan_in)."""

    _PRESET = (1.0, "fan_in", "truncated_normal")


class LecunUniform(_FixedVarianceScaling):
    """Uniform[-limit, limit], limit = sqrt(3 / fan_in)."""

    _PRESET = (1.0, "fan_in", "uniform")


class Orthogonal(_RandomInitializer):
    """`gain` times a random orthogonal matrix (rows = prod(shape[:-1]), columns = shape[-1])."""

    def __init__(self, gain: float = 1.0, seed: Optional[int] = None) -> None:
        super().__init__(seed)
        self.gain = gain

    def _sample(self, shape: tuple, dtype: torch.dtype, gen: Optional[torch.Generator]) -> torch.Tensor:
        if len(shape) < 2:
            raise ValueError(f"Orthogonal needs a shape with at least 2 dimensions, got {shape}.")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        flat = _normal((max(rows, cols), min(rows, cols)), 0.0, 1.0, dtype, gen)
        q, r = torch.linalg.qr(flat)
        q = q * torch.sign(torch.diagonal(r))  # makes the distribution uniform over orthogonal matrices
        if rows < cols:
            q = q.t()
        return (self.gain * q).reshape(shape).contiguous()

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed}


class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only, as Keras)."""

    def __init__(self, gain: float = 1.0) -> None:
        self.gain = gain

    def __call__(self, shape: Sequence[int], dtype: Any = None, **kwargs: Any) -> torch.Tensor:
        if len(shape) != 2:
            raise ValueError(f"Identity initializer needs a 2-D shape, got {tuple(shape)}.")
        return self.gain * torch.eye(int(shape[0]), int(shape[1]), dtype=_float_dtype(dtype, "Identity"))

    def get_config(self) -> dict:
        return {"gain": self.gain}



class STFT(Initializer):
    """Keras 3's STFT kernel initializer for shape (frame_length, 1, fft_length // 2 + 1): the cosine
    (side='real') or sine (side='imag') DFT basis times `window` (a name such as 'hann', an array, or None),
    divided by the window's L2 norm (scaling='density') or L1 norm ('spectrum'); `periodic` picks the
    periodic window (for spectral analysis) over the symmetric one."""

    def __init__(self, side: str = "real", window: Any = "hann", scaling: Optional[str] = "density",
                 periodic: bool = False) -> None:
        if side not in ("real", "imag"):
            raise ValueError(f"STFT initializer: side must be 'real' or 'imag', not {side!r}.")
        if isinstance(window, str):
            from torchstrategy.keras.layers.preprocessing_spectrogram import window_values

            window_values(window, 1, False)  # an unknown window name fails here, not at the first call
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(f"STFT initializer: scaling must be None, 'density' or 'spectrum'. "
                             f"Received scaling={scaling!r}")
        self.side, self.window, self.scaling, self.periodic = side, window, scaling, periodic

    def __call__(self, shape: Sequence[int], dtype: Any = None, **kwargs: Any) -> torch.Tensor:
        from torchstrategy.keras.layers.preprocessing_spectrogram import stft_kernel

        shape = tuple(int(d) for d in shape)
        if len(shape) != 3 or shape[1] != 1:
            raise ValueError(f"STFT initializer: shape must be (frame_length, 1, fft_length // 2 + 1), got {shape}.")
        frame_length, _, bins = shape
        kernel = stft_kernel(self.side, self.window, self.scaling, self.periodic, frame_length, (bins - 1) * 2,
                             dtype=torch.float64)
        return kernel.to(_float_dtype(dtype, "STFT"))

    def get_config(self) -> dict:
        return {"side": self.side, "window": self.window, "periodic": self.periodic, "scaling": self.scaling}

_CLASSES: dict[str, type] = {
    cls.__name__: cls
    for cls in (Zeros, Ones, Constant, RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling,
                GlorotUniform, GlorotNormal, HeNormal, HeUniform, LecunNormal, LecunUniform, Orthogonal, Identity, STFT)
}
_ALIASES: dict[str, type] = {
    "zeros": Zeros, "zero": Zeros, "ones": Ones, "one": Ones, "constant": Constant,
    "random_normal": RandomNormal, "normal": RandomNormal, "random_uniform": RandomUniform,
    "uniform": RandomUniform, "truncated_normal": TruncatedNormal, "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "he_normal": HeNormal,
    "he_uniform": HeUniform, "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform,
    "orthogonal": Orthogonal, "identity": Identity, "stft": STFT,
}


def serialize(initializer: Any) -> Any:
    """`{'class_name': ..., 'config': ...}` for an Initializer; other callables are returned as is."""
    return serialize_object(initializer, Initializer)


def deserialize(config: Any, custom_objects: Optional[dict] = None) -> Initializer:
    """Builds an initializer from a name ('he_normal', 'HeNormal') or a serialized dict."""
    known = dict(_CLASSES, **_ALIASES, **(custom_objects or {}))
    name, kwargs = name_and_kwargs(config, "initializer")
    cls = known.get(name)
    if cls is None:
        raise ValueError(f"Unknown initializer: {name!r}. Valid names are: {sorted(_ALIASES)} "
                         f"(or the class names {sorted(_CLASSES)}).")
    return cls.from_config(kwargs) if isinstance(cls, type) else cls


def get(identifier: Any) -> Optional[Callable[..., torch.Tensor]]:
    """Resolves a name, config dict, Initializer, or callable `(shape, dtype) -> tensor`.

    >>> get("zeros")((2,), dtype=torch.float32).tolist()
    [0.0, 0.0]
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier {identifier!r}: pass a name such as "
                     "'glorot_uniform', an Initializer, a config dict, or a callable.")


# Keras exposes lower-case aliases of the classes in this module too.
zeros, ones, constant = Zeros, Ones, Constant
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
variance_scaling, orthogonal, identity = VarianceScaling, Orthogonal, Identity
# Keras 3's longer names for the same classes
IdentityInitializer, OrthogonalInitializer, STFTInitializer, stft = Identity, Orthogonal, STFT, STFT
glorot_uniform, glorot_normal, he_normal, he_uniform = GlorotUniform, GlorotNormal, HeNormal, HeUniform
lecun_normal, lecun_uniform = LecunNormal, LecunUniform
