"""Keras's random regularization layers: GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout1D/2D/3D
(identity outside training), and ActivityRegularization (an L1/L2 penalty on the activity)."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras import regularizers
from torchstrategy.keras.layers.base import InputSpec, Layer
from torchstrategy.keras.layers.core import Dropout, _normalize_data_format


def _check_unit_interval(name: str, value: Any) -> float:
    if not 0 <= value <= 1:
        raise ValueError(f"Invalid value received for argument `{name}`. Expected a float value between 0 and 1. "
                         f"Received: {name}={value}")
    return value


class _SeededLayer(Layer):
    """A layer drawing noise from its own seeded stream (one per device) when `seed` is set."""

    def __init__(self, seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seed = seed
        self.supports_masking = True
        self._generators: dict[torch.device, torch.Generator] = {}
        self.built = True

    def _generator(self, device: torch.device) -> Optional[torch.Generator]:
        if self.seed is None:
            return None
        if device not in self._generators:
            self._generators[device] = torch.Generator(device=device).manual_seed(int(self.seed))
        return self._generators[device]

    def _normal(self, like: torch.Tensor, mean: float, stddev: float) -> torch.Tensor:
        noise = torch.empty(like.shape, dtype=like.dtype, device=like.device)
        return noise.normal_(mean, stddev, generator=self._generator(like.device))

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class GaussianNoise(_SeededLayer):
    """Adds zero-mean Gaussian noise of standard deviation `stddev` in training; identity at inference.

    >>> GaussianNoise(0.1)(torch.ones(2, 3)).tolist()   # inference: unchanged
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """

    def __init__(self, stddev: float, seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, **kwargs)
        self.stddev = _check_unit_interval("stddev", stddev)

    def call(self, inputs: torch.Tensor, training: bool = False) -> torch.Tensor:
        if training and self.stddev > 0:
            return inputs + self._normal(inputs, 0.0, float(self.stddev))
        return inputs

    def get_config(self) -> dict:
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


class GaussianDropout(_SeededLayer):
    """Multiplies by Gaussian noise of mean 1 and stddev `sqrt(rate / (1 - rate))` in training."""

    def __init__(self, rate: float, seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, **kwargs)
        self.rate = _check_unit_interval("rate", rate)

    def call(self, inputs: torch.Tensor, training: bool = False) -> torch.Tensor:
        if training and self.rate > 0:
            return inputs * self._normal(inputs, 1.0, math.sqrt(self.rate / (1.0 - self.rate)))
        return inputs

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class AlphaDropout(_SeededLayer):
    """Dropout that keeps SELU's self-normalization: dropped units take SELU's negative saturation value and
    an affine map restores the mean and variance (Keras's `a * x + b`)."""

    _ALPHA = 1.6732632423543772848170429916717
    _SCALE = 1.0507009873554804934193349852946

    def __init__(self, rate: float, noise_shape: Optional[Sequence[Optional[int]]] = None,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, **kwargs)
        self.rate = _check_unit_interval("rate", rate)
        self.noise_shape = noise_shape

    def call(self, inputs: torch.Tensor, training: bool = False) -> torch.Tensor:
        if not (training and self.rate > 0):
            return inputs
        shape = tuple(inputs.shape) if self.noise_shape is None else tuple(
            inputs.shape[i] if size is None else size for i, size in enumerate(self.noise_shape))
        uniform = torch.empty(shape, dtype=inputs.dtype, device=inputs.device)
        uniform.uniform_(0.0, 1.0, generator=self._generator(inputs.device))
        kept = (uniform >= self.rate).to(inputs.dtype)
        alpha_p = -self._ALPHA * self._SCALE
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        return a * (inputs * kept + alpha_p * (1 - kept)) + b

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed, "noise_shape": self.noise_shape}


class _SpatialDropout(Dropout):
    _rank = 1

    def __init__(self, rate: float, data_format: Optional[str] = None, seed: Optional[int] = None,
                 name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(rate, seed=seed, name=name, dtype=dtype)
        self.data_format = _normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def call(self, inputs: torch.Tensor, training: bool = False) -> torch.Tensor:
        if not training or self.rate == 0.0:
            return inputs
        shape = [inputs.shape[0]] + [1] * (inputs.dim() - 1)  # one draw per (sample, channel)
        channel_axis = 1 if self.data_format == "channels_first" else inputs.dim() - 1
        shape[channel_axis] = inputs.shape[channel_axis]
        keep = 1.0 - self.rate
        if keep == 0.0:
            return torch.zeros_like(inputs)
        mask = torch.empty(shape, dtype=inputs.dtype, device=inputs.device)
        mask.bernoulli_(keep, generator=self._generator(inputs.device))
        return inputs * mask * (1.0 / keep)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        # Keras: rate, seed, name, dtype (its constructor takes no other Layer argument)
        config = {"rate": self.rate, "seed": self.seed, "name": self.name, "dtype": self._dtype_policy.name}
        if self._rank > 1:
            config["data_format"] = self.data_format
        return config


class SpatialDropout1D(_SpatialDropout):
    """Drops whole channels of a (batch, steps, channels) input in training (rate per channel, rest scaled)."""

    _rank = 1

    def __init__(self, rate: float, seed: Optional[int] = None, name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(rate, data_format="channels_last", seed=seed, name=name, dtype=dtype)


class SpatialDropout2D(_SpatialDropout):
    """Drops whole feature maps of a 4-D image batch in training."""

    _rank = 2

    def __init__(self, rate: float, data_format: Optional[str] = None, seed: Optional[int] = None,
                 name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(rate, data_format=data_format, seed=seed, name=name, dtype=dtype)


class SpatialDropout3D(_SpatialDropout):
    """Drops whole feature volumes of a 5-D batch in training."""

    _rank = 3

    def __init__(self, rate: float, data_format: Optional[str] = None, seed: Optional[int] = None,
                 name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(rate, data_format=data_format, seed=seed, name=name, dtype=dtype)


class ActivityRegularization(Layer):
    """Identity whose output adds `l1 * sum|x| + l2 * sum x**2` (divided by the batch size) to `losses`.

    >>> layer = ActivityRegularization(l1=0.5)
    >>> _ = layer(torch.tensor([[1.0, -2.0]]))
    >>> float(layer.losses[0])
    1.5
    """

    def __init__(self, l1: float = 0.0, l2: float = 0.0, **kwargs: Any) -> None:
        kwargs.pop("activity_regularizer", None)  # a saved config may carry it; l1/l2 define it
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.supports_masking = True
        self.l1, self.l2 = l1, l2
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("activity_regularizer", None)
        return {**config, "l1": self.l1, "l2": self.l2}
