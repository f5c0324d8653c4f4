"""tnp's dtype names and rules: NumPy's scalar types as the names (as in TF), TF 2.21's result_type and
promote_types (frozen), prefer_float32 (frozen from TF with experimental_enable_numpy_behavior(True))."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.experimental_numpy import _families, _reference
from torchstrategy.experimental_numpy import _dtypes

tnp = tf.experimental.numpy
_UTILITIES = ["result_type", "promote_types", "issubdtype", "finfo", "iinfo", "pi", "e", "inf", "newaxis"]


@pytest.mark.parametrize("name", _families.functions_with_cases(_UTILITIES))
def test_matches_tf_2_21(name: str) -> None:
    _families.check_function(name)


def test_dtype_names_are_numpys_scalar_types() -> None:
    assert tnp.float32 is np.float32 and tnp.bool_ is np.bool_ and tnp.int_ is np.int64
    assert tnp.float_ is np.float64 and tnp.complex_ is np.complex128 and tnp.string_ is np.bytes_
    assert tnp.float32(1.5) == np.float32(1.5)
    assert tnp.ndarray is torch.Tensor and tnp.newaxis is None
    assert tnp.zeros(2, dtype=tnp.float16).dtype == torch.float16
    assert tnp.zeros(2, dtype=torch.int16).dtype == torch.int16  # torch dtypes (tf.int16) work too


def test_prefer_float32_as_tf_2_21() -> None:
    frozen = _reference.load()["prefer_float32"]
    try:
        with pytest.warns(UserWarning, match="not patched"):
            tnp.experimental_enable_numpy_behavior(prefer_float32=True)
        failures = []
        for expr, expected in sorted(frozen.items()):
            if isinstance(expected, dict) and "error" in expected:
                continue  # TF refuses it (uniform(size=2) wants a shape list); ours answers as NumPy
            try:
                _reference.assert_same(_reference.run_ours(expr), expected, expr,
                                       shape_only=expr.startswith("M.random."))
            except AssertionError as error:
                failures.append(str(error))
        assert not failures, "\n".join(failures)
    finally:
        _dtypes.set_prefer_float32(False)
    assert tnp.asarray(1.5).dtype == torch.float64


def test_bfloat16_tensors_promote() -> None:
    bf16 = torch.ones(2, dtype=torch.bfloat16)
    assert tnp.add(bf16, 1.5).dtype == torch.bfloat16
    assert tnp.add(bf16, torch.ones(2, dtype=torch.float16)).dtype == torch.float32
    assert tnp.add(bf16, torch.ones(2, dtype=torch.float64)).dtype == torch.float64


def test_unknown_dtypes_are_refused() -> None:
    with pytest.raises(TypeError, match="not a dtype"):
        tnp.ones(2, dtype="nope")
    with pytest.raises(TypeError, match="does not support dtype"):
        tnp.ones(2, dtype=tnp.object_)
