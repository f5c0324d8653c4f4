"""Keras 3's further losses (focal, hinge, Poisson, log-cosh, Dice, Tversky, Circle, CTC, GCE) against Keras 3.15.1
numbers frozen by tools/tf_reference/keras_losses_reference.py; class and function forms, weights, configs."""
import json
import os

import numpy as np
import pytest

from torchstrategy.keras import losses

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_losses_reference.json")))
INPUTS = {k: np.asarray(v, dtype="int64" if k in ("sparse", "emb_labels", "ctc_labels") else "float32")
          for k, v in REF["inputs"].items()}
FUNCTIONS = {"SquaredHinge": "squared_hinge", "CategoricalHinge": "categorical_hinge", "Poisson": "poisson",
             "LogCosh": "log_cosh", "BinaryFocalCrossentropy": "binary_focal_crossentropy",
             "CategoricalFocalCrossentropy": "categorical_focal_crossentropy",
             "CategoricalGeneralizedCrossEntropy": "categorical_generalized_cross_entropy", "Dice": "dice",
             "Tversky": "tversky", "Circle": "circle", "CTC": "ctc"}


def _kwargs(case):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}


@pytest.mark.parametrize("case", REF["cases"], ids=[c["case"] for c in REF["cases"]])
def test_loss_matches_keras(case):
    cls = getattr(losses, case["cls"])
    y_true, y_pred = INPUTS[case["y_true"]], INPUTS[case["y_pred"]]
    loss = cls(**_kwargs(case))
    tol = 1e-4 if case["cls"] == "CTC" else 1e-6
    np.testing.assert_allclose(float(loss(y_true, y_pred)), case["value"], rtol=tol, atol=tol)
    per_sample = getattr(losses, FUNCTIONS[case["cls"]])(y_true, y_pred, **_kwargs(case))
    np.testing.assert_allclose(np.asarray(per_sample), np.asarray(case["per_sample"]), rtol=tol, atol=tol)
    if "weighted_sum" in case:
        summed = cls(reduction="sum", **_kwargs(case))(y_true, y_pred, sample_weight=INPUTS["weights"])
        np.testing.assert_allclose(float(summed), case["weighted_sum"], rtol=1e-6, atol=1e-6)
        mean = loss(y_true, y_pred, sample_weight=INPUTS["weights"])
        np.testing.assert_allclose(float(mean), case["weighted_mean"], rtol=1e-6, atol=1e-6)
    config = loss.get_config()
    for key, value in case["config"].items():
        assert key in config, key
        if key not in ("axis",):
            assert config[key] == value, (key, config[key], value)


def test_config_round_trip_and_names():
    loss = losses.get({"class_name": "Tversky", "config": {"alpha": 0.2, "beta": 0.8, "name": "tv"}})
    assert isinstance(loss, losses.Tversky) and loss.name == "tv" and loss.get_config()["alpha"] == 0.2
    assert losses.get("poisson").name == "poisson"
    assert isinstance(losses.get("BinaryFocalCrossentropy"), losses.BinaryFocalCrossentropy)


def test_generalized_cross_entropy_rejects_q_outside_unit_interval():
    with pytest.raises(ValueError, match="q must be in the interval"):
        losses.CategoricalGeneralizedCrossEntropy(q=1.5)


def test_ctc_checks_ranks():
    with pytest.raises(ValueError, match="batch_size, max_length"):
        losses.ctc(np.zeros((2,)), np.zeros((2, 3, 4)))
