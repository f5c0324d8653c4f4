"""Keras 3's pixel-moving augmentations on the preprocessing protocol: RandomShear (affine), RandomPerspective
(a homography from jittered corners) and RandomElasticTransform (a smoothed random displacement field)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch
import torch.nn.functional as F

from torchstrategy.keras import backend
from torchstrategy.keras.layers.preprocessing_image import _affine_transform
from torchstrategy.keras.layers.preprocessing_protocol import AugmentationLayer, factor_pair

_INTERPOLATIONS = ("nearest", "bilinear")
_FILL_MODES = ("reflect", "wrap", "constant", "nearest")


def _check_interpolation(interpolation: str) -> None:
    if interpolation not in _INTERPOLATIONS:
        raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of one {_INTERPOLATIONS}.")


class _WarpLayer(AugmentationLayer):
    """Segmentation masks follow the images with nearest sampling; boxes are not moved here yet."""

    def transform_segmentation_masks(self, segmentation_masks: Any, transformation: Any,
                                     training: bool = True) -> Any:
        if not training or transformation is None:
            return segmentation_masks
        masks = backend.to_tensor(segmentation_masks)
        x, unbatched = self._to_nhwc(masks)
        out = self._from_nhwc(self._augment(x, transformation, interpolation="nearest"), unbatched)
        return out.to(masks.dtype)

    def transform_bounding_boxes(self, bounding_boxes: Any, transformation: Any,
                                 training: bool = True) -> Any:
        if not training or transformation is None:
            return bounding_boxes
        raise NotImplementedError(f"{type(self).__name__} does not move bounding boxes in torchstrategy yet; "
                                  "augment the boxes with a layer that does (RandomFlip, or Keras itself), or call "
                                  "this layer on the images alone.")


class RandomShear(_WarpLayer):
    """Shears each image along x and y by factors drawn from `x_factor` / `y_factor` (numbers f in [0, 1]
    give [-f, f]), each sign flipped at random; the sampling is TF's affine transform with `fill_mode`.
    Inference: identity.

    >>> RandomShear(x_factor=0.3, seed=1)(torch.rand(2, 6, 6, 3)).shape
    torch.Size([2, 6, 6, 3])
    """

    def __init__(self, x_factor: Any = 0.0, y_factor: Any = 0.0, interpolation: str = "bilinear",
                 fill_mode: str = "reflect", fill_value: float = 0.0, data_format: Optional[str] = None,
                 seed: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.x_factor = self._pair(x_factor, "x_factor")
        self.y_factor = self._pair(y_factor, "y_factor")
        if fill_mode not in _FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one {_FILL_MODES}.")
        _check_interpolation(interpolation)
        self.fill_mode, self.fill_value, self.interpolation = fill_mode, fill_value, interpolation

    @staticmethod
    def _pair(factor: Any, name: str) -> tuple:
        values = list(factor) if isinstance(factor, (tuple, list)) else None
        message = (f"The `factor` argument should be a number (or a list of two numbers) in the range [0, 1.0]. "
                   f"Received: {name}={factor}")
        if values is None:
            if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 <= factor <= 1:
                raise ValueError(message)
            return -abs(factor), abs(factor)
        # Keras wants each end in [0, 1] but saves a number f as (-f, f): a pair may reach -1 so that a saved
        # config loads back (Keras 3.15's own from_config fails there)
        if len(values) != 2 or any(not isinstance(v, (int, float)) or not -1 <= v <= 1 for v in values):
            raise ValueError(message)
        low, high = sorted(values)
        return low, high

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Optional[dict]:
        """{"shear_factor": (batch, 2) x and y shears, "input_shape": the images' shape}; None outside training."""
        if not training:
            return None
        images = self._images_of(data)
        batch, device = self._batch_hw(data)[0], images.device
        invert = torch.where(self._uniform((batch, 1), 0.0, 1.0, device, seed) > 0.5, -1.0, 1.0)
        shear_y = self._uniform((batch, 1), *self.y_factor, device, seed)
        shear_x = self._uniform((batch, 1), *self.x_factor, device, seed)
        return {"shear_factor": torch.cat([shear_x, shear_y], dim=1) * invert, "input_shape": tuple(images.shape)}

    def _augment(self, images: torch.Tensor, transformation: Any, interpolation: Optional[str] = None) -> torch.Tensor:
        shear = backend.to_tensor(transformation["shear_factor"]).to(torch.float32).to(images.device)
        ones, zeros = torch.ones_like(shear[:, 0]), torch.zeros_like(shear[:, 0])
        matrix = torch.stack([ones, shear[:, 0], zeros, shear[:, 1], ones, zeros, zeros, zeros], dim=1)
        return _affine_transform(images, matrix, interpolation or self.interpolation, self.fill_mode,
                                 float(self.fill_value))

    def get_config(self) -> dict:
        return {**super().get_config(), "x_factor": self.x_factor, "y_factor": self.y_factor,
                "fill_mode": self.fill_mode, "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value}


def homography(start_points: torch.Tensor, end_points: torch.Tensor) -> torch.Tensor:
    """The (batch, 8) projective transforms that send each output point in `end_points` back to the matching
    input point in `start_points` (4 corners each, (batch, 4, 2) as (x, y)), as Keras's compute_homography_matrix."""
    rows, targets = [], []
    for i in range(4):
        sx, sy = start_points[:, i, 0], start_points[:, i, 1]
        ex, ey = end_points[:, i, 0], end_points[:, i, 1]
        one, zero = torch.ones_like(ex), torch.zeros_like(ex)
        rows.append(torch.stack([ex, ey, one, zero, zero, zero, -sx * ex, -sx * ey], dim=-1))
        rows.append(torch.stack([zero, zero, zero, ex, ey, one, -sy * ex, -sy * ey], dim=-1))
        targets += [sx, sy]
    matrix = torch.stack(rows, dim=1)
    return torch.linalg.solve(matrix, torch.stack(targets, dim=-1).unsqueeze(-1)).reshape(-1, 8)


class RandomPerspective(_WarpLayer):
    """With a probability drawn from `factor`, moves each image's four corners by up to `scale` / 2 of their
    coordinates and warps the image to match (TF's projective sampling, `fill_value` outside). Inference:
    identity.

    >>> RandomPerspective(scale=0.4, seed=3)(torch.rand(2, 8, 8, 3)).shape
    torch.Size([2, 8, 8, 3])
    """

    def __init__(self, factor: Any = 1.0, scale: float = 1.0, interpolation: str = "bilinear",
                 fill_value: float = 0.0, seed: Optional[int] = None, data_format: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = factor_pair(factor, "factor")
        if scale < 0.0 or scale > 1.0:
            raise ValueError(f"The `scale` argument should be a number in the range [0,1]. Received: scale={scale}")
        _check_interpolation(interpolation)
        self.scale, self.fill_value, self.interpolation = scale, fill_value, interpolation

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Optional[dict]:
        """{"apply_perspective": (batch,) bool, "start_points"/"end_points": (batch, 4, 2) corners (x, y),
        "input_shape"}; None outside training."""
        if not training:
            return None
        images = self._images_of(data)
        batch, height, width = self._batch_hw(data)
        device = images.device
        probability = self._uniform((batch,), self.factor[0], self.factor[1], device, seed)
        apply = self._uniform((batch,), 0.0, 1.0, device, seed) < probability
        jitter = self._uniform((batch, 4, 2), -0.5 * self.scale, 0.5 * self.scale, device, seed)
        corners = torch.tensor([[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1], [width - 1, height - 1]],
                               device=device)
        start = corners.unsqueeze(0).repeat(batch, 1, 1)
        return {"apply_perspective": apply, "start_points": start, "end_points": start + start * jitter,
                "input_shape": tuple(images.shape)}

    def _augment(self, images: torch.Tensor, transformation: Any, interpolation: Optional[str] = None) -> torch.Tensor:
        def tensor(key: str) -> torch.Tensor:
            return backend.to_tensor(transformation[key]).to(images.device)

        start, end = tensor("start_points").to(torch.float32), tensor("end_points").to(torch.float32)
        start = start.unsqueeze(0) if start.dim() == 2 else start
        end = end.unsqueeze(0) if end.dim() == 2 else end
        matrix = homography(start.double(), end.double()).to(torch.float32)
        warped = _affine_transform(images, matrix, interpolation or self.interpolation, "constant",
                                   float(self.fill_value))
        apply = tensor("apply_perspective").to(torch.bool).reshape(-1, 1, 1, 1)
        return torch.where(apply, warped, images)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_value": self.fill_value, "seed": self.seed}


def _gaussian_blur(fields: torch.Tensor, size: int, sigma: float) -> torch.Tensor:
    """Blurs (batch, H, W) fields with a size x size Gaussian (zero 'same' padding), as Keras's gaussian_blur."""
    x = torch.arange(size, dtype=fields.dtype, device=fields.device) - (size - 1) / 2
    k = torch.exp(-0.5 * (x / sigma) ** 2)
    k = k / k.sum()
    kernel = torch.outer(k, k).reshape(1, 1, size, size)
    pad = (size - 1) // 2
    return F.conv2d(F.pad(fields.unsqueeze(1), (pad, size - 1 - pad, pad, size - 1 - pad)), kernel)[:, 0]


def _fix_index(index: torch.Tensor, size: int, fill_mode: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Keras's map_coordinates index rules: the index to read and whether it is inside (constant mode)."""
    valid = torch.ones_like(index, dtype=torch.bool)
    if fill_mode == "constant":
        valid = (index >= 0) & (index < size)
        index = index.clamp(0, size - 1)
    elif fill_mode == "nearest":
        index = index.clamp(0, size - 1)
    elif fill_mode in ("mirror", "reflect"):
        mod = torch.remainder(index.abs(), 2 * size)
        over = mod >= size
        index = torch.where(over, 2 * size - mod, mod)
        if fill_mode == "reflect":
            index = torch.where(over, index - 1, index)
    else:  # wrap
        index = torch.remainder(index, size)
    return index.clamp(0, size - 1), valid


def map_coordinates(images: torch.Tensor, ys: torch.Tensor, xs: torch.Tensor, interpolation: str, fill_mode: str,
                    fill_value: float) -> torch.Tensor:
    """Samples channels-last images (batch, H, W, C) at per-pixel coordinates (batch, H, W) with Keras's
    map_coordinates rules (order 0: round half to even, order 1: bilinear)."""
    n, h, w, c = images.shape
    if interpolation == "nearest":
        nodes_y = [(torch.round(ys).long(), torch.ones_like(ys))]
        nodes_x = [(torch.round(xs).long(), torch.ones_like(xs))]
    else:
        y0, x0 = torch.floor(ys), torch.floor(xs)
        nodes_y = [(y0.long(), 1 - (ys - y0)), (y0.long() + 1, ys - y0)]
        nodes_x = [(x0.long(), 1 - (xs - x0)), (x0.long() + 1, xs - x0)]
    flat = images.reshape(n, h * w, c)
    out = torch.zeros_like(images)
    for iy, wy in nodes_y:
        iy, vy = _fix_index(iy, h, fill_mode)
        for ix, wx in nodes_x:
            ix, vx = _fix_index(ix, w, fill_mode)
            index = (iy * w + ix).reshape(n, h * w, 1).expand(-1, -1, c)
            values = torch.gather(flat, 1, index).reshape(n, h, w, c)
            if fill_mode == "constant":
                values = torch.where((vy & vx).unsqueeze(-1), values, torch.full_like(values, float(fill_value)))
            out = out + (wy * wx).unsqueeze(-1).to(images.dtype) * values
    return out


class RandomElasticTransform(_WarpLayer):
    """With a probability drawn from `factor`, displaces each image's pixels by a Gaussian-smoothed random field
    (strength alpha = 0.1 * s * max(H, W), smoothness sigma = 0.05 * s * min(H, W), s drawn from `scale`), then
    clips to `value_range`. As Keras 3.15 (TF backend) the x and y displacements are the same field. Inference:
    identity.

    >>> RandomElasticTransform(seed=0)(torch.rand(1, 40, 40, 1) * 255).shape
    torch.Size([1, 40, 40, 1])
    """

    _FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")

    def __init__(self, factor: Any = 1.0, scale: Any = 1.0, interpolation: str = "bilinear",
                 fill_mode: str = "reflect", fill_value: float = 0.0, value_range: Sequence[float] = (0, 255),
                 seed: Optional[int] = None, data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = factor_pair(factor, "factor")
        self.scale = factor_pair(scale, "scale")
        _check_interpolation(interpolation)
        if fill_mode not in self._FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one {set(self._FILL_MODES)}.")
        self.interpolation, self.fill_mode, self.fill_value = interpolation, fill_mode, fill_value
        self.value_range = value_range

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Optional[dict]:
        """{"apply_transform": (batch,) bool, "distortion_factor": s, "seed": the int seed of the displacement
        field}; None outside training or when `scale` or `factor` allows no change."""
        if not training or self.scale[1] == 0 or self.factor[1] == 0:
            return None
        images = self._images_of(data)
        batch, device = self._batch_hw(data)[0], images.device
        probability = self._uniform((batch,), self.factor[0], self.factor[1], device, seed)
        apply = self._uniform((batch,), 0.0, 1.0, device, seed) < probability
        distortion = self._uniform((), self.scale[0], self.scale[1], device, seed)
        field_seed = int(self._uniform((), 0.0, 2.0 ** 31, device, seed))
        return {"apply_transform": apply, "distortion_factor": distortion, "seed": field_seed}

    def _augment(self, images: torch.Tensor, transformation: Any, interpolation: Optional[str] = None) -> torch.Tensor:
        n, h, w, _ = images.shape
        factor = float(backend.to_tensor(transformation["distortion_factor"]))
        alpha, sigma = max(h, w) * 0.1 * factor, min(h, w) * 0.05 * factor
        size = (6 * int(sigma)) | 1
        generator = torch.Generator(device=images.device).manual_seed(int(transformation["seed"]))
        field = torch.randn((n, h, w), generator=generator, device=images.device, dtype=torch.float32) * sigma
        field = _gaussian_blur(field, size, sigma)
        ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32, device=images.device),
                                torch.arange(w, dtype=torch.float32, device=images.device), indexing="ij")
        moved = map_coordinates(images, ys + alpha * field, xs + alpha * field, interpolation or self.interpolation,
                                self.fill_mode, float(self.fill_value))
        apply = backend.to_tensor(transformation["apply_transform"]).to(torch.bool).to(images.device)
        out = torch.where(apply.reshape(-1, 1, 1, 1), moved, images)
        return out.clamp(self.value_range[0], self.value_range[1])

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                "value_range": self.value_range, "seed": self.seed}
