"""Keras's shape-only layers not in conv/conv_transpose: Identity, RepeatVector, ZeroPadding1D/3D, Cropping3D,
UpSampling3D (each with `compute_output_shape` as Keras)."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy.keras.layers.base import InputSpec, Layer
from torchstrategy.keras.layers.conv_transpose import _check_crop, _normalize_pairs
from torchstrategy.keras.layers.core import _normalize_data_format, _normalize_tuple, _require_rank


class IdentityLayer(Layer):
    """keras.layers.Identity: returns its input unchanged (a placeholder layer). Defined under this name because
    keras.initializers.Identity owns the class name in this code base; it reports itself as 'Identity'.

    >>> Identity()(torch.ones(2)).tolist()
    [1.0, 1.0]
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True
        self.built = True

    def call(self, inputs: Any) -> Any:
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


# Keras's name, for configs, repr and pickling (keras.initializers.Identity is another class)
IdentityLayer.__name__ = IdentityLayer.__qualname__ = "Identity"
Identity = IdentityLayer


class RepeatVector(Layer):
    """(batch, features) -> (batch, n, features), repeating each row `n` times.

    >>> RepeatVector(3)(torch.ones(2, 4)).shape
    torch.Size([2, 3, 4])
    """

    def __init__(self, n: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return inputs.unsqueeze(1).expand(-1, self.n, -1).contiguous()

    def compute_output_shape(self, input_shape: Any) -> Any:
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self) -> dict:
        return {**super().get_config(), "n": self.n}


def _spatial(data_format: str, rank: int) -> list[int]:
    return list(range(1, rank + 1)) if data_format == "channels_last" else list(range(2, rank + 2))


def _pad_axes(inputs: torch.Tensor, axes: Sequence[int], pairs: Sequence[tuple[int, int]]) -> torch.Tensor:
    pads: list[int] = []
    for axis in reversed(range(inputs.dim())):  # F.pad lists the last axis first
        pads.extend(pairs[list(axes).index(axis)] if axis in axes else (0, 0))
    return F.pad(inputs, pads)


class ZeroPadding1D(Layer):
    """Adds zeros at the start/end of the steps axis: `padding` is an int or (before, after)."""

    def __init__(self, padding: Union[int, Sequence[int]] = 1, data_format: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = _normalize_data_format(data_format)
        self.padding = _normalize_pairs(padding, 1, "padding")[0]
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return _pad_axes(inputs, _spatial(self.data_format, 1), [self.padding])

    def compute_output_shape(self, input_shape: Any) -> Any:
        shape = list(input_shape)
        axis = _spatial(self.data_format, 1)[0]
        if shape[axis] is not None:
            shape[axis] += sum(self.padding)
        return tuple(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "padding": tuple(self.padding), "data_format": self.data_format}


class ZeroPadding3D(Layer):
    """Adds zeros around the three spatial axes: an int, 3 ints, or 3 (before, after) pairs."""

    def __init__(self, padding: Any = ((1, 1), (1, 1), (1, 1)), data_format: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = _normalize_data_format(data_format)
        self.padding = _normalize_pairs(padding, 3, "padding")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return _pad_axes(inputs, _spatial(self.data_format, 3), self.padding)

    def compute_output_shape(self, input_shape: Any) -> Any:
        shape = list(input_shape)
        for axis, pair in zip(_spatial(self.data_format, 3), self.padding):
            if shape[axis] is not None:
                shape[axis] += sum(pair)
        return tuple(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "padding": tuple(tuple(p) for p in self.padding),
                "data_format": self.data_format}


class Cropping3D(Layer):
    """Removes (before, after) slices from the three spatial axes: an int, 3 ints, or 3 pairs."""

    def __init__(self, cropping: Any = ((1, 1), (1, 1), (1, 1)), data_format: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = _normalize_data_format(data_format)
        self.cropping = _normalize_pairs(cropping, 3, "cropping")
        self.input_spec = InputSpec(ndim=5)

    def build(self, input_shape: Any) -> None:
        _require_rank(self, input_shape, 5, "(batch, dim1, dim2, dim3, channels)")
        _check_crop(self, input_shape, _spatial(self.data_format, 3), self.cropping)
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        _check_crop(self, tuple(inputs.shape), _spatial(self.data_format, 3), self.cropping)
        for axis, (before, after) in zip(_spatial(self.data_format, 3), self.cropping):
            inputs = inputs.narrow(axis, before, inputs.shape[axis] - before - after)
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        _check_crop(self, input_shape, _spatial(self.data_format, 3), self.cropping)
        shape = list(input_shape)
        for axis, pair in zip(_spatial(self.data_format, 3), self.cropping):
            if shape[axis] is not None:
                shape[axis] -= sum(pair)
        return tuple(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "cropping": tuple(tuple(p) for p in self.cropping),
                "data_format": self.data_format}


class UpSampling3D(Layer):
    """Repeats each voxel `size` times along the three spatial axes (nearest neighbour)."""

    def __init__(self, size: Union[int, Sequence[int]] = (2, 2, 2), data_format: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = _normalize_data_format(data_format)
        self.size = _normalize_tuple(size, 3, "size")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        for axis, factor in zip(_spatial(self.data_format, 3), self.size):
            inputs = inputs.repeat_interleave(factor, dim=axis)
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        shape = list(input_shape)
        for axis, factor in zip(_spatial(self.data_format, 3), self.size):
            if shape[axis] is not None:
                shape[axis] *= factor
        return tuple(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}
