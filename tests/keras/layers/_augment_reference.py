"""Shared check for tests/keras/layers/keras_augment_reference.json (Keras 3.15.1 on TF 2.21, written by
tools/tf_reference/keras_augment_reference.py): our layer, built with Keras's kwargs, called on the same input
(or given the same hand-written transformation through transform_images) must give Keras's output."""
from __future__ import annotations


import numpy as np
import torch

from tests.keras.layers._keras_reference import case_ids, check_config, load_cases
from torchstrategy.keras import layers

CASES = load_cases("keras_augment_reference.json")


def cases_of(*class_names: str) -> list[str]:
    """The case ids whose layer is one of `class_names`."""
    return case_ids(CASES, *class_names)


def _transformation(value):
    if isinstance(value, dict):
        return {k: (_transformation(v) if k != "chain_transforms" else v) for k, v in value.items()}
    return torch.tensor(value) if value is not None else None


def _kwargs(kwargs: dict) -> dict:
    return {k: (tuple(v) if k in ("value_range", "tile_grid_size", "scale") and isinstance(v, list) else v)
            for k, v in kwargs.items()}


def check_case(case_id: str, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """Our output for the case equals Keras's (within the tolerances) and our config holds Keras's."""
    case = CASES[case_id]
    layer = getattr(layers, case["class"])(**_kwargs(case["kwargs"]))
    inputs = torch.tensor(np.array(case["input"], dtype=np.float32))
    with torch.no_grad():
        if case["transformation"] is None:
            out = layer(inputs, **case["call_kwargs"])
        else:
            out = layer.transform_images(inputs, _transformation(case["transformation"]))
    got = out.detach().cpu().numpy() if isinstance(out, torch.Tensor) else np.asarray(out)
    want = np.asarray(case["output"], dtype=np.float64)
    assert got.shape == want.shape, (case_id, got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol, err_msg=case_id)
    check_config(layer, case["config"])
