"""tf.keras.ops against Keras 3.15 / TF 2.21: every case's values and dtype are frozen in
keras_backend_ops_reference.json (made by backend_ops_cases.py under TF 2.21)."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.keras import backend_ops_cases as cases

with open(cases.REFERENCE) as _f:
    _REFERENCE = json.load(_f)


def _decoded(expected: dict) -> np.ndarray:
    value = np.asarray(expected["value"], dtype=np.float64)
    return np.where(value == 1e300, np.nan, value).reshape(expected["shape"])


def assert_matches(result, expected, case_id: str) -> None:
    """Compares a result with a frozen TF value: same dtype, same shape, equal within float32 rounding."""
    if isinstance(expected, list):
        assert isinstance(result, (tuple, list)) and len(result) == len(expected), case_id
        for r, e in zip(result, expected):
            assert_matches(r, e, case_id)
        return
    array = result.detach().cpu().numpy() if isinstance(result, torch.Tensor) else np.asarray(result)
    assert str(array.dtype) == expected["dtype"], f"{case_id}: dtype {array.dtype}, TF 2.21 gives {expected['dtype']}"
    assert list(array.shape) == expected["shape"], f"{case_id}: shape {array.shape}, TF gives {expected['shape']}"
    np.testing.assert_allclose(array.astype(np.float64), _decoded(expected), rtol=2e-6, atol=2e-6,
                               err_msg=case_id, equal_nan=True)


@pytest.mark.parametrize("case_id,name,args,kwargs", cases.OPS_CASES, ids=[c[0] for c in cases.OPS_CASES])
def test_ops_match_keras3(case_id, name, args, kwargs):
    expected = _REFERENCE["ops"][case_id]
    result = getattr(tf.keras.ops, name)(*cases.resolve(list(args), lambda a: a), **kwargs)
    assert_matches(result, expected, case_id)


def test_ops_accept_torch_tensors_and_keep_gradients():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    loss = tf.keras.ops.mean(tf.keras.ops.square(x - 1.0))
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), (2 * (x.detach() - 1.0) / 4).numpy())


def test_ops_shape_is_a_tuple_and_dtype_a_name():
    assert tf.keras.ops.shape(np.zeros((2, 5))) == (2, 5)
    assert tf.keras.ops.dtype(np.zeros(2, np.float16)) == "float16"
    assert tf.keras.ops.ndim(torch.zeros(1, 2, 3)) == 3


def test_ops_bad_input_errors_say_what_to_do():
    with pytest.raises(ValueError, match="size 3, not 1"):
        tf.keras.ops.squeeze(np.zeros((2, 3)), axis=1)
    with pytest.raises(ValueError, match="both `x1` and `x2`"):
        tf.keras.ops.where(np.array([True]), 1.0)
    with pytest.raises(ValueError, match="must be equal"):
        tf.keras.ops.categorical_crossentropy(np.zeros((2, 3)), np.ones((2, 4)))


def test_keras_ops_is_a_public_namespace():
    assert "ops" in dir(tf.keras)
    assert tf.keras.ops.convert_to_tensor(2.5).dtype == torch.float32


@pytest.mark.parametrize("case_id,name,args,kwargs", cases.OPS_CASES, ids=[c[0] for c in cases.OPS_CASES])
def test_ops_on_torch_tensors_match_keras3(case_id, name, args, kwargs):
    expected = _REFERENCE["ops"][case_id]
    result = getattr(tf.keras.ops, name)(*cases.resolve(list(args), lambda a: torch.from_numpy(np.array(a))), **kwargs)
    assert_matches(result, expected, case_id)
