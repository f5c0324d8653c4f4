"""`tf.sparse`: SparseTensor and its ops, named here; the tensor lives in sparse_tensor.py, the structure ops in
sparse_ops.py and the arithmetic in sparse_math.py."""
from __future__ import annotations

from torchstrategy.sparse_math import (add, bincount, cross, cross_hashed, maximum, minimum, reduce_max, reduce_sum,
                                       sampled_addmm, segment_mean, segment_sqrt_n, segment_sum, softmax,
                                       sparse_dense_matmul)
from torchstrategy.sparse_ops import (concat, expand_dims, eye, fill_empty_rows, from_dense, map_values, mask,
                                      reorder, reset_shape, reshape, retain, slice, split, to_dense, to_indicator,
                                      transpose)
from torchstrategy.sparse_tensor import SparseTensor, SparseTensorValue

__all__ = ["SparseTensor", "SparseTensorValue", "add", "bincount", "concat", "cross", "cross_hashed", "expand_dims", "eye",
           "fill_empty_rows", "from_dense", "map_values", "mask", "maximum", "minimum", "reduce_max", "reduce_sum",
           "reorder", "reset_shape", "reshape", "retain", "sampled_addmm", "segment_mean", "segment_sqrt_n",
           "segment_sum", "slice", "softmax", "sparse_dense_matmul", "split", "to_dense", "to_indicator", "transpose"]
