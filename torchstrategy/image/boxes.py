"""tf.image's bounding-box ops: greedy (and soft) non-max suppression in all its forms, combined per-class NMS,
crop_and_resize and draw_bounding_boxes, following TF's kernels (boxes are [y1, x1, y2, x2])."""
from __future__ import annotations

import heapq
import math
from typing import Any, Callable, Optional

import numpy as np
import torch

from torchstrategy.image.core import _as_tensor


def _numpy(value: Any, dtype: Any = np.float32) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=dtype)


def _iou_matrix(boxes: np.ndarray) -> np.ndarray:
    y1, x1 = np.minimum(boxes[:, 0], boxes[:, 2]), np.minimum(boxes[:, 1], boxes[:, 3])
    y2, x2 = np.maximum(boxes[:, 0], boxes[:, 2]), np.maximum(boxes[:, 1], boxes[:, 3])
    area = (y2 - y1) * (x2 - x1)
    inter_h = np.clip(np.minimum(y2[:, None], y2[None]) - np.maximum(y1[:, None], y1[None]), 0, None)
    inter_w = np.clip(np.minimum(x2[:, None], x2[None]) - np.maximum(x1[:, None], x1[None]), 0, None)
    inter = inter_h * inter_w
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area[:, None] + area[None] - inter)
    valid = (area[:, None] > 0) & (area[None] > 0)
    return np.where(valid, iou, 0.0).astype(np.float32)


