"""TF's raw N-d FFT ops at the top level (tf.fftnd, ifftnd, rfftnd, irfftnd): fft_length and axes required, an
output dtype for the real transforms; the work is tf.signal's."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy import signal
from torchstrategy.dtypes import as_dtype


def fftnd(input: Any, fft_length: Any, axes: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The complex FFT over `axes`, each padded or cropped to its `fft_length`."""
    return signal.fftnd(input, fft_length, axes)


def ifftnd(input: Any, fft_length: Any, axes: Any, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """The inverse complex FFT over `axes`."""
    return signal.ifftnd(input, fft_length, axes)


def rfftnd(input: Any, fft_length: Any, axes: Any, Tcomplex: Any = torch.complex64,  # noqa: A002,N803
           name: Optional[str] = None) -> torch.Tensor:
    """The real-input FFT over `axes` (the last one halved), as Tcomplex."""
    return signal.rfftnd(input, fft_length, axes).to(as_dtype(Tcomplex))


def irfftnd(input: Any, fft_length: Any, axes: Any, Treal: Any = torch.float32,  # noqa: A002,N803
            name: Optional[str] = None) -> torch.Tensor:
    """The inverse of rfftnd, as Treal."""
    return signal.irfftnd(input, fft_length, axes).to(as_dtype(Treal))
