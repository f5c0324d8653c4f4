"""`tf.linalg.LinearOperator`s built from other operators: Adjoint, Inversion, Composition, BlockDiag,
BlockLowerTriangular, Kronecker and LowRankUpdate (products and solves go through the parts where that is cheap)."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.linalg._operator import LinearOperator, adjoint_matrix, as_tensor
from torchstrategy.linalg._operators import LinearOperatorDiag, LinearOperatorIdentity


def _inherit(given: Optional[bool], from_operator: Optional[bool], what: str, name: str) -> Optional[bool]:
    if given is not None and from_operator is not None and given != from_operator:
        raise ValueError(f"{name}: the hint {what}={given} contradicts the wrapped operator's {from_operator}.")
    return from_operator if given is None else given


def _all(operators: list, hint: str) -> Optional[bool]:
    values = [getattr(op, hint) for op in operators]
    return True if all(v is True for v in values) else None


def _no_contradiction(hints: dict, operators: list, name: str) -> None:
    """A False hint where every part has the property True is an error (the whole has it too)."""
    for hint, value in hints.items():
        if value is False and _all(operators, hint):
            raise ValueError(f"{name}: every part is {hint}, so the operator is too; the hint {hint}=False "
                             "contradicts that.")


def _given_or_all(given: Optional[bool], operators: list, hint: str) -> Optional[bool]:
    return given if given is not None else _all(operators, hint)


def _check_operators(operators: Any, name: str) -> list:
    ops = list(operators)
    if not ops or not all(isinstance(op, LinearOperator) for op in ops):
        raise TypeError(f"{name}: operators must be a non-empty list of LinearOperators.")
    dtypes = {op.dtype for op in ops}
    if len(dtypes) != 1:
        raise TypeError(f"{name}: all operators must share one dtype, got {sorted(str(d) for d in dtypes)}.")
    return ops


def _inherited_hints(operator: LinearOperator, name: str, is_non_singular: Optional[bool],
                     is_self_adjoint: Optional[bool], is_positive_definite: Optional[bool],
                     is_square: Optional[bool]) -> tuple:
    """The four hints of an operator wrapping `operator` (its adjoint or inverse): each given one, else the
    wrapped operator's (a contradiction raises)."""
    return (_inherit(is_non_singular, operator.is_non_singular, "is_non_singular", name),
            _inherit(is_self_adjoint, operator.is_self_adjoint, "is_self_adjoint", name),
            _inherit(is_positive_definite, operator.is_positive_definite, "is_positive_definite", name),
            _inherit(is_square, operator._is_square_hint, "is_square", name))


class LinearOperatorAdjoint(LinearOperator):
    """The conjugate transpose of `operator`, without forming it."""

    def __init__(self, operator: LinearOperator, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None, is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: Optional[str] = None):
        name = name or operator.name + "_adjoint"
        self._operator = operator
        super().__init__(operator.dtype, None, *_inherited_hints(operator, name, is_non_singular, is_self_adjoint,
                                                                 is_positive_definite, is_square),
                         name, {"operator": operator})

    @property
    def operator(self) -> LinearOperator:
        """The operator whose adjoint this is."""
        return self._operator

    def _shape(self) -> torch.Size:
        shape = self._operator.shape
        return shape[:-2] + (shape[-1], shape[-2])

    def _dense(self) -> torch.Tensor:
        return adjoint_matrix(self._operator.to_dense())

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        return self._operator.matmul(x, adjoint=not adjoint)

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        return self._operator.solve(rhs, adjoint=not adjoint)

    def _determinant(self) -> torch.Tensor:
        det = self._operator.determinant()
        return det.conj() if det.is_complex() else det

    def _log_abs_determinant(self) -> torch.Tensor:
        return self._operator.log_abs_determinant()

    def _adjoint_operator(self) -> LinearOperator:
        return self._operator


