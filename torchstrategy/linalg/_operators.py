"""The leaf `tf.linalg.LinearOperator`s on torch tensors: FullMatrix, Diag, Identity, ScaledIdentity, Zeros,
LowerTriangular, Householder, Permutation, Toeplitz and Tridiag (structured products/solves where they are cheap)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.linalg._operator import LinearOperator, adjoint_matrix, as_tensor


def _forced(value: Optional[bool], forced: bool, message: str) -> bool:
    """A hint the operator's structure fixes: `forced`, and an error when the caller said otherwise."""
    if value is not None and bool(value) != forced:
        raise ValueError(message)
    return forced


def _matrix(value: Any, op: str, min_rank: int = 2, dtype: Any = None) -> torch.Tensor:
    tensor = as_tensor(value, None if dtype is None else as_dtype(dtype), op)
    if tensor.dim() < min_rank:
        raise ValueError(f"{op}: needs rank >= {min_rank}, got shape {tuple(tensor.shape)}.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        tensor = tensor.to(torch.float32)
    return tensor


class LinearOperatorFullMatrix(LinearOperator):
    """A LinearOperator holding a dense [..., M, N] matrix."""

    def __init__(self, matrix: Any, is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: Optional[bool] = None,
                 name: str = "LinearOperatorFullMatrix"):
        self._matrix = _matrix(matrix, name)
        super().__init__(self._matrix.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name, {"matrix": matrix})

    @property
    def matrix(self) -> torch.Tensor:
        """The dense matrix."""
        return self._matrix

    def _dense(self) -> torch.Tensor:
        return self._matrix


class LinearOperatorDiag(LinearOperator):
    """A square diagonal operator from its diagonal [..., N]."""

    def __init__(self, diag: Any, is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: Optional[bool] = None,
                 name: str = "LinearOperatorDiag"):
        self._diag = _matrix(diag, name, min_rank=1)
        if not self._diag.is_complex():
            is_self_adjoint = _forced(is_self_adjoint, True, "A real diagonal operator is always self adjoint.")
        is_square = _forced(is_square, True, "Only square diagonal operators currently supported.")
        super().__init__(self._diag.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name, {"diag": diag})

    @property
    def diag(self) -> torch.Tensor:
        """The diagonal."""
        return self._diag

    def _shape(self) -> torch.Size:
        return self._diag.shape + self._diag.shape[-1:]

    def _dense(self) -> torch.Tensor:
        return torch.diag_embed(self._diag)

    def _values(self, adjoint: bool) -> torch.Tensor:
        return self._diag.conj() if adjoint and self._diag.is_complex() else self._diag

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        return self._values(adjoint).unsqueeze(-1) * x

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        return rhs / self._values(adjoint).unsqueeze(-1)

    def _determinant(self) -> torch.Tensor:
        return self._diag.prod(-1)

    def _log_abs_determinant(self) -> torch.Tensor:
        return self._diag.abs().log().sum(-1)

    def _diag_part(self) -> torch.Tensor:
        return self._diag

    def _inverse_operator(self) -> LinearOperator:
        return LinearOperatorDiag(1.0 / self._diag, is_non_singular=self.is_non_singular,
                                  is_self_adjoint=self.is_self_adjoint, is_positive_definite=self.is_positive_definite)

    def cholesky(self, name: str = "cholesky") -> LinearOperator:
        """LinearOperatorDiag(sqrt(diag)) (needs the self-adjoint and positive definite hints)."""
        super().cholesky()
        return LinearOperatorDiag(self._diag.sqrt(), is_non_singular=True, is_self_adjoint=True,
                                  is_positive_definite=True)


class _ScaledEye(LinearOperator):
    """Shared by Identity and ScaledIdentity: a multiple of the [num_rows, num_rows] identity per batch member."""

    def _setup(self, num_rows: Any, op: str) -> None:
        rows = int(num_rows.item() if isinstance(num_rows, torch.Tensor) else num_rows)
        if rows < 0:
            raise ValueError(f"{op}: num_rows must be non-negative, got {rows}.")
        self._num_rows = rows

    def _scale(self) -> torch.Tensor:
        raise NotImplementedError

    def _shape(self) -> torch.Size:
        return self._scale().shape + (self._num_rows, self._num_rows)

    def _dense(self) -> torch.Tensor:
        eye = torch.eye(self._num_rows, dtype=self.dtype)
        return self._scale().unsqueeze(-1).unsqueeze(-1) * eye

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        scale = self._scale()
        scale = scale.conj() if adjoint and scale.is_complex() else scale
        return scale.unsqueeze(-1).unsqueeze(-1) * x

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        scale = self._scale()
        scale = scale.conj() if adjoint and scale.is_complex() else scale
        return rhs / scale.unsqueeze(-1).unsqueeze(-1)

    def _determinant(self) -> torch.Tensor:
        return self._scale() ** self._num_rows

    def _log_abs_determinant(self) -> torch.Tensor:
        return self._num_rows * self._scale().abs().log()

    def _diag_part(self) -> torch.Tensor:
        return self._scale().unsqueeze(-1) * torch.ones(self._num_rows, dtype=self.dtype)

    def add_to_tensor(self, mat: Any, name: str = "add_to_tensor") -> torch.Tensor:
        """mat with the scale added to its diagonal."""
        tensor = self._arg(mat, "add_to_tensor")
        return tensor + self._dense()


class LinearOperatorIdentity(_ScaledEye):
    """The [num_rows, num_rows] identity, optionally repeated over batch_shape."""

    def __init__(self, num_rows: Any, batch_shape: Any = None, dtype: Any = None, is_non_singular: bool = True,
                 is_self_adjoint: bool = True, is_positive_definite: bool = True, is_square: bool = True,
                 assert_proper_shapes: bool = False, name: str = "LinearOperatorIdentity"):
        for hint, what in ((is_non_singular, "non-singular"), (is_self_adjoint, "self-adjoint"),
                           (is_positive_definite, "positive definite"), (is_square, "square")):
            _forced(hint, True, f"An identity operator is always {what}.")
        self._setup(num_rows, name)
        self._batch = tuple(int(b) for b in (batch_shape.tolist() if isinstance(batch_shape, torch.Tensor)
                                             else batch_shape or ()))
        super().__init__(as_dtype(dtype) if dtype is not None else torch.float32, None, True, True, True, True, name,
                         {"num_rows": num_rows, "batch_shape": batch_shape, "dtype": dtype})

    def _scale(self) -> torch.Tensor:
        return torch.ones(self._batch, dtype=self.dtype)

    def _inverse_operator(self) -> LinearOperator:
        return self


class LinearOperatorScaledIdentity(_ScaledEye):
    """multiplier * I for a [num_rows, num_rows] identity; the multiplier's shape is the batch shape."""

    def __init__(self, num_rows: Any, multiplier: Any, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None, is_positive_definite: Optional[bool] = None,
                 is_square: bool = True, assert_proper_shapes: bool = False,
                 name: str = "LinearOperatorScaledIdentity"):
        self._setup(num_rows, name)
        self._multiplier = _matrix(multiplier, name, min_rank=0)
        if not self._multiplier.is_complex():
            is_self_adjoint = _forced(is_self_adjoint, True, "A real diagonal operator is always self adjoint.")
        is_square = _forced(is_square, True, "A ScaledIdentity operator is always square.")
        super().__init__(self._multiplier.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name, {"num_rows": num_rows, "multiplier": multiplier})

    @property
    def multiplier(self) -> torch.Tensor:
        """The scale, one per batch member."""
        return self._multiplier

    def _scale(self) -> torch.Tensor:
        return self._multiplier

    def _inverse_operator(self) -> LinearOperator:
        return LinearOperatorScaledIdentity(self._num_rows, 1.0 / self._multiplier,
                                            is_non_singular=self.is_non_singular,
                                            is_self_adjoint=self.is_self_adjoint,
                                            is_positive_definite=self.is_positive_definite)


class LinearOperatorZeros(LinearOperator):
    """The [num_rows, num_columns] zero matrix, optionally repeated over batch_shape."""

    def __init__(self, num_rows: Any, num_columns: Any = None, batch_shape: Any = None, dtype: Any = None,
                 is_non_singular: bool = False, is_self_adjoint: bool = True, is_positive_definite: bool = False,
                 is_square: bool = True, assert_proper_shapes: bool = False, name: str = "LinearOperatorZeros"):
        _forced(is_non_singular, False, "A Zeros operator is always singular.")
        _forced(is_positive_definite, False, "A Zeros operator is always not positive definite.")
        self._rows = int(num_rows)
        self._cols = self._rows if num_columns is None else int(num_columns)
        if self._rows != self._cols:
            is_square = is_self_adjoint = None  # the square and self-adjoint defaults only fit a square shape
        self._batch = tuple(int(b) for b in (batch_shape.tolist() if isinstance(batch_shape, torch.Tensor)
                                             else batch_shape or ()))
        super().__init__(as_dtype(dtype) if dtype is not None else torch.float32, None, False, is_self_adjoint, False,
                         is_square, name, {"num_rows": num_rows, "num_columns": num_columns,
                                           "batch_shape": batch_shape, "dtype": dtype})

    def _shape(self) -> torch.Size:
        return torch.Size(self._batch + (self._rows, self._cols))

    def _dense(self) -> torch.Tensor:
        return torch.zeros(self._shape(), dtype=self.dtype)

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        rows = self._cols if adjoint else self._rows
        batch = torch.broadcast_shapes(self._batch, x.shape[:-2])
        return torch.zeros(batch + (rows, x.shape[-1]), dtype=self.dtype)

    def _determinant(self) -> torch.Tensor:
        return torch.zeros(self._batch, dtype=self.dtype)

    def _log_abs_determinant(self) -> torch.Tensor:
        return torch.full(self._batch, -float("inf"), dtype=self.dtype)

    def add_to_tensor(self, mat: Any, name: str = "add_to_tensor") -> torch.Tensor:
        """mat, unchanged (broadcast to the operator's batch shape)."""
        return self._arg(mat, "add_to_tensor") + self._dense()


class LinearOperatorLowerTriangular(LinearOperator):
    """A square lower-triangular operator: the lower triangle of `tril` (the rest of it is ignored)."""

    def __init__(self, tril: Any, is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: Optional[bool] = None,
                 name: str = "LinearOperatorLowerTriangular"):
        self._tril = _matrix(tril, name)
        is_square = _forced(is_square, True, "Only square lower triangular operators supported at this time.")
        super().__init__(self._tril.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name, {"tril": tril})

    @property
    def tril(self) -> torch.Tensor:
        """The tensor given (only its lower triangle is used)."""
        return self._tril

    def _dense(self) -> torch.Tensor:
        return torch.tril(self._tril)

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        lower = self._dense()
        if adjoint:
            return torch.linalg.solve_triangular(adjoint_matrix(lower), rhs, upper=True)
        return torch.linalg.solve_triangular(lower, rhs, upper=False)

    def _determinant(self) -> torch.Tensor:
        return self._diag_part().prod(-1)

    def _log_abs_determinant(self) -> torch.Tensor:
        return self._diag_part().abs().log().sum(-1)


class LinearOperatorHouseholder(LinearOperator):
    """The reflection I - 2 v v^H / (v^H v) across the hyperplane orthogonal to `reflection_axis` v."""

    def __init__(self, reflection_axis: Any, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None, is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: str = "LinearOperatorHouseholder"):
        self._axis = _matrix(reflection_axis, name, min_rank=1)
        is_self_adjoint = _forced(is_self_adjoint, True, "A Householder operator is always self adjoint.")
        is_positive_definite = _forced(is_positive_definite, False,
                                       "A Householder operator is always non-positive definite.")
        is_square = _forced(is_square, True, "A Householder operator is always square.")
        super().__init__(self._axis.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name,
                         {"reflection_axis": reflection_axis})

    @property
    def reflection_axis(self) -> torch.Tensor:
        """v, the normal of the reflecting hyperplane."""
        return self._axis

    def _shape(self) -> torch.Size:
        return self._axis.shape + self._axis.shape[-1:]

    def _dense(self) -> torch.Tensor:
        return self._matmul(torch.eye(self._axis.shape[-1], dtype=self.dtype), False)

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        v = self._axis.unsqueeze(-1)
        norm = (v.conj() * v).sum(-2, keepdim=True) if v.is_complex() else (v * v).sum(-2, keepdim=True)
        return x - 2 * v @ (adjoint_matrix(v) @ x) / norm

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        return self._matmul(rhs, adjoint)

    def _determinant(self) -> torch.Tensor:
        return -torch.ones(self._axis.shape[:-1], dtype=self.dtype)

    def _log_abs_determinant(self) -> torch.Tensor:
        return torch.zeros(self._axis.shape[:-1], dtype=self.dtype)


class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix P of `perm` (int, [..., N]): (P @ x)[i] = x[perm[i]]."""

    def __init__(self, perm: Any, dtype: Any = torch.float32, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None, is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: str = "LinearOperatorPermutation"):
        self._perm = as_tensor(perm, None, name)
        if self._perm.is_floating_point() or self._perm.dim() < 1:
            raise TypeError(f"{name}: perm must be an integer tensor of rank >= 1, got {self._perm.dtype} of shape "
                            f"{tuple(self._perm.shape)}.")
        ordered = torch.sort(self._perm.long(), dim=-1).values
        if not torch.equal(ordered, torch.arange(self._perm.shape[-1]).expand_as(ordered)):
            raise ValueError(f"{name}: perm must be a permutation of 0..{self._perm.shape[-1] - 1} in each row.")
        is_square = _forced(is_square, True, "A Permutation operator is always square.")
        super().__init__(as_dtype(dtype), None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name,
                         {"perm": perm, "dtype": dtype})

    @property
    def perm(self) -> torch.Tensor:
        """The permutation."""
        return self._perm

    def _shape(self) -> torch.Size:
        return self._perm.shape + self._perm.shape[-1:]

    def _dense(self) -> torch.Tensor:
        n = self._perm.shape[-1]
        return (self._perm.long().unsqueeze(-1) == torch.arange(n)).to(self.dtype)

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        return self._matmul(rhs, not adjoint)

    def _determinant(self) -> torch.Tensor:
        return torch.linalg.det(self._dense())

    def _log_abs_determinant(self) -> torch.Tensor:
        return torch.zeros(self._perm.shape[:-1], dtype=self.dtype)


class LinearOperatorToeplitz(LinearOperator):
    """The Toeplitz matrix with first column `col` and first row `row` (col[0] is the diagonal)."""

    def __init__(self, col: Any, row: Any, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None, is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: str = "LinearOperatorToeplitz"):
        self._col = _matrix(col, name, min_rank=1)
        self._row = _matrix(row, name, min_rank=1, dtype=self._col.dtype)
        if self._col.shape[-1] != self._row.shape[-1]:
            raise ValueError(f"{name}: col and row must have the same length, got {self._col.shape[-1]} and "
                             f"{self._row.shape[-1]}.")
        is_square = _forced(is_square, True, "Only square Toeplitz operators currently supported.")
        super().__init__(self._col.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name, {"col": col, "row": row})

    @property
    def col(self) -> torch.Tensor:
        """The first column."""
        return self._col

    @property
    def row(self) -> torch.Tensor:
        """The first row."""
        return self._row

    def _dense(self) -> torch.Tensor:
        col, row = torch.broadcast_tensors(self._col, self._row)
        n = col.shape[-1]
        offset = torch.arange(n).unsqueeze(1) - torch.arange(n)  # i - j
        below = col[..., offset.clamp(min=0)]
        above = row[..., (-offset).clamp(min=0)]
        return torch.where(offset >= 0, below, above)


class LinearOperatorTridiag(LinearOperator):
    """A square tridiagonal operator from its diagonals: 'compact' [..., 3, N] (super, main, sub; the super's
    last and the sub's first entries unused), 'sequence' [super, main, sub] or 'matrix' [..., N, N]."""

    def __init__(self, diagonals: Any, diagonals_format: str = "compact", is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None, is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: str = "LinearOperatorTridiag"):
        if diagonals_format not in ("compact", "sequence", "matrix"):
            raise ValueError(f"{name}: diagonals_format must be 'compact', 'sequence' or 'matrix', got "
                             f"{diagonals_format!r}.")
        if diagonals_format == "sequence":
            parts = [_matrix(d, name, min_rank=1) for d in diagonals]
            if len(parts) != 3:
                raise ValueError(f"{name}: 'sequence' diagonals must be [superdiag, diag, subdiag].")
            self._diagonals = parts
            dtype = parts[1].dtype
        else:
            self._diagonals = _matrix(diagonals, name)
            dtype = self._diagonals.dtype
        self._format = diagonals_format
        is_square = _forced(is_square, True, "Only square tridiagonal operators currently supported.")
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name,
                         {"diagonals": diagonals, "diagonals_format": diagonals_format})

    @property
    def diagonals(self) -> Any:
        """The diagonals as given."""
        return self._diagonals

    @property
    def diagonals_format(self) -> str:
        """'compact', 'sequence' or 'matrix'."""
        return self._format

    def _dense(self) -> torch.Tensor:
        if self._format == "matrix":
            full = self._diagonals
            return torch.triu(torch.tril(full, 1), -1)
        if self._format == "compact":
            upper, main, lower = self._diagonals[..., 0, :], self._diagonals[..., 1, :], self._diagonals[..., 2, :]
        else:
            upper, main, lower = torch.broadcast_tensors(*self._diagonals)
        return (torch.diag_embed(main) + torch.diag_embed(upper[..., :-1], offset=1)
                + torch.diag_embed(lower[..., 1:], offset=-1))
