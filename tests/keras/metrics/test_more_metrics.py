"""Keras 3's further metrics (IoU family, F-scores, confusion counts, *At* constraints, R2, correlations, hinge...)
against Keras 3.15.1 numbers frozen by tools/tf_reference/keras_metrics_reference.py: two weighted batches,
reset, one batch; configs and state names."""
import json
import os

import numpy as np
import pytest

from torchstrategy.keras import metrics

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_metrics_reference.json")))
INPUTS = {k: np.asarray(v, dtype="int64" if k == "seg_true" or k == "seg_pred" else "float32")
          for k, v in REF["inputs"].items()}


@pytest.mark.parametrize("case", REF["cases"], ids=[c["case"] for c in REF["cases"]])
def test_metric_matches_keras(case):
    metric = getattr(metrics, case["cls"])(**case["kwargs"])
    y_true, y_pred = INPUTS[case["y_true"]], INPUTS[case["y_pred"]]
    for batch in range(2):
        weights = None if case["weights"] is None else INPUTS[case["weights"]][batch]
        metric.update_state(y_true[batch], y_pred[batch], sample_weight=weights)
    np.testing.assert_allclose(np.asarray(metric.result()), np.asarray(case["after_two"]), rtol=1e-6, atol=1e-6)
    metric.reset_state()
    if case["after_reset"] is not None:
        np.testing.assert_allclose(np.asarray(metric.result()), np.asarray(case["after_reset"]), atol=1e-6)
    metric.update_state(y_true[1], y_pred[1])
    np.testing.assert_allclose(np.asarray(metric.result()), np.asarray(case["one_batch"]), rtol=1e-6, atol=1e-6)
    config = metric.get_config()
    assert set(config) == set(case["config"]), (sorted(config), sorted(case["config"]))
    for key in ("thresholds", "num_thresholds", "average", "beta", "threshold", "class_id", "num_classes",
                "target_class_ids", "ignore_class", "class_aggregation", "num_regressors", "axis"):
        if key in config and key != "name":
            expected = case["config"][key]
            got = list(config[key]) if isinstance(config[key], tuple) else config[key]
            assert got == expected, (key, got, expected)
    assert [v.name for v in metric.variables] == case["variables"]


@pytest.mark.parametrize("fn", sorted(REF["functions"]))
def test_correlation_functions_match_keras(fn):
    value = getattr(metrics, fn)(INPUTS["reg_true"][0], INPUTS["reg_pred"][0])
    np.testing.assert_allclose(np.asarray(value), np.asarray(REF["functions"][fn]), rtol=1e-5, atol=1e-6)


def test_states_sum_across_replicas_like_one_metric():
    """Replicas combine metric states by summing: two halves summed equal one metric over all the data."""
    whole, parts = metrics.F1Score(average="macro", threshold=0.5), [metrics.F1Score(average="macro", threshold=0.5)
                                                                    for _ in range(2)]
    y_true, y_pred = INPUTS["binary"], INPUTS["probs"]
    for batch in range(2):
        whole.update_state(y_true[batch], y_pred[batch])
        parts[batch].update_state(y_true[batch], y_pred[batch])
    empty = metrics.R2Score()
    assert empty._state_tensors() == []  # built on its first batch; a replica that saw none builds like the others
    empty._build_like([tuple(t.shape) for t in _r2_with_data()._state_tensors()])
    assert [tuple(t.shape) for t in empty._state_tensors()] == [(), (3,), (3,), (3,), (3,)]
    summed = [a + b for a, b in zip(parts[0]._state_tensors(), parts[1]._state_tensors())]
    parts[0]._load_state_tensors(summed)
    np.testing.assert_allclose(float(parts[0].result()), float(whole.result()), rtol=1e-6)


def _r2_with_data():
    metric = metrics.R2Score()
    metric.update_state(INPUTS["reg_true"][0], INPUTS["reg_pred"][0])
    return metric


def test_bad_arguments_are_explained():
    with pytest.raises(ValueError, match="beta"):
        metrics.FBetaScore(beta=2)
    with pytest.raises(ValueError, match="Target class id 3"):
        metrics.IoU(num_classes=3, target_class_ids=[3])
    with pytest.raises(ValueError, match="class_aggregation"):
        metrics.R2Score(class_aggregation="median")
    with pytest.raises(ValueError, match="2D inputs"):
        metrics.F1Score().update_state(np.zeros(3), np.zeros(3))
