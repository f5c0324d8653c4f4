"""`keras.visualization`: segmentation masks and bounding boxes drawn onto image batches, and matplotlib
galleries of them. OpenCV (boxes) and matplotlib (galleries) are optional, as in Keras 3.15."""
from __future__ import annotations

import functools
import math
from typing import Any, Optional, Sequence

import numpy as np

from torchstrategy.keras import bounding_boxes as bounding_boxes_lib

def _numpy(x: Any) -> np.ndarray:
    import torch

    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _data_format(data_format: Optional[str]) -> str:
    from torchstrategy.keras import backend

    return data_format or backend.image_data_format()


def _require_batch(images: Any) -> tuple:
    shape = tuple(np.shape(images)) if not hasattr(images, "shape") else tuple(images.shape)
    if len(shape) != 4:
        raise ValueError(f"`images` must be batched 4D tensor. Received: images.shape={shape}")
    return shape


def _palette(num_classes: int) -> list:
    """Keras's default class colours: class i gets (i * (2**25-1, 2**15-1, 2**21-1)) % 255."""
    base = np.array([2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1])
    return [((i * base) % 255).tolist() for i in range(num_classes)]


def draw_segmentation_masks(images: Any, segmentation_masks: Any, num_classes: Optional[int] = None,
                            color_mapping: Optional[dict] = None, alpha: float = 0.8, blend: bool = True,
                            ignore_index: int = -1, data_format: Optional[str] = None) -> Any:
    """Paints each class of the integer `segmentation_masks` (batch, h, w, 1) onto `images` in its colour
    (`color_mapping[i]`, else Keras's palette). With `blend`, mixes `alpha` of the colour into the image,
    leaves `ignore_index` pixels alone and returns uint8 NumPy; without, returns the painted float32 tensor.
    `num_classes=None` takes the largest class id in the masks as the class count (as Keras does)."""
    import torch

    _require_batch(images)
    images = _numpy(images)
    masks = _numpy(segmentation_masks)
    if _data_format(data_format) == "channels_first":
        images, masks = images.transpose(0, 2, 3, 1), masks.transpose(0, 2, 3, 1)
    images = images.astype("float32")
    if masks.dtype.kind not in "iu":
        raise TypeError(f"`segmentation_masks` must be in integer dtype. Received: segmentation_masks.dtype="
                        f"{masks.dtype}")
    if num_classes is None:
        num_classes = int(masks.max())
    colors = _palette(num_classes) if color_mapping is None else [color_mapping[i] for i in range(num_classes)]
    valid = np.squeeze(masks != ignore_index, axis=-1)
    labels = masks[..., 0]
    painted = images.copy()
    for index, color in enumerate(colors):
        painted[labels == index, ...] = np.asarray(color, dtype=painted.dtype)[None, :]
    if not blend:
        return torch.from_numpy(painted)
    mixed = images * (1 - alpha) + painted * alpha
    mixed = np.where(valid[..., None], mixed, images)
    return torch.from_numpy(mixed).to(torch.uint8).numpy()  # truncating cast, as the backends' cast


def _text_origin(x: int, y: int, font_scale: float, thickness: int) -> tuple:
    font_height = int(font_scale * 12)
    if y - 8 - 2 * font_height > 0:
        return x, y - 8
    return x + 3, y + 2 * font_height + thickness + 3


