"""Shared check for tests/keras/layers/keras_layers_reference.json (frozen from Keras 3.15.1 / TF 2.21 by
tools/tf_reference/keras_layers_reference.py): our layer, built with Keras's kwargs and given Keras's
weights, must give Keras's output (1e-5, float32) and a config with Keras's keys and plain values."""
from __future__ import annotations

import json
import os

import numpy as np
import torch

from torchstrategy.keras import layers

def golden_array(shape, seed):
    """The deterministic inputs/weights several frozen TF 2.21 results were computed from (exact in float64)."""
    n = int(np.prod(shape))
    return ((((np.arange(n) * 0.6180339887 + seed * 0.137) % 1.0) - 0.5) * 2.0).reshape(shape).astype(np.float32)


def run_with_weights(layer, x, weights):
    """Builds `layer` on `x`, sets `weights`, and returns its output on `x` as NumPy."""
    layer(torch.tensor(x))
    layer.set_weights(weights)
    return layer(torch.tensor(x)).detach().numpy()


def load_cases(filename: str) -> dict:
    """The cases of a frozen Keras 3.15.1 reference file next to this module."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), filename)) as handle:
        reference = json.load(handle)
    assert reference["keras_version"] == "3.15.1"
    return reference["cases"]


def case_ids(cases: dict, *class_names: str) -> list[str]:
    """The ids of the cases whose layer is one of `class_names`."""
    return sorted(k for k, v in cases.items() if v["class"] in class_names)


CASES = load_cases("keras_layers_reference.json")


def cases_of(*class_names: str) -> list[str]:
    """The case ids whose layer is one of `class_names`."""
    return case_ids(CASES, *class_names)


def _plain(value):
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _tensor(values, dtype):
    array = np.array(values, dtype=dtype)
    return torch.from_numpy(array) if array.dtype.kind != "U" else array


def _kwargs(kwargs: dict) -> dict:
    """JSON kwargs -> constructor kwargs: a "cell" entry [class, kwargs] (a list of them, or
    ["StackedRNNCells", [...]]) becomes our cell objects, as the generating script built Keras's."""
    def cell(spec):
        if spec[0] == "StackedRNNCells":
            return layers.StackedRNNCells([cell(c) for c in spec[1]])
        if isinstance(spec[0], list):
            return [cell(c) for c in spec]
        return getattr(layers, spec[0])(**spec[1])

    out = dict(kwargs)
    if "cell" in out:
        out["cell"] = cell(out["cell"])
    if "layer" in out:
        out["layer"] = getattr(layers, out["layer"][0])(**out["layer"][1])
    return out


def run_case(case_id: str):
    """Builds our layer for the case, loads Keras's weights, and returns (layer, our output, case)."""
    case = CASES[case_id]
    layer = getattr(layers, case["class"])(**_kwargs(case["kwargs"]))
    inputs = [_tensor(x, d) for x, d in zip(case["inputs"], case["input_dtypes"])]
    arg = inputs if len(inputs) > 1 else inputs[0]
    call_kwargs = {k: (torch.tensor(v, dtype=torch.bool) if k.endswith("_mask") else v)
                   for k, v in case["call_kwargs"].items()}
    positional = case["class"] in ("GroupQueryAttention",)  # called as layer(query, value, key)
    call = (lambda: layer(*inputs, **call_kwargs)) if positional else (lambda: layer(arg, **call_kwargs))
    call()
    layer.set_weights([np.array(w, dtype=np.float32) for w in case["weights"]])
    with torch.no_grad():
        out = call()
    return layer, out, case


def check_case(case_id: str, atol: float = 1e-5) -> None:
    """Asserts our output and config match Keras's frozen ones."""
    layer, out, case = run_case(case_id)
    expected = case["output"]
    outs = out if isinstance(out, (list, tuple)) else [out]
    exps = expected if isinstance(out, (list, tuple)) else [expected]
    assert len(outs) == len(exps)
    for got, want in zip(outs, exps):
        got = got.detach().cpu().numpy() if isinstance(got, torch.Tensor) else np.asarray(got)
        want = np.asarray(want)
        assert got.shape == want.shape, (case_id, got.shape, want.shape)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=atol)
    check_config(layer, case["config"])


def check_config(layer, keras_config: dict) -> None:
    """Keras's config keys are all ours; plain (non-dict) values are equal; from_config rebuilds the layer."""
    ours = layer.get_config()
    missing = sorted(set(keras_config) - set(ours) - {"name", "dtype", "trainable"})
    assert not missing, f"{type(layer).__name__}.get_config() lacks Keras's keys {missing}"
    for key, value in keras_config.items():
        if key in ("name", "dtype", "trainable", "cell", "cells", "layer") or isinstance(value, dict) or isinstance(value, str) and value.startswith("<"):
            continue
        assert _plain(ours[key]) == value, (type(layer).__name__, key, ours[key], value)
    clone = type(layer).from_config(ours)
    assert _plain(clone.get_config()) == _plain({**ours, "name": clone.get_config()["name"]}) or clone.name == ours["name"]
