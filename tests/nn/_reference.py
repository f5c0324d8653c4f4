"""TF 2.21's tf.nn numbers (nn_reference.json, from tools/tf_reference/nn_reference.py) and the input formula
that script used."""
from __future__ import annotations

import json
import os

import numpy as np
import torch

with open(os.path.join(os.path.dirname(__file__), "nn_reference.json")) as _handle:
    _DOC = json.load(_handle)

TF_VERSION = _DOC["tf_version"]


def ref(key: str) -> np.ndarray:
    entry = _DOC["arrays"][key]
    return np.asarray(entry["data"], dtype=entry["dtype"]).reshape(entry["shape"])


def arr(*shape, offset=0.0) -> np.ndarray:
    t = np.arange(int(np.prod(shape)), dtype=np.float64)
    return (np.sin(0.7 * t + offset) + 0.3 * np.cos(2.3 * t)).reshape(shape).astype(np.float32)


def close(actual, key: str, atol: float = 1e-5) -> None:
    assert isinstance(actual, torch.Tensor)
    expected = ref(key)
    assert tuple(actual.shape) == expected.shape, (key, tuple(actual.shape), expected.shape)
    np.testing.assert_allclose(actual.detach().numpy(), expected, atol=atol, rtol=1e-5, err_msg=key)
