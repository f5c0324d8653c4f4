"""keras.ops.math / core's further ops: segment reductions, scatter / scatter_update / slice_update / get_item,
extract_sequences and the FFTs (fft, fft2, ifft2, rfft, irfft, stft, istft) on (real, imag) pairs."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras.ops._core import _float, _t


# ----- segments -------------------------------------------------------------------------------------------------


def _segment(data: Any, segment_ids: Any, num_segments: Optional[int], reduce: str) -> torch.Tensor:
    values, ids = _t(data), _t(segment_ids).to(torch.int64)
    count = int(num_segments) if num_segments is not None else int(ids.max()) + 1 if ids.numel() else 0
    ids = torch.where((ids >= 0) & (ids < count), ids, torch.full_like(ids, count))  # out of range: dropped
    index = ids.reshape(-1, *([1] * (values.ndim - 1))).expand_as(values)
    fill = {"sum": 0, "prod": 1, "amax": float("-inf"), "amin": float("inf")}[reduce]
    dtype = values.dtype if values.is_floating_point() or reduce in ("sum", "prod") else torch.float64
    out = torch.full((count + 1,) + tuple(values.shape[1:]), fill, dtype=dtype, device=values.device)
    out = out.scatter_reduce(0, index, values.to(dtype), reduce=reduce, include_self=True)
    return out[:count].to(values.dtype) if dtype != values.dtype else out[:count]


def segment_sum(data: Any, segment_ids: Any, num_segments: Optional[int] = None, sorted: bool = False
                ) -> torch.Tensor:
    """Sums of the rows of `data` sharing a segment id (ids outside [0, num_segments) are dropped)."""
    return _segment(data, segment_ids, num_segments, "sum")


def segment_prod(data: Any, segment_ids: Any, num_segments: Optional[int] = None, sorted: bool = False
                 ) -> torch.Tensor:
    return _segment(data, segment_ids, num_segments, "prod")


def segment_max(data: Any, segment_ids: Any, num_segments: Optional[int] = None, sorted: bool = False
                ) -> torch.Tensor:
    return _segment(data, segment_ids, num_segments, "amax")


def segment_min(data: Any, segment_ids: Any, num_segments: Optional[int] = None, sorted: bool = False
                ) -> torch.Tensor:
    return _segment(data, segment_ids, num_segments, "amin")


# ----- indexing updates ---------------------------------------------------------------------------------------


def scatter(indices: Any, values: Any, shape: Any) -> torch.Tensor:
    """A zero tensor of `shape` with `values` added at `indices` (last axis: coordinates), duplicates summed."""
    idx, vals = _t(indices).to(torch.int64), _t(values)
    out = torch.zeros(tuple(int(s) for s in shape), dtype=vals.dtype, device=vals.device)
    coords = tuple(idx[..., i].reshape(-1) for i in range(idx.shape[-1]))
    out.index_put_(coords, vals.reshape(-1, *out.shape[idx.shape[-1]:]), accumulate=True)
    return out


def scatter_update(inputs: Any, indices: Any, updates: Any, reduction: Optional[str] = None) -> torch.Tensor:
    """`inputs` with `updates` written at `indices` (replaced, or combined with 'add', 'mul', 'max', 'min')."""
    out = _t(inputs).clone()
    idx, vals = _t(indices).to(torch.int64), _t(updates).to(out.dtype)
    coords = tuple(idx[..., i].reshape(-1) for i in range(idx.shape[-1]))
    vals = vals.reshape(-1, *out.shape[idx.shape[-1]:])
    if reduction is None:
        out[coords] = vals
    elif reduction == "add":
        out.index_put_(coords, vals, accumulate=True)
    elif reduction in ("mul", "max", "min"):
        for position, value in zip(zip(*coords), vals):
            current = out[position]
            out[position] = current * value if reduction == "mul" else \
                torch.maximum(current, value) if reduction == "max" else torch.minimum(current, value)
    else:
        raise ValueError(f"Unsupported reduction: {reduction}. Expected one of None, 'add', 'mul', 'max', 'min'.")
    return out


def slice_update(inputs: Any, start_indices: Any, updates: Any) -> torch.Tensor:
    """`inputs` with the block starting at `start_indices` replaced by `updates`."""
    out = _t(inputs).clone()
    block = _t(updates).to(out.dtype)
    index = tuple(slice(int(s), int(s) + n) for s, n in zip(start_indices, block.shape))
    out[index] = block
    return out


def get_item(x: Any, key: Any) -> torch.Tensor:
    """x[key]."""
    if isinstance(key, torch.Tensor) and key.dtype != torch.bool:
        key = key.to(torch.int64)
    return _t(x)[key]


# ----- framing and FFTs -----------------------------------------------------------------------------------------


def extract_sequences(x: Any, sequence_length: int, sequence_stride: int) -> torch.Tensor:
    """Frames of `sequence_length` taken every `sequence_stride` along the last axis."""
    return _t(x).unfold(-1, int(sequence_length), int(sequence_stride)).contiguous()


def _complex(x: Any) -> torch.Tensor:
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(f"Input `x` should be a tuple of two tensors - real and imaginary. Received: x={x}")
    real, imag = _float(x[0]), _float(x[1])
    if real.shape != imag.shape:
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary. Both the real and "
                         f"imaginary parts should have the same shape. Received: x[0].shape = {tuple(real.shape)}, "
                         f"x[1].shape = {tuple(imag.shape)}")
    return torch.complex(real, imag.to(real.dtype))


def fft(x: tuple) -> tuple:
    out = torch.fft.fft(_complex(x))
    return out.real, out.imag


def fft2(x: tuple) -> tuple:
    out = torch.fft.fft2(_complex(x))
    return out.real, out.imag


def ifft2(x: tuple) -> tuple:
    out = torch.fft.ifft2(_complex(x))
    return out.real, out.imag


def rfft(x: Any, fft_length: Optional[int] = None) -> tuple:
    out = torch.fft.rfft(_float(x), n=fft_length, dim=-1)
    return out.real, out.imag


def irfft(x: tuple, fft_length: Optional[int] = None) -> torch.Tensor:
    return torch.fft.irfft(_complex(x), n=fft_length, dim=-1)


def _stft_window(window: Any, length: int, dtype: torch.dtype) -> torch.Tensor:
    if window is None:
        return torch.ones(length, dtype=dtype)
    if isinstance(window, str):
        if window not in ("hann", "hamming"):
            raise ValueError(f'If a string is passed to `window`, it must be one of `"hann"`, `"hamming"`. '
                             f"Received: window={window}")
        make = torch.hann_window if window == "hann" else torch.hamming_window
        return make(length, periodic=True, dtype=dtype)
    win = _t(window).to(dtype)
    if win.ndim != 1 or win.shape[-1] != length:
        raise ValueError(f"The shape of `window` must be equal to [sequence_length].Received: window shape="
                         f"{tuple(win.shape)}")
    return win


def stft(x: Any, sequence_length: int, sequence_stride: int, fft_length: int, window: Any = "hann",
         center: bool = True) -> tuple:
    """Short-time Fourier transform of the last axis: (real, imag), each (..., frames, fft_length // 2 + 1)."""
    signal = _t(x)
    if signal.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"Invalid input type. Expected `float32` or `float64`. Received: input type={signal.dtype}")
    if fft_length < sequence_length:
        raise ValueError("`fft_length` must equal or larger than `sequence_length`. Received: "
                         f"sequence_length={sequence_length}, fft_length={fft_length}")
    win = _stft_window(window, sequence_length, signal.dtype)
    *batch, samples = signal.shape
    flat = signal.reshape(-1, samples) if signal.ndim != 1 else signal
    out = torch.stft(flat, n_fft=fft_length, hop_length=sequence_stride, win_length=sequence_length, window=win,
                     center=center, return_complex=True)
    out = out.reshape(*batch, *out.shape[-2:]).transpose(-2, -1)
    return out.real, out.imag


def istft(x: tuple, sequence_length: int, sequence_stride: int, fft_length: int, length: Optional[int] = None,
          window: Any = "hann", center: bool = True) -> torch.Tensor:
    """The inverse of `stft` (overlap-add of the inverse FFTs, divided by the summed squared windows)."""
    spectrum = _complex(x)
    win = _stft_window(window, sequence_length, spectrum.real.dtype)
    *batch, frames, bins = spectrum.shape
    flat = spectrum.reshape(-1, frames, bins).transpose(-2, -1)
    out = torch.istft(flat, n_fft=fft_length, hop_length=sequence_stride, win_length=sequence_length, window=win,
                      center=center, length=length)
    return out.reshape(*batch, out.shape[-1])



