"""The Keras 2 layers tf.keras (Keras 3.15) still exports under `tf.keras.layers`: ThresholdedReLU and
the random resizers RandomHeight / RandomWidth (one size factor per call, resizing only in training)."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch

from torchstrategy.keras.layers.noise import _SeededLayer
from torchstrategy.keras.layers.base import Layer


class ThresholdedReLU(Layer):
    """`x` where `x > theta`, else 0 (Keras 2's ThresholdedReLU, kept by tf.keras).

    >>> ThresholdedReLU(theta=1.0)(torch.tensor([0.5, 1.0, 2.0])).tolist()
    [0.0, 0.0, 2.0]
    """

    def __init__(self, theta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if theta is None:
            raise ValueError(f"ThresholdedReLU: theta must be a float, not None. Received: theta={theta}")
        if theta < 0:
            raise ValueError(f"ThresholdedReLU: theta must be >= 0. Received: theta={theta}")
        self.supports_masking = True
        self.theta = float(theta)

    def call(self, inputs: Any) -> torch.Tensor:
        inputs = torch.as_tensor(inputs, dtype=self._compute_torch_dtype)
        return inputs * (inputs > self.theta).to(inputs.dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "theta": float(self.theta)}

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class _RandomResize(_SeededLayer):
    """Resizes one spatial axis of (..., H, W, C) images by a factor drawn once per call from
    [1 + lower, 1 + upper]; the new size is the factor times the old one, truncated (tf.keras's rule)."""

    _AXIS = -3
    _WHAT = "height"

    def __init__(self, factor: Union[float, Sequence[float]], interpolation: str = "bilinear",
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, **kwargs)
        self.supports_masking = False
        self.factor = factor
        if isinstance(factor, (tuple, list)):
            lower, upper = factor[0], factor[1]
        else:
            lower, upper = -factor, factor
        if upper < lower:
            raise ValueError(f"{type(self).__name__}: the upper bound of `factor` must not be below its lower "
                             f"bound. Received: factor={factor}")
        if lower < -1.0 or upper < -1.0:
            raise ValueError(f"{type(self).__name__}: `factor` values must be at least -1 (a size cannot shrink "
                             f"below zero). Received: factor={factor}")
        self._lower, self._upper = float(lower), float(upper)
        self.interpolation = interpolation

    def call(self, inputs: Any, training: bool = True) -> torch.Tensor:
        dtype = self._compute_torch_dtype
        inputs = torch.as_tensor(inputs).to(dtype)
        if not training:
            return inputs
        if inputs.dim() not in (3, 4):
            raise ValueError(f"Layer '{self.name}' expects (batch, H, W, C) or (H, W, C) images, got shape "
                             f"{tuple(inputs.shape)}.")
        from torchstrategy.keras.ops import image as image_ops

        draw = torch.rand((), dtype=torch.float32, generator=self._generator(torch.device("cpu")))
        factor = (1.0 + self._lower) + draw * (self._upper - self._lower)
        size = [int(inputs.shape[-3]), int(inputs.shape[-2])]
        index = 0 if self._AXIS == -3 else 1
        size[index] = int((factor * float(size[index])).item())
        if size[index] < 1:
            raise ValueError(f"{type(self).__name__}: the drawn {self._WHAT} factor {float(factor):.4f} leaves no "
                             f"pixels of {int(inputs.shape[self._AXIS])}; use a `factor` lower bound above -1.")
        resized = image_ops.resize(inputs.to(torch.float32), tuple(size), interpolation=self.interpolation,
                                   data_format="channels_last")
        return resized.to(dtype)

    def compute_output_shape(self, input_shape: Any) -> tuple:
        shape = list(input_shape)
        shape[self._AXIS] = None
        return tuple(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "interpolation": self.interpolation,
                "seed": self.seed}


class RandomHeight(_RandomResize):
    """tf.keras's RandomHeight: in training, scales the image height by a random factor in
    [1 + factor[0], 1 + factor[1]] (a single number f means [1 - f, 1 + f]); inference returns the input.
    Note the layer's `training` defaults to True, as in tf.keras."""

    _AXIS = -3
    _WHAT = "height"


class RandomWidth(_RandomResize):
    """tf.keras's RandomWidth: as RandomHeight, for the image width."""

    _AXIS = -2
    _WHAT = "width"


__all__ = ["ThresholdedReLU", "RandomHeight", "RandomWidth"]
