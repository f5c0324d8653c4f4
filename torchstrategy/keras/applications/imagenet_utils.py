"""`keras.applications.imagenet_utils`: ImageNet input preprocessing ('caffe', 'tf', 'torch' modes)
and `decode_predictions` (class index file read from Keras's cache)."""
from __future__ import annotations

import json
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.keras.applications import _common

CLASS_INDEX_URL = "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json"
_CAFFE_MEAN = (103.939, 116.779, 123.68)  # BGR
_TORCH_MEAN = (0.485, 0.456, 0.406)
_TORCH_STD = (0.229, 0.224, 0.225)
_class_index: Optional[dict] = None


def _channel_view(ndim: int, data_format: str) -> tuple:
    """Broadcast shape of a 3-vector over the channel axis."""
    if data_format == "channels_last":
        return (1,) * (ndim - 1) + (3,)
    return (3, 1, 1) if ndim == 3 else (1, 3) + (1,) * (ndim - 2)


def _channel_axis(ndim: int, data_format: str) -> int:
    if data_format == "channels_last":
        return ndim - 1
    return 0 if ndim == 3 else 1


def preprocess_input(x: Any, data_format: Optional[str] = None, mode: str = "caffe") -> Any:
    """Scales a batch of RGB images (0..255) for an ImageNet model: 'caffe' (RGB->BGR, minus the BGR
    means), 'tf' (to [-1, 1]) or 'torch' (to [0, 1], then per-channel mean/std). NumPy float input is
    changed in place, as in Keras."""
    if mode not in ("caffe", "tf", "torch"):
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    if data_format is None:
        data_format = "channels_last"
    elif data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Expected data_format to be one of `channels_first` or `channels_last`. Received: "
                         f"data_format={data_format}")
    if isinstance(x, np.ndarray):
        if not issubclass(x.dtype.type, np.floating):
            x = x.astype("float32", copy=False)
        lib_mean = lambda values: np.asarray(values, dtype=x.dtype).reshape(_channel_view(x.ndim, data_format))  # noqa: E731
    else:
        x = torch.as_tensor(x)
        if not x.is_floating_point():
            x = x.to(torch.float32)
        lib_mean = lambda values: torch.tensor(values, dtype=x.dtype, device=x.device).reshape(  # noqa: E731
            _channel_view(x.ndim, data_format))
    numpy = isinstance(x, np.ndarray)
    if mode == "tf":
        if numpy:  # in place, as Keras does on NumPy input
            x /= 127.5
            x -= 1.0
            return x
        return x / 127.5 - 1.0
    if mode == "torch":
        if numpy:
            x /= 255.0
            x -= lib_mean(_TORCH_MEAN)
            x /= lib_mean(_TORCH_STD)
            return x
        return (x / 255.0 - lib_mean(_TORCH_MEAN)) / lib_mean(_TORCH_STD)
    axis = _channel_axis(x.ndim, data_format)
    if numpy:
        x = np.flip(x, axis=axis)
        x -= lib_mean(_CAFFE_MEAN)  # in place through the flipped view, as Keras does
        return np.ascontiguousarray(x)  # torch (and tf.data here) refuse negative strides
    return torch.flip(x, dims=(axis,)) - lib_mean(_CAFFE_MEAN)


def decode_predictions(preds: Any, top: int = 5) -> list:
    """The `top` ImageNet classes of each row of `preds` (batch, 1000) as (class_id, name, score), best
    first. Reads `imagenet_class_index.json` from Keras's cache (~/.keras/models)."""
    global _class_index
    shape = tuple(preds.shape)
    if len(shape) != 2 or shape[1] != 1000:
        raise ValueError(f"`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape "
                         f"(samples, 1000)). Received array with shape: {shape}")
    if _class_index is None:
        with open(_common.cached_file("imagenet_class_index.json", CLASS_INDEX_URL)) as handle:
            _class_index = json.load(handle)
    array = preds.detach().cpu().numpy() if isinstance(preds, torch.Tensor) else np.asarray(preds)
    results = []
    for row in array:
        best = row.argsort()[-top:][::-1]
        entries = [tuple(_class_index[str(i)]) + (row[i],) for i in best]
        entries.sort(key=lambda entry: entry[2], reverse=True)
        results.append(entries)
    return results
