"""`tf.linalg.LinearOperator`: the base of the operator family (shape, hints, matmul/solve/determinant/... on
torch tensors); subclasses give `_dense` and override the products and solves that have a structured form."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.errors import InvalidArgumentError


def _adjoint_matrix(x: torch.Tensor) -> torch.Tensor:
    out = x.transpose(-1, -2)
    return out.conj() if out.is_complex() else out


def as_tensor(value: Any, dtype: Optional[torch.dtype], op: str) -> torch.Tensor:
    """`value` as a tensor of `dtype` (None: as converted); a dtype clash is a TypeError, as in TF."""
    tensor = to_tensor(value, hint=dtype, op=op)
    if dtype is not None and tensor.dtype != dtype:
        if isinstance(value, torch.Tensor):
            raise TypeError(f"{op}: expected a {dtype} tensor, got {tensor.dtype}; cast it first.")
        tensor = tensor.to(dtype)
    return tensor


class LinearOperator:
    """A (batch of) [M, N] linear operator(s) acting on [..., N, R] tensors without always forming the matrix.

    The hints (is_non_singular, is_self_adjoint, is_positive_definite, is_square) are promises the caller makes;
    None means unknown. A positive definite operator is non-singular, and non-singular or self-adjoint operators
    are square, as TF infers.
    """

    def __init__(self, dtype: Any, graph_parents: Any = None, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None, is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: Optional[str] = None, parameters: Optional[dict] = None):
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                raise ValueError("A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                raise ValueError("A self-adjoint matrix is always square.")
            is_square = True
        self._dtype = None if dtype is None else as_dtype(dtype)
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_hint = is_square
        self._name = name or type(self).__name__
        self._parameters = dict(parameters or {})

    # ----- what subclasses provide --------------------------------------------------------------------------

    def _shape(self) -> torch.Size:
        return self._dense().shape

    def _dense(self) -> torch.Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not define its dense matrix.")

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        dense = self._dense()
        return (_adjoint_matrix(dense) if adjoint else dense) @ x

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        dense = self._dense()
        return torch.linalg.solve(_adjoint_matrix(dense) if adjoint else dense, rhs)

    def _determinant(self) -> torch.Tensor:
        return torch.linalg.det(self._dense())

    def _log_abs_determinant(self) -> torch.Tensor:
        return torch.linalg.slogdet(self._dense())[1]

    def _diag_part(self) -> torch.Tensor:
        return torch.diagonal(self._dense(), dim1=-2, dim2=-1)

    def _adjoint_operator(self) -> "LinearOperator":
        from torchstrategy.linalg._operators_composite import LinearOperatorAdjoint
        return LinearOperatorAdjoint(self)

    def _inverse_operator(self) -> "LinearOperator":
        from torchstrategy.linalg._operators_composite import LinearOperatorInversion
        return LinearOperatorInversion(self)

    # ----- shape and hints --------------------------------------------------------------------------------

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of the matrix and of the tensors it acts on."""
        return self._dtype

    @property
    def name(self) -> str:
        """The operator's name."""
        return self._name

    @property
    def parameters(self) -> dict:
        """The constructor arguments, by name."""
        return dict(self._parameters)

    @property
    def graph_parents(self) -> list:
        """Always empty (TF 1 graph bookkeeping)."""
        return []

    @property
    def shape(self) -> torch.Size:
        """batch_shape + [range_dimension, domain_dimension]."""
        return torch.Size(self._shape())

    @property
    def batch_shape(self) -> torch.Size:
        """The leading batch dimensions."""
        return self.shape[:-2]

    @property
    def tensor_rank(self) -> int:
        """len(shape)."""
        return len(self.shape)

    @property
    def domain_dimension(self) -> int:
        """N, the length of the vectors the operator takes."""
        return self.shape[-1]

    @property
    def range_dimension(self) -> int:
        """M, the length of the vectors the operator returns."""
        return self.shape[-2]

    def shape_tensor(self, name: str = "shape_tensor") -> torch.Tensor:
        """`shape` as an int32 tensor."""
        return torch.tensor(list(self.shape), dtype=torch.int32)

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> torch.Tensor:
        """`batch_shape` as an int32 tensor."""
        return torch.tensor(list(self.batch_shape), dtype=torch.int32)

    def tensor_rank_tensor(self, name: str = "tensor_rank_tensor") -> torch.Tensor:
        """`tensor_rank` as an int32 scalar tensor."""
        return torch.tensor(self.tensor_rank, dtype=torch.int32)

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor") -> torch.Tensor:
        """`domain_dimension` as an int32 scalar tensor."""
        return torch.tensor(self.domain_dimension, dtype=torch.int32)

    def range_dimension_tensor(self, name: str = "range_dimension_tensor") -> torch.Tensor:
        """`range_dimension` as an int32 scalar tensor."""
        return torch.tensor(self.range_dimension, dtype=torch.int32)

    @property
    def is_non_singular(self) -> Optional[bool]:
        """The caller's promise that the operator is invertible (None: unknown)."""
        return self._is_non_singular

    @property
    def is_self_adjoint(self) -> Optional[bool]:
        """The caller's promise that the operator equals its adjoint (None: unknown)."""
        return self._is_self_adjoint

    @property
    def is_positive_definite(self) -> Optional[bool]:
        """The caller's promise that x^H A x > 0 for non-zero x (None: unknown)."""
        return self._is_positive_definite

    @property
    def is_square(self) -> bool:
        """Whether range and domain dimensions agree (an is_square=False hint on a square shape is an error)."""
        square = self.domain_dimension == self.range_dimension
        if self._is_square_hint is False and square:
            raise ValueError(f"{self.name}: hint is_square=False contradicts the square shape {tuple(self.shape)}.")
        return square if self._is_square_hint is None else self._is_square_hint

    # ----- products and solves -------------------------------------------------------------------------------

    def _arg(self, x: Any, op: str) -> torch.Tensor:
        return as_tensor(x, self.dtype, f"{self.name}.{op}")

    def matmul(self, x: Any, adjoint: bool = False, adjoint_arg: bool = False, name: str = "matmul") -> Any:
        """A @ x (A^H @ x with `adjoint`; x^H in place of x with `adjoint_arg`); x may be another LinearOperator,
        which gives their composition."""
        if isinstance(x, LinearOperator):
            from torchstrategy.linalg._operators_composite import LinearOperatorComposition
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            return LinearOperatorComposition([left, right])
        arg = self._arg(x, "matmul")
        arg = _adjoint_matrix(arg) if adjoint_arg else arg
        inner = self.range_dimension if adjoint else self.domain_dimension
        if arg.dim() < 2 or arg.shape[-2] != inner:
            raise ValueError(f"{self.name}.matmul: x must be [..., {inner}, R] for an operator of shape "
                             f"{tuple(self.shape)}{' (adjoint)' if adjoint else ''}, got {tuple(arg.shape)}.")
        return self._matmul(arg, bool(adjoint))

    def __matmul__(self, x: Any) -> Any:
        return self.matmul(x)

    def matvec(self, x: Any, adjoint: bool = False, name: str = "matvec") -> torch.Tensor:
        """A @ x for vectors x [..., N] (A^H @ x with `adjoint`)."""
        arg = self._arg(x, "matvec")
        return self.matmul(arg.unsqueeze(-1), adjoint=adjoint).squeeze(-1)

    def _require_square(self, op: str) -> None:
        if self.is_square is False or self.domain_dimension != self.range_dimension:
            raise NotImplementedError(f"{self.name}.{op}: only square operators have one; shape is "
                                      f"{tuple(self.shape)}.")

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False, name: str = "solve") -> Any:
        """X with A @ X = rhs (A^H with `adjoint`, rhs^H with `adjoint_arg`); a LinearOperator rhs gives
        inverse(A) composed with it."""
        if self.is_non_singular is False:
            raise NotImplementedError(f"{self.name}.solve: the operator is hinted singular (is_non_singular=False).")
        self._require_square("solve")
        if isinstance(rhs, LinearOperator):
            left = self.adjoint() if adjoint else self
            return left.inverse().matmul(rhs, adjoint_arg=adjoint_arg)
        arg = self._arg(rhs, "solve")
        arg = _adjoint_matrix(arg) if adjoint_arg else arg
        if arg.dim() < 2 or arg.shape[-2] != self.range_dimension:
            raise ValueError(f"{self.name}.solve: rhs must be [..., {self.range_dimension}, R], got "
                             f"{tuple(arg.shape)}.")
        return self._solve(arg, bool(adjoint))

    def solvevec(self, rhs: Any, adjoint: bool = False, name: str = "solve") -> torch.Tensor:
        """x with A @ x = rhs for vectors rhs [..., M]."""
        arg = self._arg(rhs, "solvevec")
        return self.solve(arg.unsqueeze(-1), adjoint=adjoint).squeeze(-1)

    # ----- matrix functions ---------------------------------------------------------------------------------

    def to_dense(self, name: str = "to_dense") -> torch.Tensor:
        """The matrix as a dense tensor, shape `shape`."""
        return self._dense()

    def add_to_tensor(self, x: Any, name: str = "add_to_tensor") -> torch.Tensor:
        """to_dense() + x."""
        return self._dense() + self._arg(x, "add_to_tensor")

    def determinant(self, name: str = "det") -> torch.Tensor:
        """det(A) per batch member (square operators only)."""
        self._require_square("determinant")
        return self._determinant()

    def log_abs_determinant(self, name: str = "log_abs_det") -> torch.Tensor:
        """log|det(A)| per batch member (square operators only)."""
        self._require_square("log_abs_determinant")
        return self._log_abs_determinant()

    def diag_part(self, name: str = "diag_part") -> torch.Tensor:
        """The main diagonal, [..., min(M, N)]."""
        return self._diag_part()

    def trace(self, name: str = "trace") -> torch.Tensor:
        """The sum of the main diagonal."""
        return self._diag_part().sum(-1)

    def eigvals(self, name: str = "eigvals") -> torch.Tensor:
        """The eigenvalues, ascending (self-adjoint operators only)."""
        if not self.is_self_adjoint:
            raise NotImplementedError(f"{self.name}.eigvals: only operators hinted is_self_adjoint=True are "
                                      "supported.")
        return torch.linalg.eigvalsh(self._dense())

    def cond(self, name: str = "cond") -> torch.Tensor:
        """The 2-norm condition number: largest over smallest singular value."""
        values = torch.linalg.svdvals(self._dense())
        return values[..., 0] / values[..., -1]

    def cholesky(self, name: str = "cholesky") -> "LinearOperator":
        """A LinearOperatorLowerTriangular L with L @ L^H = A (needs is_self_adjoint and is_positive_definite)."""
        if not (self.is_self_adjoint and self.is_positive_definite):
            raise ValueError("Cholesky decomposition only makes sense on operators hinted is_self_adjoint=True and "
                             "is_positive_definite=True.")
        from torchstrategy.linalg._operators import LinearOperatorLowerTriangular
        return LinearOperatorLowerTriangular(torch.linalg.cholesky(self._dense()), is_non_singular=True)

    def adjoint(self, name: str = "adjoint") -> "LinearOperator":
        """The conjugate transpose as an operator (self when hinted self-adjoint)."""
        if self.is_self_adjoint is True:
            return self
        return self._adjoint_operator()

    @property
    def H(self) -> "LinearOperator":  # noqa: N802 - TF's name
        """Same as adjoint()."""
        return self.adjoint()

    def inverse(self, name: str = "inverse") -> "LinearOperator":
        """The inverse as an operator (square operators not hinted singular)."""
        if self.is_square is False or self.domain_dimension != self.range_dimension:
            raise ValueError(f"{self.name}.inverse: cannot take the inverse of a non-square operator.")
        if self.is_non_singular is False:
            raise ValueError(f"{self.name}.inverse: cannot take the inverse of an operator hinted singular.")
        return self._inverse_operator()

    # ----- checks -------------------------------------------------------------------------------------------

    def assert_non_singular(self, name: str = "assert_non_singular") -> None:
        """Raises InvalidArgumentError unless every batch member is invertible (its condition number finite
        and below 1 / machine epsilon)."""
        values = torch.linalg.svdvals(self._dense().to(torch.complex128 if self.dtype.is_complex
                                                        else torch.float64))
        eps = torch.finfo(self.dtype if not self.dtype.is_complex else torch.float32).eps
        if bool((values[..., -1] <= values[..., 0] * eps).any()):
            raise InvalidArgumentError(None, None, f"{self.name}: singular operator (condition number above 1/eps).")

    def assert_positive_definite(self, name: str = "assert_positive_definite") -> None:
        """Raises InvalidArgumentError unless the (self-adjoint) operator's Cholesky factorisation exists."""
        dense = self._dense()
        _, info = torch.linalg.cholesky_ex(dense)
        if bool((info != 0).any()) or not torch.allclose(dense, _adjoint_matrix(dense)):
            raise InvalidArgumentError(None, None, f"{self.name}: the operator is not self-adjoint positive definite.")

    def assert_self_adjoint(self, name: str = "assert_self_adjoint") -> None:
        """Raises InvalidArgumentError unless the operator equals its conjugate transpose."""
        dense = self._dense()
        if dense.shape[-1] != dense.shape[-2] or not torch.equal(dense, _adjoint_matrix(dense)):
            raise InvalidArgumentError(None, None, f"{self.name}: the operator is not self-adjoint.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} '{self.name}' shape={tuple(self.shape)} dtype={self.dtype}>"


def adjoint_matrix(x: torch.Tensor) -> torch.Tensor:
    """The conjugate transpose of the last two axes."""
    return _adjoint_matrix(x)
