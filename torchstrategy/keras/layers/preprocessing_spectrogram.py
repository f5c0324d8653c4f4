"""Keras 3's audio front ends: STFTSpectrogram (an STFT as a strided 1-D convolution with trainable
cosine/sine kernels) and MelSpectrogram (a centred STFT, HTK mel filter bank and decibel scale)."""
from __future__ import annotations

import math
import warnings
from typing import Any, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.core import _normalize_data_format

_MODES = ("log", "magnitude", "psd", "real", "imag", "angle", "stft")
_EPSILON = 1e-7  # keras.backend.epsilon()
_MEL_BREAK_HZ, _MEL_HIGH_Q = 700.0, 1127.0


def window_values(name: str, length: int, periodic: bool) -> np.ndarray:
    """scipy.signal.get_window(name, length, fftbins=periodic) for the common cosine windows."""
    coefficients = {"hann": (0.5, 0.5, 0.0), "hanning": (0.5, 0.5, 0.0), "hamming": (0.54, 0.46, 0.0),
                    "blackman": (0.42, 0.5, 0.08)}
    if name in ("boxcar", "rect", "rectangular", "ones"):
        return np.ones(length)
    if name not in coefficients:
        raise ValueError(f"window={name!r} is not a window torchstrategy can build; use one of "
                         f"{sorted(coefficients) + ['boxcar']}, or pass the window's values as an array.")
    if length == 1:
        return np.ones(1)
    a0, a1, a2 = coefficients[name]
    span = length if periodic else length - 1  # a periodic window is the symmetric one of length + 1, cut
    n = np.arange(length, dtype=np.float64)
    return a0 - a1 * np.cos(2 * np.pi * n / span) + a2 * np.cos(4 * np.pi * n / span)


