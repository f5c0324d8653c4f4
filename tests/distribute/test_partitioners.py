"""Tests for tf.distribute.experimental.partitioners: partition counts and shard row bounds compared
with numbers frozen from TensorFlow 2.21, dtype and shape spellings, and every argument error."""
import numpy as np
import pytest
import torch

from torchstrategy.distribute.partitioners import (
    FixedShardsPartitioner,
    MaxSizePartitioner,
    MinSizePartitioner,
    Partitioner,
    shard_bounds,
)

# Frozen from TF 2.21 (tensorflow-cpu 2.21.0): tf.distribute.experimental.partitioners.<P>(...)
# (tf.TensorShape(shape), tf.as_dtype(dtype), axis=axis).
# Fixed rows: (shape, axis, num_shards, result).
# Min rows: (shape, axis, dtype, min_shard_bytes, max_shards, bytes_per_string, result).
# Max rows: (shape, axis, dtype, max_shard_bytes, max_shards, bytes_per_string, result).
_FIXED_CASES = [
    # TF 2.21: fewer rows than shards gives one shard per row.
    ((1,), 0, 1000, [1]),
    ((7,), 0, 8, [7]),
    ((10, 3), 1, 4, [1, 3]),
    ((6, 1), 1, 2, [1, 1]),
    ((100, 7, 3), 0, 1000, [100, 1, 1]),
    ((100, 7, 3), 1, 8, [1, 7, 1]),
    ((1,), 0, 1, [1]),
    ((7,), 0, 1, [1]),
    ((7,), 0, 2, [2]),
    ((7,), 0, 3, [3]),
    ((7,), 0, 4, [4]),
    ((7,), 0, 8, [7]),
    ((10, 3), 0, 1, [1, 1]),
    ((10, 3), 0, 2, [2, 1]),
    ((10, 3), 0, 3, [3, 1]),
    ((10, 3), 0, 4, [4, 1]),
    ((10, 3), 0, 8, [8, 1]),
    ((6, 1), 0, 1, [1, 1]),
    ((6, 1), 0, 2, [2, 1]),
    ((6, 1), 0, 3, [3, 1]),
    ((6, 1), 0, 4, [4, 1]),
    ((6, 1), 0, 8, [6, 1]),
    ((1024, 1024), 0, 1, [1, 1]),
    ((1024, 1024), 0, 3, [3, 1]),
    ((1024, 1024), 0, 8, [8, 1]),
    ((1024, 1024), 1, 1, [1, 1]),
    ((1024, 1024), 1, 3, [1, 3]),
    ((100, 7, 3), 0, 1, [1, 1, 1]),
    ((100, 7, 3), 0, 3, [3, 1, 1]),
    ((100, 7, 3), 0, 8, [8, 1, 1]),
    ((100, 7, 3), 1, 1, [1, 1, 1]),
    ((100, 7, 3), 1, 3, [1, 3, 1]),
    ((3, 1000), 0, 1, [1, 1]),
    ((3, 1000), 0, 2, [2, 1]),
    ((3, 1000), 0, 3, [3, 1]),
    ((3, 1000), 1, 1, [1, 1]),
    ((3, 1000), 1, 2, [1, 2]),
    ((33, 17), 0, 1, [1, 1]),
    ((33, 17), 0, 3, [3, 1]),
    ((33, 17), 0, 8, [8, 1]),
    ((33, 17), 1, 1, [1, 1]),
    ((33, 17), 1, 3, [1, 3]),
    ((1000003, 5), 0, 1, [1, 1]),
    ((1000003, 5), 0, 3, [3, 1]),
    ((1000003, 5), 0, 8, [8, 1]),
    ((1000003, 5), 1, 1, [1, 1]),
    ((1000003, 5), 1, 3, [1, 3]),
    ((5, 10, 2), 0, 1, [1, 1, 1]),
    ((5, 10, 2), 0, 3, [3, 1, 1]),
    ((5, 10, 2), 0, 8, [5, 1, 1]),
    ((5, 10, 2), 1, 2, [1, 2, 1]),
    ((5, 10, 2), 1, 4, [1, 4, 1]),
]
_MIN_CASES = [
    ((1,), 0, 'float32', 4, 2, 16, [1]),
    ((1,), 0, 'float16', 4, 2, 16, [1]),
    ((1,), 0, 'bfloat16', 4, 2, 16, [1]),
    ((1,), 0, 'float64', 4, 2, 16, [1]),
    ((1,), 0, 'int8', 4, 2, 16, [1]),
    ((1,), 0, 'int64', 4, 2, 16, [1]),
    ((1,), 0, 'bool', 4, 2, 16, [1]),
    ((1,), 0, 'complex64', 4, 2, 16, [1]),
    ((7,), 0, 'float32', 4, 2, 16, [2]),
    ((7,), 0, 'float16', 4, 2, 16, [2]),
    ((7,), 0, 'float16', 1, 1073741824, 1, [7]),
    ((7,), 0, 'bfloat16', 262144, 1, 16, [1]),
    ((7,), 0, 'float64', 4, 10, 16, [7]),
    ((7,), 0, 'int8', 262144, 1, 16, [1]),
    ((7,), 0, 'int64', 4, 10, 16, [7]),
    ((7,), 0, 'bool', 262144, 1, 16, [1]),
    ((10, 3), 0, 'float32', 4, 2, 16, [2, 1]),
    ((10, 3), 0, 'bfloat16', 4, 2, 16, [2, 1]),
    ((10, 3), 0, 'float64', 100, 1000, 3, [3, 1]),
    ((10, 3), 0, 'int64', 4, 10, 16, [10, 1]),
    ((10, 3), 0, 'bool', 1, 1073741824, 1, [10, 1]),
    ((10, 3), 0, 'string', 4, 10, 16, [10, 1]),
    ((10, 3), 1, 'bfloat16', 4, 2, 16, [1, 2]),
    ((10, 3), 1, 'int64', 4, 2, 16, [1, 2]),
    ((6, 1), 0, 'float32', 4, 2, 16, [2, 1]),
    ((6, 1), 0, 'float16', 4, 2, 16, [2, 1]),
    ((6, 1), 0, 'float16', 1, 1073741824, 1, [6, 1]),
    ((6, 1), 0, 'bfloat16', 262144, 1, 16, [1, 1]),
    ((6, 1), 0, 'float64', 4, 10, 16, [6, 1]),
    ((6, 1), 0, 'int8', 262144, 1, 16, [1, 1]),
    ((6, 1), 0, 'int64', 4, 10, 16, [6, 1]),
    ((6, 1), 0, 'bool', 262144, 1, 16, [1, 1]),
    ((1024, 1024), 0, 'float32', 4, 2, 16, [2, 1]),
    ((1024, 1024), 0, 'bfloat16', 4, 2, 16, [2, 1]),
    ((1024, 1024), 0, 'int8', 4, 2, 16, [2, 1]),
    ((1024, 1024), 0, 'bool', 4, 2, 16, [2, 1]),
    ((1024, 1024), 0, 'string', 4, 2, 16, [2, 1]),
    ((1024, 1024), 1, 'float16', 4, 10, 16, [1, 10]),
    ((1024, 1024), 1, 'float64', 100, 1000, 3, [1, 1000]),
    ((1024, 1024), 1, 'int64', 1, 1073741824, 1, [1, 1024]),
    ((100, 7, 3), 0, 'float32', 4, 2, 16, [2, 1, 1]),
    ((100, 7, 3), 0, 'float16', 1, 1073741824, 1, [100, 1, 1]),
    ((100, 7, 3), 0, 'float64', 4096, 7, 16, [5, 1, 1]),
    ((100, 7, 3), 0, 'int64', 4096, 7, 16, [5, 1, 1]),
    ((100, 7, 3), 0, 'complex64', 4096, 7, 16, [5, 1, 1]),
    ((100, 7, 3), 1, 'float16', 4, 2, 16, [1, 2, 1]),
    ((100, 7, 3), 1, 'int64', 4, 10, 16, [1, 7, 1]),
    ((100, 7, 3), 2, 'float32', 4, 10, 16, [1, 1, 3]),
    ((3, 1000), 0, 'float32', 4, 2, 16, [2, 1]),
    ((3, 1000), 0, 'bfloat16', 262144, 1, 16, [1, 1]),
    ((3, 1000), 0, 'int64', 4, 10, 16, [3, 1]),
    ((3, 1000), 0, 'string', 4, 2, 16, [2, 1]),
    ((3, 1000), 1, 'float16', 4, 2, 16, [1, 2]),
    ((3, 1000), 1, 'float64', 4, 2, 16, [1, 2]),
    ((3, 1000), 1, 'int8', 1, 1073741824, 1, [1, 1000]),
    ((3, 1000), 1, 'bool', 100, 1000, 3, [1, 30]),
    ((33, 17), 0, 'float32', 4, 2, 16, [2, 1]),
    ((33, 17), 0, 'float16', 1, 1073741824, 1, [33, 1]),
    ((33, 17), 0, 'float64', 100, 1000, 3, [33, 1]),
    ((33, 17), 0, 'int64', 100, 1000, 3, [33, 1]),
    ((33, 17), 0, 'complex64', 100, 1000, 3, [33, 1]),
    ((33, 17), 1, 'float32', 100, 1000, 3, [1, 17]),
    ((33, 17), 1, 'float64', 4, 2, 16, [1, 2]),
    ((33, 17), 1, 'int64', 100, 1000, 3, [1, 17]),
    ((1000003, 5), 0, 'float32', 4, 2, 16, [2, 1]),
    ((1000003, 5), 0, 'float16', 262144, 64, 16, [39, 1]),
    ((1000003, 5), 0, 'bfloat16', 1, 1073741824, 1, [1000003, 1]),
    ((1000003, 5), 0, 'int8', 262144, 1, 16, [1, 1]),
    ((1000003, 5), 0, 'int64', 4096, 7, 16, [7, 1]),
    ((1000003, 5), 0, 'complex64', 4, 10, 16, [10, 1]),
    ((1000003, 5), 0, 'string', 100, 1000, 3, [1000, 1]),
    ((1000003, 5), 1, 'float64', 4, 10, 16, [1, 5]),
    ((5, 10, 2), 0, 'float32', 4, 2, 16, [2, 1, 1]),
    ((5, 10, 2), 0, 'bfloat16', 4, 2, 16, [2, 1, 1]),
    ((5, 10, 2), 0, 'int8', 4, 10, 16, [5, 1, 1]),
    ((5, 10, 2), 0, 'bool', 262144, 1, 16, [1, 1, 1]),
    ((5, 10, 2), 0, 'string', 100, 1000, 3, [3, 1, 1]),
    ((5, 10, 2), 1, 'bfloat16', 4, 10, 16, [1, 10, 1]),
    ((5, 10, 2), 1, 'int64', 4, 10, 16, [1, 10, 1]),
    ((5, 10, 2), 1, 'string', 4, 2, 16, [1, 2, 1]),
]
_MAX_CASES = [
    ((1,), 0, 'float32', 4, None, 16, [1]),
    ((1,), 0, 'float16', 4, None, 16, [1]),
    ((1,), 0, 'bfloat16', 4, None, 16, [1]),
    ((1,), 0, 'float64', 4, None, 16, [1]),
    ((1,), 0, 'int8', 4, None, 16, [1]),
    ((1,), 0, 'int64', 4, None, 16, [1]),
    ((1,), 0, 'bool', 4, None, 16, [1]),
    ((1,), 0, 'complex64', 4, None, 16, [1]),
    ((7,), 0, 'float32', 4, None, 16, [7]),
    ((7,), 0, 'float32', 13, 1000, 5, [3]),
    ((7,), 0, 'float16', 1024, None, 16, [1]),
    ((7,), 0, 'bfloat16', 4, 2, 16, [2]),
    ((7,), 0, 'float64', 4, None, 16, [7]),
    ((7,), 0, 'int8', 4, None, 16, [2]),
    ((7,), 0, 'int64', 4, None, 16, [7]),
    ((7,), 0, 'bool', 4, None, 16, [2]),
    ((10, 3), 0, 'float32', 4, None, 16, [10, 1]),
    ((10, 3), 0, 'float16', 13, 1000, 5, [5, 1]),
    ((10, 3), 0, 'float64', 4, 2, 16, [2, 1]),
    ((10, 3), 0, 'int8', 13, 1000, 5, [3, 1]),
    ((10, 3), 0, 'bool', 4, 2, 16, [2, 1]),
    ((10, 3), 0, 'complex64', 100, None, 3, [3, 1]),
    ((10, 3), 1, 'float16', 4, None, 16, [1, 3]),
    ((10, 3), 1, 'int8', 4, None, 16, [1, 3]),
    ((6, 1), 0, 'float32', 4, None, 16, [6, 1]),
    ((6, 1), 0, 'float16', 4, None, 16, [3, 1]),
    ((6, 1), 0, 'float16', 1, None, 1, [6, 1]),
    ((6, 1), 0, 'bfloat16', 1024, None, 16, [1, 1]),
    ((6, 1), 0, 'float64', 4, 2, 16, [2, 1]),
    ((6, 1), 0, 'int8', 1024, None, 16, [1, 1]),
    ((6, 1), 0, 'int64', 4, 2, 16, [2, 1]),
    ((6, 1), 0, 'bool', 1024, None, 16, [1, 1]),
    ((1024, 1024), 0, 'float32', 4, None, 16, [1024, 1]),
    ((1024, 1024), 0, 'bfloat16', 4, None, 16, [1024, 1]),
    ((1024, 1024), 0, 'int8', 4, None, 16, [1024, 1]),
    ((1024, 1024), 0, 'bool', 4, None, 16, [1024, 1]),
    ((1024, 1024), 0, 'string', 4, None, 16, [1024, 1]),
    ((1024, 1024), 1, 'float16', 4, 2, 16, [1, 2]),
    ((1024, 1024), 1, 'float64', 13, 1000, 5, [1, 1000]),
    ((1024, 1024), 1, 'bool', 4, 2, 16, [1, 2]),
    ((100, 7, 3), 0, 'float32', 4, None, 16, [100, 1, 1]),
    ((100, 7, 3), 0, 'bfloat16', 4, None, 16, [100, 1, 1]),
    ((100, 7, 3), 0, 'int8', 4, None, 16, [100, 1, 1]),
    ((100, 7, 3), 0, 'bool', 4, None, 16, [100, 1, 1]),
    ((100, 7, 3), 0, 'string', 4, None, 16, [100, 1, 1]),
    ((100, 7, 3), 1, 'bfloat16', 4, None, 16, [1, 7, 1]),
    ((100, 7, 3), 1, 'bool', 4, 2, 16, [1, 2, 1]),
    ((100, 7, 3), 2, 'bfloat16', 4, None, 16, [1, 1, 3]),
    ((3, 1000), 0, 'float32', 4, None, 16, [3, 1]),
    ((3, 1000), 0, 'float64', 4, None, 16, [3, 1]),
    ((3, 1000), 0, 'bool', 4, None, 16, [3, 1]),
    ((3, 1000), 1, 'float32', 4, None, 16, [1, 1000]),
    ((3, 1000), 1, 'float16', 13, 1000, 5, [1, 500]),
    ((3, 1000), 1, 'float64', 100, None, 3, [1, 250]),
    ((3, 1000), 1, 'int64', 1024, None, 16, [1, 24]),
    ((3, 1000), 1, 'complex64', 4, 2, 16, [1, 2]),
    ((33, 17), 0, 'float32', 4, None, 16, [33, 1]),
    ((33, 17), 0, 'float16', 4096, 7, 16, [1, 1]),
    ((33, 17), 0, 'float64', 1024, None, 16, [5, 1]),
    ((33, 17), 0, 'int64', 4, 2, 16, [2, 1]),
    ((33, 17), 0, 'complex64', 4, None, 16, [33, 1]),
    ((33, 17), 0, 'string', 4096, 7, 16, [3, 1]),
    ((33, 17), 1, 'bfloat16', 4, None, 16, [1, 17]),
    ((33, 17), 1, 'int8', 100, None, 3, [1, 6]),
    ((1000003, 5), 0, 'float32', 4, None, 16, [1000003, 1]),
    ((1000003, 5), 0, 'float16', 100, None, 3, [100001, 1]),
    ((1000003, 5), 0, 'bfloat16', 13, 1000, 5, [1000, 1]),
    ((1000003, 5), 0, 'int8', 1024, None, 16, [4902, 1]),
    ((1000003, 5), 0, 'int64', 67108864, None, 16, [1, 1]),
    ((1000003, 5), 0, 'complex64', 4, 2, 16, [2, 1]),
    ((1000003, 5), 0, 'string', 4096, 7, 16, [7, 1]),
    ((1000003, 5), 1, 'int8', 4, None, 16, [1, 5]),
    ((5, 10, 2), 0, 'float32', 4, None, 16, [5, 1, 1]),
    ((5, 10, 2), 0, 'bfloat16', 4, None, 16, [5, 1, 1]),
    ((5, 10, 2), 0, 'int8', 4, None, 16, [5, 1, 1]),
    ((5, 10, 2), 0, 'bool', 4, 2, 16, [2, 1, 1]),
    ((5, 10, 2), 0, 'string', 4096, 7, 16, [1, 1, 1]),
    ((5, 10, 2), 1, 'bfloat16', 4, 2, 16, [1, 2, 1]),
    ((5, 10, 2), 1, 'bool', 4, None, 16, [1, 10, 1]),
    ((5, 10, 2), 2, 'float32', 4, None, 16, [1, 1, 2]),
]

