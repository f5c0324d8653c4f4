"""tf.summary's histogram/image/text/audio ops: the tensors and plugin metadata TensorBoard reads, against TF
2.21's numbers (tools/tf_reference/summary_audio.py; TF 2.21.0 with TensorBoard 2.21.0)."""
from __future__ import annotations

import io
import wave

import numpy as np
import pytest
import torch

import torchstrategy as tf

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing import plugin_event_accumulator  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

# TF 2.21 tf.summary.histogram(data, buckets=5) and of three equal values with buckets=4
DATA = np.array([0.3, -1.2, 2.5, 0.0, 0.7, 1.1, -0.4, 2.5, 3.25, -1.2, 0.05, 1.9], np.float32)
TF_HISTOGRAM = [[-1.2000000476837158, -0.31000003814697263, 3.0], [-0.31000003814697263, 0.5799999713897706, 3.0],
                [0.5799999713897706, 1.4699999809265138, 2.0], [1.4699999809265138, 2.359999990463257, 1.0],
                [2.359999990463257, 3.25, 3.0]]
TF_SINGLE = [[1.5, 1.5, 0.0], [1.5, 1.5, 0.0], [1.5, 1.5, 0.0], [1.5, 1.5, 3.0]]


@pytest.fixture(autouse=True)
def _reset_step():
    yield
    tf.summary.experimental.set_step(None)


def read(logdir):
    accumulator = plugin_event_accumulator.EventAccumulator(str(logdir), size_guidance={"tensors": 0})
    accumulator.Reload()
    return accumulator


def test_histograms_match_tensorflow(tmp_path):
    with tf.summary.create_file_writer(str(tmp_path)).as_default(step=7) as writer:
        tf.summary.histogram("h", torch.from_numpy(DATA), buckets=5)
        tf.summary.histogram("single", np.full(3, 1.5, np.float32), buckets=4)
        tf.summary.histogram("empty", np.zeros(0, np.float32))
        tf.summary.histogram("default", np.arange(100))
    writer.close()
    accumulator = read(tmp_path)
    assert accumulator.SummaryMetadata("h").plugin_data.plugin_name == "histograms"
    (h,) = accumulator.Tensors("h")
    assert h.step == 7
    np.testing.assert_allclose(tensor_util.make_ndarray(h.tensor_proto), TF_HISTOGRAM, rtol=1e-12)
    np.testing.assert_array_equal(tensor_util.make_ndarray(accumulator.Tensors("single")[0].tensor_proto), TF_SINGLE)
    np.testing.assert_array_equal(tensor_util.make_ndarray(accumulator.Tensors("empty")[0].tensor_proto),
                                  np.zeros((30, 3)))
    default = tensor_util.make_ndarray(accumulator.Tensors("default")[0].tensor_proto)
    assert default.shape == (30, 3) and default[:, 2].sum() == 100 and default.dtype == np.float64


def test_images_are_width_height_and_pngs(tmp_path):
    from PIL import Image

    pixels = np.random.default_rng(0).random((4, 3, 5, 3)).astype(np.float32)
    with tf.summary.create_file_writer(str(tmp_path)).as_default(step=2) as writer:
        assert tf.summary.image("img", pixels, max_outputs=2)
        tf.summary.image("gray", np.full((1, 2, 2, 1), 200, np.uint8))
    writer.close()
    accumulator = read(tmp_path)
    assert accumulator.SummaryMetadata("img").plugin_data.plugin_name == "images"
    blobs = tensor_util.make_ndarray(accumulator.Tensors("img")[0].tensor_proto)
    assert blobs.shape == (4,) and list(blobs[:2]) == [b"5", b"3"]  # width, height, then max_outputs PNGs
    for index, blob in enumerate(blobs[2:]):
        decoded = np.asarray(Image.open(io.BytesIO(blob)))
        np.testing.assert_array_equal(decoded, (pixels[index] * 255.5).astype(np.uint8))  # TF's float -> uint8
    gray = tensor_util.make_ndarray(accumulator.Tensors("gray")[0].tensor_proto)
    assert np.asarray(Image.open(io.BytesIO(gray[2]))).tolist() == [[200, 200], [200, 200]]


def test_text_keeps_strings_and_shape(tmp_path):
    with tf.summary.create_file_writer(str(tmp_path)).as_default(step=1) as writer:
        tf.summary.text("note", "hello **world**")
        tf.summary.text("table", [["a", "b"], ["c", "d"]])
        with pytest.raises(ValueError, match="needs strings"):
            tf.summary.text("bad", [1, 2])
    writer.close()
    accumulator = read(tmp_path)
    assert accumulator.SummaryMetadata("note").plugin_data.plugin_name == "text"
    assert tensor_util.make_ndarray(accumulator.Tensors("note")[0].tensor_proto) == b"hello **world**"
    table = tensor_util.make_ndarray(accumulator.Tensors("table")[0].tensor_proto)
    assert table.tolist() == [[b"a", b"b"], [b"c", b"d"]]


def test_audio_is_wav_clips_with_the_audio_plugin(tmp_path):
    clips = np.sin(np.linspace(0, 20, 3 * 400)).reshape(3, 400, 1).astype(np.float32) * 0.5
    with tf.summary.create_file_writer(str(tmp_path)).as_default(step=4) as writer:
        assert tf.summary.audio("sound", clips, 8000, max_outputs=2)
    writer.close()
    accumulator = read(tmp_path)
    metadata = accumulator.SummaryMetadata("sound")
    assert metadata.plugin_data.plugin_name == "audio" and metadata.plugin_data.content == b"\x10\x0b"  # WAV
    blobs = tensor_util.make_ndarray(accumulator.Tensors("sound")[0].tensor_proto)
    assert blobs.shape == (2,)
    with wave.open(io.BytesIO(blobs[1])) as clip:
        assert (clip.getframerate(), clip.getnchannels(), clip.getsampwidth(), clip.getnframes()) == (8000, 1, 2, 400)
        samples = np.frombuffer(clip.readframes(400), "<i2")
    np.testing.assert_allclose(samples / 32768.0, clips[1, :, 0], atol=1 / 32768)


def test_bad_inputs_are_clear_errors(tmp_path):
    with tf.summary.create_file_writer(str(tmp_path)).as_default(step=1) as writer:
        with pytest.raises(ValueError, match="needs a scalar"):
            tf.summary.scalar("s", [1.0, 2.0])
        with pytest.raises(ValueError, match=r"\[k, height, width, channels\]"):
            tf.summary.image("i", np.zeros((2, 2, 3), np.float32))
        with pytest.raises(ValueError, match="encoding"):
            tf.summary.audio("a", np.zeros((1, 4, 1), np.float32), 8000, encoding="mp3")
        with pytest.raises(NotImplementedError, match="GraphDef"):
            tf.summary.graph(None)
    writer.close()
