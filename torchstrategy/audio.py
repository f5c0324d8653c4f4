"""`tf.audio`: 16-bit PCM WAV bytes to float32 samples in [-1, 1) and back (`decode_wav`, `encode_wav`),
with TF's sample scaling (x 32768, rounded half away from zero, clamped) and channel/length options."""
from __future__ import annotations

import collections
import struct
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.errors import InvalidArgumentError

DecodeWav = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])
DecodeWav.__doc__ = "What `tf.audio.decode_wav` returns: `audio` (float32, [samples, channels]) and `sample_rate`."

_PCM = 1
_EXTENSIBLE = 0xFFFE


def _as_bytes(contents: Any) -> bytes:
    if isinstance(contents, (bytes, bytearray, memoryview)):
        return bytes(contents)
    if isinstance(contents, np.ndarray) and contents.shape == ():
        return _as_bytes(contents.item())
    if isinstance(contents, str):
        raise TypeError("tf.audio.decode_wav expects the WAV file's bytes, got a str; read the file in binary "
                        "mode (open(path, 'rb').read()) or with tf.io.read_file.")
    raise TypeError(f"tf.audio.decode_wav expects the WAV file's bytes, got {type(contents).__name__}.")


def _chunks(data: bytes) -> dict:
    if len(data) < 12:
        raise InvalidArgumentError(None, None, f"tf.audio.decode_wav: data too short for a WAV header ({len(data)} bytes).")
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise InvalidArgumentError(None, None, f"tf.audio.decode_wav: header mismatch: expected RIFF....WAVE but found "
                                   f"{data[:4]!r}...{data[8:12]!r}; the contents are not a WAV file.")
    chunks, position = {}, 12
    while position + 8 <= len(data):
        chunk_id, size = data[position:position + 4], struct.unpack("<I", data[position + 4:position + 8])[0]
        body = data[position + 8:position + 8 + size]
        if len(body) < size:
            raise InvalidArgumentError(None, None, f"tf.audio.decode_wav: chunk {chunk_id!r} says {size} bytes but only "
                                       f"{len(body)} follow; the file is truncated.")
        chunks.setdefault(chunk_id, body)
        position += 8 + size + (size & 1)  # chunks are padded to even sizes
    for needed in (b"fmt ", b"data"):
        if needed not in chunks:
            raise InvalidArgumentError(None, None, f"tf.audio.decode_wav: no {needed.decode().strip()!r} chunk in the WAV data.")
    return chunks


def decode_wav(contents: Any, desired_channels: int = -1, desired_samples: int = -1,
               name: Optional[str] = None) -> DecodeWav:
    """Decodes a 16-bit PCM WAV file's bytes into float32 samples in [-1, 1) of shape [samples, channels].

    `desired_channels` keeps that many channels (a mono file is repeated to fill them; -1 keeps the file's);
    `desired_samples` truncates or zero-pads to that many samples (-1 keeps them all). The sample rate
    comes back as an int32 scalar tensor.

    >>> import torchstrategy as tf
    >>> wav = tf.audio.encode_wav([[0.5], [-0.25]], 8000)
    >>> tf.audio.decode_wav(wav).audio.flatten().tolist()
    [0.5, -0.25]
    """
    chunks = _chunks(_as_bytes(contents))
    fmt = chunks[b"fmt "]
    if len(fmt) < 16:
        raise InvalidArgumentError(None, None, f"tf.audio.decode_wav: the fmt chunk is {len(fmt)} bytes, needs 16.")
    audio_format, channels, sample_rate, _, _, bits = struct.unpack("<HHIIHH", fmt[:16])
    if audio_format not in (_PCM, _EXTENSIBLE) or bits != 16:
        raise InvalidArgumentError(None, None, f"tf.audio.decode_wav reads 16-bit PCM WAV only; this file has format tag "
                                   f"{audio_format} with {bits} bits per sample. Convert it (e.g. with sox or "
                                   "Python's wave module) to 16-bit PCM first.")
    if channels < 1:
        raise InvalidArgumentError(None, None, "tf.audio.decode_wav: the WAV header says 0 channels.")
    data = chunks[b"data"]
    frames = len(data) // (2 * channels)
    samples = np.frombuffer(data[:frames * 2 * channels], "<i2").reshape(frames, channels)
    audio = samples.astype(np.float32) / 32768.0
    if desired_channels > 0 and desired_channels != channels:
        if channels == 1:
            audio = np.repeat(audio, desired_channels, axis=1)
        elif desired_channels < channels:
            audio = audio[:, :desired_channels]
        else:
            raise InvalidArgumentError(None, None, f"tf.audio.decode_wav: cannot make {desired_channels} channels out of the "
                                       f"file's {channels} (only a mono file is repeated to fill channels).")
    if desired_samples >= 0:
        if desired_samples <= frames:
            audio = audio[:desired_samples]
        else:
            audio = np.concatenate([audio, np.zeros((desired_samples - frames, audio.shape[1]), np.float32)])
    return DecodeWav(torch.from_numpy(np.ascontiguousarray(audio)), torch.tensor(sample_rate, dtype=torch.int32))


def encode_wav(audio: Any, sample_rate: Any, name: Optional[str] = None) -> bytes:
    """Encodes float samples of shape [samples, channels] (values in [-1, 1]; outside is clamped) as 16-bit PCM
    WAV bytes at `sample_rate` Hz.

    >>> import torchstrategy as tf
    >>> tf.audio.encode_wav([[0.0]], 16000)[:4]
    b'RIFF'
    """
    if isinstance(audio, torch.Tensor):
        audio = audio.detach().cpu().numpy()
    array = np.asarray(audio, dtype=np.float32)
    if array.ndim != 2:
        raise InvalidArgumentError(None, None, f"tf.audio.encode_wav expects audio of shape [samples, channels], got shape "
                                   f"{array.shape}; add a channel axis (audio[:, None]) for mono.")
    rate = int(sample_rate.item() if isinstance(sample_rate, (torch.Tensor, np.ndarray)) else sample_rate)
    if rate <= 0 or array.shape[1] < 1:
        raise InvalidArgumentError(None, None, f"tf.audio.encode_wav needs a positive sample_rate and at least one channel, "
                                   f"got sample_rate={rate} and shape {array.shape}.")
    scaled = np.clip(array, -1.0, 1.0).astype(np.float64) * 32768.0
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)  # half away from zero
    pcm = np.clip(rounded, -32768, 32767).astype("<i2").tobytes()
    channels = array.shape[1]
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(pcm), b"WAVE", b"fmt ", 16, _PCM, channels, rate,
                         rate * channels * 2, channels * 2, 16, b"data", len(pcm))
    return header + pcm