class LinearOperatorInversion(LinearOperator):
    """The inverse of a square, non-singular `operator`: matmul solves with it, solve multiplies by it."""

    def __init__(self, operator: LinearOperator, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None, is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: Optional[str] = None):
        name = name or operator.name + "_inv"
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(f"{name}: an operator hinted singular has no inverse.")
        if operator._is_square_hint is False or is_square is False:
            raise ValueError(f"{name}: a non-square operator has no inverse.")
        self._operator = operator
        super().__init__(operator.dtype, None, *_inherited_hints(operator, name, is_non_singular, is_self_adjoint,
                                                                 is_positive_definite, is_square),
                         name, {"operator": operator})

    @property
    def operator(self) -> LinearOperator:
        """The operator whose inverse this is."""
        return self._operator

    def _shape(self) -> torch.Size:
        return self._operator.shape

    def _dense(self) -> torch.Tensor:
        return torch.linalg.inv(self._operator.to_dense())

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        return self._operator.solve(x, adjoint=adjoint)

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        return self._operator.matmul(rhs, adjoint=adjoint)

    def _determinant(self) -> torch.Tensor:
        return 1.0 / self._operator.determinant()

    def _log_abs_determinant(self) -> torch.Tensor:
        return -self._operator.log_abs_determinant()

    def _inverse_operator(self) -> LinearOperator:
        return self._operator


