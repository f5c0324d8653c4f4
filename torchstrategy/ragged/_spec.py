"""`tf.RaggedTensorSpec`: the type of a RaggedTensor (shape with None for ragged dimensions, dtype,
ragged_rank), as element_spec reports ragged components."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.dtypes import as_dtype
from torchstrategy.ragged._tensor import RaggedShape, RaggedTensor


class RaggedTensorSpec:
    """Describes RaggedTensors: `shape` (None where unknown or ragged), `dtype`, `ragged_rank` (default
    rank - 1) and `row_splits_dtype` (int64 here)."""

    def __init__(self, shape: Any = None, dtype: Any = torch.float32, ragged_rank: Optional[int] = None,
                 row_splits_dtype: Any = torch.int64, flat_values_spec: Any = None):
        if flat_values_spec is not None:
            raise NotImplementedError("RaggedTensorSpec(flat_values_spec=...) is not supported here; pass "
                                      "shape and dtype.")
        self.shape = RaggedShape(() if shape is None else (None if d is None else int(d) for d in shape))
        self.dtype = as_dtype(dtype) if not isinstance(dtype, torch.dtype) else dtype
        rank = len(self.shape)
        self.ragged_rank = rank - 1 if ragged_rank is None else int(ragged_rank)
        if shape is not None and not 0 <= self.ragged_rank < max(rank, 1):
            raise ValueError(f"RaggedTensorSpec: ragged_rank must be in [0, {rank - 1}]; got {ragged_rank}.")
        self.row_splits_dtype = row_splits_dtype

    @classmethod
    def from_value(cls, value: RaggedTensor) -> "RaggedTensorSpec":
        """The spec of a concrete RaggedTensor."""
        return cls(value.shape, value.dtype, value.ragged_rank)

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        """True if `spec_or_value` (a RaggedTensor or spec) has this dtype, ragged_rank and a compatible shape."""
        value = spec_or_value
        other = RaggedTensorSpec.from_value(value) if isinstance(value, RaggedTensor) else value
        if not isinstance(other, RaggedTensorSpec) or other.dtype != self.dtype:
            return False
        return other.ragged_rank == self.ragged_rank and len(other.shape) == len(self.shape) and all(
            a is None or b is None or a == b for a, b in zip(self.shape, other.shape))

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, RaggedTensorSpec) and (tuple(self.shape), self.dtype, self.ragged_rank) == (
            tuple(other.shape), other.dtype, other.ragged_rank)

    def __hash__(self) -> int:
        return hash((tuple(self.shape), str(self.dtype), self.ragged_rank))

    def __repr__(self) -> str:
        return f"RaggedTensorSpec({self.shape!r}, {self.dtype}, {self.ragged_rank}, {self.row_splits_dtype})"


