"""`tf.linalg.LinearOperatorCirculant` (and its 2-D / 3-D block forms) on torch tensors: the operator
x -> IFFT(spectrum * FFT(x)) over the block shape, in input_output_dtype (real dtypes keep the real part)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.linalg._operator import LinearOperator, as_tensor


class _Circulant(LinearOperator):
    """The shared machinery; `_depth` is the number of trailing spectrum axes that form one block."""

    _depth = 1

    def __init__(self, spectrum: Any, input_output_dtype: Any = torch.complex64,
                 is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True, name: Optional[str] = None):
        name = name or type(self).__name__
        self._spectrum = as_tensor(spectrum, None, name)
        if not (self._spectrum.is_floating_point() or self._spectrum.is_complex()):
            self._spectrum = self._spectrum.to(torch.float32)
        if self._spectrum.dim() < self._depth:
            raise ValueError(f"{name}: spectrum needs at least {self._depth} dimensions, got shape "
                             f"{tuple(self._spectrum.shape)}.")
        if is_square is False:
            raise ValueError(f"{name}: a circulant operator is always square.")
        super().__init__(as_dtype(input_output_dtype), None, is_non_singular, is_self_adjoint, is_positive_definite,
                         True, name, {"spectrum": spectrum, "input_output_dtype": input_output_dtype})

    @property
    def spectrum(self) -> torch.Tensor:
        """The eigenvalues, [..., *block_shape]."""
        return self._spectrum

    @property
    def block_depth(self) -> int:
        """1, 2 or 3: how many nested circulant levels."""
        return self._depth

    @property
    def block_shape(self) -> torch.Size:
        """The trailing `block_depth` dimensions of the spectrum."""
        return self._spectrum.shape[-self._depth:]

    def block_shape_tensor(self) -> torch.Tensor:
        """`block_shape` as an int32 tensor."""
        return torch.tensor(list(self.block_shape), dtype=torch.int32)

    def _complex(self) -> torch.dtype:
        return torch.complex128 if self._spectrum.dtype in (torch.float64, torch.complex128) else torch.complex64

    def _out(self, values: torch.Tensor) -> torch.Tensor:
        return values.to(self.dtype) if self.dtype.is_complex else values.real.to(self.dtype)

    def convolution_kernel(self, name: str = "convolution_kernel") -> torch.Tensor:
        """IFFT(spectrum): the first column of each block level (in input_output_dtype)."""
        dims = tuple(range(-self._depth, 0))
        return self._out(torch.fft.ifftn(self._spectrum.to(self._complex()), dim=dims))

    def assert_hermitian_spectrum(self, name: str = "assert_hermitian_spectrum") -> None:
        """Raises InvalidArgumentError unless the spectrum is Hermitian (its kernel real), i.e. the operator maps
        real vectors to real vectors."""
        dims = tuple(range(-self._depth, 0))
        kernel = torch.fft.ifftn(self._spectrum.to(self._complex()), dim=dims)
        scale = float(self._spectrum.abs().max()) if self._spectrum.numel() else 0.0
        if float(kernel.imag.abs().max()) > 1e-5 * max(scale, 1.0):
            raise InvalidArgumentError(None, None,
                                       f"{self.name}: the spectrum is not Hermitian (its kernel is not real).")

    def _shape(self) -> torch.Size:
        n = 1
        for size in self.block_shape:
            n *= int(size)
        return self._spectrum.shape[:-self._depth] + (n, n)

    def _apply(self, x: torch.Tensor, spectrum: torch.Tensor) -> torch.Tensor:
        cols = x.shape[-1]
        block = tuple(int(s) for s in self.block_shape)
        dims = tuple(range(-self._depth - 1, -1))
        values = x.to(self._complex()).transpose(-1, -2).reshape(x.shape[:-2] + (cols,) + block)
        values = values.movedim(-self._depth - 1, -1)  # columns last, blocks before them
        moved = torch.fft.ifftn(spectrum.unsqueeze(-1) * torch.fft.fftn(values, dim=dims), dim=dims)
        moved = moved.movedim(-1, -self._depth - 1)
        return self._out(moved.reshape(moved.shape[:-self._depth] + (-1,)).transpose(-1, -2))

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        spectrum = self._spectrum.to(self._complex())
        return self._apply(x, spectrum.conj() if adjoint else spectrum)

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        spectrum = self._spectrum.to(self._complex())
        return self._apply(rhs, 1.0 / (spectrum.conj() if adjoint else spectrum))

    def _dense(self) -> torch.Tensor:
        n = self._shape()[-1]
        eye = torch.eye(n, dtype=self.dtype)
        return self._matmul(eye.expand(self._shape()), False)

    def _flat_spectrum(self) -> torch.Tensor:
        return self._spectrum.to(self._complex()).reshape(self._spectrum.shape[:-self._depth] + (-1,))

    def _determinant(self) -> torch.Tensor:
        return self._out(self._flat_spectrum().prod(-1))

    def _log_abs_determinant(self) -> torch.Tensor:
        return self._out(self._flat_spectrum().abs().log().sum(-1).to(self._complex()))

    def eigvals(self, name: str = "eigvals") -> torch.Tensor:
        """The spectrum, flattened per batch member, in input_output_dtype."""
        return self._out(self._flat_spectrum())


class LinearOperatorCirculant(_Circulant):
    """A circulant [N, N] operator from its spectrum [..., N]."""

    _depth = 1

    def __init__(self, spectrum: Any, input_output_dtype: Any = torch.complex64,
                 is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True,
                 name: str = "LinearOperatorCirculant"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)


class LinearOperatorCirculant2D(_Circulant):
    """A block-circulant operator with circulant blocks from its spectrum [..., N0, N1]."""

    _depth = 2

    def __init__(self, spectrum: Any, input_output_dtype: Any = torch.complex64,
                 is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True,
                 name: str = "LinearOperatorCirculant2D"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)


class LinearOperatorCirculant3D(_Circulant):
    """Three nested circulant levels from the spectrum [..., N0, N1, N2]."""

    _depth = 3

    def __init__(self, spectrum: Any, input_output_dtype: Any = torch.complex64,
                 is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True,
                 name: str = "LinearOperatorCirculant3D"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)
