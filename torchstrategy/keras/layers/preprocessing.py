"""Keras preprocessing layers that run inside the model: Rescaling, Normalization (with
`adapt`), and Resizing (keras.ops.image.resize: TensorFlow's half-pixel convention)."""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np
import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.core import _normalize_data_format


class Rescaling(Layer):
    """`inputs * scale + offset`, cast to the layer's float dtype (e.g. uint8 images -> [0, 1]).

    >>> Rescaling(1 / 255)(torch.full((1, 2), 255, dtype=torch.uint8)).tolist()
    [[1.0, 1.0]]
    """

    def __init__(self, scale: float, offset: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # passes its input's mask on, as Keras
        self.scale, self.offset = scale, offset

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = inputs.to(self._compute_torch_dtype)
        scale = torch.as_tensor(self.scale, dtype=x.dtype, device=x.device)
        offset = torch.as_tensor(self.offset, dtype=x.dtype, device=x.device)
        return x * scale + offset

    def get_config(self) -> dict:
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "Rescaling":
        return cls(**config)


class Normalization(Layer):
    """`(x - mean) / max(sqrt(variance), epsilon)` per feature of the kept `axis` (default the last).

    Give `mean`/`variance`, or call `adapt(data)` to compute them (biased variance). With
    `invert=True` the layer maps normalised values back. Adapted statistics are weights
    (mean, variance, count), as Keras 2 stores them.
    """

    def __init__(self, axis: Union[None, int, Sequence[int]] = -1, mean: Any = None, variance: Any = None,
                 invert: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # passes its input's mask on, as Keras
        if (mean is None) != (variance is None):
            raise ValueError("Normalization: pass both `mean` and `variance`, or neither (then call adapt()).")
        self.axis = () if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
        self.input_mean, self.input_variance, self.invert = mean, variance, bool(invert)
        self._adapted: Optional[tuple[torch.Tensor, torch.Tensor, int]] = None

    def _kept(self, ndim: int) -> list[int]:
        return sorted(a % ndim for a in self.axis)

    def build(self, input_shape: Any) -> None:
        ndim = len(input_shape)
        kept = self._kept(ndim)
        if any(input_shape[a] is None for a in kept):
            raise ValueError(f"Layer '{self.name}': the kept axes {list(self.axis)} of input shape "
                             f"{input_shape} must have known sizes.")
        self._broadcast_shape = [input_shape[i] if i in kept else 1 for i in range(ndim)]
        stats_shape = tuple(input_shape[a] for a in kept)
        if self.input_mean is not None:
            for name, value in (("mean", self.input_mean), ("variance", self.input_variance)):
                tensor = backend.to_tensor(np.asarray(value, dtype=np.float32)).to(self._compute_torch_dtype)
                self.register_buffer(name, torch.broadcast_to(tensor, stats_shape).clone(), persistent=False)
        else:
            self.add_weight("mean", shape=stats_shape, initializer="zeros", trainable=False)
            self.add_weight("variance", shape=stats_shape, initializer="ones", trainable=False)
            self.add_weight("count", shape=(), initializer="zeros", trainable=False, dtype="int64")
        self.built = True

    def adapt(self, data: Any) -> None:
        """Computes mean and variance from an array, a tensor, or an iterable of batches."""
        steps = None
        if self.input_mean is not None:
            raise ValueError(f"Layer '{self.name}' was given mean/variance; adapt() would overwrite them.")
        batches: Iterable[Any] = [data] if isinstance(data, (np.ndarray, torch.Tensor)) else data
        count, mean, m2 = 0, None, None
        for step, batch in enumerate(batches):
            if steps is not None and step >= steps:
                break
            x = backend.to_tensor(np.asarray(batch) if not isinstance(batch, torch.Tensor) else batch).double()
            if not self.built:
                self._maybe_build(x.to(self._compute_torch_dtype))
            reduce = [i for i in range(x.dim()) if i not in self._kept(x.dim())]
            n = int(np.prod([x.shape[i] for i in reduce]))
            var_b, mean_b = torch.var_mean(x, dim=reduce, correction=0)
            if mean is None:
                count, mean, m2 = n, mean_b, var_b * n
            else:  # Chan et al. parallel combination of (count, mean, M2)
                delta = mean_b - mean
                total = count + n
                mean = mean + delta * (n / total)
                m2 = m2 + var_b * n + delta.square() * (count * n / total)
                count = total
        if mean is None:
            raise ValueError(f"Layer '{self.name}': adapt() got no data.")
        with torch.no_grad():
            self.mean.copy_(mean.to(self.mean.dtype).reshape(self.mean.shape))
            self.variance.copy_((m2 / count).to(self.variance.dtype).reshape(self.variance.shape))
            self.count.fill_(count)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = inputs.to(self._compute_torch_dtype)
        # statistics are stored in the variable dtype; the arithmetic runs in the compute dtype
        mean = self.mean.reshape(self._broadcast_shape).to(x.dtype)
        std = torch.sqrt(self.variance.reshape(self._broadcast_shape)).clamp_min(backend.epsilon()).to(x.dtype)
        return mean + x * std if self.invert else (x - mean) / std

    def get_config(self) -> dict:
        def plain(value: Any) -> Any:
            return np.asarray(value).tolist() if value is not None else None

        axis = None if not self.axis else (self.axis[0] if len(self.axis) == 1 else list(self.axis))
        return {**super().get_config(), "axis": axis, "mean": plain(self.input_mean),
                "variance": plain(self.input_variance), "invert": self.invert}


class Resizing(Layer):
    """Resizes (batch, H, W, C) or (H, W, C) images to (height, width) as `keras.ops.image.resize` does
    (TF's half-pixel sampling; 'bilinear', 'nearest', 'bicubic', 'area'; no `antialias`).
    `crop_to_aspect_ratio=True` first takes the largest centred crop with the target aspect ratio;
    `pad_to_aspect_ratio=True` instead pads evenly with `fill_value` (fill_mode 'constant')."""

    _MODES = ("bilinear", "nearest", "bicubic", "area")

    def __init__(self, height: int, width: int, interpolation: str = "bilinear", crop_to_aspect_ratio: bool = False,
                 pad_to_aspect_ratio: bool = False, fill_mode: str = "constant", fill_value: float = 0.0,
                 antialias: bool = False, data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if interpolation not in self._MODES:
            raise ValueError(f"Resizing: interpolation {interpolation!r} is not supported here; "
                             f"use one of {list(self._MODES)}.")
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Resizing: only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio` can be True.")
        if antialias:  # refused here, before a model is built around it
            raise NotImplementedError("Resizing: `antialias=True` is not supported by torchstrategy (keras.ops.image."
                                      "resize has no antialiased kernel yet); leave antialias=False.")
        if fill_mode != "constant":
            raise ValueError(f"Resizing: fill_mode {fill_mode!r} is not supported; only 'constant' is (as Keras).")
        self.height, self.width = int(height), int(width)
        self.interpolation, self.crop_to_aspect_ratio = interpolation, bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio, self.fill_mode, self.fill_value = bool(pad_to_aspect_ratio), fill_mode, fill_value
        self.antialias = bool(antialias)
        self.data_format = _normalize_data_format(data_format)

    def call(self, data: torch.Tensor, training: bool = True) -> torch.Tensor:
        from torchstrategy.keras.ops import image as image_ops

        if data.dim() not in (3, 4):
            raise ValueError(f"Layer '{self.name}' expects (batch, H, W, C) or (H, W, C) images, got shape "
                             f"{tuple(data.shape)}.")
        dtype = self._compute_torch_dtype
        return image_ops.resize(
            data.to(dtype), (self.height, self.width), interpolation=self.interpolation,
            antialias=self.antialias, crop_to_aspect_ratio=self.crop_to_aspect_ratio,
            pad_to_aspect_ratio=self.pad_to_aspect_ratio, fill_mode=self.fill_mode, fill_value=self.fill_value,
            data_format=self.data_format).to(dtype)

    def compute_output_shape(self, input_shape: Any) -> tuple:
        shape = list(input_shape)
        rows = len(shape) - 3 if self.data_format == "channels_last" else len(shape) - 2
        shape[rows:rows + 2] = [self.height, self.width]
        return tuple(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation, "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "antialias": self.antialias, "data_format": self.data_format}