def draw_bounding_boxes(images: Any, bounding_boxes: dict, bounding_box_format: str,
                        class_mapping: Optional[dict] = None, color: Sequence = (128, 128, 128),
                        line_thickness: int = 2, text_thickness: int = 1, font_scale: float = 1.0,
                        data_format: Optional[str] = None) -> np.ndarray:
    """Draws `bounding_boxes` ({'boxes', 'labels'[, 'confidences']}) onto uint8 copies of `images` with
    OpenCV, class names from `class_mapping` above each box; label -1 marks padding. Needs opencv-python."""
    try:
        import cv2
    except ImportError:
        cv2 = None
    if cv2 is None:
        raise ImportError("The `draw_bounding_boxes` function requires the `cv2` package  (OpenCV). Please "
                          "install it with `pip install opencv-python`.")
    class_mapping = class_mapping or {}
    text_thickness = text_thickness or line_thickness
    shape = _require_batch(images)
    if not isinstance(bounding_boxes, dict):
        raise TypeError(f"`bounding_boxes` should be a dict. Received: bounding_boxes={bounding_boxes} of type "
                        f"{type(bounding_boxes)}")
    if "boxes" not in bounding_boxes or "labels" not in bounding_boxes:
        raise ValueError(f"`bounding_boxes` should be a dict containing 'boxes' and 'labels' keys. Received: "
                         f"bounding_boxes={bounding_boxes}")
    channels_last = _data_format(data_format) == "channels_last"
    height, width = (shape[1], shape[2]) if channels_last else (shape[2], shape[3])
    boxes = _numpy(bounding_boxes_lib.convert_format(_numpy(bounding_boxes["boxes"]), bounding_box_format, "xyxy",
                                                     height=height, width=width))
    labels = _numpy(bounding_boxes["labels"])
    confidences = _numpy(bounding_boxes["confidences"]) if "confidences" in bounding_boxes else None
    images = _numpy(images)
    if images.dtype.kind == "f" and images.size > 0:
        images = np.clip(images, 0, 1) * 255 if images.max() <= 1.0 else np.clip(images, 0, 255)
    images = images.astype("uint8")
    drawn = []
    for i in range(images.shape[0]):
        image = np.ascontiguousarray(images[i])
        for j in range(boxes[i].shape[0]):
            x1, y1, x2, y2 = (int(v) for v in boxes[i][j].astype("int32"))
            label = int(labels[i][j])
            if label == -1:
                continue
            cv2.rectangle(image, (x1, y1), (x2, y2), color, line_thickness)
            if label in class_mapping:
                text = class_mapping[label]
                if confidences is not None:
                    text = f"{text} | {confidences[i][j]:.2f}"
                cv2.putText(img=image, text=text, org=_text_origin(x1, y1, font_scale, text_thickness),
                            fontFace=cv2.FONT_HERSHEY_SIMPLEX, fontScale=font_scale, color=color,
                            thickness=text_thickness)
        drawn.append(image)
    return np.stack(drawn, axis=0)


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def plot_image_gallery(images: Any, y_true: Any = None, y_pred: Any = None, label_map: Optional[dict] = None,
                       rows: Optional[int] = None, cols: Optional[int] = None, value_range: Sequence = (0, 255),
                       scale: float = 2, path: Optional[str] = None, show: Optional[bool] = None,
                       transparent: bool = True, dpi: int = 60, legend_handles: Any = None,
                       data_format: Optional[str] = None) -> None:
    """Shows (or saves to `path`) a rows x cols matplotlib grid of the images, titled with `label_map`'s
    names for `y_true` / `y_pred`. Needs matplotlib."""
    plt = _pyplot()
    if plt is None:
        raise ImportError("The `plot_image_gallery` function requires the `matplotlib` package. Please install "
                          "it with `pip install matplotlib`.")
    if path is not None and show:
        raise ValueError("plot_gallery() expects either `path` to be set, or `show` to be true.")
    if (y_true is not None or y_pred is not None) and label_map is None:
        raise ValueError("If `y_true` or `y_pred` are provided, a `label_map` must also be provided.")
    show = show if show is not None else path is None
    images = _numpy(images)
    batch = images.shape[0] if images.ndim == 4 else 1
    images = images if images.ndim == 4 else images[None]
    rows = rows or int(math.ceil(math.sqrt(batch)))
    cols = cols or int(math.ceil(batch // rows))
    images = images[:rows * cols]
    if _data_format(data_format) == "channels_first":
        images = images.transpose(0, 2, 3, 1)
    low, high = value_range
    images = (images.astype("float32") - low) * (255.0 / (high - low))  # into 0..255 for display
    fig, axes = plt.subplots(nrows=rows, ncols=cols, figsize=(cols * scale, rows * scale), frameon=False,
                             layout="tight", squeeze=True, sharex="row", sharey="col")
    fig.subplots_adjust(wspace=0, hspace=0)
    if isinstance(axes, np.ndarray) and axes.ndim == 1:
        axes = np.expand_dims(axes, 0 if rows == 1 else -1)
    if legend_handles is not None:
        fig.legend(handles=legend_handles, loc="lower center")
    y_true = None if y_true is None else _numpy(y_true)
    y_pred = None if y_pred is None else _numpy(y_pred)
    for row in range(rows):
        for col in range(cols):
            index = row * cols + col
            axis = axes[row, col] if isinstance(axes, np.ndarray) else axes
            axis.imshow(images[index].astype("uint8"))
            axis.margins(x=0, y=0)
            axis.axis("off")
            title = []
            if y_true is not None and index < len(y_true):
                title.append(f"Label: {label_map.get(y_true[index], 'Unknown')}")
            if y_pred is not None and index < len(y_pred):
                title.append(f"Pred: {label_map.get(y_pred[index], 'Unknown')}")
            if title:
                axis.set_title("  ".join(title), fontsize=8)
    if path is not None:
        plt.savefig(fname=path, pad_inches=0, bbox_inches="tight", transparent=transparent, dpi=dpi)
        plt.close()
    elif show:
        plt.show()
        plt.close()


def plot_bounding_box_gallery(images: Any, bounding_box_format: str, y_true: Any = None, y_pred: Any = None,
                              value_range: Sequence = (0, 255), true_color: Sequence = (0, 188, 212),
                              pred_color: Sequence = (255, 235, 59), line_thickness: int = 2,
                              font_scale: float = 1.0, text_thickness: Optional[int] = None,
                              class_mapping: Optional[dict] = None, ground_truth_mapping: Optional[dict] = None,
                              prediction_mapping: Optional[dict] = None, legend: bool = False,
                              legend_handles: Any = None, rows: Optional[int] = None, cols: Optional[int] = None,
                              data_format: Optional[str] = None, **kwargs: Any) -> None:
    """`plot_image_gallery` of the images with the true and predicted boxes drawn on (matplotlib + OpenCV)."""
    try:
        from matplotlib import patches
    except ImportError:
        patches = None
    if patches is None:
        raise ImportError("The `plot_bounding_box_gallery` function requires the  `matplotlib` package. Please "
                          "install it with  `pip install matplotlib`.")
    prediction_mapping = prediction_mapping or class_mapping
    ground_truth_mapping = ground_truth_mapping or class_mapping
    _require_batch(images)
    plotted = _numpy(images)
    if _data_format(data_format) == "channels_first":
        plotted = plotted.transpose(0, 2, 3, 1)
    draw = functools.partial(draw_bounding_boxes, bounding_box_format=bounding_box_format,
                             line_thickness=line_thickness, text_thickness=text_thickness, font_scale=font_scale,
                             data_format="channels_last")
    if y_true is not None:
        plotted = draw(plotted, y_true, color=true_color, class_mapping=ground_truth_mapping)
    if y_pred is not None:
        plotted = draw(plotted, y_pred, color=pred_color, class_mapping=prediction_mapping)
    if legend:
        if legend_handles:
            raise ValueError("Only pass `legend` OR `legend_handles` to "
                             "`keras.visualization.plot_bounding_box_gallery()`.")
        legend_handles = [patches.Patch(color=np.array(true_color) / 255.0, label="Ground Truth"),
                          patches.Patch(color=np.array(pred_color) / 255.0, label="Prediction")]
    return plot_image_gallery(plotted, value_range=value_range, legend_handles=legend_handles, rows=rows,
                              cols=cols, data_format="channels_last", **kwargs)


def plot_segmentation_mask_gallery(images: Any, num_classes: int, value_range: Sequence = (0, 255),
                                   y_true: Any = None, y_pred: Any = None, color_mapping: Optional[dict] = None,
                                   blend: bool = True, alpha: float = 0.8, ignore_index: int = -1,
                                   data_format: Optional[str] = None, **kwargs: Any) -> None:
    """A gallery with one row per image: the image, then its true and predicted masks drawn on it."""
    _require_batch(images)
    images_np = _numpy(images)
    channels_first = _data_format(data_format) == "channels_first"
    if channels_first:
        images_np = images_np.transpose(0, 2, 3, 1)
    draw = functools.partial(draw_segmentation_masks, num_classes=num_classes, color_mapping=color_mapping,
                             alpha=alpha, ignore_index=ignore_index, blend=blend, data_format="channels_last")
    columns = [images_np]
    for masks in (y_true, y_pred):
        if masks is not None:
            masks = _numpy(masks).astype("int32")
            columns.append(_numpy(draw(images_np, masks.transpose(0, 2, 3, 1) if channels_first else masks)))
    gallery = np.stack([column[i] for i in range(images_np.shape[0]) for column in columns], axis=0)
    return plot_image_gallery(gallery, value_range=value_range, rows=images_np.shape[0], cols=len(columns),
                              data_format="channels_last", **kwargs)
