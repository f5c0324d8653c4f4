"""`tf.ragged` and `tf.RaggedTensor`: tensors with rows of different lengths (flat values + row_splits),
their factories and the tf.ragged functions; this module re-exports them (tf.ragged is this module)."""
from __future__ import annotations

from torchstrategy.ragged._ops import (  # noqa: F401
    boolean_mask, concat, constant, elementwise, map_flat_values, range, row_splits_to_segment_ids, segment_ids_to_row_splits,
    stack,
)
from torchstrategy.ragged._partition import DynamicRaggedShape, RowPartition  # noqa: F401 (tf.experimental's)
from torchstrategy.ragged._reduce import reduce  # noqa: F401
from torchstrategy.ragged._spec import RaggedTensorSpec  # noqa: F401
from torchstrategy.ragged._tensor import RaggedShape, RaggedTensor, check_row_splits_dtype, is_ragged  # noqa: F401

__all__ = [
    "RaggedTensor", "boolean_mask", "constant", "map_flat_values", "range", "row_splits_to_segment_ids",
    "segment_ids_to_row_splits", "stack",
]
