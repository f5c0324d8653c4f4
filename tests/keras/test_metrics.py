"""Keras metrics against NumPy references: accuracy variants, regression and cross-entropy means,
Precision/Recall/AUC, weighting, accumulation, reset, cross-replica state summing, lookup and bad input."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torchstrategy.keras import backend, losses, metrics

RNG = np.random.default_rng(7)
EPS = 1e-7


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _value(tensor: torch.Tensor) -> float:
    assert isinstance(tensor, torch.Tensor) and tensor.ndim == 0
    return float(tensor)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(b == 0, 0.0, a / np.where(b == 0, 1, b))


# ----- data sets: name -> (factory, y_true, y_pred, sample_weight, reference(y_true, y_pred, w)) -------
N, C = 24, 5
LOGITS = RNG.normal(size=(N, C)).astype(np.float32)
PROBS = _softmax(LOGITS).astype(np.float32)
SPARSE = RNG.integers(0, C, size=(N, 1)).astype(np.uint8)
ONE_HOT = np.eye(C, dtype=np.float32)[SPARSE[:, 0]]
BIN_TRUE = RNG.integers(0, 2, size=(N, 3)).astype(np.float32)
BIN_PRED = RNG.uniform(0, 1, size=(N, 3)).astype(np.float32)
REG_TRUE = RNG.uniform(0.5, 2, size=(N, 3)).astype(np.float32)
REG_PRED = RNG.uniform(0.5, 2, size=(N, 3)).astype(np.float32)
WEIGHTS = RNG.uniform(0, 2, size=N).astype(np.float32)


def _wmean(per_sample: np.ndarray, w: np.ndarray) -> float:
    return float((per_sample * w).sum() / w.sum())


def _confusion(y_true: np.ndarray, y_pred: np.ndarray, w: np.ndarray, thresholds: np.ndarray) -> tuple:
    pos = y_true.reshape(-1) != 0
    weights = np.broadcast_to(w.reshape((-1,) + (1,) * (y_pred.ndim - 1)), y_pred.shape).reshape(-1)
    above = y_pred.reshape(-1)[None, :] > thresholds[:, None]
    tp = (above * pos * weights).sum(1)
    fp = (above * ~pos * weights).sum(1)
    fn = (~above * pos * weights).sum(1)
    tn = (~above * ~pos * weights).sum(1)
    return tp, fp, tn, fn


def _auc_thresholds(count: int = 200) -> np.ndarray:
    inner = [(i + 1) / (count - 1) for i in range(count - 2)]
    return np.array([-EPS] + inner + [1 + EPS], np.float32)


def ref_roc_auc(y_true, y_pred, w) -> float:
    tp, fp, tn, fn = _confusion(y_true, y_pred, w, _auc_thresholds())
    tpr, fpr = _div(tp, tp + fn), _div(fp, fp + tn)
    return float(((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) / 2).sum())


def ref_pr_auc(y_true, y_pred, w) -> float:
    tp, fp, _, fn = _confusion(y_true, y_pred, w, _auc_thresholds())
    total = 0.0
    for a in range(len(tp) - 1):  # Davis & Goadrich interpolation between consecutive thresholds
        b = a + 1
        p_a, p_b = tp[a] + fp[a], tp[b] + fp[b]
        slope = (tp[a] - tp[b]) / (p_a - p_b) if p_a - p_b > 0 else 0.0
        intercept = tp[b] - slope * p_b
        ratio = p_a / p_b if p_a > 0 and p_b > 0 else 1.0
        positives = tp[b] + fn[b]
        total += slope * ((tp[a] - tp[b]) + intercept * np.log(ratio)) / positives if positives > 0 else 0.0
    return float(total)


def ref_ratio(y_true, y_pred, w, kind: str) -> float:
    tp, fp, _, fn = _confusion(y_true, y_pred, w, np.array([0.5], np.float32))
    return float(_div(tp, tp + (fp if kind == "precision" else fn))[0])


CASES: dict[str, tuple] = {
    "sparse_categorical_accuracy": (metrics.SparseCategoricalAccuracy, SPARSE, PROBS,
                                    lambda t, p, w: _wmean(p.argmax(-1) == t[:, 0], w)),
    "categorical_accuracy": (metrics.CategoricalAccuracy, ONE_HOT, PROBS,
                             lambda t, p, w: _wmean(p.argmax(-1) == t.argmax(-1), w)),
    "binary_accuracy": (metrics.BinaryAccuracy, BIN_TRUE, BIN_PRED,
                        lambda t, p, w: _wmean(((p > 0.5) == t).mean(-1), w)),
    "accuracy": (metrics.Accuracy, SPARSE, np.round(RNG.uniform(0, C - 1, size=(N, 1))).astype(np.float32),
                 lambda t, p, w: _wmean((t == p)[:, 0], w)),
    "top_k": (lambda: metrics.TopKCategoricalAccuracy(k=2), ONE_HOT, PROBS,
              lambda t, p, w: _wmean((p > (p * t).sum(-1, keepdims=True)).sum(-1) < 2, w)),
    "sparse_top_k": (lambda: metrics.SparseTopKCategoricalAccuracy(k=3), SPARSE, PROBS,
                     lambda t, p, w: _wmean((p > np.take_along_axis(p, t.astype(int), -1)).sum(-1) < 3, w)),
    "mse": (metrics.MeanSquaredError, REG_TRUE, REG_PRED, lambda t, p, w: _wmean(((t - p) ** 2).mean(-1), w)),
    "mae": (metrics.MeanAbsoluteError, REG_TRUE, REG_PRED, lambda t, p, w: _wmean(np.abs(t - p).mean(-1), w)),
    "rmse": (metrics.RootMeanSquaredError, REG_TRUE, REG_PRED,
             lambda t, p, w: float(np.sqrt(((t - p) ** 2 * w[:, None]).sum() / (3 * w.sum())))),
    "sparse_ce": (metrics.SparseCategoricalCrossentropy, SPARSE, PROBS,
                  lambda t, p, w: _wmean(-np.log(np.take_along_axis(p.astype(np.float64), t.astype(int), -1))[:, 0],
                                         w)),
    "sparse_ce_logits": (lambda: metrics.SparseCategoricalCrossentropy(from_logits=True), SPARSE, LOGITS,
                         lambda t, p, w: _wmean(-np.log(np.take_along_axis(_softmax(p.astype(np.float64)),
                                                                           t.astype(int), -1))[:, 0], w)),
    "categorical_ce": (metrics.CategoricalCrossentropy, ONE_HOT, PROBS,
                       lambda t, p, w: _wmean(-(t * np.log(p.astype(np.float64))).sum(-1), w)),
    "binary_ce": (metrics.BinaryCrossentropy, BIN_TRUE, BIN_PRED,
                  lambda t, p, w: _wmean(-(t * np.log(p + EPS) + (1 - t) * np.log(1 - p + EPS)).mean(-1), w)),
    "precision": (metrics.Precision, BIN_TRUE, BIN_PRED, lambda t, p, w: ref_ratio(t, p, w, "precision")),
    "recall": (metrics.Recall, BIN_TRUE, BIN_PRED, lambda t, p, w: ref_ratio(t, p, w, "recall")),
    "auc_roc": (metrics.AUC, BIN_TRUE, BIN_PRED, ref_roc_auc),
    "auc_pr": (lambda: metrics.AUC(curve="PR"), BIN_TRUE, BIN_PRED, ref_pr_auc),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_metric_matches_reference_unweighted_and_weighted(case: str) -> None:
    factory, y_true, y_pred, reference = CASES[case]
    metric = factory()
    metric.update_state(y_true, torch.from_numpy(y_pred))
    assert _value(metric.result()) == pytest.approx(reference(y_true, y_pred, np.ones(N)), rel=1e-5, abs=1e-6)
    weighted = factory()
    weighted.update_state(y_true, torch.from_numpy(y_pred), sample_weight=WEIGHTS)
    assert _value(weighted.result()) == pytest.approx(reference(y_true, y_pred, WEIGHTS.astype(np.float64)),
                                                      rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_several_updates_equal_one_update_on_the_concatenation(case: str) -> None:
    factory, y_true, y_pred, _ = CASES[case]
    whole, parts = factory(), factory()
    whole.update_state(y_true, y_pred, sample_weight=WEIGHTS)
    for chunk in (slice(0, 5), slice(5, 17), slice(17, N)):
        parts.update_state(y_true[chunk], torch.from_numpy(y_pred[chunk]), sample_weight=WEIGHTS[chunk])
    torch.testing.assert_close(parts.result(), whole.result())


@pytest.mark.parametrize("case", sorted(CASES))
def test_summed_replica_states_give_the_single_process_result(case: str) -> None:
    factory, y_true, y_pred, _ = CASES[case]
    whole, first, second, combined = factory(), factory(), factory(), factory()
    whole.update_state(y_true, y_pred, sample_weight=WEIGHTS)
    first.update_state(y_true[:10], y_pred[:10], sample_weight=WEIGHTS[:10])
    second.update_state(y_true[10:], y_pred[10:], sample_weight=WEIGHTS[10:])
    summed = [a + b for a, b in zip(first._state_tensors(), second._state_tensors())]
    assert len(summed) == len(whole._state_tensors()) > 0
    combined._load_state_tensors(summed)
    torch.testing.assert_close(combined.result(), whole.result())


@pytest.mark.parametrize("case", sorted(CASES))
def test_reset_state_zeroes_and_starts_over(case: str) -> None:
    factory, y_true, y_pred, reference = CASES[case]
    metric = factory()
    metric.update_state(y_true[:7], y_pred[:7])
    metric.reset_state()
    assert all(bool((state == 0).all()) for state in metric._state_tensors())
    metric.update_state(y_true, y_pred)
    assert _value(metric.result()) == pytest.approx(reference(y_true, y_pred, np.ones(N)), rel=1e-5, abs=1e-6)
    metric.reset_states()
    assert _value(metric.result()) == 0.0


def test_sparse_categorical_accuracy_label_layouts_and_dtypes() -> None:
    expected = float((PROBS.argmax(-1) == SPARSE[:, 0]).mean())
    for labels in (SPARSE, SPARSE[:, 0], SPARSE.astype(np.int64), SPARSE.astype(np.float32), torch.from_numpy(SPARSE)):
        assert _value(metrics.SparseCategoricalAccuracy()(labels, PROBS)) == pytest.approx(expected)


def test_top_k_counts_ties_at_the_boundary_as_hits() -> None:
    y_pred = np.array([[0.3, 0.3, 0.3, 0.1], [0.5, 0.2, 0.2, 0.1]], np.float32)
    # label 2 ties with two others for first place; label 3 is strictly last
    assert metrics.sparse_top_k_categorical_accuracy([2, 3], y_pred, k=1).tolist() == [1.0, 0.0]


def test_mean_and_sum_with_weights_of_several_shapes() -> None:
    values = RNG.normal(size=(4, 3)).astype(np.float32)
    w = RNG.uniform(0, 1, size=4).astype(np.float32)
    mean = metrics.Mean()
    mean.update_state(values, sample_weight=w)
    assert _value(mean.result()) == pytest.approx(float((values * w[:, None]).sum() / (3 * w.sum())), rel=1e-6)
    total = metrics.Sum()
    total.update_state(values, sample_weight=w[:, None])
    assert _value(total.result()) == pytest.approx(float((values * w[:, None]).sum()), rel=1e-6)
    tracker = metrics.Mean(name="loss")  # how fit tracks the loss: batch mean weighted by batch size
    tracker.update_state(torch.tensor(2.0), sample_weight=32)
    tracker.update_state(torch.tensor(5.0), sample_weight=8)
    assert _value(tracker.result()) == pytest.approx((2 * 32 + 5 * 8) / 40)
    assert _value(metrics.Mean().result()) == 0.0  # divide_no_nan before any update


def test_precision_recall_thresholds_top_k_and_class_id() -> None:
    thresholds = [0.2, 0.5, 0.8]
    precision = metrics.Precision(thresholds=thresholds)
    precision.update_state(BIN_TRUE, BIN_PRED)
    tp, fp, _, fn = _confusion(BIN_TRUE, BIN_PRED, np.ones(N), np.array(thresholds, np.float32))
    np.testing.assert_allclose(precision.result().numpy(), _div(tp, tp + fp), rtol=1e-6)
    recall = metrics.Recall(thresholds=thresholds)
    recall.update_state(BIN_TRUE, BIN_PRED)
    np.testing.assert_allclose(recall.result().numpy(), _div(tp, tp + fn), rtol=1e-6)
    top2 = metrics.Precision(top_k=2)
    top2.update_state(ONE_HOT, PROBS)  # precision@2 for one-hot targets
    in_top2 = np.argsort(-PROBS, -1)[:, :2]
    hits = (in_top2 == SPARSE.astype(int)).sum()
    assert _value(top2.result()) == pytest.approx(hits / (2 * N))
    class1 = metrics.Recall(class_id=1)
    class1.update_state(BIN_TRUE, BIN_PRED)
    pos = BIN_TRUE[:, 1] != 0
    assert _value(class1.result()) == pytest.approx(((BIN_PRED[:, 1] > 0.5) & pos).sum() / pos.sum())


def test_auc_is_close_to_the_exact_rank_statistic_and_supports_options() -> None:
    y_true, y_pred = BIN_TRUE.reshape(-1), BIN_PRED.reshape(-1)
    pos, neg = y_pred[y_true == 1], y_pred[y_true == 0]
    exact = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (pos.size * neg.size)
    auc = metrics.AUC(num_thresholds=1000)
    auc.update_state(y_true, y_pred)
    assert _value(auc.result()) == pytest.approx(exact, abs=5e-3)
    logits = metrics.AUC(from_logits=True)
    logits.update_state(BIN_TRUE, torch.logit(torch.from_numpy(BIN_PRED).double()).float())
    assert _value(logits.result()) == pytest.approx(ref_roc_auc(BIN_TRUE, BIN_PRED, np.ones(N)), abs=1e-4)
    custom = metrics.AUC(thresholds=[0.25, 0.5, 0.75], summation_method="minoring")
    custom.update_state(BIN_TRUE, BIN_PRED)
    tp, fp, tn, fn = _confusion(BIN_TRUE, BIN_PRED, np.ones(N), np.array([-EPS, 0.25, 0.5, 0.75, 1 + EPS], np.float32))
    tpr, fpr = _div(tp, tp + fn), _div(fp, fp + tn)
    assert _value(custom.result()) == pytest.approx(((fpr[:-1] - fpr[1:]) * np.minimum(tpr[:-1], tpr[1:])).sum())


def test_multi_label_auc_averages_per_label_curves() -> None:
    auc = metrics.AUC(multi_label=True, label_weights=[1.0, 2.0, 0.0])
    auc.update_state(BIN_TRUE, BIN_PRED)
    per_label = [ref_roc_auc(BIN_TRUE[:, i], BIN_PRED[:, i], np.ones(N)) for i in range(3)]
    assert _value(auc.result()) == pytest.approx((per_label[0] + 2 * per_label[1]) / 3, rel=1e-5)


def test_ignore_class_leaves_the_cross_entropy_mean() -> None:
    labels = SPARSE[:, 0].astype(np.int64)
    labels[::3] = 255
    metric = metrics.SparseCategoricalCrossentropy(ignore_class=255)
    metric.update_state(labels, PROBS)
    valid = labels != 255
    expected = -np.log(PROBS[valid].astype(np.float64)[np.arange(valid.sum()), labels[valid]]).mean()
    assert _value(metric.result()) == pytest.approx(expected, rel=1e-5)


def test_call_updates_then_returns_the_running_result_without_grad() -> None:
    metric = metrics.MeanSquaredError()
    y_pred = torch.zeros(2, 1, requires_grad=True)
    assert _value(metric([[1.0], [3.0]], y_pred)) == pytest.approx(5.0)
    result = metric([[2.0], [2.0]], y_pred)
    assert _value(result) == pytest.approx(4.5) and not result.requires_grad
    assert metric.dtype == "float32" and metric.get_config() == {"name": "mean_squared_error", "dtype": "float32"}


# ----- 'accuracy' resolution ---------------------------------------------------------------------
@pytest.mark.parametrize("loss, expected", [
    ("sparse_categorical_crossentropy", metrics.SparseCategoricalAccuracy),
    (losses.SparseCategoricalCrossentropy(from_logits=True), metrics.SparseCategoricalAccuracy),
    (losses.get("sparse_categorical_crossentropy"), metrics.SparseCategoricalAccuracy),
    (losses.sparse_categorical_crossentropy, metrics.SparseCategoricalAccuracy),
    ("categorical_crossentropy", metrics.CategoricalAccuracy),
    (losses.CategoricalCrossentropy(), metrics.CategoricalAccuracy),
    ("binary_crossentropy", metrics.BinaryAccuracy),
    (losses.BinaryCrossentropy(from_logits=True), metrics.BinaryAccuracy),
])
def test_resolve_accuracy_follows_the_loss(loss, expected) -> None:
    # shapes that alone would say 'categorical', so the loss must decide
    metric = metrics.resolve_accuracy("accuracy", loss, np.zeros((4, 3)), np.zeros((4, 3)))
    assert type(metric) is expected and metric.name == "accuracy"


@pytest.mark.parametrize("true_shape, pred_shape, expected", [
    ((8, 1), (8, 1), metrics.BinaryAccuracy),
    ((8,), (8, 10), metrics.SparseCategoricalAccuracy),
    ((8, 1), (8, 10), metrics.SparseCategoricalAccuracy),
    ((8, 10), (8, 10), metrics.CategoricalAccuracy),
])
def test_resolve_accuracy_by_shapes_when_the_loss_does_not_say(true_shape, pred_shape, expected) -> None:
    for loss in ("mse", losses.MeanSquaredError(), None):
        metric = metrics.resolve_accuracy("acc", loss, torch.zeros(true_shape), torch.zeros(pred_shape))
        assert type(metric) is expected and metric.name == "acc"
    assert type(metrics.resolve_accuracy("accuracy", None, true_shape, pred_shape)) is expected


def test_resolve_accuracy_rejects_other_names() -> None:
    with pytest.raises(ValueError, match="resolves 'accuracy' or 'acc'; got 'mse'"):
        metrics.resolve_accuracy("mse", None, (2,), (2, 3))


# ----- lookup ------------------------------------------------------------------------------------
def test_get_resolves_strings_instances_and_callables() -> None:
    for name, cls in [("sparse_categorical_accuracy", metrics.SparseCategoricalAccuracy),
                      ("categorical_accuracy", metrics.CategoricalAccuracy),
                      ("binary_accuracy", metrics.BinaryAccuracy),
                      ("mse", metrics.MeanSquaredError), ("mae", metrics.MeanAbsoluteError), ("auc", metrics.AUC),
                      ("precision", metrics.Precision), ("recall", metrics.Recall),
                      ("top_k_categorical_accuracy", metrics.TopKCategoricalAccuracy)]:
        metric = metrics.get(name)
        assert type(metric) is cls and metric.name == name
    assert type(metrics.get("RootMeanSquaredError")) is metrics.RootMeanSquaredError
    instance = metrics.AUC(name="my_auc")
    assert metrics.get(instance) is instance

    def within_one(y_true, y_pred):
        return (torch.as_tensor(y_true) - torch.as_tensor(y_pred)).abs().le(1).float().mean(-1)

    wrapped = metrics.get(within_one)
    assert isinstance(wrapped, metrics.MeanMetricWrapper) and wrapped.name == "within_one"
    assert _value(wrapped([[0.0], [0.0], [5.0]], [[0.5], [2.0], [5.5]])) == pytest.approx(2 / 3)
    from_loss = metrics.get(losses.MeanAbsoluteError())
    assert from_loss.name == "mean_absolute_error"
    assert _value(from_loss(REG_TRUE, REG_PRED)) == pytest.approx(float(np.abs(REG_TRUE - REG_PRED).mean()), rel=1e-6)
    config = metrics.serialize(metrics.MeanMetricWrapper(metrics.top_k_categorical_accuracy, name="top2", k=2))
    assert config["config"]["fn"] == "top_k_categorical_accuracy"  # saved by name, so JSON can hold it
    top2 = metrics.deserialize(config)
    assert _value(top2(ONE_HOT, PROBS)) == pytest.approx(_value(metrics.TopKCategoricalAccuracy(k=2)(ONE_HOT, PROBS)))
    rebuilt = metrics.deserialize(metrics.serialize(metrics.BinaryAccuracy(threshold=0.7, name="b")))
    assert rebuilt.get_config() == {"name": "b", "dtype": "float32", "threshold": 0.7}


def test_get_unknown_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="Unknown metric 'f1'.*sparse_categorical_accuracy"):
        metrics.get("f1")


def test_unnamed_metrics_get_unique_keras_names() -> None:
    backend.clear_session()
    assert [metrics.AUC().name, metrics.AUC().name, metrics.Precision().name] == ["auc", "auc_1", "precision"]


# ----- bad input ---------------------------------------------------------------------------------
def test_sparse_accuracy_with_one_hot_labels_suggests_categorical() -> None:
    with pytest.raises(ValueError, match="look like one-hot labels.*CategoricalAccuracy"):
        metrics.SparseCategoricalAccuracy().update_state(ONE_HOT, PROBS)


def test_categorical_accuracy_with_integer_labels_suggests_sparse() -> None:
    with pytest.raises(ValueError, match="look like integer class indices.*SparseCategoricalAccuracy"):
        metrics.CategoricalAccuracy().update_state(SPARSE, PROBS)


@pytest.mark.parametrize("case", ["sparse_categorical_accuracy", "binary_accuracy", "mse", "precision", "auc_roc"])
def test_batch_mismatch_is_named(case: str) -> None:
    factory, y_true, y_pred, _ = CASES[case]
    with pytest.raises(ValueError, match=rf"y_true has batch size {N}.*y_pred has batch size {N - 1}"):
        factory().update_state(y_true, y_pred[:-1])


def test_bad_sample_weight_and_bad_arguments() -> None:
    with pytest.raises(ValueError, match="sample_weight of shape .*does not fit"):
        metrics.Mean().update_state(np.ones((4, 3)), sample_weight=np.ones(3))
    with pytest.raises(ValueError, match=r"threshold values must be in \[0, 1\]"):
        metrics.Precision(thresholds=1.5)
    with pytest.raises(ValueError, match="Invalid AUC curve 'DET'"):
        metrics.AUC(curve="DET")
    with pytest.raises(ValueError, match="has 2 state tensors"):
        metrics.Mean()._load_state_tensors([torch.tensor(1.0)])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_updates_keep_state_on_device_without_host_syncs() -> None:
    factories = [CASES[c][0] for c in sorted(CASES)]
    data = [(torch.from_numpy(CASES[c][1]).cuda(), torch.from_numpy(CASES[c][2]).cuda()) for c in sorted(CASES)]
    built = [factory() for factory in factories]
    for metric, (y_true, y_pred) in zip(built, data):  # first update moves the states (allowed to sync)
        metric.update_state(y_true, y_pred)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for metric, (y_true, y_pred) in zip(built, data):
            metric.update_state(y_true, y_pred, sample_weight=torch.ones(N, device="cuda"))
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert all(state.is_cuda for metric in built for state in metric._state_tensors())
