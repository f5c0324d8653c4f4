"""TF's input conversion rules shared by the ops (torchstrategy/_tensor_convert.py), and reachability of
the new namespaces through `import torchstrategy as tf`."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy._tensor_convert import DTypeError, match_dtypes, to_tensor
from torchstrategy.io.parsing import InvalidArgumentError


def test_python_defaults_match_tf_constant() -> None:
    assert to_tensor(1.5).dtype == torch.float32  # TF 2.21: Python floats -> float32
    assert to_tensor([1, 2]).dtype == torch.int32
    assert to_tensor(2**40).dtype == torch.int64  # too big for int32
    assert to_tensor([True]).dtype == torch.bool
    assert to_tensor(np.array([1.0])).dtype == torch.float64  # NumPy keeps its dtype
    source = np.array([1.0, 2.0])
    converted = to_tensor(source)
    converted[0] = 9.0
    assert source[0] == 1.0  # conversion copies, so ops never write into the caller's array


def test_hints_and_refusals() -> None:
    assert to_tensor(2, torch.float32).dtype == torch.float32
    with pytest.raises(DTypeError, match="int32"):
        to_tensor(2.0, torch.int32)  # TF 2.21: Cannot convert 2.0 to EagerTensor of dtype int32
    with pytest.raises(DTypeError):
        to_tensor([1], torch.bool)
    with pytest.raises(DTypeError):
        to_tensor([-1], torch.uint8)
    assert issubclass(DTypeError, TypeError) and issubclass(DTypeError, InvalidArgumentError)
    first, second = match_dtypes([np.float32(1.0), 2], "op")
    assert first.dtype == second.dtype == torch.float32
    with pytest.raises(DTypeError, match="int64 and int32"):
        match_dtypes([np.array([1]), torch.tensor([1], dtype=torch.int32)], "op")


def test_namespaces_reachable() -> None:
    for module, names in {
        "math": ["add", "floormod", "reduce_std", "top_k", "segment_sum", "bincount", "is_finite"],
        "linalg": ["matmul", "matvec", "inv", "det", "norm", "band_part", "qr", "svd", "cholesky"],
        "random": ["uniform", "normal", "truncated_normal", "categorical", "gamma", "poisson", "shuffle",
                   "stateless_uniform", "stateless_normal", "Generator", "set_seed"],
        "strings": ["length", "lower", "upper", "split", "join", "regex_replace", "to_number", "as_string",
                    "substr", "strip", "reduce_join"],
        "sparse": ["to_dense", "from_dense", "sparse_dense_matmul"],
        "io": ["read_file", "write_file"],
    }.items():
        namespace = getattr(tf, module)
        for name in names:
            assert callable(getattr(namespace, name)), f"tf.{module}.{name}"
    for name in ["where", "fill", "zeros_like", "ones_like", "tile", "gather", "gather_nd", "transpose",
                 "matmul", "einsum", "split", "unstack", "boolean_mask", "pad", "sort", "argsort", "size", "rank",
                 "identity", "stop_gradient", "linspace", "eye", "norm", "py_function", "numpy_function",
                 "SparseTensor", "string"]:
        assert getattr(tf, name) is not None, name
    assert "math" in dir(tf) and "strings" in dir(tf)
