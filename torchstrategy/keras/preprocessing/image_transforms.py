"""`keras.preprocessing.image`'s legacy NumPy transforms: apply_affine_transform (SciPy's affine resampling,
order 0/1, nearest/reflect/wrap/constant fill, redone in NumPy), channel and brightness shifts, random_*."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

_FILL_MODES = ("nearest", "reflect", "wrap", "constant")
_CONSTANT_TOLERANCE = 1e-9  # a source coordinate this close outside the image still counts as inside


def _map_coordinates(coords: np.ndarray, size: int, mode: str) -> np.ndarray:
    """Source coordinates folded into the image along one axis, the way SciPy's ndimage extends an input."""
    if mode == "nearest":
        return np.clip(coords, 0, size - 1)
    if mode == "reflect":  # half-sample symmetric: d c b a | a b c d | d c b a
        period = 2.0 * size
        folded = np.mod(coords + 0.5, period) - 0.5
        return np.where(folded > size - 0.5, period - 1.0 - folded, folded)
    if mode == "wrap":  # SciPy's (legacy) 'wrap': period size - 1, the last sample equals the first
        if size <= 1:
            return np.zeros_like(coords)
        period = float(size - 1)
        return np.mod(coords, period)
    return coords  # constant: handled by the caller


def _neighbour(index: np.ndarray, size: int, mode: str) -> np.ndarray:
    """An integer sample index moved inside [0, size) (SciPy extends neighbours symmetrically at the edges)."""
    if mode == "reflect":
        index = np.where(index < 0, -index - 1, index)
        index = np.where(index >= size, 2 * size - index - 1, index)
    return np.clip(index, 0, size - 1)


def _resample(channels: np.ndarray, matrix: np.ndarray, offset: np.ndarray, order: int, mode: str,
              cval: float) -> np.ndarray:
    """output[c, i, j] = channels[c] sampled at matrix @ (i, j) + offset (SciPy's affine_transform)."""
    _, rows, cols = channels.shape
    grid_i, grid_j = np.meshgrid(np.arange(rows, dtype=np.float64), np.arange(cols, dtype=np.float64),
                                 indexing="ij")
    src_i = matrix[0, 0] * grid_i + matrix[0, 1] * grid_j + offset[0]
    src_j = matrix[1, 0] * grid_i + matrix[1, 1] * grid_j + offset[1]
    inside = None
    if mode == "constant":
        inside = ((src_i >= -_CONSTANT_TOLERANCE) & (src_i <= rows - 1 + _CONSTANT_TOLERANCE)
                  & (src_j >= -_CONSTANT_TOLERANCE) & (src_j <= cols - 1 + _CONSTANT_TOLERANCE))
    src_i = _map_coordinates(src_i, rows, mode)
    src_j = _map_coordinates(src_j, cols, mode)
    data = channels.astype(np.float64, copy=False)
    if order == 0:
        near_i = _neighbour(np.floor(src_i + 0.5).astype(np.int64), rows, mode)
        near_j = _neighbour(np.floor(src_j + 0.5).astype(np.int64), cols, mode)
        out = data[:, near_i, near_j]
    else:
        base_i, base_j = np.floor(src_i), np.floor(src_j)
        frac_i, frac_j = src_i - base_i, src_j - base_j
        base_i, base_j = base_i.astype(np.int64), base_j.astype(np.int64)
        i0, i1 = _neighbour(base_i, rows, mode), _neighbour(base_i + 1, rows, mode)
        j0, j1 = _neighbour(base_j, cols, mode), _neighbour(base_j + 1, cols, mode)
        out = ((1 - frac_i) * (1 - frac_j) * data[:, i0, j0] + (1 - frac_i) * frac_j * data[:, i0, j1]
               + frac_i * (1 - frac_j) * data[:, i1, j0] + frac_i * frac_j * data[:, i1, j1])
    if inside is not None:
        out = np.where(inside[None], out, cval)
    return out.astype(channels.dtype, copy=False)