# TF 2.21: shard sizes along axis 0 read from `v.variables[i].shape[0]` of a tf.Variable of shape
# (rows, 2) created under a real ParameterServerStrategy (1 worker, 2 ps, chief on 127.0.0.1) with
# FixedShardsPartitioner(num_shards). Rows: (rows, num_shards, shard sizes).
_PS_SHARD_SIZES = [
    (1, 1, [1]), (13, 1, [13]), (1, 2, [1]), (2, 2, [1, 1]), (5, 2, [3, 2]), (10, 2, [5, 5]),
    (11, 2, [6, 5]), (13, 2, [7, 6]), (1, 3, [1]), (2, 3, [1, 1]), (5, 3, [2, 2, 1]), (10, 3, [4, 3, 3]),
    (11, 3, [4, 4, 3]), (13, 3, [5, 4, 4]), (5, 4, [2, 1, 1, 1]), (10, 4, [3, 3, 2, 2]),
    (11, 4, [3, 3, 3, 2]), (13, 4, [4, 3, 3, 3]), (5, 5, [1, 1, 1, 1, 1]), (10, 5, [2, 2, 2, 2, 2]),
    (11, 5, [3, 2, 2, 2, 2]), (13, 5, [3, 3, 3, 2, 2]), (5, 7, [1, 1, 1, 1, 1]),
    (10, 7, [2, 2, 2, 1, 1, 1, 1]), (11, 7, [2, 2, 2, 2, 1, 1, 1]), (13, 7, [2, 2, 2, 2, 2, 2, 1]),
    (10, 12, [1] * 10), (13, 12, [2] + [1] * 11),
]