def _greedy(similarity: Callable[[int, int], float], scores: np.ndarray, max_output: int, threshold: float,
            score_threshold: float, soft_sigma: float = 0.0) -> tuple[list, list]:
    """TF's NonMaxSuppression loop: candidates by score (ties: lower index first); a candidate overlapping a
    selected box by more than `threshold` is dropped; soft-NMS decays its score by exp(-iou^2 / (2 sigma))."""
    scale = -0.5 / soft_sigma if soft_sigma > 0 else 0.0
    queue = [(-float(s), i, float(s), 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(queue)
    selected, selected_scores = [], []
    while queue and len(selected) < max_output:
        _, index, score, begin = heapq.heappop(queue)
        original, hard = score, False
        for j in range(len(selected) - 1, begin - 1, -1):
            overlap = similarity(index, selected[j])
            score *= math.exp(scale * overlap * overlap) if overlap <= threshold else 0.0
            if soft_sigma <= 0 and overlap > threshold:
                hard = True
                break
            if score <= score_threshold:
                break
        if hard:
            continue
        if score == original:
            selected.append(index)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(queue, (-score, index, score, len(selected)))
    return selected, selected_scores


def _check_limits(max_output_size: Any, threshold: Any, op: str, what: str = "iou_threshold") -> None:
    if int(max_output_size) < 0:
        raise ValueError(f"tf.image.{op}: max_output_size must be non-negative, got {max_output_size!r}.")
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValueError(f"tf.image.{op}: {what} must be in [0, 1], got {threshold!r}.")


def _nms_inputs(boxes: Any, scores: Any, op: str) -> tuple[np.ndarray, np.ndarray]:
    box_array, score_array = _numpy(boxes), _numpy(scores)
    if box_array.ndim != 2 or box_array.shape[-1] != 4:
        raise ValueError(f"tf.image.{op}: boxes must have shape [num_boxes, 4], got {box_array.shape}.")
    if score_array.shape != (box_array.shape[0],):
        raise ValueError(f"tf.image.{op}: scores must have shape [num_boxes] = [{box_array.shape[0]}], got "
                         f"{score_array.shape}.")
    return box_array, score_array


def non_max_suppression(boxes: Any, scores: Any, max_output_size: int, iou_threshold: float = 0.5,
                        score_threshold: float = float("-inf"), name: Optional[str] = None) -> torch.Tensor:
    """Greedily keeps the highest-scoring boxes, dropping any whose IoU with a kept box exceeds
    `iou_threshold` (and those scoring <= score_threshold); at most `max_output_size` int32 indices."""
    _check_limits(max_output_size, iou_threshold, "non_max_suppression")
    box_array, score_array = _nms_inputs(boxes, scores, "non_max_suppression")
    iou = _iou_matrix(box_array)
    selected, _ = _greedy(lambda i, j: iou[i, j], score_array, int(max_output_size), float(iou_threshold),
                          float(score_threshold))
    return torch.tensor(selected, dtype=torch.int32)


def non_max_suppression_with_scores(boxes: Any, scores: Any, max_output_size: int, iou_threshold: float = 0.5,
                                    score_threshold: float = float("-inf"), soft_nms_sigma: float = 0.0,
                                    name: Optional[str] = None) -> tuple[torch.Tensor, torch.Tensor]:
    """non_max_suppression that also returns the kept scores; `soft_nms_sigma` > 0 is Soft-NMS (Bodla et al.):
    overlapping boxes' scores decay instead of being dropped."""
    _check_limits(max_output_size, iou_threshold, "non_max_suppression_with_scores")
    box_array, score_array = _nms_inputs(boxes, scores, "non_max_suppression_with_scores")
    iou = _iou_matrix(box_array)
    selected, kept = _greedy(lambda i, j: iou[i, j], score_array, int(max_output_size), float(iou_threshold),
                             float(score_threshold), float(soft_nms_sigma))
    return torch.tensor(selected, dtype=torch.int32), torch.tensor(kept, dtype=torch.float32)


def non_max_suppression_overlaps(overlaps: Any, scores: Any, max_output_size: int, overlap_threshold: float = 0.5,
                                 score_threshold: float = float("-inf"), name: Optional[str] = None) -> torch.Tensor:
    """non_max_suppression with a given [n, n] overlap matrix in place of box IoUs."""
    _check_limits(max_output_size, overlap_threshold, "non_max_suppression_overlaps", "overlap_threshold")
    matrix, score_array = _numpy(overlaps), _numpy(scores)
    if matrix.ndim != 2 or matrix.shape != (score_array.shape[0],) * 2:
        raise ValueError(f"tf.image.non_max_suppression_overlaps: overlaps must be [n, n] with n = len(scores), got "
                         f"{matrix.shape} and {score_array.shape}.")
    selected, _ = _greedy(lambda i, j: matrix[i, j], score_array, int(max_output_size), float(overlap_threshold),
                          float(score_threshold))
    return torch.tensor(selected, dtype=torch.int32)


def _padded_nms(boxes: np.ndarray, scores: np.ndarray, max_output: int, threshold: float,
                score_threshold: float, canonicalized: bool, flip: tuple) -> list:
    # TF's padded NMS reads the corner order from the batch's first box and applies it to every box; its
    # IoU adds 1e-8 to the union and does not reorder corners box by box.
    boxes = boxes.astype(np.float32)
    if not canonicalized:
        if flip[0]:
            boxes[:, [0, 2]] = boxes[:, [2, 0]]
        if flip[1]:
            boxes[:, [1, 3]] = boxes[:, [3, 1]]
    y1, x1, y2, x2 = boxes.T
    inter = (np.clip(np.minimum(x2[:, None], x2[None]) - np.maximum(x1[:, None], x1[None]), 0, None)
             * np.clip(np.minimum(y2[:, None], y2[None]) - np.maximum(y1[:, None], y1[None]), 0, None))
    area = (y2 - y1) * (x2 - x1)
    iou = inter / (area[:, None] + area[None] - inter + np.float32(1e-8))
    selected, _ = _greedy(lambda i, j: iou[i, j], scores, max_output, threshold, score_threshold)
    return selected


def non_max_suppression_padded(boxes: Any, scores: Any, max_output_size: int, iou_threshold: float = 0.5,
                               score_threshold: float = float("-inf"), pad_to_max_output_size: bool = False,
                               name: Optional[str] = None, sorted_input: bool = False,
                               canonicalized_coordinates: bool = False, tile_size: int = 512) -> tuple:
    """non_max_suppression returning (indices, valid count); with `pad_to_max_output_size` the indices are
    zero-padded to max_output_size (required for batched boxes [..., n, 4] / scores [..., n]). As TF, the
    corner order of the first box is taken for all (`canonicalized_coordinates=True`: [y_min, x_min, y_max,
    x_max] is promised)."""
    _check_limits(max_output_size, iou_threshold, "non_max_suppression_padded")
    box_array, score_array = _numpy(boxes), _numpy(scores)
    if box_array.ndim < 2 or box_array.shape[-1] != 4 or score_array.shape != box_array.shape[:-1]:
        raise ValueError(f"tf.image.non_max_suppression_padded: boxes must be [..., num_boxes, 4] and scores "
                         f"[..., num_boxes], got {box_array.shape} and {score_array.shape}.")
    if box_array.ndim > 2 and not pad_to_max_output_size:
        raise ValueError("tf.image.non_max_suppression_padded: pad_to_max_output_size must be True for batched "
                         "input.")
    limit = int(max_output_size)
    flat_boxes = box_array.reshape(-1, *box_array.shape[-2:])
    flat_scores = score_array.reshape(-1, score_array.shape[-1])
    first = flat_boxes.reshape(-1, 4)[0] if flat_boxes.size else np.zeros(4, np.float32)
    flip = (bool(first[0] > first[2]), bool(first[1] > first[3]))
    rows, counts = [], []
    for one_boxes, one_scores in zip(flat_boxes, flat_scores):
        picked = _padded_nms(one_boxes, one_scores, limit, float(iou_threshold), float(score_threshold),
                             bool(canonicalized_coordinates), flip)
        counts.append(len(picked))
        rows.append(np.pad(np.asarray(picked, np.int64), (0, limit - len(picked))))
    if box_array.ndim == 2:
        picked = torch.tensor(rows[0] if pad_to_max_output_size else rows[0][:counts[0]], dtype=torch.int32)
        return picked, torch.tensor(counts[0], dtype=torch.int32)
    shape = box_array.shape[:-2]
    return (torch.tensor(np.stack(rows).reshape(*shape, limit), dtype=torch.int32),
            torch.tensor(counts, dtype=torch.int32).reshape(shape))


def combined_non_max_suppression(boxes: Any, scores: Any, max_output_size_per_class: int, max_total_size: int,
                                 iou_threshold: float = 0.5, score_threshold: float = float("-inf"),
                                 pad_per_class: bool = False, clip_boxes: bool = True,
                                 name: Optional[str] = None) -> tuple:
    """Per-class greedy NMS over a batch, then the best `max_total_size` detections of each image:
    boxes [batch, n, q, 4] (q = 1 shares boxes between classes) and scores [batch, n, classes] give
    (nmsed_boxes, nmsed_scores, nmsed_classes, valid_detections), zero-padded."""
    _check_limits(max_output_size_per_class, iou_threshold, "combined_non_max_suppression")
    box_array, score_array = _numpy(boxes), _numpy(scores)
    if box_array.ndim != 4 or box_array.shape[-1] != 4 or score_array.ndim != 3:
        raise ValueError(f"tf.image.combined_non_max_suppression: boxes must be [batch, num_boxes, q, 4] and scores "
                         f"[batch, num_boxes, num_classes], got {box_array.shape} and {score_array.shape}.")
    batch, _, q, _ = box_array.shape
    classes = score_array.shape[-1]
    if q not in (1, classes):
        raise ValueError(f"tf.image.combined_non_max_suppression: q must be 1 or num_classes ({classes}), got {q}.")
    per_class, total = int(max_output_size_per_class), int(max_total_size)
    size = min(total, per_class * classes) if pad_per_class else total
    out_boxes = np.zeros((batch, size, 4), np.float32)
    out_scores = np.zeros((batch, size), np.float32)
    out_classes = np.zeros((batch, size), np.float32)
    valid = np.zeros(batch, np.int32)
    for b in range(batch):
        found = []
        for c in range(classes):
            class_boxes = box_array[b, :, 0 if q == 1 else c]
            iou = _iou_matrix(class_boxes)
            picked, kept = _greedy(lambda i, j: iou[i, j], score_array[b, :, c], per_class, float(iou_threshold),
                                   float(score_threshold))
            found += [(score, c, index) for index, score in zip(picked, kept)]
        found.sort(key=lambda item: -item[0])  # stable: equal scores keep class order
        found = found[:size]
        valid[b] = len(found)
        for slot, (score, c, index) in enumerate(found):
            box = box_array[b, index, 0 if q == 1 else c]
            out_boxes[b, slot] = np.clip(box, 0.0, 1.0) if clip_boxes else box
            out_scores[b, slot], out_classes[b, slot] = score, c
    return (torch.from_numpy(out_boxes), torch.from_numpy(out_scores), torch.from_numpy(out_classes),
            torch.from_numpy(valid))


def crop_and_resize(image: Any, boxes: Any, box_indices: Any, crop_size: Any, method: str = "bilinear",
                    extrapolation_value: float = 0.0, name: Optional[str] = None) -> torch.Tensor:
    """Crops each normalized box [y1, x1, y2, x2] (y2 < y1 flips) of image[box_indices[i]] and resizes it to
    `crop_size` with corner-aligned sampling; samples outside the image are `extrapolation_value`.
    Returns float32 [num_boxes, crop_height, crop_width, channels]."""
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"tf.image.crop_and_resize: method must be 'bilinear' or 'nearest', got {method!r}.")
    images = _as_tensor(image)
    if images.dim() != 4:
        raise ValueError(f"tf.image.crop_and_resize needs images [batch, h, w, c], got {tuple(images.shape)}.")
    images = images.to(torch.float32)
    box_array = torch.as_tensor(_numpy(boxes))
    indices = torch.as_tensor(_numpy(box_indices, np.int64))
    crop_height, crop_width = (int(v) for v in _numpy(crop_size, np.int64).reshape(-1))
    if box_array.dim() != 2 or box_array.shape[-1] != 4 or indices.shape != (box_array.shape[0],):
        raise ValueError(f"tf.image.crop_and_resize: boxes must be [num_boxes, 4] and box_indices [num_boxes], got "
                         f"{tuple(box_array.shape)} and {tuple(indices.shape)}.")
    if len(indices) and (indices.min() < 0 or indices.max() >= images.shape[0]):
        raise ValueError(f"tf.image.crop_and_resize: box_indices must lie in [0, {images.shape[0]}), got "
                         f"{indices.tolist()}.")
    height, width = images.shape[1], images.shape[2]

    def positions(start: torch.Tensor, end: torch.Tensor, count: int, size: int) -> torch.Tensor:
        if count > 1:
            steps = torch.arange(count, dtype=torch.float32)
            return start[:, None] * (size - 1) + steps[None] * ((end - start) * (size - 1) / (count - 1))[:, None]
        return (0.5 * (start + end) * (size - 1))[:, None]

    ys = positions(box_array[:, 0], box_array[:, 2], crop_height, height)  # [n, ch]
    xs = positions(box_array[:, 1], box_array[:, 3], crop_width, width)  # [n, cw]
    inside = ((ys >= 0) & (ys <= height - 1))[:, :, None] & ((xs >= 0) & (xs <= width - 1))[:, None, :]
    device = images.device
    ys, xs, inside = ys.to(device), xs.to(device), inside.to(device)
    source = images[indices.to(device)]  # [n, h, w, c]
    rows = torch.arange(len(indices), device=device)[:, None, None]
    if method == "nearest":
        y = torch.sign(ys) * torch.floor(ys.abs() + 0.5)  # roundf: half away from zero
        x = torch.sign(xs) * torch.floor(xs.abs() + 0.5)
        y, x = y.clamp(0, height - 1).long(), x.clamp(0, width - 1).long()
        out = source[rows, y[:, :, None], x[:, None, :]]
    else:
        top, left = torch.floor(ys), torch.floor(xs)
        y_lerp, x_lerp = (ys - top)[:, :, None, None], (xs - left)[:, None, :, None]
        top_i, bottom_i = top.clamp(0, height - 1).long(), torch.ceil(ys).clamp(0, height - 1).long()
        left_i, right_i = left.clamp(0, width - 1).long(), torch.ceil(xs).clamp(0, width - 1).long()

        def pick(r: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
            return source[rows, r[:, :, None], c[:, None, :]]

        upper = pick(top_i, left_i) + (pick(top_i, right_i) - pick(top_i, left_i)) * x_lerp
        lower = pick(bottom_i, left_i) + (pick(bottom_i, right_i) - pick(bottom_i, left_i)) * x_lerp
        out = upper + (lower - upper) * y_lerp
    fill = torch.tensor(float(extrapolation_value), dtype=torch.float32, device=device)
    return torch.where(inside[..., None], out, fill)


def draw_bounding_boxes(images: Any, boxes: Any, colors: Any, name: Optional[str] = None) -> torch.Tensor:
    """Draws the 1-pixel outline of each normalized box [batch, n, 4] on images [batch, h, w, depth] in
    colors[i % len(colors)] (its first `depth` components); boxes entirely outside are skipped."""
    tensor = _as_tensor(images)
    if tensor.dim() != 4 or tensor.shape[-1] not in (1, 3, 4):
        raise ValueError(f"tf.image.draw_bounding_boxes needs images [batch, h, w, depth] with depth 1, 3 or 4, got "
                         f"{tuple(tensor.shape)}.")
    out = tensor.clone()
    box_array = _numpy(boxes)
    palette = _numpy(colors)
    if box_array.ndim != 3 or box_array.shape[0] != out.shape[0] or box_array.shape[-1] != 4:
        raise ValueError(f"tf.image.draw_bounding_boxes: boxes must be [batch, num_boxes, 4], got {box_array.shape}.")
    if palette.ndim != 2 or len(palette) == 0 or palette.shape[1] < out.shape[-1]:
        raise ValueError(f"tf.image.draw_bounding_boxes: colors must be [num_colors, >= depth] with at least one "
                         f"colour, got {palette.shape}.")
    height, width, depth = out.shape[1], out.shape[2], out.shape[3]
    for b in range(out.shape[0]):
        for k, box in enumerate(box_array[b]):
            color = torch.tensor(palette[k % len(palette)][:depth], dtype=out.dtype, device=out.device)
            top, left = int(np.float32(box[0]) * (height - 1)), int(np.float32(box[1]) * (width - 1))
            bottom, right = int(np.float32(box[2]) * (height - 1)), int(np.float32(box[3]) * (width - 1))
            if top > height - 1 or left > width - 1 or bottom < 0 or right < 0:
                continue
            row0, row1 = max(top, 0), min(bottom, height - 1)
            col0, col1 = max(left, 0), min(right, width - 1)
            if top >= 0:
                out[b, top, col0:col1 + 1] = color
            if bottom < height:
                out[b, bottom, col0:col1 + 1] = color
            if left >= 0:
                out[b, row0:row1 + 1, left] = color
            if right < width:
                out[b, row0:row1 + 1, right] = color
    return out
