"""Loads the {"tf_version", "arrays": {key: {dtype, shape, data}}} files the tools/tf_reference scripts write
(bytes arrays are stored as latin-1 text) and compares our tensors with TF's arrays by key."""
from __future__ import annotations

import json

import numpy as np
import torch


class Reference:
    """One reference file: `ref(key)` gives TF's array, `close(actual, key)` asserts ours matches it."""

    def __init__(self, path: str):
        with open(path) as handle:
            doc = json.load(handle)
        assert doc["tf_version"].startswith("2.21"), doc["tf_version"]
        self.arrays = doc["arrays"]

    def ref(self, key: str) -> np.ndarray:
        entry = self.arrays[key]
        if entry["dtype"] == "bytes":
            out = np.empty(len(entry["data"]), dtype=object)
            out[:] = [text.encode("latin-1") for text in entry["data"]]
            return out.reshape(entry["shape"])
        values = np.asarray(entry["data"], dtype=np.float64)
        if "imag" in entry:
            values = values + 1j * np.asarray(entry["imag"], dtype=np.float64)
            return values.astype(entry["dtype"]).reshape(entry["shape"])
        return np.asarray(entry["data"], dtype=entry["dtype"]).reshape(entry["shape"])

    def close(self, actual, key: str, atol: float = 1e-5, rtol: float = 1e-5) -> None:
        expected = self.ref(key)
        value = actual.detach().cpu().numpy() if isinstance(actual, torch.Tensor) else np.asarray(actual)
        assert value.shape == expected.shape, (key, value.shape, expected.shape)
        if expected.dtype == object or expected.dtype.kind in "iub":
            assert value.tolist() == expected.tolist(), (key, value.tolist(), expected.tolist())
        else:
            np.testing.assert_allclose(value, expected, atol=atol, rtol=rtol, err_msg=key)