_SHAPE_SPELLINGS = [tuple, list, torch.Size]


@pytest.mark.parametrize("spelling", _SHAPE_SPELLINGS)
@pytest.mark.parametrize("shape, axis, num_shards, expected", _FIXED_CASES)
def test_fixed_shards_matches_tf(shape, axis, num_shards, expected, spelling):
    got = FixedShardsPartitioner(num_shards)(spelling(shape), torch.float32, axis=axis)
    assert got == expected
    assert type(got) is list and all(type(n) is int for n in got)


@pytest.mark.parametrize("shape, axis, dtype, min_bytes, max_shards, bytes_per_string, expected", _MIN_CASES)
def test_min_size_matches_tf(shape, axis, dtype, min_bytes, max_shards, bytes_per_string, expected):
    partitioner = MinSizePartitioner(min_shard_bytes=min_bytes, max_shards=max_shards,
                                     bytes_per_string=bytes_per_string)
    assert partitioner(shape, dtype, axis=axis) == expected
    assert partitioner(torch.Size(shape), _as_torch_or_numpy(dtype), axis) == expected


@pytest.mark.parametrize("shape, axis, dtype, max_bytes, max_shards, bytes_per_string, expected", _MAX_CASES)
def test_max_size_matches_tf(shape, axis, dtype, max_bytes, max_shards, bytes_per_string, expected):
    partitioner = MaxSizePartitioner(max_shard_bytes=max_bytes, max_shards=max_shards,
                                     bytes_per_string=bytes_per_string)
    assert partitioner(list(shape), dtype, axis=axis) == expected
    assert partitioner(shape, _as_torch_or_numpy(dtype), axis) == expected