def _offset_to_center(matrix: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The transform moved so that it turns about the image centre instead of the (0, 0) corner."""
    centre_i, centre_j = rows / 2.0 - 0.5, cols / 2.0 - 0.5
    to_centre = np.array([[1.0, 0.0, centre_i], [0.0, 1.0, centre_j], [0.0, 0.0, 1.0]])
    back = np.array([[1.0, 0.0, -centre_i], [0.0, 1.0, -centre_j], [0.0, 0.0, 1.0]])
    return to_centre @ matrix @ back


def apply_affine_transform(x: Any, theta: float = 0, tx: float = 0, ty: float = 0, shear: float = 0,
                           zx: float = 1, zy: float = 1, row_axis: int = 1, col_axis: int = 2,
                           channel_axis: int = 0, fill_mode: str = "nearest", cval: float = 0.0,
                           order: int = 1) -> np.ndarray:
    """A rank-3 image rotated by `theta` degrees, shifted by `tx` / `ty` pixels, sheared by `shear` degrees and
    zoomed by (zx, zy) about its centre; outside pixels follow `fill_mode` (or `cval`). As in Keras, the
    matrix is built in (x, y) order, so with row_axis < col_axis `tx` moves columns and `ty` rows.

    >>> apply_affine_transform(np.arange(9.0).reshape(1, 3, 3), tx=1, fill_mode="constant")[0].tolist()
    [[1.0, 2.0, 0.0], [4.0, 5.0, 0.0], [7.0, 8.0, 0.0]]
    """
    if len({row_axis, col_axis, channel_axis}) != 3:
        raise ValueError("'row_axis', 'col_axis', and 'channel_axis' must be distinct")
    if {row_axis, col_axis, channel_axis} != {0, 1, 2}:
        raise ValueError(f"Invalid axis' indices: {({row_axis, col_axis, channel_axis}) - {0, 1, 2}}")
    x = np.asarray(x)
    if x.ndim != 3:
        raise ValueError(f"Input arrays must be multi-channel 2D images (rank 3); got shape {x.shape}.")
    if channel_axis not in (0, 2):
        raise ValueError("Channels are allowed and the first and last dimensions.")
    if fill_mode not in _FILL_MODES:
        raise ValueError(f"fill_mode must be one of {', '.join(_FILL_MODES)}; got {fill_mode!r}.")
    if order not in (0, 1):
        raise NotImplementedError(f"apply_affine_transform supports order 0 (nearest) and 1 (bilinear); got "
                                  f"order={order}. Use order=1 for Keras's default.")
    matrix = np.eye(3)
    changed = False
    if theta != 0:
        angle = np.deg2rad(theta)
        matrix = matrix @ np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0],
                                    [0, 0, 1]])
        changed = True
    if tx != 0 or ty != 0:
        matrix = matrix @ np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]], dtype=np.float64)
        changed = True
    if shear != 0:
        angle = np.deg2rad(shear)
        matrix = matrix @ np.array([[1, -np.sin(angle), 0], [0, np.cos(angle), 0], [0, 0, 1]])
        changed = True
    if zx != 1 or zy != 1:
        matrix = matrix @ np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]], dtype=np.float64)
        changed = True
    if not changed:
        return x
    matrix = _offset_to_center(matrix, x.shape[row_axis], x.shape[col_axis])
    channels = np.moveaxis(x, channel_axis, 0)
    if col_axis > row_axis:  # the matrix is built in (x, y) order; NumPy arrays index (row, column)
        matrix = matrix[[1, 0, 2]][:, [1, 0, 2]]
    out = _resample(channels, matrix[:2, :2], matrix[:2, 2], order, fill_mode, float(cval))
    return np.moveaxis(out, 0, channel_axis)


def apply_channel_shift(x: Any, intensity: float, channel_axis: int = 0) -> np.ndarray:
    """Adds `intensity` to every channel, clipped to the image's original min..max."""
    x = np.moveaxis(np.asarray(x), channel_axis, 0)
    low, high = np.min(x), np.max(x)
    shifted = np.stack([np.clip(channel + intensity, low, high) for channel in x], axis=0)
    return np.moveaxis(shifted, 0, channel_axis)


def random_channel_shift(x: Any, intensity_range: float, channel_axis: int = 0) -> np.ndarray:
    """apply_channel_shift with an intensity drawn uniformly from [-intensity_range, intensity_range]."""
    intensity = np.random.uniform(-intensity_range, intensity_range)
    return apply_channel_shift(x, intensity, channel_axis=channel_axis)


def apply_brightness_shift(x: Any, brightness: float, scale: bool = True) -> np.ndarray:
    """The image's brightness scaled by `brightness` with PIL's ImageEnhance (channels-last, 1/3/4 channels);
    with `scale=False` an image outside 0..255 is mapped back to its own value range afterwards."""
    from PIL import ImageEnhance

    from torchstrategy.keras.preprocessing.image import array_to_img, img_to_array

    x = np.asarray(x)
    low, high = np.min(x), np.max(x)
    out_of_byte_range = bool(low < 0 or high > 255)
    img = array_to_img(x, scale=out_of_byte_range or scale)
    out = img_to_array(ImageEnhance.Brightness(img).enhance(brightness))
    if not scale and out_of_byte_range:
        out = out / 255 * (high - low) + low
    return out


def random_brightness(x: Any, brightness_range: Sequence[float], scale: bool = True) -> np.ndarray:
    """apply_brightness_shift with a factor drawn uniformly from `brightness_range` (two floats)."""
    if len(brightness_range) != 2:
        raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: {brightness_range}")
    factor = np.random.uniform(brightness_range[0], brightness_range[1])
    return apply_brightness_shift(x, factor, scale)


def random_rotation(x: Any, rg: float, row_axis: int = 1, col_axis: int = 2, channel_axis: int = 0,
                    fill_mode: str = "nearest", cval: float = 0.0, interpolation_order: int = 1) -> np.ndarray:
    """A rotation by an angle drawn uniformly from [-rg, rg] degrees."""
    theta = np.random.uniform(-rg, rg)
    return apply_affine_transform(x, theta=theta, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_shift(x: Any, wrg: float, hrg: float, row_axis: int = 1, col_axis: int = 2, channel_axis: int = 0,
                 fill_mode: str = "nearest", cval: float = 0.0, interpolation_order: int = 1) -> np.ndarray:
    """A shift by fractions drawn from [-hrg, hrg] of the height and [-wrg, wrg] of the width."""
    x = np.asarray(x)
    tx = np.random.uniform(-hrg, hrg) * x.shape[row_axis]
    ty = np.random.uniform(-wrg, wrg) * x.shape[col_axis]
    return apply_affine_transform(x, tx=tx, ty=ty, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_shear(x: Any, intensity: float, row_axis: int = 1, col_axis: int = 2, channel_axis: int = 0,
                 fill_mode: str = "nearest", cval: float = 0.0, interpolation_order: int = 1) -> np.ndarray:
    """A shear by an angle drawn uniformly from [-intensity, intensity] degrees."""
    shear = np.random.uniform(-intensity, intensity)
    return apply_affine_transform(x, shear=shear, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)


def random_zoom(x: Any, zoom_range: Sequence[float], row_axis: int = 1, col_axis: int = 2, channel_axis: int = 0,
                fill_mode: str = "nearest", cval: float = 0.0, interpolation_order: int = 1) -> np.ndarray:
    """A zoom by (zx, zy) drawn independently and uniformly from `zoom_range` (two floats)."""
    if len(zoom_range) != 2:
        raise ValueError(f"`zoom_range` should be a tuple or list of two floats. Received: {zoom_range}")
    if zoom_range[0] == 1 and zoom_range[1] == 1:
        zx, zy = 1, 1
    else:
        zx, zy = np.random.uniform(zoom_range[0], zoom_range[1], 2)
    return apply_affine_transform(x, zx=zx, zy=zy, row_axis=row_axis, col_axis=col_axis,
                                  channel_axis=channel_axis, fill_mode=fill_mode, cval=cval,
                                  order=interpolation_order)