class LinearOperatorComposition(LinearOperator):
    """The product operators[0] @ operators[1] @ ... applied right to left."""

    def __init__(self, operators: Any, is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: Optional[bool] = None,
                 name: Optional[str] = None):
        ops = _check_operators(operators, "LinearOperatorComposition")
        for left, right in zip(ops, ops[1:]):
            if left.domain_dimension != right.range_dimension:
                raise ValueError(f"LinearOperatorComposition: {left.name} takes {left.domain_dimension} columns "
                                 f"but {right.name} gives {right.range_dimension} rows.")
        if is_non_singular is None and _all(ops, "is_non_singular"):
            is_non_singular = True
        self._operators = ops
        super().__init__(ops[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name or "_o_".join(op.name for op in ops), {"operators": ops})

    @property
    def operators(self) -> list:
        """The factors, leftmost first."""
        return list(self._operators)

    def _shape(self) -> torch.Size:
        batch = torch.broadcast_shapes(*(op.batch_shape for op in self._operators))
        return batch + (self._operators[0].range_dimension, self._operators[-1].domain_dimension)

    def _dense(self) -> torch.Tensor:
        out = self._operators[-1].to_dense()
        for op in reversed(self._operators[:-1]):
            out = op.matmul(out)
        return out

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        order = self._operators if adjoint else list(reversed(self._operators))
        for op in order:
            x = op.matmul(x, adjoint=adjoint)
        return x

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        if not all(op.domain_dimension == op.range_dimension for op in self._operators):
            return super()._solve(rhs, adjoint)
        order = list(reversed(self._operators)) if adjoint else self._operators
        for op in order:
            rhs = op.solve(rhs, adjoint=adjoint)
        return rhs

    def _determinant(self) -> torch.Tensor:
        if not all(op.domain_dimension == op.range_dimension for op in self._operators):
            return super()._determinant()
        out = self._operators[0].determinant()
        for op in self._operators[1:]:
            out = out * op.determinant()
        return out

    def _log_abs_determinant(self) -> torch.Tensor:
        if not all(op.domain_dimension == op.range_dimension for op in self._operators):
            return super()._log_abs_determinant()
        return sum(op.log_abs_determinant() for op in self._operators)


def _split_rows(x: torch.Tensor, sizes: list) -> list:
    return list(torch.split(x, sizes, dim=-2))


class LinearOperatorBlockDiag(LinearOperator):
    """The block-diagonal operator with the square `operators` on its diagonal."""

    def __init__(self, operators: Any, is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: bool = True, name: Optional[str] = None):
        ops = _check_operators(operators, "LinearOperatorBlockDiag")
        if any(op.domain_dimension != op.range_dimension for op in ops):
            raise ValueError("LinearOperatorBlockDiag: every operator on the diagonal must be square.")
        _no_contradiction({"is_non_singular": is_non_singular, "is_self_adjoint": is_self_adjoint,
                           "is_positive_definite": is_positive_definite}, ops, "LinearOperatorBlockDiag")
        self._operators = ops
        super().__init__(ops[0].dtype, None, _given_or_all(is_non_singular, ops, "is_non_singular"),
                         _given_or_all(is_self_adjoint, ops, "is_self_adjoint"),
                         _given_or_all(is_positive_definite, ops, "is_positive_definite"), True,
                         name or "_ds_".join(op.name for op in ops), {"operators": ops})

    @property
    def operators(self) -> list:
        """The diagonal blocks."""
        return list(self._operators)

    def _shape(self) -> torch.Size:
        batch = torch.broadcast_shapes(*(op.batch_shape for op in self._operators))
        n = sum(op.domain_dimension for op in self._operators)
        return batch + (n, n)

    def _dense(self) -> torch.Tensor:
        batch = self._shape()[:-2]
        n = self._shape()[-1]
        out = torch.zeros(batch + (n, n), dtype=self.dtype)
        start = 0
        for op in self._operators:
            size = op.domain_dimension
            out[..., start:start + size, start:start + size] = op.to_dense()
            start += size
        return out

    def _sizes(self) -> list:
        return [op.domain_dimension for op in self._operators]

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        parts = [op.matmul(part, adjoint=adjoint) for op, part in zip(self._operators, _split_rows(x, self._sizes()))]
        return torch.cat(_broadcast_batches(parts), dim=-2)

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        parts = [op.solve(part, adjoint=adjoint) for op, part in zip(self._operators, _split_rows(rhs, self._sizes()))]
        return torch.cat(_broadcast_batches(parts), dim=-2)

    def _determinant(self) -> torch.Tensor:
        out = self._operators[0].determinant()
        for op in self._operators[1:]:
            out = out * op.determinant()
        return out

    def _log_abs_determinant(self) -> torch.Tensor:
        return sum(op.log_abs_determinant() for op in self._operators)

    def _diag_part(self) -> torch.Tensor:
        return torch.cat(_broadcast_batches([op.diag_part().unsqueeze(-1) for op in self._operators]),
                         dim=-2).squeeze(-1)


def _broadcast_batches(parts: list) -> list:
    """The parts with their batch dimensions (all but the last two) broadcast to one shape."""
    batch = torch.broadcast_shapes(*(p.shape[:-2] for p in parts))
    return [p.expand(batch + p.shape[-2:]) for p in parts]


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A block lower-triangular operator from rows of operators: [[A11], [A21, A22], [A31, A32, A33], ...]; the
    diagonal blocks must be square."""

    def __init__(self, operators: Any, is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: Optional[bool] = None,
                 name: str = "LinearOperatorBlockLowerTriangular"):
        rows = [list(row) for row in operators]
        if not rows or any(len(row) != i + 1 for i, row in enumerate(rows)):
            raise ValueError(f"{name}: operators must be rows [[A11], [A21, A22], ...], row i holding i + 1 operators.")
        _check_operators([op for row in rows for op in row], name)
        sizes = [row[-1].domain_dimension for row in rows]
        for i, row in enumerate(rows):
            if row[-1].range_dimension != sizes[i]:
                raise ValueError(f"{name}: diagonal block {i} must be square.")
            for j, op in enumerate(row):
                if op.range_dimension != sizes[i] or op.domain_dimension != sizes[j]:
                    raise ValueError(f"{name}: block ({i}, {j}) must be [{sizes[i]}, {sizes[j]}], got "
                                     f"{tuple(op.shape[-2:])}.")
        if is_non_singular is None and all(row[-1].is_non_singular for row in rows):
            is_non_singular = True
        self._rows, self._sizes = rows, sizes
        super().__init__(rows[0][0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name,
                         {"operators": rows})

    @property
    def operators(self) -> list:
        """The rows of blocks."""
        return [list(row) for row in self._rows]

    def _shape(self) -> torch.Size:
        batch = torch.broadcast_shapes(*(op.batch_shape for row in self._rows for op in row))
        n = sum(self._sizes)
        return batch + (n, n)

    def _dense(self) -> torch.Tensor:
        out = torch.zeros(self._shape(), dtype=self.dtype)
        starts = [sum(self._sizes[:i]) for i in range(len(self._sizes))]
        for i, row in enumerate(self._rows):
            for j, op in enumerate(row):
                out[..., starts[i]:starts[i] + self._sizes[i], starts[j]:starts[j] + self._sizes[j]] = op.to_dense()
        return out

    def _solve(self, rhs: torch.Tensor, adjoint: bool) -> torch.Tensor:
        if adjoint:
            return super()._solve(rhs, adjoint)
        parts = _split_rows(rhs, self._sizes)
        solved: list = []
        for i, row in enumerate(self._rows):
            rest = parts[i]
            for j, op in enumerate(row[:-1]):
                rest = rest - op.matmul(solved[j])
            solved.append(row[-1].solve(rest))
        return torch.cat(_broadcast_batches(solved), dim=-2)

    def _determinant(self) -> torch.Tensor:
        out = self._rows[0][-1].determinant()
        for row in self._rows[1:]:
            out = out * row[-1].determinant()
        return out

    def _log_abs_determinant(self) -> torch.Tensor:
        return sum(row[-1].log_abs_determinant() for row in self._rows)


def _kron(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    (m, n), (p, q) = a.shape[-2:], b.shape[-2:]
    out = a[..., :, None, :, None] * b[..., None, :, None, :]
    return out.expand(batch + (m, p, n, q)).reshape(batch + (m * p, n * q))


class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product operators[0] (x) operators[1] (x) ..."""

    def __init__(self, operators: Any, is_non_singular: Optional[bool] = None, is_self_adjoint: Optional[bool] = None,
                 is_positive_definite: Optional[bool] = None, is_square: Optional[bool] = None,
                 name: Optional[str] = None):
        ops = _check_operators(operators, "LinearOperatorKronecker")
        _no_contradiction({"is_non_singular": is_non_singular, "is_self_adjoint": is_self_adjoint}, ops,
                          "LinearOperatorKronecker")
        self._operators = ops
        super().__init__(ops[0].dtype, None, _given_or_all(is_non_singular, ops, "is_non_singular"),
                         _given_or_all(is_self_adjoint, ops, "is_self_adjoint"), is_positive_definite, is_square,
                         name or "_x_".join(op.name for op in ops), {"operators": ops})

    @property
    def operators(self) -> list:
        """The factors, leftmost first."""
        return list(self._operators)

    def _shape(self) -> torch.Size:
        batch = torch.broadcast_shapes(*(op.batch_shape for op in self._operators))
        rows = cols = 1
        for op in self._operators:
            rows, cols = rows * op.range_dimension, cols * op.domain_dimension
        return batch + (rows, cols)

    def _dense(self) -> torch.Tensor:
        out = self._operators[0].to_dense()
        for op in self._operators[1:]:
            out = _kron(out, op.to_dense())
        return out

    def _determinant(self) -> torch.Tensor:
        if not all(op.domain_dimension == op.range_dimension for op in self._operators):
            return super()._determinant()
        n = self._shape()[-1]
        out = None
        for op in self._operators:
            part = op.determinant() ** (n // op.domain_dimension)
            out = part if out is None else out * part
        return out

    def _log_abs_determinant(self) -> torch.Tensor:
        if not all(op.domain_dimension == op.range_dimension for op in self._operators):
            return super()._log_abs_determinant()
        n = self._shape()[-1]
        return sum(op.log_abs_determinant() * (n // op.domain_dimension) for op in self._operators)


class LinearOperatorLowRankUpdate(LinearOperator):
    """base_operator + U @ diag(diag_update) @ V^H, V defaulting to U and diag_update to ones."""

    def __init__(self, base_operator: LinearOperator, u: Any, diag_update: Any = None, v: Any = None,
                 is_diag_update_positive: Optional[bool] = None, is_non_singular: Optional[bool] = None,
                 is_self_adjoint: Optional[bool] = None, is_positive_definite: Optional[bool] = None,
                 is_square: Optional[bool] = None, name: str = "LinearOperatorLowRankUpdate"):
        if not isinstance(base_operator, LinearOperator):
            raise TypeError(f"{name}: base_operator must be a LinearOperator, got {type(base_operator).__name__}.")
        dtype = base_operator.dtype
        self._base = base_operator
        self._u = as_tensor(u, dtype, name)
        self._v = None if v is None else as_tensor(v, dtype, name)
        self._diag_update = None if diag_update is None else as_tensor(diag_update, dtype, name)
        rank = self._u.shape[-1]
        if self._u.shape[-2] != base_operator.range_dimension or (
                self._v is not None and (self._v.shape[-2] != base_operator.domain_dimension
                                         or self._v.shape[-1] != rank)):
            raise ValueError(f"{name}: u must be [..., M, K] and v [..., N, K] for a base of shape "
                             f"{tuple(base_operator.shape)}.")
        self._is_diag_update_positive = is_diag_update_positive
        if self._diag_update is None:
            self._diag_operator = LinearOperatorIdentity(rank, dtype=dtype)
        else:
            positive = True if is_diag_update_positive else None
            self._diag_operator = LinearOperatorDiag(self._diag_update, is_non_singular=positive,
                                                     is_positive_definite=positive)
        if self._v is None and base_operator.is_self_adjoint and is_self_adjoint is None and not dtype.is_complex:
            is_self_adjoint = True
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name,
                         {"base_operator": base_operator, "u": u, "diag_update": diag_update, "v": v,
                          "is_diag_update_positive": is_diag_update_positive})

    @property
    def base_operator(self) -> LinearOperator:
        """The operator being updated."""
        return self._base

    @property
    def u(self) -> torch.Tensor:
        """U, [..., M, K]."""
        return self._u

    @property
    def v(self) -> torch.Tensor:
        """V, [..., N, K] (U when not given)."""
        return self._u if self._v is None else self._v

    @property
    def diag_update(self) -> Optional[torch.Tensor]:
        """The diagonal of the middle factor, or None for the identity."""
        return self._diag_update

    @property
    def diag_operator(self) -> LinearOperator:
        """The middle factor as an operator (LinearOperatorDiag, or LinearOperatorIdentity)."""
        return self._diag_operator

    @property
    def is_diag_update_positive(self) -> Optional[bool]:
        """The caller's promise that diag_update > 0."""
        return self._is_diag_update_positive

    def _shape(self) -> torch.Size:
        batch = torch.broadcast_shapes(self._base.batch_shape, self._u.shape[:-2], self.v.shape[:-2])
        return batch + self._base.shape[-2:]

    def _dense(self) -> torch.Tensor:
        update = self._diag_operator.matmul(adjoint_matrix(self.v))
        return self._base.to_dense() + self._u @ update

    def _matmul(self, x: torch.Tensor, adjoint: bool) -> torch.Tensor:
        left, right = (self.v, self._u) if adjoint else (self._u, self.v)
        inner = self._diag_operator.matmul(adjoint_matrix(right) @ x, adjoint=adjoint)
        return self._base.matmul(x, adjoint=adjoint) + left @ inner