def _as_torch_or_numpy(name):
    """The same dtype spelled as a torch dtype, or as a NumPy dtype for strings (torch has none)."""
    return np.dtype(object) if name == "string" else getattr(torch, name)


def test_tf_docstring_examples_and_defaults():
    # TF 2.21 docstring examples and defaults, all checked against tf.distribute.experimental.partitioners.
    assert FixedShardsPartitioner(num_shards=2)((10, 3), torch.float32) == [2, 1]
    assert MinSizePartitioner(min_shard_bytes=4, max_shards=2)((6, 1), torch.float32) == [2, 1]
    assert MinSizePartitioner(min_shard_bytes=4, max_shards=10)((6, 1), torch.float32) == [6, 1]
    assert MaxSizePartitioner(max_shard_bytes=4)((6, 1), torch.float32) == [6, 1]
    assert MaxSizePartitioner(max_shard_bytes=4, max_shards=2)((6, 1), torch.float32) == [2, 1]
    assert MaxSizePartitioner(max_shard_bytes=1024)((6, 1), torch.float32) == [1, 1]
    # Defaults: 256 KiB minimum and max_shards=1 -> never split.
    assert MinSizePartitioner()((1000003, 5), torch.float32) == [1, 1]
    assert MinSizePartitioner(max_shards=64)((1024, 1024), torch.float32) == [16, 1]
    assert MaxSizePartitioner(1000)((1000, 1), "string") == [17, 1]  # 16 bytes per string by default


