"""tf.summary's data ops: `scalar`, `histogram`, `image`, `text`, `audio` (and `graph`), each written as the
tensor and plugin metadata TensorBoard 2's scalars/histograms/images/text/audio dashboards read."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy import audio as tf_audio
from torchstrategy import image as tf_image
from torchstrategy.summary import writer as _writer

_DEFAULT_BUCKETS = 30
_WAV = 11  # AudioPluginData.Encoding.WAV


def _numpy(data: Any, dtype: Any = None) -> np.ndarray:
    if callable(data) and not isinstance(data, (torch.Tensor, np.ndarray)):
        data = data()
    if isinstance(data, torch.Tensor):
        data = data.detach().cpu()
        data = data.float().numpy() if data.dtype == torch.bfloat16 else data.numpy()
    return np.asarray(data, dtype=dtype)


def scalar(name: str, data: Any, step: Any = None, description: Optional[str] = None) -> bool:
    """Writes a scalar (as float32) under `name` at `step` for TensorBoard's scalars dashboard; returns
    whether it was written (False without a default writer or outside `record_if`).

    >>> import torchstrategy as tf
    >>> tf.summary.scalar("loss", 0.5, step=1)  # no default writer: nothing written
    False
    """
    if not _writer.should_record_summaries():
        return False
    value = _numpy(data, np.float32)
    if value.shape != ():
        raise ValueError(f"tf.summary.scalar({name!r}) needs a scalar, got shape {value.shape}; reduce it first "
                         "(e.g. tf.reduce_mean) or use tf.summary.histogram.")
    with _writer.summary_scope(name, "scalar_summary") as (tag, _):
        metadata = _writer.summary_metadata("scalars", description=description, data_class="DATA_CLASS_SCALAR")
        return _writer.write_value(tag, value, step, metadata)


def histogram_buckets(data: Any, buckets: Optional[int] = None) -> np.ndarray:
    """TensorBoard's histogram of `data`: a float64 array of [left edge, right edge, count] rows, `buckets`
    (30) equal-width buckets over [min, max]; all-zero rows for empty data, a single value's count in the
    last bucket (both edges at the value)."""
    count = _DEFAULT_BUCKETS if buckets is None else max(0, int(buckets))
    values = _numpy(data, np.float64).reshape(-1)
    if values.size == 0 or count == 0:
        return np.zeros((count, 3), np.float64)
    low, high = values.min(), values.max()
    if high == low:
        counts = np.zeros(count, np.float64)
        counts[-1] = values.size
        return np.stack([np.full(count, high), np.full(count, high), counts], axis=1)
    width = (high - low) / count
    indices = np.minimum(np.floor((values - low) / width).astype(np.int64), count - 1)
    counts = np.bincount(indices, minlength=count).astype(np.float64)
    edges = np.linspace(low, high, count + 1)
    edges[-1] = high
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def histogram(name: str, data: Any, step: Any = None, buckets: Optional[int] = None,
              description: Optional[str] = None) -> bool:
    """Writes a histogram of `data` (any shape, `buckets` equal-width buckets, 30 by default) for
    TensorBoard's histograms and distributions dashboards; returns whether it was written."""
    if not _writer.should_record_summaries():
        return False
    with _writer.summary_scope(name, "histogram_summary") as (tag, _):
        metadata = _writer.summary_metadata("histograms", description=description, data_class="DATA_CLASS_TENSOR")
        return _writer.write_value(tag, histogram_buckets(data, buckets), step, metadata)


def image(name: str, data: Any, step: Any = None, max_outputs: int = 3, description: Optional[str] = None) -> bool:
    """Writes up to `max_outputs` images of the batch `data` ([k, height, width, channels], channels 1, 3 or 4;
    floats in [0, 1] or integers) as PNGs for TensorBoard's images dashboard; returns whether written."""
    if not _writer.should_record_summaries():
        return False
    images = data() if callable(data) and not isinstance(data, (torch.Tensor, np.ndarray)) else data
    images = tf_image.convert_image_dtype(images, torch.uint8, saturate=True).detach().cpu()
    if images.dim() != 4 or images.shape[-1] not in (1, 3, 4):
        raise ValueError(f"tf.summary.image({name!r}) needs a batch of shape [k, height, width, channels] with "
                         f"1, 3 or 4 channels, got shape {tuple(images.shape)}; add a batch axis for one image.")
    height, width = int(images.shape[1]), int(images.shape[2])
    encoded = [tf_image.encode_png(picture) for picture in images[:max(0, int(max_outputs))]]
    value = np.array([str(width).encode(), str(height).encode(), *encoded], dtype=object)
    with _writer.summary_scope(name, "image_summary") as (tag, _):
        metadata = _writer.summary_metadata("images", description=description, data_class="DATA_CLASS_BLOB_SEQUENCE")
        return _writer.write_value(tag, value, step, metadata)


def text(name: str, data: Any, step: Any = None, description: Optional[str] = None) -> bool:
    """Writes a string or a tensor of strings (a Markdown table when 2-D) for TensorBoard's text dashboard;
    returns whether it was written."""
    if not _writer.should_record_summaries():
        return False
    if callable(data):
        data = data()
    strings = np.asarray(data, dtype=object)
    if strings.size and not all(isinstance(item, (str, bytes)) for item in strings.flat):
        raise ValueError(f"tf.summary.text({name!r}) needs strings, got {type(strings.flat[0]).__name__} values; "
                         "format them first (e.g. str(x) or tf.strings.as_string).")
    encoded = np.vectorize(lambda item: item.encode() if isinstance(item, str) else item, otypes=[object])(strings) \
        if strings.size else strings
    with _writer.summary_scope(name, "text_summary") as (tag, _):
        metadata = _writer.summary_metadata("text", description=description, data_class="DATA_CLASS_TENSOR")
        return _writer.write_value(tag, encoded, step, metadata)


def audio(name: str, data: Any, sample_rate: Any, step: Any = None, max_outputs: int = 3,
          encoding: Optional[str] = None, description: Optional[str] = None) -> bool:
    """Writes up to `max_outputs` clips of `data` ([k, samples, channels], floats in [-1, 1]) as WAV files at
    `sample_rate` Hz for TensorBoard's audio dashboard; returns whether it was written."""
    if encoding not in (None, "wav"):
        raise ValueError(f"tf.summary.audio: unknown encoding {encoding!r}; the only one is 'wav' (the default).")
    if not _writer.should_record_summaries():
        return False
    clips = _numpy(data, np.float32)
    if clips.ndim != 3:
        raise ValueError(f"tf.summary.audio({name!r}) needs clips of shape [k, samples, channels], got shape "
                         f"{clips.shape}.")
    rate = int(_numpy(sample_rate).item())
    encoded = [tf_audio.encode_wav(clip, rate) for clip in clips[:max(0, int(max_outputs))]]
    value = np.array(encoded, dtype=object)
    with _writer.summary_scope(name, "audio_summary") as (tag, _):
        content = bytes([0x10, _WAV])  # AudioPluginData{encoding: WAV}
        metadata = _writer.summary_metadata("audio", content, description, data_class="DATA_CLASS_BLOB_SEQUENCE")
        return _writer.write_value(tag, value, step, metadata)


def graph(graph_data: Any) -> bool:
    """TF writes a tf.Graph / GraphDef for TensorBoard's graph dashboard; torch programs have no GraphDef, so
    this is refused."""
    raise NotImplementedError("tf.summary.graph writes a TF GraphDef, and torchstrategy runs torch programs, which "
                              "have none. To see a model's structure use model.summary(), or "
                              "torch.utils.tensorboard.SummaryWriter.add_graph(module, example_input).")
