"""`tf.signal` on torch tensors: FFTs (1-3-D, n-D, real), shifts, windows, framing and overlap-add, STFT and
its inverse, MDCT, DCT-I..IV, the mel filterbank and MFCCs, with TF's conventions and defaults."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch

from torchstrategy.dtypes import as_dtype


def _tensor(value: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(value).copy())
    return torch.as_tensor(value)


def _int(value: Any, what: str) -> int:
    if isinstance(value, (torch.Tensor, np.ndarray)):
        value = value.item()
    if isinstance(value, bool) or int(value) != value:
        raise TypeError(f"tf.signal: {what} must be an integer, got {value!r}.")
    return int(value)


def _lengths(fft_length: Any, rank: int, op: str) -> Optional[list]:
    if fft_length is None:
        return None
    if isinstance(fft_length, (torch.Tensor, np.ndarray)):
        fft_length = fft_length.reshape(-1).tolist()
    lengths = [int(n) for n in (fft_length if isinstance(fft_length, (list, tuple)) else [fft_length])]
    if len(lengths) != rank:
        raise ValueError(f"tf.signal.{op}: fft_length needs {rank} value(s), one per transformed axis, got {lengths}.")
    return lengths


# ----- complex FFTs over the innermost 1, 2 or 3 axes ------------------------------------------------------
def _complex(input: Any, op: str) -> torch.Tensor:
    tensor = _tensor(input)
    if not tensor.is_complex():
        raise TypeError(f"tf.signal.{op} needs a complex64 or complex128 tensor, got {tensor.dtype}; cast it first "
                        f"(tf.cast(x, tf.complex64)) or use tf.signal.r{op} for real input.")
    return tensor


def _fft_inner(input: Any, rank: int, inverse: bool, op: str) -> torch.Tensor:
    tensor = _complex(input, op)
    if tensor.dim() < rank:
        raise ValueError(f"tf.signal.{op} needs a tensor of rank >= {rank}, got shape {tuple(tensor.shape)}.")
    dims = tuple(range(-rank, 0))
    return torch.fft.ifftn(tensor, dim=dims) if inverse else torch.fft.fftn(tensor, dim=dims)


def fft(input: Any, name: Optional[str] = None) -> torch.Tensor:
    """The discrete Fourier transform over the innermost axis of a complex tensor."""
    return _fft_inner(input, 1, False, "fft")


def ifft(input: Any, name: Optional[str] = None) -> torch.Tensor:
    """The inverse DFT over the innermost axis (scaled by 1/n)."""
    return _fft_inner(input, 1, True, "ifft")


def fft2d(input: Any, name: Optional[str] = None) -> torch.Tensor:
    """The 2-D DFT over the innermost two axes of a complex tensor."""
    return _fft_inner(input, 2, False, "fft2d")


def ifft2d(input: Any, name: Optional[str] = None) -> torch.Tensor:
    """The inverse 2-D DFT over the innermost two axes."""
    return _fft_inner(input, 2, True, "ifft2d")


def fft3d(input: Any, name: Optional[str] = None) -> torch.Tensor:
    """The 3-D DFT over the innermost three axes of a complex tensor."""
    return _fft_inner(input, 3, False, "fft3d")


def ifft3d(input: Any, name: Optional[str] = None) -> torch.Tensor:
    """The inverse 3-D DFT over the innermost three axes."""
    return _fft_inner(input, 3, True, "ifft3d")


# ----- real FFTs -----------------------------------------------------------------------------------------------
def _real(input_tensor: Any, op: str) -> torch.Tensor:
    tensor = _tensor(input_tensor)
    if tensor.dtype not in (torch.float32, torch.float64):
        if tensor.is_floating_point() or tensor.is_complex():
            raise ValueError(f"tf.signal.{op} requires float32 or float64 input, got {tensor.dtype}.")
        tensor = tensor.to(torch.float32)  # Python numbers / ints convert to float32 as in TF
    return tensor


def _rfft_inner(input_tensor: Any, fft_length: Any, rank: int, op: str) -> torch.Tensor:
    tensor = _real(input_tensor, op)
    if tensor.dim() < rank:
        raise ValueError(f"tf.signal.{op} needs a tensor of rank >= {rank}, got shape {tuple(tensor.shape)}.")
    return torch.fft.rfftn(tensor, s=_lengths(fft_length, rank, op), dim=tuple(range(-rank, 0)))


def _irfft_inner(input_tensor: Any, fft_length: Any, rank: int, op: str) -> torch.Tensor:
    tensor = _tensor(input_tensor)
    if not tensor.is_complex():
        raise TypeError(f"tf.signal.{op} needs a complex64 or complex128 tensor (an rfft's output), "
                        f"got {tensor.dtype}.")
    if tensor.dim() < rank:
        raise ValueError(f"tf.signal.{op} needs a tensor of rank >= {rank}, got shape {tuple(tensor.shape)}.")
    lengths = _lengths(fft_length, rank, op)
    if lengths is None:  # TF: the outer axes keep their size, the innermost is 2 * (n - 1)
        lengths = [int(n) for n in tensor.shape[-rank:-1]] + [2 * (int(tensor.shape[-1]) - 1)]
    return torch.fft.irfftn(tensor, s=lengths, dim=tuple(range(-rank, 0)))


def rfft(input_tensor: Any, fft_length: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """The DFT of a real signal over the innermost axis: its `fft_length // 2 + 1` unique bins (the axis
    cropped or zero-padded to `fft_length`, by default its size)."""
    return _rfft_inner(input_tensor, fft_length, 1, "rfft")


def irfft(input_tensor: Any, fft_length: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """The real signal of `fft_length` samples (default 2 * (bins - 1)) whose rfft is `input_tensor`."""
    return _irfft_inner(input_tensor, fft_length, 1, "irfft")


def rfft2d(input_tensor: Any, fft_length: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """The 2-D DFT of a real signal over the innermost two axes (the last halved, as rfft)."""
    return _rfft_inner(input_tensor, fft_length, 2, "rfft2d")


def irfft2d(input_tensor: Any, fft_length: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """The inverse of rfft2d."""
    return _irfft_inner(input_tensor, fft_length, 2, "irfft2d")


def rfft3d(input_tensor: Any, fft_length: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """The 3-D DFT of a real signal over the innermost three axes (the last halved, as rfft)."""
    return _rfft_inner(input_tensor, fft_length, 3, "rfft3d")


def irfft3d(input_tensor: Any, fft_length: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """The inverse of rfft3d."""
    return _irfft_inner(input_tensor, fft_length, 3, "irfft3d")


# ----- n-D FFTs over chosen axes -----------------------------------------------------------------------------
_NORMS = (None, "backward", "ortho", "forward")


def _nd(input_tensor: Any, fft_length: Any, axes: Any, norm: Optional[str], op: str, real: bool) -> tuple:
    if norm not in _NORMS:
        raise ValueError(f"tf.signal.{op}: norm must be None, 'backward', 'ortho' or 'forward', got {norm!r}.")
    tensor = _real(input_tensor, op) if real else _tensor(input_tensor)
    if not real and not tensor.is_complex():
        tensor = tensor.to(torch.complex128 if tensor.dtype == torch.float64 else torch.complex64)
    if axes is None:
        axes = list(range(tensor.dim()))
    axes = [int(a) for a in (axes.reshape(-1).tolist() if isinstance(axes, (torch.Tensor, np.ndarray)) else axes)]
    return tensor, _lengths(fft_length, len(axes), op), tuple(axes), norm or "backward"


def fftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: Optional[str] = None,
          name: Optional[str] = None) -> torch.Tensor:
    """The n-D DFT over `axes` (all by default), each cropped/padded to `fft_length`; `norm` is 'backward'
    (None: no scaling), 'ortho' or 'forward'."""
    tensor, lengths, axes, norm = _nd(input_tensor, fft_length, axes, norm, "fftnd", False)
    return torch.fft.fftn(tensor, s=lengths, dim=axes, norm=norm)


def ifftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: Optional[str] = None,
           name: Optional[str] = None) -> torch.Tensor:
    """The inverse n-D DFT over `axes`."""
    tensor, lengths, axes, norm = _nd(input_tensor, fft_length, axes, norm, "ifftnd", False)
    return torch.fft.ifftn(tensor, s=lengths, dim=axes, norm=norm)


def rfftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: Optional[str] = None,
           name: Optional[str] = None) -> torch.Tensor:
    """The n-D DFT of a real signal over `axes` (the last of them halved, as rfft)."""
    tensor, lengths, axes, norm = _nd(input_tensor, fft_length, axes, norm, "rfftnd", True)
    return torch.fft.rfftn(tensor, s=lengths, dim=axes, norm=norm)


def irfftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: Optional[str] = None,
            name: Optional[str] = None) -> torch.Tensor:
    """The inverse of rfftnd."""
    tensor, lengths, axes, norm = _nd(input_tensor, fft_length, axes, norm, "irfftnd", False)
    return torch.fft.irfftn(tensor, s=lengths, dim=axes, norm=norm)


def fftshift(x: Any, axes: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """Moves the zero-frequency bin to the centre of `axes` (all by default)."""
    tensor = _tensor(x)
    return torch.fft.fftshift(tensor, dim=axes if axes is None or isinstance(axes, int) else tuple(axes))


def ifftshift(x: Any, axes: Any = None, name: Optional[str] = None) -> torch.Tensor:
    """The inverse of fftshift."""
    tensor = _tensor(x)
    return torch.fft.ifftshift(tensor, dim=axes if axes is None or isinstance(axes, int) else tuple(axes))


# ----- windows -------------------------------------------------------------------------------------------------
def _window_dtype(dtype: Any, op: str) -> torch.dtype:
    dtype = as_dtype(dtype)
    if not dtype.is_floating_point:
        raise ValueError(f"tf.signal.{op}: dtype must be a floating point type, got {dtype}.")
    return dtype


def _raised_cosine(window_length: Any, periodic: bool, a: float, b: float, dtype: Any, op: str) -> torch.Tensor:
    length = _int(window_length, "window_length")
    dtype = _window_dtype(dtype, op)
    if length == 1:
        return torch.ones(1, dtype=dtype)
    denominator = length if periodic else length - 1
    n = torch.arange(length, dtype=torch.float64)
    return (a - b * torch.cos(2.0 * math.pi * n / denominator)).to(dtype)


def hann_window(window_length: Any, periodic: bool = True, dtype: Any = torch.float32,
                name: Optional[str] = None) -> torch.Tensor:
    """The Hann window 0.5 - 0.5 cos(2 pi n / N), N = window_length (periodic) or window_length - 1."""
    return _raised_cosine(window_length, bool(periodic), 0.5, 0.5, dtype, "hann_window")


def hamming_window(window_length: Any, periodic: bool = True, dtype: Any = torch.float32,
                   name: Optional[str] = None) -> torch.Tensor:
    """The Hamming window 0.54 - 0.46 cos(2 pi n / N), N as for hann_window."""
    return _raised_cosine(window_length, bool(periodic), 0.54, 0.46, dtype, "hamming_window")


def kaiser_window(window_length: Any, beta: float = 12.0, dtype: Any = torch.float32,
                  name: Optional[str] = None) -> torch.Tensor:
    """The Kaiser window I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta)."""
    length = _int(window_length, "window_length")
    dtype = _window_dtype(dtype, "kaiser_window")
    if length == 1:
        return torch.ones(1, dtype=dtype)
    half = (length - 1) / 2.0
    n = torch.arange(length, dtype=torch.float64) - half
    beta = torch.tensor(float(beta), dtype=torch.float64)
    argument = beta * torch.sqrt(torch.clamp(1.0 - (n / half) ** 2, min=0.0))
    return (torch.exp(argument - beta) * torch.special.i0e(argument) / torch.special.i0e(beta)).to(dtype)


def kaiser_bessel_derived_window(window_length: Any, beta: float = 12.0, dtype: Any = torch.float32,
                                 name: Optional[str] = None) -> torch.Tensor:
    """The Kaiser-Bessel-derived window (for perfect-reconstruction MDCTs)."""
    length = _int(window_length, "window_length")
    kaiser = kaiser_window(length // 2 + 1, beta, dtype=torch.float64)
    cumulative = torch.cumsum(kaiser, 0)
    half = torch.sqrt(cumulative[:-1] / cumulative[-1])
    return torch.cat([half, half.flip(0)]).to(_window_dtype(dtype, "kaiser_bessel_derived_window"))


def vorbis_window(window_length: Any, dtype: Any = torch.float32, name: Optional[str] = None) -> torch.Tensor:
    """The Vorbis power-complementary window sin(pi/2 sin^2(pi (n + 0.5) / N))."""
    length = _int(window_length, "window_length")
    n = torch.arange(length, dtype=torch.float64)
    window = torch.sin(math.pi / 2.0 * torch.sin(math.pi * (n + 0.5) / length) ** 2)
    return window.to(_window_dtype(dtype, "vorbis_window"))


# ----- framing -------------------------------------------------------------------------------------------------
def frame(signal: Any, frame_length: Any, frame_step: Any, pad_end: bool = False, pad_value: Any = 0,
          axis: int = -1, name: Optional[str] = None) -> torch.Tensor:
    """Slides a window of `frame_length` samples by `frame_step` along `axis`: that axis becomes
    [frames, frame_length]; `pad_end` pads the end with `pad_value` so every sample is in a frame.

    >>> import torchstrategy as tf
    >>> tf.signal.frame([1, 2, 3, 4, 5], 3, 2).tolist()
    [[1, 2, 3], [3, 4, 5]]
    """
    tensor = _tensor(signal)
    length, step = _int(frame_length, "frame_length"), _int(frame_step, "frame_step")
    if length <= 0 or step <= 0:
        raise ValueError(f"tf.signal.frame needs positive frame_length and frame_step, got {length}, {step}.")
    if tensor.dim() == 0:
        raise ValueError("tf.signal.frame needs a signal of rank >= 1, got a scalar.")
    axis = axis + tensor.dim() if axis < 0 else axis
    samples = tensor.shape[axis]
    if pad_end:
        frames = -(-samples // step)
        padded = max((frames - 1) * step + length, samples)
        if padded > samples:
            shape = list(tensor.shape)
            shape[axis] = padded - samples
            tensor = torch.cat([tensor, torch.full(shape, pad_value, dtype=tensor.dtype, device=tensor.device)], axis)
    else:
        frames = 0 if samples < length else 1 + (samples - length) // step
    if frames == 0:
        shape = list(tensor.shape)
        shape[axis:axis + 1] = [0, length]
        return tensor.new_zeros(shape)
    framed = tensor.narrow(axis, 0, (frames - 1) * step + length).unfold(axis, length, step)
    return framed.movedim(-1, axis + 1)  # unfold puts the frame axis last


def overlap_and_add(signal: Any, frame_step: Any, name: Optional[str] = None) -> torch.Tensor:
    """Sums frames [..., frames, frame_length] placed `frame_step` apart into [..., (frames - 1) * frame_step
    + frame_length] samples (the inverse of `frame` up to the overlap)."""
    tensor = _tensor(signal)
    step = _int(frame_step, "frame_step")
    if tensor.dim() < 2:
        raise ValueError(f"tf.signal.overlap_and_add needs a signal of rank >= 2 ([..., frames, frame_length]), "
                         f"got shape {tuple(tensor.shape)}.")
    if step <= 0:
        raise ValueError(f"tf.signal.overlap_and_add needs a positive frame_step, got {step}.")
    *outer, frames, length = tensor.shape
    output_length = (frames - 1) * step + length if frames else 0
    flat = tensor.reshape(-1, frames, length)
    index = ((torch.arange(frames) * step)[:, None] + torch.arange(length)[None, :]).to(tensor.device)
    result = flat.new_zeros(flat.shape[0], output_length)
    result.index_add_(1, index.reshape(-1), flat.reshape(flat.shape[0], -1))
    return result.reshape(*outer, output_length)


# ----- STFT and MDCT ---------------------------------------------------------------------------------------
def _default_fft_length(frame_length: int) -> int:
    return 1 << max(0, (frame_length - 1).bit_length())  # the smallest power of 2 >= frame_length


def stft(signals: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
         window_fn: Optional[Callable] = hann_window, pad_end: bool = False,
         name: Optional[str] = None) -> torch.Tensor:
    """The short-time Fourier transform of real `signals` [..., samples]: frames of `frame_length` every
    `frame_step`, windowed by `window_fn(frame_length, dtype=...)` (None: no window), rfft of `fft_length`
    (default: the smallest power of 2 >= frame_length): [..., frames, fft_length // 2 + 1]."""
    tensor = _real(signals, "stft")
    length = _int(frame_length, "frame_length")
    fft_size = _default_fft_length(length) if fft_length is None else _int(fft_length, "fft_length")
    frames = frame(tensor, length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        frames = frames * _tensor(window_fn(length, dtype=tensor.dtype)).to(tensor.dtype).to(frames.device)
    return torch.fft.rfft(frames, n=fft_size)


def inverse_stft_window_fn(frame_step: Any, forward_window_fn: Callable = hann_window,
                           name: Optional[str] = None) -> Callable:
    """A window function for `inverse_stft` that undoes `forward_window_fn` at this `frame_step`: the forward
    window divided by the overlapping sum of its squares."""
    step = _int(frame_step, "frame_step")

    def inverse_window(frame_length: Any, dtype: Any) -> torch.Tensor:
        length = _int(frame_length, "frame_length")
        forward = _tensor(forward_window_fn(length, dtype=dtype)).to(torch.float64)
        overlaps = -(-length // step)
        squares = torch.nn.functional.pad(forward ** 2, (0, overlaps * step - length))
        denominator = squares.reshape(overlaps, step).sum(0, keepdim=True).repeat(overlaps, 1).reshape(-1)
        return (forward / denominator[:length]).to(as_dtype(dtype))

    return inverse_window


def inverse_stft(stfts: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
                 window_fn: Optional[Callable] = hann_window, name: Optional[str] = None) -> torch.Tensor:
    """Real signals from STFTs [..., frames, bins]: irfft of each frame, cut or zero-padded to `frame_length`,
    windowed by `window_fn` (use `inverse_stft_window_fn(frame_step)` to invert `stft`) and overlap-added."""
    tensor = _tensor(stfts)
    if not tensor.is_complex():
        raise TypeError(f"tf.signal.inverse_stft needs complex STFTs, got {tensor.dtype}.")
    length = _int(frame_length, "frame_length")
    fft_size = _default_fft_length(length) if fft_length is None else _int(fft_length, "fft_length")
    frames = torch.fft.irfft(tensor, n=fft_size)[..., :length]
    if frames.shape[-1] < length:
        frames = torch.nn.functional.pad(frames, (0, length - frames.shape[-1]))
    if window_fn is not None:
        frames = frames * _tensor(window_fn(length, dtype=frames.dtype)).to(frames.dtype).to(frames.device)
    return overlap_and_add(frames, frame_step)


def mdct(signals: Any, frame_length: Any, window_fn: Optional[Callable] = vorbis_window, pad_end: bool = False,
         norm: Optional[str] = None, name: Optional[str] = None) -> torch.Tensor:
    """The modified DCT of `signals`: frames of `frame_length` (a multiple of 4) every frame_length / 2,
    windowed (None: a flat 1/sqrt(2)), folded and DCT-IV'd: [..., frames, frame_length // 2]."""
    tensor = _real(signals, "mdct")
    length = _int(frame_length, "frame_length")
    if length % 4:
        raise ValueError(f"tf.signal.mdct: the frame length must be a multiple of 4, got {length}.")
    frames = frame(tensor, length, length // 2, pad_end=pad_end)
    if window_fn is not None:
        frames = frames * _tensor(window_fn(length, dtype=tensor.dtype)).to(tensor.dtype).to(frames.device)
    else:
        frames = frames * (1.0 / math.sqrt(2.0))
    a, b, c, d = torch.chunk(frames, 4, dim=-1)
    folded = torch.cat([-c.flip(-1) - d, a - b.flip(-1)], dim=-1)
    return dct(folded, type=4, norm=norm)


def inverse_mdct(mdcts: Any, window_fn: Optional[Callable] = vorbis_window, norm: Optional[str] = None,
                 name: Optional[str] = None) -> torch.Tensor:
    """Signals from MDCTs [..., frames, half]: DCT-IV (scaled 0.5 / half unless norm='ortho'), unfolded,
    windowed and overlap-added by `half` samples."""
    tensor = _real(mdcts, "inverse_mdct")
    if tensor.dim() < 2:
        raise ValueError(f"tf.signal.inverse_mdct needs rank >= 2, got shape {tuple(tensor.shape)}.")
    half = tensor.shape[-1]
    values = dct(tensor, type=4, norm=norm)
    if norm is None:
        values = values * (0.5 / half)
    first, second = torch.chunk(values, 2, dim=-1)
    frames = torch.cat([second, -second.flip(-1), -first.flip(-1), -first], dim=-1)
    if window_fn is not None:
        frames = frames * _tensor(window_fn(2 * half, dtype=tensor.dtype)).to(tensor.dtype).to(frames.device)
    else:
        frames = frames * (1.0 / math.sqrt(2.0))
    return overlap_and_add(frames, half)


# ----- DCT, mel and MFCC ---------------------------------------------------------------------------------------
def _dct_matrix(size: int, type: int, norm: Optional[str]) -> torch.Tensor:
    n = torch.arange(size, dtype=torch.float64)[:, None]  # input index
    k = torch.arange(size, dtype=torch.float64)[None, :]  # output index
    if type == 1:
        matrix = 2.0 * torch.cos(math.pi * n * k / (size - 1))
        matrix[0, :] = 1.0
        matrix[-1, :] = torch.cos(math.pi * k[0])
    elif type == 2:
        matrix = 2.0 * torch.cos(math.pi * k * (2.0 * n + 1.0) / (2.0 * size))
        if norm == "ortho":
            matrix[:, 0] *= math.sqrt(1.0 / (4.0 * size))
            matrix[:, 1:] *= math.sqrt(1.0 / (2.0 * size))
    elif type == 3:
        matrix = 2.0 * torch.cos(math.pi * n * (2.0 * k + 1.0) / (2.0 * size))
        matrix[0, :] = 1.0
        if norm == "ortho":
            matrix[0, :] = 1.0 / math.sqrt(size)
            matrix[1:, :] *= math.sqrt(1.0 / (2.0 * size)) * 1.0
    else:
        matrix = 2.0 * torch.cos(math.pi * (2.0 * n + 1.0) * (2.0 * k + 1.0) / (4.0 * size))
        if norm == "ortho":
            matrix *= math.sqrt(1.0 / (2.0 * size))
    return matrix


def dct(input: Any, type: int = 2, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None,
        name: Optional[str] = None) -> torch.Tensor:
    """The DCT of types I-IV over the innermost axis (scipy's definitions; `norm='ortho'` for types II-IV),
    the axis cropped or zero-padded to `n` first."""
    tensor = _real(input, "dct")
    if type not in (1, 2, 3, 4):
        raise ValueError(f"tf.signal.dct: type must be 1, 2, 3 or 4, got {type!r}.")
    if axis != -1 and axis != tensor.dim() - 1:
        raise NotImplementedError(f"tf.signal.dct works on the innermost axis only (axis=-1), as TF; got axis={axis}.")
    if norm not in (None, "ortho"):
        raise ValueError(f"tf.signal.dct: norm must be None or 'ortho', got {norm!r}.")
    if type == 1 and norm == "ortho":
        raise ValueError("tf.signal.dct: norm='ortho' is not supported for the type-I DCT (as in TF).")
    if n is not None:
        n = _int(n, "n")
        if n < 1:
            raise ValueError(f"tf.signal.dct: n must be positive, got {n}.")
        size = tensor.shape[-1]
        tensor = tensor[..., :n] if n <= size else torch.nn.functional.pad(tensor, (0, n - size))
    size = tensor.shape[-1]
    if type == 1 and size < 2:
        raise ValueError(f"tf.signal.dct: the type-I DCT needs at least 2 samples, got {size}.")
    matrix = _dct_matrix(size, type, norm)
    return (tensor.to(torch.float64) @ matrix.to(tensor.device)).to(tensor.dtype)


def idct(input: Any, type: int = 2, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None,
         name: Optional[str] = None) -> torch.Tensor:
    """The inverse DCT: a DCT of the inverse type (I<->I, II<->III, IV<->IV); without `norm` it is
    unscaled, so idct(dct(x)) is x times 2N (2(N-1) for type I)."""
    if type not in (1, 2, 3, 4):
        raise ValueError(f"tf.signal.idct: type must be 1, 2, 3 or 4, got {type!r}.")
    return dct(input, type={1: 1, 2: 3, 3: 2, 4: 4}[type], n=n, axis=axis, norm=norm)


def _hertz_to_mel(frequencies: torch.Tensor) -> torch.Tensor:
    return 1127.0 * torch.log1p(frequencies / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins: int = 20, num_spectrogram_bins: int = 129, sample_rate: Any = 8000,
                                lower_edge_hertz: float = 125.0, upper_edge_hertz: float = 3800.0,
                                dtype: Any = torch.float32, name: Optional[str] = None) -> torch.Tensor:
    """A [num_spectrogram_bins, num_mel_bins] matrix of triangular mel filters (HTK mel scale) that maps a
    linear spectrogram's bins (0 Hz to sample_rate / 2) to mel bands between the two edge frequencies;
    the DC bin gets no weight."""
    dtype = _window_dtype(dtype, "linear_to_mel_weight_matrix")
    mel_bins, bins = _int(num_mel_bins, "num_mel_bins"), _int(num_spectrogram_bins, "num_spectrogram_bins")
    rate = float(sample_rate.item() if isinstance(sample_rate, (torch.Tensor, np.ndarray)) else sample_rate)
    low, high = float(lower_edge_hertz), float(upper_edge_hertz)
    if mel_bins <= 0 or bins <= 0:
        raise ValueError(f"num_mel_bins and num_spectrogram_bins must be positive, got {mel_bins}, {bins}.")
    if rate <= 0.0:
        raise ValueError(f"sample_rate must be positive, got {rate}.")
    if low < 0.0 or low >= high:
        raise ValueError(f"need 0 <= lower_edge_hertz < upper_edge_hertz, got {low} and {high}.")
    if high > rate / 2:
        raise ValueError(f"upper_edge_hertz ({high}) must not exceed the Nyquist frequency (sample_rate / 2 = "
                         f"{rate / 2}).")
    work = dtype  # TF computes in the requested dtype
    linear = torch.linspace(0.0, rate / 2.0, bins, dtype=torch.float64).to(work)[1:]
    spectrogram_mel = _hertz_to_mel(linear)[:, None]
    low_mel = float(_hertz_to_mel(torch.tensor(low, dtype=work)))
    high_mel = float(_hertz_to_mel(torch.tensor(high, dtype=work)))
    edges = torch.linspace(low_mel, high_mel, mel_bins + 2, dtype=torch.float64).to(work)
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    lower_slopes = (spectrogram_mel - lower) / (center - lower)
    upper_slopes = (upper - spectrogram_mel) / (upper - center)
    weights = torch.clamp(torch.minimum(lower_slopes, upper_slopes), min=0.0)
    return torch.cat([torch.zeros(1, mel_bins, dtype=work), weights], dim=0)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms: Any, name: Optional[str] = None) -> torch.Tensor:
    """MFCCs of log-mel spectrograms [..., num_mel_bins]: the unnormalized DCT-II scaled by 1/sqrt(2 num_mel_bins)
    (HTK's convention); keep the first coefficients you need."""
    tensor = _real(log_mel_spectrograms, "mfccs_from_log_mel_spectrograms")
    bins = tensor.shape[-1]
    if bins < 1:
        raise ValueError("tf.signal.mfccs_from_log_mel_spectrograms needs at least one mel bin.")
    return dct(tensor, type=2) * (1.0 / math.sqrt(2.0 * bins))


__all__ = [n for n in dir() if not n.startswith("_") and n not in {"annotations", "math", "np", "torch", "Any",
                                                                      "Callable", "Optional", "Sequence", "as_dtype"}]