def test_dtype_spellings_give_the_same_answer():
    partitioner = MaxSizePartitioner(max_shard_bytes=100)
    shape = (50, 3)
    # TF 2.21: MaxSize(100) on (50, 3) -> [4, 1] for 2-byte dtypes, [13, 1] for 8-byte ones.
    by_size = {2: ["float16", "half", torch.float16, np.float16, np.dtype("float16"), "bfloat16", torch.bfloat16],
               8: ["float64", "double", torch.float64, np.float64, "int64", "complex64", torch.complex64]}
    expected_by_size = {2: [4, 1], 8: [13, 1]}
    for size, spellings in by_size.items():
        expected = expected_by_size[size]
        for dtype in spellings:
            assert partitioner(shape, dtype) == expected, dtype
    # Strings count bytes_per_string bytes each, whatever the spelling (TF 2.21 with tf.string: [4, 1], [5, 1]).
    for dtype in ["string", np.dtype(object), np.str_, np.bytes_, np.dtype("U5"), np.dtype("S3")]:
        assert MaxSizePartitioner(max_shard_bytes=12, bytes_per_string=4)((10, 1), dtype) == [4, 1], dtype
        assert MinSizePartitioner(4, 100, bytes_per_string=2)((10, 1), dtype) == [5, 1], dtype


