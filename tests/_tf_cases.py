"""Replays TF-reference fixtures written by tools/tf_reference/math_linalg_reference.py: each case names a
`tf.<module>.<fn>`, its encoded inputs and TF's outputs; `check_case` calls ours and compares."""
from __future__ import annotations

import json

import numpy as np
import torch


def load(path: str) -> list:
    with open(path) as handle:
        data = json.load(handle)
    assert data["meta"]["tensorflow"].startswith("2.21"), data["meta"]
    return data["cases"]


def case_id(case: dict) -> str:
    return case["fn"] + "-" + "-".join(f"{k}={v}" for k, v in case["kwargs"].items() if not isinstance(v, dict))


def decode(value):
    if isinstance(value, dict) and "real" in value:
        return (np.asarray(value["real"]) + 1j * np.asarray(value["imag"])).astype(value["dtype"])
    if isinstance(value, dict) and "dtype" in value:
        return np.asarray(value["value"], dtype=value["dtype"])
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [decode(v) for v in value]
    return value


def _expected(value):
    if isinstance(value, list) and (not value or isinstance(value[0], dict)):
        return [_expected(v) for v in value]
    if "real" in value:
        return (np.asarray(value["real"]) + 1j * np.asarray(value["imag"])).astype(value["dtype"])
    raw = np.asarray(value["value"], dtype=object)
    if value["dtype"].startswith("float"):
        raw = np.where(raw == None, np.nan, raw)  # noqa: E711  (NaN is stored as null)
    return raw.astype(value["dtype"])


def _compare(ours, expected, case: dict) -> None:
    if isinstance(expected, list):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(expected), (case["fn"], ours)
        for got, want in zip(ours, expected):
            _compare(got, want, case)
        return
    got = ours.detach().cpu().numpy() if isinstance(ours, torch.Tensor) else np.asarray(ours)
    assert str(got.dtype) == str(expected.dtype), (case["fn"], got.dtype, expected.dtype)
    assert got.shape == expected.shape, (case["fn"], got.shape, expected.shape)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=case["rtol"], atol=case["atol"], err_msg=case["fn"])
    else:
        np.testing.assert_array_equal(got, expected, err_msg=case["fn"])


def check_case(tf, case: dict) -> None:
    module, name = case["fn"].split(".")
    fn = getattr(getattr(tf, module), name)
    args = [decode(a) for a in case["args"]]
    kwargs = {k: decode(v) for k, v in case["kwargs"].items()}
    _compare(fn(*args, **kwargs), _expected(case["out"]), case)
