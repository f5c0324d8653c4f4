"""`keras.utils.bounding_boxes`: bounding-box format conversion (xyxy, yxyx, xywh, center_xywh, center_yxhw
and their rel_ forms), clipping, crop/pad shifts, pairwise IoU, CIoU and anchor deltas, as Keras 3.15 does."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.keras.ops import convert_to_tensor

SUPPORTED_FORMATS = ("xyxy", "yxyx", "xywh", "center_xywh", "center_yxhw", "rel_xyxy", "rel_yxyx", "rel_xywh",
                     "rel_center_xywh")


def _split(boxes: torch.Tensor) -> tuple:
    return tuple(boxes[..., i:i + 1] for i in range(4))


def _to_xyxy(boxes: torch.Tensor, source: str, height: Any, width: Any) -> torch.Tensor:
    a, b, c, d = _split(boxes)
    if source == "yxyx":
        a, b, c, d = b, a, d, c
    elif source == "xywh":
        c, d = a + c, b + d
    elif source == "center_xywh":
        a, b, c, d = a - c / 2.0, b - d / 2.0, a + c / 2.0, b + d / 2.0
    elif source == "center_yxhw":
        a, b, c, d = b - d / 2.0, a - c / 2.0, b + d / 2.0, a + c / 2.0
    elif source == "rel_xyxy":
        a, b, c, d = a * width, b * height, c * width, d * height
    elif source == "rel_yxyx":
        a, b, c, d = b * width, a * height, d * width, c * height
    elif source == "rel_xywh":
        a, b, c, d = a * width, b * height, (a + c) * width, (b + d) * height
    elif source == "rel_center_xywh":
        a, b, c, d = (a - c / 2.0) * width, (b - d / 2.0) * height, (a + c / 2.0) * width, (b + d / 2.0) * height
    return torch.cat([a, b, c, d], dim=-1)


def _from_xyxy(boxes: torch.Tensor, target: str, height: Any, width: Any) -> torch.Tensor:
    x1, y1, x2, y2 = _split(boxes)
    w, h = x2 - x1, y2 - y1
    parts = {"xyxy": (x1, y1, x2, y2), "yxyx": (y1, x1, y2, x2), "xywh": (x1, y1, w, h),
             "center_xywh": (x1 + w / 2.0, y1 + h / 2.0, w, h), "center_yxhw": (y1 + h / 2.0, x1 + w / 2.0, h, w)}
    if target in parts:
        return torch.cat(parts[target], dim=-1)
    rel = {"rel_xyxy": (x1 / width, y1 / height, x2 / width, y2 / height),
           "rel_yxyx": (y1 / height, x1 / width, y2 / height, x2 / width),
           "rel_xywh": (x1 / width, y1 / height, w / width, h / height),
           "rel_center_xywh": ((x1 + w / 2.0) / width, (y1 + h / 2.0) / height, w / width, h / height)}
    return torch.cat(rel[target], dim=-1)


def convert_format(boxes: Any, source: str, target: str, height: Optional[Any] = None, width: Optional[Any] = None,
                   dtype: str = "float32") -> Any:
    """`boxes` (..., 4), or a dict's 'boxes', from format `source` to `target`; the rel_ formats are relative
    to `height` and `width` (needed when converting between relative and absolute)."""
    if isinstance(boxes, dict):
        boxes["boxes"] = convert_format(boxes["boxes"], source, target, height, width, dtype)
        return boxes
    boxes = convert_to_tensor(boxes)
    if boxes.shape[-1] != 4:
        raise ValueError(f"`boxes` must be a tensor with the last dimension of 4. Received: boxes.shape="
                         f"{tuple(boxes.shape)}")
    source, target = source.lower(), target.lower()
    if source not in SUPPORTED_FORMATS or target not in SUPPORTED_FORMATS:
        raise ValueError(f"Invalid source or target format. Supported formats: {SUPPORTED_FORMATS}")
    if (source.startswith("rel_") or target.startswith("rel_")) and (width is None or height is None):
        raise ValueError("convert_format() must receive `height` and `width` transforming between relative and "
                         f"absolute formats.convert_format() received source=`{source}`, target=`{target}, but "
                         f"height={height} and width={width}.")
    boxes = boxes.to(as_dtype(dtype))
    if source == target:
        return boxes
    if source.startswith("rel_") and target.startswith("rel_"):
        source, target = source[4:], target[4:]
    return _from_xyxy(_to_xyxy(boxes, source, height, width), target, height, width)


def clip_to_image_size(bounding_boxes: dict, height: Optional[Any] = None, width: Optional[Any] = None,
                       bounding_box_format: str = "xyxy") -> dict:
    """The boxes clipped to the image ([0, width] x [0, height], or [0, 1] for rel_xyxy); labels of boxes left
    with no area become -1."""
    if bounding_box_format not in ("xyxy", "rel_xyxy"):
        raise NotImplementedError(f"clip_to_image_size supports 'xyxy' and 'rel_xyxy'; got "
                                  f"{bounding_box_format!r}.")
    if bounding_box_format == "xyxy" and (height is None or width is None):
        raise ValueError("`height` and `width` must be set if `format='xyxy'`.")
    boxes = convert_to_tensor(bounding_boxes["boxes"])
    labels = bounding_boxes.get("labels")
    top_x, top_y = (float(width), float(height)) if bounding_box_format == "xyxy" else (1.0, 1.0)
    x1, y1, x2, y2 = _split(boxes)
    boxes = torch.cat([x1.clamp(0, top_x), y1.clamp(0, top_y), x2.clamp(0, top_x), y2.clamp(0, top_y)], dim=-1)
    result = dict(bounding_boxes)
    result["boxes"] = boxes
    if labels is not None:
        a, b, c, d = _split(boxes)
        areas = ((c - a) * (d - b)).squeeze(-1)
        labels = convert_to_tensor(labels)
        result["labels"] = torch.where(areas > 0, labels, torch.full_like(labels, -1))
    return result


def crop(boxes: Any, top: Any, left: Any, height: Any, width: Any, bounding_box_format: str = "xyxy") -> Any:
    """xyxy boxes moved into a crop at (`top`, `left`) of size `height` x `width`, clipped to it."""
    if bounding_box_format != "xyxy":
        raise NotImplementedError(f"crop supports 'xyxy' boxes only; got {bounding_box_format!r}.")
    x1, y1, x2, y2 = _split(convert_to_tensor(boxes))
    return torch.cat([(x1 - left).clamp(0, width), (y1 - top).clamp(0, height), (x2 - left).clamp(0, width),
                      (y2 - top).clamp(0, height)], dim=-1)


def pad(boxes: Any, top: Any, left: Any, height: Optional[Any] = None, width: Optional[Any] = None,
        bounding_box_format: str = "xyxy") -> Any:
    """xyxy boxes shifted by padding of `top` rows and `left` columns."""
    if bounding_box_format != "xyxy":
        raise NotImplementedError(f"pad supports 'xyxy' boxes only; got {bounding_box_format!r}.")
    x1, y1, x2, y2 = _split(convert_to_tensor(boxes))
    return torch.cat([x1 + left, y1 + top, x2 + left, y2 + top], dim=-1)


def compute_iou(boxes1: Any, boxes2: Any, bounding_box_format: str, use_masking: bool = False, mask_val: Any = -1,
                image_shape: Optional[Sequence[int]] = None) -> torch.Tensor:
    """Pairwise intersection over union, (N, M) or (batch, N, M); with `use_masking`, pairs where either box
    has all-negative coordinates get `mask_val`."""
    from torchstrategy.keras import backend

    ranks = len(convert_to_tensor(boxes1).shape), len(convert_to_tensor(boxes2).shape)
    for which, rank in (("boxes1", ranks[0]), ("boxes2", ranks[1])):
        if rank not in (2, 3):
            raise ValueError(f"compute_iou() expects {which} to be batched, or to be unbatched. Received "
                             f"len(boxes1.shape)={ranks[0]}, len(boxes2.shape)={ranks[1]}. Expected either "
                             f"len({which}.shape)=2 AND or len({which}.shape)=3.")
    if "rel" in bounding_box_format and image_shape is None:
        raise ValueError("When using relative bounding box formats (e.g. `rel_yxyx`) the `image_shape` argument "
                         f"must be provided.Received `image_shape`: {image_shape}")
    height, width = (None, None) if image_shape is None else tuple(image_shape)[:2]
    b1 = convert_format(boxes1, bounding_box_format, "yxyx", height, width)
    b2 = convert_format(boxes2, bounding_box_format, "yxyx", height, width)
    swap = (1, 0) if ranks[1] == 2 else (0, 2, 1)
    ymin1, xmin1, ymax1, xmax1 = _split(b1)
    ymin2, xmin2, ymax2, xmax2 = (t.permute(*swap) for t in _split(b2))
    inter = (torch.minimum(ymax1, ymax2) - torch.maximum(ymin1, ymin2)).clamp(min=0) * \
        (torch.minimum(xmax1, xmax2) - torch.maximum(xmin1, xmin2)).clamp(min=0)
    area1 = ((b1[..., 2] - b1[..., 0]) * (b1[..., 3] - b1[..., 1])).unsqueeze(-1)
    area2 = (b2[..., 2] - b2[..., 0]) * (b2[..., 3] - b2[..., 1])
    area2 = area2.unsqueeze(1 if area2.dim() == 2 else 0)
    iou = inter / (area1 + area2 - inter + backend.epsilon())
    if not use_masking:
        return iou
    perm = (1, 0) if ranks[0] == 2 else (0, 2, 1)
    background = (b1.amax(dim=-1, keepdim=True) < 0) | (b2.amax(dim=-1, keepdim=True) < 0).permute(*perm)
    return torch.where(background, torch.full_like(iou, float(mask_val)), iou)


def compute_ciou(boxes1: Any, boxes2: Any, bounding_box_format: str,
                 image_shape: Optional[Sequence[int]] = None) -> torch.Tensor:
    """Complete IoU of matching boxes (element-wise, not pairwise): IoU minus the squared centre distance over
    the squared diagonal of the enclosing box, minus the aspect-ratio term v * alpha (Keras's epsilons kept)."""
    import math

    from torchstrategy.keras import backend

    if "rel" in bounding_box_format and image_shape is None:
        raise ValueError("compute_ciou: relative bounding box formats (e.g. `rel_yxyx`) need `image_shape` "
                         f"(height, width, channels). Received image_shape={image_shape}")
    height, width = (None, None) if image_shape is None else tuple(image_shape)[:2]
    eps = backend.epsilon()
    xmin1, ymin1, xmax1, ymax1 = _split(convert_format(boxes1, bounding_box_format, "xyxy", height, width))
    xmin2, ymin2, xmax2, ymax2 = _split(convert_format(boxes2, bounding_box_format, "xyxy", height, width))
    w1, h1 = xmax1 - xmin1, ymax1 - ymin1 + eps
    w2, h2 = xmax2 - xmin2, ymax2 - ymin2 + eps
    inter = (torch.minimum(xmax1, xmax2) - torch.maximum(xmin1, xmin2)).clamp(min=0) * \
        (torch.minimum(ymax1, ymax2) - torch.maximum(ymin1, ymin2)).clamp(min=0)
    iou = (inter / (w1 * h1 + w2 * h2 - inter + eps + eps)).squeeze(-1)
    diagonal = ((torch.maximum(xmax1, xmax2) - torch.minimum(xmin1, xmin2)) ** 2
                + (torch.maximum(ymax1, ymax2) - torch.minimum(ymin1, ymin2)) ** 2 + eps).squeeze(-1)
    centres = (((xmin1 + xmax1) / 2 - (xmin2 + xmax2) / 2) ** 2
               + ((ymin1 + ymax1) / 2 - (ymin2 + ymax2) / 2) ** 2).squeeze(-1)
    v = ((4 / math.pi ** 2) * (torch.atan(w2 / h2) - torch.atan(w1 / h1)) ** 2).squeeze(-1)
    alpha = v / (v - iou + (1 + eps))
    return iou - (centres / diagonal + v * alpha)


def _delta_args(variance: Any, encoding: str, argument: str, image_shape: Any) -> tuple:
    if variance is not None:
        variance = convert_to_tensor(variance, "float32")
        if variance.shape[-1] != 4:
            raise ValueError(f"`variance` must hold 4 values (one per box coordinate), got {variance.tolist()}.")
    if encoding not in ("center_xywh", "center_yxhw"):
        raise ValueError(f"`{argument}` must be 'center_xywh' or 'center_yxhw', got {encoding!r}.")
    height, width = (None, None) if image_shape is None else tuple(image_shape)[:2]
    return variance, height, width


def encode_box_to_deltas(anchors: Any, boxes: Any, anchor_format: str, box_format: str,
                         encoding_format: str = "center_yxhw", variance: Any = None,
                         image_shape: Optional[Sequence[int]] = None) -> torch.Tensor:
    """Regression targets of `boxes` relative to `anchors`, both taken to `encoding_format` (centre, size):
    (centre - anchor centre) / anchor size and log(size / anchor size), divided by `variance` when given."""
    from torchstrategy.keras import backend

    variance, height, width = _delta_args(variance, encoding_format, "encoding_format", image_shape)
    anchors_c = convert_format(anchors, anchor_format, encoding_format, height, width)
    boxes_c = convert_format(boxes, box_format, encoding_format, height, width)
    anchor_size = anchors_c[..., 2:].clamp(min=backend.epsilon())
    box_size = boxes_c[..., 2:].clamp(min=backend.epsilon())
    deltas = torch.cat([(boxes_c[..., :2] - anchors_c[..., :2]) / anchor_size, torch.log(box_size / anchor_size)],
                       dim=-1)
    return deltas / variance.to(deltas.dtype) if variance is not None else deltas


def decode_deltas_to_boxes(anchors: Any, boxes_delta: Any, anchor_format: str, box_format: str,
                           encoded_format: str = "center_yxhw", variance: Any = None,
                           image_shape: Optional[Sequence[int]] = None) -> Any:
    """Inverse of encode_box_to_deltas: boxes in `box_format` from deltas against `anchors` (dicts of
    per-level anchors and deltas decode level by level)."""
    variance, height, width = _delta_args(variance, encoded_format, "encoded_format", image_shape)

    def decode(anchor: Any, delta: Any) -> torch.Tensor:
        anchor_c = convert_format(anchor, anchor_format, encoded_format, height, width)
        delta = convert_to_tensor(delta)
        if variance is not None:
            delta = delta * variance.to(delta.dtype)
        box = torch.cat([delta[..., :2] * anchor_c[..., 2:] + anchor_c[..., :2],
                         torch.exp(delta[..., 2:]) * anchor_c[..., 2:]], dim=-1)
        return convert_format(box, encoded_format, box_format, height, width)

    if isinstance(anchors, dict) and isinstance(boxes_delta, dict):
        return {level: decode(anchor, boxes_delta[level]) for level, anchor in anchors.items()}
    return decode(anchors, boxes_delta)


def _inverse_affine_matrix(center_x: Any, center_y: Any, angle: torch.Tensor, translate_x: Any, translate_y: Any,
                           scale: Any, shear_x: Any, shear_y: Any, height: Any, width: Any) -> torch.Tensor:
    """(batch, 3, 3) matrices mapping points as RandomAffine-style augmentation moves them (TF's inverse
    affine matrix: rotation, shear and scale about the centre, then translation; angles in degrees)."""
    import math

    def as_t(value: Any) -> torch.Tensor:
        return convert_to_tensor(value).to(angle.dtype)

    cx, cy = as_t(center_x) * (width - 1), as_t(center_y) * (height - 1)
    rot = -angle * (math.pi / 180.0)
    tx, ty = -as_t(translate_x) * (width - 1), -as_t(translate_y) * (height - 1)
    sx, sy = -as_t(shear_x) * (math.pi / 180.0), -as_t(shear_y) * (math.pi / 180.0)
    a = torch.cos(rot - sy) / torch.cos(sy)
    b = a * torch.tan(sx) + torch.sin(rot)
    c = -torch.sin(rot - sy) / torch.cos(sy)
    d = torch.cos(rot) - c * torch.tan(sx)
    scale = as_t(scale)
    a0, a1, b0, b1 = d * scale, -b * scale, -c * scale, a * scale
    a2 = cx - a0 * (cx + tx) - a1 * (cy + ty)
    b2 = cy - b0 * (cx + tx) - b1 * (cy + ty)
    zeros = torch.zeros_like(a0)
    rows = [a0, a1, a2, b0, b1, b2, zeros, zeros, torch.ones_like(a0)]
    return torch.stack([torch.broadcast_to(r, a0.shape) for r in rows], dim=-1).reshape(-1, 3, 3)


def affine_transform(boxes: Any, angle: Any, translate_x: Any, translate_y: Any, scale: Any, shear_x: Any,
                     shear_y: Any, height: Any, width: Any, center_x: Optional[Any] = None,
                     center_y: Optional[Any] = None, bounding_box_format: str = "xyxy") -> torch.Tensor:
    """Batched xyxy boxes (batch, N, 4) moved by a per-image affine transform (angle, shears in degrees;
    translations and centre as fractions of the image; `scale` a factor): each box's four corners are
    mapped and the result is their axis-aligned bounding box."""
    if bounding_box_format != "xyxy":
        raise NotImplementedError(f"affine_transform supports bounding_box_format='xyxy' only (as Keras); got "
                                  f"{bounding_box_format!r}. Convert with convert_format(...) first.")
    angle = convert_to_tensor(angle)
    angle = angle.to(torch.float32) if not angle.is_floating_point() else angle
    boxes = convert_to_tensor(boxes)
    if boxes.dim() != 3 or boxes.shape[-1] != 4:
        raise ValueError(f"affine_transform expects batched boxes of shape (batch, N, 4), got {tuple(boxes.shape)}.")
    matrix = _inverse_affine_matrix(0.5 if center_x is None else center_x, 0.5 if center_y is None else center_y,
                                    angle, translate_x, translate_y, scale, shear_x, shear_y, height, width)
    boxes = boxes.to(matrix.dtype)
    x1, y1, x2, y2 = boxes.unbind(-1)
    corners = torch.stack([x1, y1, x2, y1, x2, y2, x1, y2], dim=-1).reshape(boxes.shape[0], boxes.shape[1], 4, 2)
    corners = torch.cat([corners, torch.ones_like(corners[..., :1])], dim=-1)
    moved = torch.einsum("bnxy,byz->bnxz", corners, matrix[:, :2, :].transpose(1, 2))
    return torch.cat([moved.amin(dim=2), moved.amax(dim=2)], dim=-1)