def test_float_byte_sizes_match_tf():
    # TF 2.21 accepts float byte sizes: MinSize(1.5, 100) on (10, 3) float32 -> [10, 1];
    # MaxSize(30.5) on (10, 3) float32 -> [5, 1].
    assert MinSizePartitioner(min_shard_bytes=1.5, max_shards=100)((10, 3), torch.float32) == [10, 1]
    assert MaxSizePartitioner(max_shard_bytes=30.5)((10, 3), torch.float32) == [5, 1]


def test_empty_shapes():
    # TF 2.21: FixedShards on 0 rows -> [0, 1]; MinSize on 0 rows or a 0 inner dim -> [1, 1].
    assert FixedShardsPartitioner(3)((0, 3), torch.float32) == [0, 1]
    assert MinSizePartitioner(4, 10)((0, 3), torch.float32) == [1, 1]
    assert MinSizePartitioner(4, 10)((10, 0), torch.float32) == [1, 1]
    # TF 2.21's MaxSize divides by zero here; an empty variable is one shard.
    assert MaxSizePartitioner(4)((0, 3), torch.float32) == [1, 1]
    assert MaxSizePartitioner(4)((10, 0), torch.float32) == [1, 1]


def test_partitioner_base_class():
    with pytest.raises(NotImplementedError, match="__call__"):
        Partitioner()((10,), torch.float32)

    class EveryRow(Partitioner):
        def __call__(self, shape, dtype, axis=0):
            return [shape[0]] + [1] * (len(shape) - 1)

    assert isinstance(FixedShardsPartitioner(2), Partitioner)
    assert isinstance(MinSizePartitioner(), Partitioner)
    assert isinstance(MaxSizePartitioner(1), Partitioner)
    assert EveryRow()((4, 2), torch.float32) == [4, 1]