def stft_kernel(side: str, window: Any, scaling: Optional[str], periodic: bool, frame_length: int,
                fft_length: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Keras's STFT initializer: the (frame_length, 1, fft_length // 2 + 1) cosine (`side='real'`) or sine
    (`'imag'`) kernel, times the window divided by its L2 ('density') or L1 ('spectrum') norm."""
    bins = fft_length // 2 + 1
    freq = torch.arange(bins, dtype=dtype).reshape(1, 1, bins) / float((bins - 1) * 2)
    time = torch.arange(frame_length, dtype=dtype).reshape(frame_length, 1, 1)
    args = (-2 * time) * freq * torch.arccos(torch.tensor(-1.0, dtype=dtype))
    kernel = torch.cos(args) if side == "real" else torch.sin(args)
    if window is None:
        return kernel
    values = window_values(window, frame_length, periodic) if isinstance(window, str) else np.asarray(window)
    win = torch.as_tensor(values).to(dtype)
    if win.dim() != 1 or win.shape[0] != frame_length:
        raise ValueError(f"The shape of `window` must be equal to [frame_length].Received: window shape="
                         f"{tuple(win.shape)}")
    win = win.reshape(frame_length, 1, 1)
    scale = torch.ones((), dtype=dtype)
    if scaling == "density":
        scale = torch.sqrt(torch.sum(win * win))
    elif scaling == "spectrum":
        scale = torch.sum(win.abs())
    return kernel * win / scale


class STFTSpectrogram(Layer):
    """The short-time Fourier transform of each channel of (batch, time, channels) signals
    ((batch, channels, time) with channels_first), as convolutions with `real_kernel`/`imag_kernel`
    weights (trainable unless trainable=False). `mode`: 'log', 'magnitude', 'psd', 'real', 'imag', 'angle' or
    'stft'; output (batch, frames, channels * bins), or (batch, frames, bins, channels) with expand_dims.

    >>> STFTSpectrogram(frame_length=8, frame_step=4)(torch.zeros(1, 32, 1)).shape
    torch.Size([1, 7, 5])
    """

    def __init__(self, mode: str = "log", frame_length: int = 256, frame_step: Optional[int] = None,
                 fft_length: Optional[int] = None, window: Any = "hann", periodic: bool = False,
                 scaling: Optional[str] = "density", padding: str = "valid", expand_dims: bool = False,
                 data_format: Optional[str] = None, **kwargs: Any) -> None:
        if frame_step is not None and (frame_step > frame_length or frame_step < 1):
            raise ValueError("`frame_step` should be a positive integer not greater than `frame_length`. "
                             f"Received frame_step={frame_step}, frame_length={frame_length}")
        if fft_length is not None and fft_length < frame_length:
            raise ValueError("`fft_length` should be not less than `frame_length`. "
                             f"Received fft_length={fft_length}, frame_length={frame_length}")
        if fft_length is not None and (fft_length & -fft_length) != fft_length:
            warnings.warn(f"`fft_length` is recommended to be a power of two. Received fft_length={fft_length}")
        if mode not in _MODES:
            raise ValueError(f"Output mode is invalid, it must be one of {', '.join(_MODES)}. Received: mode={mode}")
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(f"Scaling is invalid, it must be `None`, 'density' or 'spectrum'. "
                             f"Received scaling={scaling}")
        if padding not in ("valid", "same"):
            raise ValueError(f"Padding is invalid, it should be 'valid', 'same'. Received: padding={padding}")
        if isinstance(window, str):
            window_values(window, 1, periodic)  # an unknown name fails here, as Keras's scipy check
        super().__init__(**kwargs)
        self.mode, self.frame_length, self.frame_step, self.fft_length = mode, frame_length, frame_step, fft_length
        self._frame_step = frame_step or frame_length // 2
        self._fft_length = fft_length or 2 ** int(math.ceil(math.log2(frame_length)))
        self.window, self.periodic, self.scaling, self.padding = window, periodic, scaling, padding
        self.expand_dims = expand_dims
        self.data_format = _normalize_data_format(data_format)

    def build(self, input_shape: Any) -> None:
        shape = (self.frame_length, 1, self._fft_length // 2 + 1)
        for side in ("real", "imag"):
            if self.mode != ("imag" if side == "real" else "real"):
                value = stft_kernel(side, self.window, self.scaling, self.periodic, self.frame_length,
                                    self._fft_length)
                weight = self.add_weight(name=f"{side}_kernel", shape=shape, initializer="zeros")
                with torch.no_grad():
                    weight.copy_(value.to(weight.dtype))

    def _conv(self, signals: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
        """(batch, channels, time) -> (batch, channels, bins, frames)."""
        n, channels, time = signals.shape
        x = signals.reshape(n * channels, 1, time)
        if self.padding == "same":  # TF's 'same': output ceil(time / step), the extra pad on the right
            frames = -(-time // self._frame_step)
            total = max((frames - 1) * self._frame_step + self.frame_length - time, 0)
            x = F.pad(x, (total // 2, total - total // 2))
        weight = kernel.to(x.dtype).permute(2, 1, 0)  # (bins, 1, frame_length)
        out = F.conv1d(x, weight, stride=self._frame_step)
        return out.reshape(n, channels, out.shape[1], out.shape[2])

    def _arrange(self, outputs: torch.Tensor) -> torch.Tensor:
        n, channels, bins, frames = outputs.shape
        if self.expand_dims:
            return outputs.permute(0, 3, 2, 1) if self.data_format == "channels_last" else outputs.transpose(2, 3)
        flat = outputs.reshape(n, channels * bins, frames)
        return flat.transpose(1, 2) if self.data_format == "channels_last" else flat

    def call(self, inputs: Any) -> torch.Tensor:
        signals = backend.to_tensor(inputs)
        if signals.dtype not in (torch.float16, torch.float32, torch.float64):
            raise TypeError(f"Invalid input type. Expected `float16`, `float32` or `float64`. Received: input "
                            f"type={backend.standardize_dtype(signals.dtype)}")
        if signals.dim() != 3:
            raise ValueError(f"Layer '{self.name}' expects (batch, time, channels) signals (or (batch, channels, "
                             f"time) with channels_first), got shape {tuple(signals.shape)}.")
        if self.data_format == "channels_last":
            signals = signals.transpose(1, 2)
        real = self._conv(signals, self.real_kernel) if self.mode != "imag" else None
        imag = self._conv(signals, self.imag_kernel) if self.mode != "real" else None
        if self.mode == "real":
            return self._arrange(real)
        if self.mode == "imag":
            return self._arrange(imag)
        if self.mode == "angle":
            return self._arrange(torch.atan2(imag, real))
        if self.mode == "stft":
            return self._arrange(torch.cat([real, imag], dim=2))
        power = real * real + imag * imag
        if self.mode == "psd":  # one-sided density: every bin but DC and Nyquist counted twice
            return self._arrange(power + F.pad(power[:, :, 1:-1, :], (0, 0, 1, 1)))
        magnitude = self._arrange(torch.sqrt(torch.clamp(power, min=_EPSILON)))
        if self.mode == "magnitude":
            return magnitude
        return torch.log(torch.clamp(magnitude, min=_EPSILON))

    def compute_output_shape(self, input_shape: Sequence[Optional[int]]) -> tuple:
        batch = input_shape[0]
        time, channels = (input_shape[1], input_shape[2]) if self.data_format == "channels_last" else \
            (input_shape[2], input_shape[1])
        bins = (self._fft_length // 2 + 1) * (2 if self.mode == "stft" else 1)
        if time is None:
            frames = None
        elif self.padding == "same":
            frames = -(-time // self._frame_step)
        else:
            frames = (time - self.frame_length) // self._frame_step + 1
        if self.expand_dims:
            return (batch, frames, bins, channels) if self.data_format == "channels_last" else \
                (batch, channels, frames, bins)
        size = None if channels is None else bins * channels
        return (batch, frames, size) if self.data_format == "channels_last" else (batch, size, frames)

    def get_config(self) -> dict:
        return {**super().get_config(), "mode": self.mode, "frame_length": self.frame_length,
                "frame_step": self.frame_step, "fft_length": self.fft_length, "window": self.window,
                "periodic": self.periodic, "scaling": self.scaling, "padding": self.padding,
                "data_format": self.data_format, "expand_dims": self.expand_dims}


def _hertz_to_mel(hertz: torch.Tensor) -> torch.Tensor:
    return _MEL_HIGH_Q * torch.log(1.0 + hertz / _MEL_BREAK_HZ)


def mel_weight_matrix(num_mel_bins: int, num_spectrogram_bins: int, sampling_rate: float, lower_edge_hertz: float,
                      upper_edge_hertz: float, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Keras's (HTK) linear-to-mel matrix, (num_spectrogram_bins, num_mel_bins): triangles of peak 1 evenly
    spaced on the mel scale between the edges; the DC bin maps to nothing."""
    linear = torch.linspace(0.0, sampling_rate / 2.0, num_spectrogram_bins, dtype=dtype)[1:]
    bins_mel = _hertz_to_mel(linear).unsqueeze(1)
    edges = torch.linspace(float(_hertz_to_mel(torch.tensor(float(lower_edge_hertz), dtype=dtype))),
                           float(_hertz_to_mel(torch.tensor(float(upper_edge_hertz), dtype=dtype))),
                           num_mel_bins + 2, dtype=dtype)
    lower, center, upper = edges[:-2].unsqueeze(0), edges[1:-1].unsqueeze(0), edges[2:].unsqueeze(0)
    lower_slopes = (bins_mel - lower) / (center - lower)
    upper_slopes = (upper - bins_mel) / (upper - center)
    weights = torch.clamp(torch.minimum(lower_slopes, upper_slopes), min=0.0)
    return F.pad(weights, (0, 0, 1, 0))


class MelSpectrogram(Layer):
    """Mel spectrograms of (batch, samples) or (samples,) audio: a centred (reflect-padded) STFT with a periodic
    `window`, magnitudes to the power `mag_exp`, a `num_mel_bins` HTK filter bank over [min_freq, max_freq]
    and, with power_to_db, decibels relative to `ref_power` floored at (max over the whole input - top_db).
    Output (batch, num_mel_bins, frames); no weights.

    >>> MelSpectrogram(fft_length=64, sequence_stride=16, num_mel_bins=8)(torch.zeros(2, 160)).shape
    torch.Size([2, 8, 11])
    """

    def __init__(self, fft_length: int = 2048, sequence_stride: int = 512, sequence_length: Optional[int] = None,
                 window: Any = "hann", sampling_rate: int = 16000, num_mel_bins: int = 128, min_freq: float = 20.0,
                 max_freq: Optional[float] = None, power_to_db: bool = True, top_db: float = 80.0,
                 mag_exp: float = 2.0, min_power: float = 1e-10, ref_power: float = 1.0, **kwargs: Any) -> None:
        self.fft_length, self.sequence_stride = fft_length, sequence_stride
        self.sequence_length = sequence_length or fft_length
        if self.fft_length < self.sequence_length:
            raise ValueError("`fft_length` must be greater than or equal to `sequence_length`. Received: "
                             f"`sequence_length`={self.sequence_length}, `fft_length`={self.fft_length}.")
        if isinstance(window, str) and window not in ("hann", "hamming"):
            raise ValueError(f'If a string is passed to `window`, it must be one of `"hann"`, `"hamming"`. '
                             f"Received: window={window}")
        super().__init__(**kwargs)
        self.window, self.sampling_rate, self.num_mel_bins = window, sampling_rate, num_mel_bins
        self.min_freq, self.max_freq = min_freq, max_freq or int(sampling_rate / 2)
        self.power_to_db, self.top_db, self.mag_exp = power_to_db, top_db, mag_exp
        self.min_power, self.ref_power = min_power, ref_power
        self.built = True

    def _cast_inputs(self, inputs: Any) -> Any:
        return inputs

    def _window(self, dtype: torch.dtype) -> Optional[torch.Tensor]:
        if self.window is None:
            return torch.ones(self.sequence_length, dtype=dtype)
        if isinstance(self.window, str):
            make = torch.hann_window if self.window == "hann" else torch.hamming_window
            return make(self.sequence_length, periodic=True, dtype=dtype)
        win = backend.to_tensor(self.window).to(dtype)
        if win.dim() != 1 or win.shape[0] != self.sequence_length:
            raise ValueError(f"The shape of `window` must be equal to [sequence_length].Received: window shape="
                             f"{tuple(win.shape)}")
        return win

    def call(self, inputs: Any) -> torch.Tensor:
        compute = self._compute_torch_dtype
        dtype = compute if compute in (torch.float32, torch.float64) else torch.float32
        audio = backend.to_tensor(inputs).to(dtype)
        if audio.dim() not in (1, 2):
            raise ValueError(f"Layer '{self.name}' expects (batch, samples) or (samples,) audio, got shape "
                             f"{tuple(audio.shape)}.")
        flat = audio.reshape(-1, audio.shape[-1])
        if flat.shape[-1] <= self.fft_length // 2:
            raise ValueError(f"Layer '{self.name}': the audio ({flat.shape[-1]} samples) must be longer than "
                             f"fft_length // 2 = {self.fft_length // 2} for the reflect padding of a centred STFT.")
        spectrum = torch.stft(flat, n_fft=self.fft_length, hop_length=self.sequence_stride,
                              win_length=self.sequence_length, window=self._window(dtype).to(flat.device),
                              center=True, pad_mode="reflect", return_complex=True)  # (batch, bins, frames)
        power = torch.sqrt(spectrum.real ** 2 + spectrum.imag ** 2) ** self.mag_exp
        matrix = mel_weight_matrix(self.num_mel_bins, power.shape[1], self.sampling_rate, self.min_freq,
                                   self.max_freq, dtype).to(power.device)
        mel = torch.einsum("bft,fm->bmt", power, matrix)
        if self.power_to_db:
            db = 10.0 * torch.log10(torch.clamp(mel, min=self.min_power))
            ref = max(abs(float(self.ref_power)), self.min_power)
            db = db - 10.0 * math.log10(ref)
            mel = torch.maximum(db, db.max() - self.top_db)
        out = mel.to(compute)
        return out[0] if audio.dim() == 1 else out

    def compute_output_shape(self, input_shape: Sequence[Optional[int]]) -> tuple:
        samples = input_shape[-1]
        frames = None if samples is None else (samples + self.sequence_stride + 1) // self.sequence_stride
        if len(input_shape) == 1:
            return (self.num_mel_bins, frames)
        return (input_shape[0], self.num_mel_bins, frames)

    def get_config(self) -> dict:
        return {**super().get_config(), "fft_length": self.fft_length, "sequence_stride": self.sequence_stride,
                "sequence_length": self.sequence_length, "window": self.window,
                "sampling_rate": self.sampling_rate, "num_mel_bins": self.num_mel_bins, "min_freq": self.min_freq,
                "max_freq": self.max_freq, "power_to_db": self.power_to_db, "top_db": self.top_db,
                "mag_exp": self.mag_exp, "min_power": self.min_power, "ref_power": self.ref_power}
