"""tf.keras's Keras 2 layers ThresholdedReLU, RandomHeight and RandomWidth against Keras 3.15 results frozen
in tests/keras/keras_last_names_reference.json by tools/tf_reference/keras_last_names_reference.py (TF 2.21)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf

L = tf.keras.layers
REF = json.load(open(os.path.join(os.path.dirname(__file__), "..", "keras_last_names_reference.json")))
IMG = torch.tensor(REF["IMG"])


def test_thresholded_relu_numbers_config_and_errors():
    layer = L.ThresholdedReLU(theta=0.75)
    np.testing.assert_array_equal(np.asarray(layer(torch.tensor(REF["X"]))), np.array(REF["thresholded"]))
    assert layer.get_config()["theta"] == REF["thresholded_config"]["theta"]
    assert L.ThresholdedReLU.from_config(layer.get_config()).theta == 0.75
    for bad in (-1.0, None):
        with pytest.raises(ValueError, match="theta"):
            L.ThresholdedReLU(theta=bad)


@pytest.mark.parametrize("key,make", [
    ("height_up_bilinear", lambda: L.RandomHeight((0.6, 0.6))),
    ("height_down_nearest", lambda: L.RandomHeight((-0.4, -0.4), interpolation="nearest")),
    ("width_up_bilinear", lambda: L.RandomWidth((0.5, 0.5))),
    ("width_down_bicubic", lambda: L.RandomWidth((-0.3, -0.3), interpolation="bicubic")),
])
def test_random_resize_matches_keras_for_a_fixed_factor(key, make):
    expected = np.array(REF[key])
    got = np.asarray(make()(IMG))  # training defaults to True, as in tf.keras
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_random_resize_inference_shape_config_and_errors():
    assert REF["height_inference_is_input"]
    assert torch.equal(torch.as_tensor(np.asarray(L.RandomHeight(0.5)(IMG, training=False))), IMG)
    assert list(L.RandomHeight(0.2).compute_output_shape((2, 5, 7, 3))) == REF["height_output_shape"]
    config = L.RandomHeight((0.1, 0.2), seed=3).get_config()
    assert {k: (list(v) if isinstance(v, tuple) else v) for k, v in config.items()
            if k in ("factor", "interpolation", "seed")} == REF["height_config"]
    with pytest.raises(ValueError, match="upper bound"):
        L.RandomHeight((0.3, 0.1))
    with pytest.raises(ValueError, match="-1"):
        L.RandomWidth((-1.5, 0.1))


def test_random_resize_draws_sizes_in_range_and_a_seed_repeats():
    sizes = {int(np.asarray(L.RandomWidth((-0.5, 0.5))(IMG)).shape[2]) for _ in range(30)}
    assert sizes <= set(range(3, 11)) and len(sizes) > 1
    first = [np.asarray(L.RandomHeight(0.5, seed=7)(IMG)).shape for _ in range(2)]
    assert first[0] == first[1]


def test_random_resize_is_identity_in_predict():
    model = tf.keras.Sequential([tf.keras.Input((5, 7, 3)), L.RandomWidth((0.5, 0.5))])
    np.testing.assert_array_equal(model.predict(IMG, verbose=0), IMG.numpy())