@pytest.mark.parametrize("rows, num_shards, sizes", _PS_SHARD_SIZES)
def test_shard_bounds_match_tf_parameter_server_strategy(rows, num_shards, sizes):
    bounds = shard_bounds(rows, num_shards)
    assert [stop - start for start, stop in bounds] == sizes
    assert bounds[0][0] == 0 and bounds[-1][1] == rows
    assert all(bounds[i][1] == bounds[i + 1][0] for i in range(len(bounds) - 1))


def test_shard_bounds_examples():
    assert shard_bounds(10, 2) == [(0, 5), (5, 10)]
    assert shard_bounds(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert shard_bounds(10, 4) == [(0, 3), (3, 6), (6, 8), (8, 10)]
    assert shard_bounds(3, 8) == [(0, 1), (1, 2), (2, 3)]
    assert shard_bounds(0, 4) == [(0, 0)]
    # The bounds cover a real tensor exactly, in order.
    rows = torch.arange(23)
    pieces = [rows[start:stop] for start, stop in shard_bounds(23, 5)]
    assert torch.equal(torch.cat(pieces), rows)
    # Along with a partitioner's count (TF 2.21: MaxSize(40) on (23, 2) float32 -> [5, 1]).
    count = MaxSizePartitioner(max_shard_bytes=40)((23, 2), torch.float32)[0]
    assert [stop - start for start, stop in shard_bounds(23, count)] == [5, 5, 5, 4, 4]


@pytest.mark.parametrize("make, exc, match", [
    (lambda: FixedShardsPartitioner(0), ValueError, "num_shards"),
    (lambda: FixedShardsPartitioner(-2), ValueError, "num_shards"),
    (lambda: FixedShardsPartitioner(2.5), TypeError, "num_shards"),
    (lambda: FixedShardsPartitioner("2"), TypeError, "num_shards"),  # TF 2.21: TypeError
    (lambda: FixedShardsPartitioner(True), TypeError, "num_shards"),
    (lambda: MinSizePartitioner(min_shard_bytes=0), ValueError, "min_shard_bytes"),  # TF 2.21: ValueError
    (lambda: MinSizePartitioner(min_shard_bytes=-5), ValueError, "min_shard_bytes"),
    (lambda: MinSizePartitioner(min_shard_bytes="a"), TypeError, "min_shard_bytes"),  # TF 2.21: TypeError
    (lambda: MinSizePartitioner(max_shards=0), ValueError, "max_shards"),  # TF 2.21: ValueError
    (lambda: MinSizePartitioner(max_shards=None), TypeError, "max_shards"),  # TF 2.21: TypeError
    (lambda: MinSizePartitioner(max_shards=2.5), TypeError, "max_shards"),
    (lambda: MinSizePartitioner(bytes_per_string=0), ValueError, "bytes_per_string"),  # TF 2.21: ValueError
    (lambda: MinSizePartitioner(bytes_per_string=None), TypeError, "bytes_per_string"),
    (lambda: MaxSizePartitioner(0), ValueError, "max_shard_bytes"),  # TF 2.21: ValueError
    (lambda: MaxSizePartitioner(float("nan")), ValueError, "max_shard_bytes"),
    (lambda: MaxSizePartitioner(None), TypeError, "max_shard_bytes"),
    (lambda: MaxSizePartitioner(4, max_shards=-1), ValueError, "max_shards"),  # TF 2.21: ValueError
    (lambda: MaxSizePartitioner(4, max_shards=0), ValueError, "max_shards"),
    (lambda: MaxSizePartitioner(4, max_shards=2.5), TypeError, "max_shards"),
    (lambda: MaxSizePartitioner(4, bytes_per_string=0), ValueError, "bytes_per_string"),  # TF 2.21: ValueError
])
def test_bad_constructor_arguments(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


_ALL = [FixedShardsPartitioner(2), MinSizePartitioner(4, 10), MaxSizePartitioner(4)]


@pytest.mark.parametrize("partitioner", _ALL, ids=type)
def test_bad_axis(partitioner):
    with pytest.raises(ValueError, match="axis"):
        partitioner((10, 3), torch.float32, axis=-1)
    with pytest.raises(TypeError, match="axis"):
        partitioner((10, 3), torch.float32, axis=0.0)
    # TF 2.21 raises IndexError (FixedShards, MaxSize) or ValueError (MinSize) past the last axis;
    # ours is both.
    for shape, axis in [((10, 3), 2), ((), 0)]:
        with pytest.raises(IndexError, match="axis"):
            partitioner(shape, torch.float32, axis=axis)
        with pytest.raises(ValueError, match="axis"):
            partitioner(shape, torch.float32, axis=axis)


@pytest.mark.parametrize("partitioner", _ALL, ids=type)
def test_bad_shape(partitioner):
    # TF 2.21 raises TypeError (FixedShards, MinSize) or ValueError (MaxSize) for unknown dims; ours is both.
    for shape in [(None, 3), [10, None]]:
        with pytest.raises(TypeError, match="fully defined"):
            partitioner(shape, torch.float32)
        with pytest.raises(ValueError, match="fully defined"):
            partitioner(shape, torch.float32)
    with pytest.raises(ValueError, match="negative"):
        partitioner((10, -3), torch.float32)
    for shape in ["10,3", 10, (10.0, 3)]:
        with pytest.raises(TypeError, match="shape"):
            partitioner(shape, torch.float32)


def test_bad_dtype():
    for partitioner in _ALL[1:]:
        with pytest.raises(TypeError, match="dtype"):
            partitioner((10, 3), "floaty")  # TF 2.21: TypeError


def test_bad_shard_bounds_arguments():
    with pytest.raises(ValueError, match="num_shards"):
        shard_bounds(10, 0)
    with pytest.raises(TypeError, match="num_shards"):
        shard_bounds(10, 2.0)
    with pytest.raises(ValueError, match="rows"):
        shard_bounds(-1, 2)
    with pytest.raises(TypeError, match="rows"):
        shard_bounds(10.0, 2)
    assert shard_bounds(np.int64(4), np.int32(2)) == [(0, 2), (2, 4)]
