"""tf.audio.decode_wav / encode_wav against TF 2.21's bytes and numbers (tools/tf_reference/summary_audio.py)
and Python's wave module."""
from __future__ import annotations

import io
import wave

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.errors import InvalidArgumentError

CLIP = np.array([[-1.0, 0.5], [-0.5, 0.25], [1.0, 1.5], [0.3, -2], [1 / 65534, -1 / 65534], [3 / 65534, 0.00002]],
                np.float32)
# TF 2.21: tf.audio.encode_wav(CLIP, 16000).numpy() and decode_wav of it
TF_WAV = (b"RIFF<\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00\x80>\x00\x00\x00\xfa\x00\x00\x04\x00\x10\x00"
          b"data\x18\x00\x00\x00\x00\x80\x00@\x00\xc0\x00 \xff\x7f\xff\x7ff&\x00\x80\x01\x00\xff\xff\x02\x00\x01\x00")
TF_DECODED = [[-1.0, 0.5], [-0.5, 0.25], [0.999969482421875, 0.999969482421875], [0.29998779296875, -1.0],
              [3.0517578125e-05, -3.0517578125e-05], [6.103515625e-05, 3.0517578125e-05]]


def test_encode_wav_is_tensorflows_bytes():
    assert tf.audio.encode_wav(CLIP, 16000) == TF_WAV
    assert tf.audio.encode_wav(torch.from_numpy(CLIP), torch.tensor(16000)) == TF_WAV


def test_decode_wav_matches_tensorflow_and_round_trips():
    decoded = tf.audio.decode_wav(TF_WAV)
    assert decoded.audio.dtype == torch.float32 and decoded.sample_rate.dtype == torch.int32
    assert decoded.audio.tolist() == TF_DECODED and int(decoded.sample_rate) == 16000
    audio, rate = decoded  # a namedtuple, as TF's DecodeWav
    assert tf.audio.encode_wav(audio, rate) == TF_WAV


def test_wave_module_reads_ours_and_we_read_its():
    with wave.open(io.BytesIO(TF_WAV)) as clip:
        assert (clip.getnchannels(), clip.getsampwidth(), clip.getframerate(), clip.getnframes()) == (2, 2, 16000, 6)
    buffer = io.BytesIO()
    samples = np.array([0, 1000, -1000, 32767, -32768, 5], "<i2")
    with wave.open(buffer, "wb") as clip:
        clip.setnchannels(1)
        clip.setsampwidth(2)
        clip.setframerate(22050)
        clip.writeframes(samples.tobytes())
    decoded = tf.audio.decode_wav(buffer.getvalue())
    np.testing.assert_array_equal(decoded.audio.numpy()[:, 0], samples / 32768.0)
    assert int(decoded.sample_rate) == 22050


def test_desired_channels_and_samples_as_tensorflow():
    # TF 2.21: decode_wav(stereo, desired_channels=1, desired_samples=8) keeps channel 0, zero-pads to 8
    first = tf.audio.decode_wav(TF_WAV, desired_channels=1, desired_samples=8).audio
    assert first.tolist() == [[row[0]] for row in TF_DECODED] + [[0.0], [0.0]]
    mono = tf.audio.encode_wav(CLIP[:, :1], 8000)
    assert tf.audio.decode_wav(mono, desired_channels=3, desired_samples=2).audio.tolist() == [[-1.0] * 3, [-0.5] * 3]


def test_bad_input_is_a_clear_error():
    with pytest.raises(InvalidArgumentError, match="expected RIFF"):
        tf.audio.decode_wav(b"junk but long enough")
    with pytest.raises(InvalidArgumentError, match="truncated"):
        tf.audio.decode_wav(TF_WAV[:50])
    with pytest.raises(InvalidArgumentError, match="mono"):
        tf.audio.decode_wav(TF_WAV, desired_channels=3)
    with pytest.raises(InvalidArgumentError, match=r"\[samples, channels\]"):
        tf.audio.encode_wav(np.zeros(4, np.float32), 8000)
    with pytest.raises(TypeError, match="binary mode"):
        tf.audio.decode_wav("file.wav")
