"""The legacy backend's graph-era helpers (get_uid, name_scope, map_fn, foldl, foldr), random variables, and
the padding/resizing of sequences, images and volumes, with Keras 3.15's legacy keras.backend signatures."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from torchstrategy import _context, control_flow, framework
from torchstrategy.dtypes import as_dtype
from torchstrategy.keras._legacy_backend.settings import _floatx_dtype, _t, image_data_format
from torchstrategy.keras._legacy_backend.variables import variable


def get_uid(prefix: str = "") -> int:
    """1, 2, 3, ... on successive calls with one prefix (shared with Keras's default layer names)."""
    return _context.name_uid(prefix)


def name_scope(name: str) -> Any:
    """tf.name_scope(name): a context manager prefixing the names of ops created inside it."""
    return framework.name_scope(name)


def map_fn(fn: Callable, elems: Any, name: Optional[str] = None, dtype: Any = None) -> Any:
    """`fn` over the first axis of `elems`, results stacked (tf.compat.v1.map_fn)."""
    return control_flow.map_fn(fn, elems, dtype=dtype, name=name)


def foldl(fn: Callable, elems: Any, initializer: Any = None, name: Optional[str] = None) -> Any:
    """`fn(accumulator, element)` left to right over the first axis of `elems` (tf.compat.v1.foldl)."""
    return control_flow.foldl(fn, elems, initializer=initializer, name=name)


def foldr(fn: Callable, elems: Any, initializer: Any = None, name: Optional[str] = None) -> Any:
    """`fn(accumulator, element)` right to left over the first axis of `elems` (tf.compat.v1.foldr)."""
    return control_flow.foldr(fn, elems, initializer=initializer, name=name)


def _seeded(seed: Optional[int]) -> torch.Generator:
    generator = torch.Generator()
    generator.manual_seed(int(np.random.randint(10e8)) if seed is None else int(seed))
    return generator


def random_normal_variable(shape: Any, mean: float, scale: float, dtype: Any = None, name: Optional[str] = None,
                           seed: Optional[int] = None) -> Any:
    """A variable drawn from N(mean, scale**2) (a fresh random seed unless `seed` is given)."""
    value = torch.normal(float(mean), float(scale), size=tuple(shape), generator=_seeded(seed))
    return variable(value.to(_floatx_dtype() if dtype is None else as_dtype(dtype)), dtype=dtype, name=name)


def random_uniform_variable(shape: Any, low: float, high: float, dtype: Any = None, name: Optional[str] = None,
                            seed: Optional[int] = None) -> Any:
    """A variable drawn uniformly from [low, high)."""
    value = torch.rand(tuple(shape), generator=_seeded(seed)) * (float(high) - float(low)) + float(low)
    return variable(value.to(_floatx_dtype() if dtype is None else as_dtype(dtype)), dtype=dtype, name=name)


def _pad(x: Any, pattern: Sequence[Sequence[int]]) -> torch.Tensor:
    flat = [int(v) for pair in reversed(pattern) for v in pair]  # F.pad lists the last axis first
    return F.pad(_t(x, "pad"), flat)


def temporal_padding(x: Any, padding: Sequence[int] = (1, 1)) -> torch.Tensor:
    """Zeros added before and after the time axis (axis 1) of a 3-D tensor."""
    if len(padding) != 2:
        raise ValueError(f"Expected `padding` to be a tuple of 2 integers. Received: padding={padding}")
    return _pad(x, [[0, 0], [padding[0], padding[1]], [0, 0]])


def _spatial_pattern(padding: Any, dims: int, data_format: Optional[str]) -> list:
    if len(padding) != dims or any(len(p) != 2 for p in padding):
        words = {2: "2 tuples", 3: "3 tuples"}[dims]
        raise ValueError(f"Expected `padding` to be a tuple of {words} of 2 integers. Received: padding={padding}")
    data_format = data_format or image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format}")
    spatial = [list(p) for p in padding]
    return [[0, 0], [0, 0]] + spatial if data_format == "channels_first" else [[0, 0]] + spatial + [[0, 0]]


def spatial_2d_padding(x: Any, padding: Any = ((1, 1), (1, 1)), data_format: Optional[str] = None) -> torch.Tensor:
    """Zeros around the rows and columns of a 4-D image batch."""
    return _pad(x, _spatial_pattern(padding, 2, data_format))


def spatial_3d_padding(x: Any, padding: Any = ((1, 1), (1, 1), (1, 1)),
                       data_format: Optional[str] = None) -> torch.Tensor:
    """Zeros around the three spatial axes of a 5-D volume batch."""
    return _pad(x, _spatial_pattern(padding, 3, data_format))


def _axes(data_format: str, ndim: int) -> list:
    if data_format == "channels_first":
        return list(range(2, ndim))
    if data_format == "channels_last":
        return list(range(1, ndim - 1))
    raise ValueError(f"Invalid `data_format` argument: {data_format}")


_INTERPOLATIONS = ("area", "bicubic", "bilinear", "gaussian", "lanczos3", "lanczos5", "mitchellcubic", "nearest")


def resize_images(x: Any, height_factor: int, width_factor: int, data_format: str,
                  interpolation: str = "nearest") -> torch.Tensor:
    """The image batch scaled up by integer factors with tf.image.resize's `interpolation`."""
    from torchstrategy.image import resize

    x = _t(x, "resize_images")
    rows, cols = _axes(data_format, 4)
    if interpolation not in _INTERPOLATIONS:
        listed = '"' + '", "'.join(_INTERPOLATIONS) + '"'
        raise ValueError(f'`interpolation` argument should be one of: {listed}. Received: "{interpolation}".')
    size = [int(x.shape[rows]) * int(height_factor), int(x.shape[cols]) * int(width_factor)]
    if data_format == "channels_first":
        x = x.permute(0, 2, 3, 1)
    out = torch.as_tensor(resize(x, size, method=interpolation))
    return out.permute(0, 3, 1, 2) if data_format == "channels_first" else out


def resize_volumes(x: Any, depth_factor: int, height_factor: int, width_factor: int,
                   data_format: str) -> torch.Tensor:
    """The volume batch scaled up by repeating each voxel along depth, height and width."""
    x = _t(x, "resize_volumes")
    for axis, factor in zip(_axes(data_format, 5), (depth_factor, height_factor, width_factor)):
        x = torch.repeat_interleave(x, int(factor), dim=axis)
    return x
