"""Keras losses against NumPy / closed-form references: cross-entropies (probabilities and logits,
clipping edges), regression losses, every reduction with sample weights, lookup, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from torchstrategy.keras import losses

EPS = 1e-7
RNG = np.random.default_rng(0)


# ----- independent references (float64 NumPy) --------------------------------------------------
def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def ref_sparse(labels: np.ndarray, p: np.ndarray, from_logits: bool = False) -> np.ndarray:
    # Keras 2: log of the clipped probabilities goes through a softmax cross-entropy
    logp = _log_softmax(p) if from_logits else np.log(np.clip(p, EPS, 1 - EPS))
    logp = _log_softmax(logp)
    labels = labels.reshape(p.shape[:-1]).astype(np.int64)
    return -np.take_along_axis(logp, labels[..., None], -1)[..., 0]


def ref_categorical(y: np.ndarray, p: np.ndarray, from_logits: bool = False, smoothing: float = 0.0) -> np.ndarray:
    y = y * (1 - smoothing) + smoothing / y.shape[-1]
    if from_logits:
        return -(y * _log_softmax(p)).sum(-1)
    p = np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)
    return -(y * np.log(p)).sum(-1)


def ref_binary(y: np.ndarray, p: np.ndarray, from_logits: bool = False, smoothing: float = 0.0) -> np.ndarray:
    y = y * (1 - smoothing) + 0.5 * smoothing
    if from_logits:
        return (np.maximum(p, 0) - p * y + np.log1p(np.exp(-np.abs(p)))).mean(-1)
    p = np.clip(p, EPS, 1 - EPS)
    return -(y * np.log(p + EPS) + (1 - y) * np.log(1 - p + EPS)).mean(-1)


REGRESSION_REFS = {
    "mean_squared_error": lambda t, p: ((t - p) ** 2).mean(-1),
    "mean_absolute_error": lambda t, p: np.abs(t - p).mean(-1),
    "mean_absolute_percentage_error": lambda t, p: 100 * (np.abs(t - p) / np.maximum(np.abs(t), EPS)).mean(-1),
    "mean_squared_logarithmic_error": lambda t, p: ((np.log(np.maximum(p, EPS) + 1)
                                                     - np.log(np.maximum(t, EPS) + 1)) ** 2).mean(-1),
    "kl_divergence": lambda t, p: (np.clip(t, EPS, 1) * np.log(np.clip(t, EPS, 1) / np.clip(p, EPS, 1))).sum(-1),
    "hinge": lambda t, p: np.maximum(1 - (2 * t - 1) * p, 0).mean(-1),  # 0/1 labels become -1/1
    "cosine_similarity": lambda t, p: -(t * p).sum(-1) / (np.linalg.norm(t, axis=-1) * np.linalg.norm(p, axis=-1)),
}


def _probs(shape: tuple) -> np.ndarray:
    return _softmax(RNG.normal(size=shape))


def _close(actual: torch.Tensor, expected: np.ndarray, tol: float = 1e-5) -> None:
    np.testing.assert_allclose(actual.detach().cpu().double().numpy(), expected, rtol=tol, atol=tol)


# ----- cross-entropies ---------------------------------------------------------------------------
@pytest.mark.parametrize("from_logits", [False, True])
def test_sparse_categorical_crossentropy_matches_reference(from_logits: bool) -> None:
    logits = RNG.normal(size=(6, 4)).astype(np.float32)
    y_pred = logits if from_logits else _softmax(logits).astype(np.float32)
    labels = RNG.integers(0, 4, size=6)
    out = losses.sparse_categorical_crossentropy(labels, torch.tensor(y_pred), from_logits=from_logits)
    assert out.shape == (6,)
    _close(out, ref_sparse(labels, y_pred.astype(np.float64), from_logits))


def test_keras_documented_values() -> None:
    # values printed in the tf.keras docstrings
    y_pred = [[0.05, 0.95, 0.0], [0.1, 0.8, 0.1]]
    _close(losses.SparseCategoricalCrossentropy()([1, 2], y_pred), np.array(1.1769392), 1e-6)
    _close(losses.SparseCategoricalCrossentropy()([1, 2], y_pred, sample_weight=[0.3, 0.7]), np.array(0.8135988), 1e-6)
    eye = np.eye(3, dtype=np.float32)
    p = np.array([[0.9, 0.05, 0.05], [0.05, 0.89, 0.06], [0.05, 0.01, 0.94]], np.float32)
    _close(losses.categorical_crossentropy(eye, p), np.array([0.10536, 0.11653, 0.06188]), 1e-4)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.int64])
def test_sparse_accepts_n_by_1_integer_labels_of_any_int_dtype(dtype: type) -> None:
    probs = _probs((5, 3)).astype(np.float32)
    labels = np.array([[0], [2], [1], [1], [0]], dtype=dtype)  # the (N, 1) layout of keras.datasets.cifar10
    expected = ref_sparse(labels, probs.astype(np.float64)).mean()
    _close(losses.SparseCategoricalCrossentropy()(labels, probs), np.array(expected))
    as_tensors = losses.SparseCategoricalCrossentropy()(torch.from_numpy(labels), torch.from_numpy(probs))
    _close(as_tensors, np.array(expected))


def test_sparse_probabilities_at_zero_and_one_are_clipped() -> None:
    probs = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], np.float32)
    out = losses.sparse_categorical_crossentropy([0, 2], probs)
    assert torch.isfinite(out).all()
    _close(out, ref_sparse(np.array([0, 2]), probs.astype(np.float64)))
    assert out[1].item() == pytest.approx(-np.log(EPS / (1 - EPS + 2 * EPS)), rel=1e-4)


def test_sparse_renormalises_after_clipping_like_keras_2() -> None:
    unnormalised = np.array([[2.0, 0.0, 2.0]], np.float32)
    out = losses.sparse_categorical_crossentropy([0], unnormalised)
    _close(out, ref_sparse(np.array([0]), unnormalised.astype(np.float64)))
    assert out.item() == pytest.approx(np.log(2.0), rel=1e-5)


def test_sparse_axis_and_spatial_outputs() -> None:
    probs = _probs((2, 3, 4, 5))  # (N, H, W, C)
    labels = RNG.integers(0, 5, size=(2, 3, 4))
    out = losses.sparse_categorical_crossentropy(labels, torch.tensor(probs))
    _close(out, ref_sparse(labels, probs))
    channels_first = np.moveaxis(probs, -1, 1)
    out_axis1 = losses.sparse_categorical_crossentropy(labels, torch.tensor(channels_first), axis=1)
    _close(out_axis1, ref_sparse(labels, probs))


def test_sparse_ignore_class_masks_and_averages_over_valid_entries() -> None:
    probs = _probs((6, 3))
    labels = np.array([0, 1, -1, 2, -1, 1])
    valid = labels != -1
    per_sample = losses.sparse_categorical_crossentropy(labels, probs, ignore_class=-1)
    expected = np.where(valid, ref_sparse(np.where(valid, labels, 0), probs), 0.0)
    _close(per_sample, expected)
    loss = losses.SparseCategoricalCrossentropy(ignore_class=-1)
    _close(loss(labels, probs), np.array(expected[valid].mean()))
    assert losses.SparseCategoricalCrossentropy(ignore_class=-1, reduction="sum")(labels, probs).item() == \
        pytest.approx(expected.sum(), rel=1e-6)


@pytest.mark.parametrize("from_logits", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_categorical_crossentropy_matches_reference(from_logits: bool, smoothing: float) -> None:
    logits = RNG.normal(size=(5, 4))
    y_pred = logits if from_logits else _softmax(logits)
    y_true = np.eye(4)[RNG.integers(0, 4, size=5)]
    loss = losses.CategoricalCrossentropy(from_logits=from_logits, label_smoothing=smoothing)
    _close(loss(y_true, torch.tensor(y_pred, dtype=torch.float32)), ref_categorical(y_true, y_pred, from_logits,
                                                                                     smoothing).mean())


def test_categorical_renormalises_and_clips_probabilities() -> None:
    unnormalised = np.array([[2.0, 0.0, 2.0], [0.5, 0.5, 0.0]], np.float32)
    y_true = np.array([[1.0, 0, 0], [0, 0, 1.0]], np.float32)
    out = losses.categorical_crossentropy(y_true, unnormalised)
    assert torch.isfinite(out).all()
    _close(out, ref_categorical(y_true.astype(np.float64), unnormalised.astype(np.float64)))
    assert out[0].item() == pytest.approx(np.log(2.0), rel=1e-5)


@pytest.mark.parametrize("from_logits", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_binary_crossentropy_matches_reference(from_logits: bool, smoothing: float) -> None:
    logits = RNG.normal(size=(6, 3)) * 3
    y_pred = logits if from_logits else 1 / (1 + np.exp(-logits))
    y_true = RNG.integers(0, 2, size=(6, 3)).astype(np.float64)
    loss = losses.BinaryCrossentropy(from_logits=from_logits, label_smoothing=smoothing, reduction="none")
    _close(loss(y_true, torch.tensor(y_pred, dtype=torch.float32)), ref_binary(y_true, y_pred, from_logits, smoothing))


def test_binary_from_logits_is_stable_and_agrees_with_torch() -> None:
    logits = torch.tensor([[-200.0], [0.0], [200.0]])
    y_true = torch.tensor([[1.0], [0.0], [0.0]])
    out = losses.binary_crossentropy(y_true, logits, from_logits=True)
    assert torch.isfinite(out).all()
    expected = F.binary_cross_entropy_with_logits(logits, y_true, reduction="none").mean(-1)
    torch.testing.assert_close(out, expected)


def test_binary_probabilities_at_zero_and_one_give_the_clipped_formula() -> None:
    y_pred = np.array([[0.0, 1.0, 0.0, 1.0]], np.float32)
    y_true = np.array([[0.0, 1.0, 1.0, 0.0]], np.float32)
    out = losses.binary_crossentropy(y_true, y_pred)
    assert torch.isfinite(out).all()
    # the clipped formula evaluated in float32, as Keras evaluates it (1 - 1e-7 rounds in float32)
    eps = np.float32(EPS)
    clipped = np.clip(y_pred, eps, np.float32(1) - eps)
    expected = -(y_true * np.log(clipped + eps) + (1 - y_true) * np.log(1 - clipped + eps)).mean(-1)
    assert expected.dtype == np.float32
    _close(out, expected.astype(np.float64), 1e-6)


def test_binary_with_1d_labels_against_n_by_1_predictions_is_per_sample() -> None:
    p = RNG.uniform(0.05, 0.95, size=(4, 1))
    y = np.array([0.0, 1.0, 1.0, 0.0])
    out = losses.binary_crossentropy(y, torch.tensor(p))
    assert out.shape == (4,)
    _close(out, ref_binary(y[:, None], p))


def test_cached_keras_logits_are_used_like_keras_softmax_outputs() -> None:
    logits = torch.tensor([[30.0, -30.0, 0.0]])
    probs = torch.softmax(logits, -1)
    probs._keras_logits = logits  # what Keras 2.10+ softmax attaches to its output
    out = losses.sparse_categorical_crossentropy([1], probs)
    _close(out, ref_sparse(np.array([1]), logits.double().numpy(), from_logits=True))


def test_gradient_of_sparse_from_logits_is_softmax_minus_onehot() -> None:
    logits = torch.tensor(RNG.normal(size=(4, 3)), dtype=torch.float32, requires_grad=True)
    labels = torch.tensor([0, 2, 1, 1])
    losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits).backward()
    expected = (torch.softmax(logits.detach(), -1) - F.one_hot(labels, 3)) / 4
    torch.testing.assert_close(logits.grad, expected)


# ----- regression losses -------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(REGRESSION_REFS))
def test_regression_losses_match_reference(name: str) -> None:
    y_true = RNG.uniform(0.0, 1.0, size=(5, 3))
    if name == "hinge":
        y_true = RNG.integers(0, 2, size=(5, 3)).astype(np.float64)
    y_pred = RNG.uniform(0.01, 1.0, size=(5, 3))
    per_sample = getattr(losses, name)(y_true, torch.tensor(y_pred, dtype=torch.float32))
    _close(per_sample, REGRESSION_REFS[name](y_true, y_pred), 2e-5)
    loss_class = losses.get(name)
    _close(loss_class(y_true, torch.tensor(y_pred, dtype=torch.float32)), REGRESSION_REFS[name](y_true, y_pred).mean(),
           2e-5)


@pytest.mark.parametrize("delta", [0.5, 1.0, 2.0])
def test_huber_matches_piecewise_formula(delta: float) -> None:
    y_true, y_pred = RNG.normal(size=(6, 2)) * 2, RNG.normal(size=(6, 2)) * 2
    err = np.abs(y_pred - y_true)
    expected = np.where(err <= delta, 0.5 * err ** 2, delta * err - 0.5 * delta ** 2).mean(-1)
    _close(losses.Huber(delta=delta, reduction="none")(y_true, torch.tensor(y_pred)), expected)


def test_aliases_are_the_functions() -> None:
    assert losses.mse is losses.MSE is losses.mean_squared_error
    assert losses.mae is losses.MAE is losses.mean_absolute_error
    assert losses.kld is losses.kullback_leibler_divergence is losses.kl_divergence


# ----- reductions and sample weights -------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["auto", "sum_over_batch_size", "sum", "none", None])
def test_reductions_with_sample_weights(reduction) -> None:
    y_true, y_pred = RNG.normal(size=(6, 2)), RNG.normal(size=(6, 2))
    weights = RNG.uniform(0, 2, size=6)
    per_sample = ((y_true - y_pred) ** 2).mean(-1)
    out = losses.MeanSquaredError(reduction=reduction)(y_true, torch.tensor(y_pred), sample_weight=weights)
    expected = {"auto": (per_sample * weights).sum() / 6, "sum_over_batch_size": (per_sample * weights).sum() / 6,
                "sum": (per_sample * weights).sum(), "none": per_sample * weights, None: per_sample * weights}
    _close(out, np.asarray(expected[reduction]))


def test_sample_weight_n_by_1_and_scalar_and_broadcast_over_time() -> None:
    y_true, y_pred = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    per_sample = ((y_true - y_pred) ** 2).mean(-1)
    w = RNG.uniform(0, 1, size=4)
    _close(losses.MeanSquaredError()(y_true, y_pred, sample_weight=w[:, None]), (per_sample * w).mean())
    _close(losses.MeanSquaredError()(y_true, y_pred, sample_weight=3.0), 3 * per_sample.mean())
    # per-timestep losses (N, T) with per-sample weights: divided by N * T, as Keras does
    probs, labels = _probs((4, 5, 3)), RNG.integers(0, 3, size=(4, 5))
    expected = (ref_sparse(labels, probs) * w[:, None]).sum() / 20
    _close(losses.SparseCategoricalCrossentropy()(labels, probs, sample_weight=w), np.array(expected))


def test_reduction_enum_values() -> None:
    assert (losses.Reduction.AUTO, losses.Reduction.NONE, losses.Reduction.SUM,
            losses.Reduction.SUM_OVER_BATCH_SIZE) == ("auto", "none", "sum", "sum_over_batch_size")
    assert losses.MeanSquaredError(reduction=losses.Reduction.NONE)([[1.0], [2.0]], [[0.0], [0.0]]).shape == (2,)
    with pytest.raises(ValueError, match="Invalid loss reduction 'mean'.*sum_over_batch_size"):
        losses.MeanSquaredError(reduction="mean")


def test_custom_loss_subclass_and_default_name() -> None:
    class AbsoluteLoss(losses.Loss):
        def call(self, y_true, y_pred):
            assert isinstance(y_true, torch.Tensor) and isinstance(y_pred, torch.Tensor)
            return (y_pred - y_true).abs().mean(-1)

    loss = AbsoluteLoss()
    assert loss.name == "absolute_loss"
    _close(loss(np.zeros((3, 2)), np.ones((3, 2)), sample_weight=[1.0, 0.0, 2.0]), np.array(1.0))
    _close(AbsoluteLoss(reduction="sum")(torch.zeros(3, 2), torch.full((3, 2), 2.0)), np.array(6.0))


# ----- lookup and config -------------------------------------------------------------------------
def test_get_resolves_names_aliases_instances_callables_and_configs() -> None:
    assert isinstance(losses.get("SparseCategoricalCrossentropy"), losses.SparseCategoricalCrossentropy)
    wrapped = losses.get("mse")
    assert isinstance(wrapped, losses.Loss) and wrapped.name == "mean_squared_error"
    assert wrapped.fn is losses.mean_squared_error
    instance = losses.BinaryCrossentropy(from_logits=True)
    assert losses.get(instance) is instance
    assert losses.get(None) is None

    def my_loss(y_true, y_pred):
        return (torch.as_tensor(y_pred) - torch.as_tensor(y_true)).abs()

    custom = losses.get(my_loss)
    assert custom.name == "my_loss"
    _close(custom(torch.zeros(4), torch.full((4,), 2.0)), np.array(2.0))
    config = losses.serialize(losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1))
    rebuilt = losses.deserialize(config)
    assert isinstance(rebuilt, losses.CategoricalCrossentropy)
    assert rebuilt.get_config() == config["config"]
    assert losses.get({"class_name": "Huber", "config": {"delta": 2.0}}).get_config()["delta"] == 2.0


def test_get_unknown_name_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="Unknown loss 'cross_entropy'.*sparse_categorical_crossentropy"):
        losses.get("cross_entropy")
    with pytest.raises(ValueError, match="Unknown loss class 'Nope'"):
        losses.get({"class_name": "Nope", "config": {}})
    saved = losses.serialize(losses.get("mae"))
    assert saved == {"class_name": "LossFunctionWrapper",
                     "config": {"reduction": "sum_over_batch_size", "name": "mean_absolute_error",
                                "fn": "mean_absolute_error"}}
    assert losses.deserialize(saved).fn is losses.mean_absolute_error
    with pytest.raises(ValueError, match="Unknown loss function 'my_loss' in LossFunctionWrapper config"):
        losses.deserialize({"class_name": "LossFunctionWrapper", "config": {"fn": "my_loss", "name": "my_loss"}})


def test_from_config_round_trip_keeps_arguments() -> None:
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=255, reduction="sum", name="scce")
    clone = losses.SparseCategoricalCrossentropy.from_config(loss.get_config())
    assert clone.get_config() == {"reduction": "sum", "name": "scce", "from_logits": True, "ignore_class": 255,
                                  "axis": -1}


# ----- bad input ---------------------------------------------------------------------------------
def test_sparse_with_one_hot_labels_suggests_categorical() -> None:
    with pytest.raises(ValueError, match="look like one-hot labels.*CategoricalCrossentropy"):
        losses.SparseCategoricalCrossentropy()(np.eye(3)[[0, 1, 2, 0]], _probs((4, 3)))


def test_sparse_rejects_fractional_labels() -> None:
    with pytest.raises(ValueError, match="integer class indices, found the value 0.5"):
        losses.sparse_categorical_crossentropy(np.array([0.0, 0.5]), _probs((2, 3)))


@pytest.mark.parametrize("labels, bad", [([0, 3], 3), ([-1, 1], -1)])
def test_sparse_rejects_labels_outside_the_class_range(labels: list, bad: int) -> None:
    with pytest.raises(ValueError, match=rf"label {bad} is outside \[0, 3\)"):
        losses.sparse_categorical_crossentropy(labels, _probs((2, 3)))


def test_sparse_rejects_unrelated_label_shapes() -> None:
    with pytest.raises(ValueError, match=r"expects integer class labels of shape \(4,\) or \(4, 1\)"):
        losses.sparse_categorical_crossentropy(np.zeros((4, 2), np.int64), _probs((4, 3)))


def test_categorical_with_integer_labels_suggests_sparse() -> None:
    for labels in (np.array([0, 1, 2]), np.array([[0], [1], [2]])):
        with pytest.raises(ValueError, match="look like integer class indices.*SparseCategoricalCrossentropy"):
            losses.CategoricalCrossentropy()(labels, _probs((3, 4)))


@pytest.mark.parametrize("fn", [losses.sparse_categorical_crossentropy, losses.categorical_crossentropy,
                                losses.binary_crossentropy, losses.mean_squared_error])
def test_batch_size_mismatch_is_named(fn) -> None:
    y_true = np.zeros((5, 3)) if fn is not losses.sparse_categorical_crossentropy else np.zeros(5, np.int64)
    with pytest.raises(ValueError, match=r"y_true has batch size 5.*y_pred has batch size 4"):
        fn(y_true, _probs((4, 3)))


def test_binary_shape_mismatch_and_bad_sample_weight() -> None:
    with pytest.raises(ValueError, match=r"binary_crossentropy: y_true shape \(4, 1\) differs from y_pred shape"):
        losses.binary_crossentropy(np.zeros((4, 1)), np.full((4, 3), 0.5))
    with pytest.raises(ValueError, match="sample_weight has 3 entries.*batch has 4 samples"):
        losses.MeanSquaredError()(np.zeros((4, 2)), np.zeros((4, 2)), sample_weight=np.ones(3))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_losses_run_without_host_syncs() -> None:
    probs = torch.tensor(_probs((8, 4)), dtype=torch.float32, device="cuda")
    labels = torch.tensor(RNG.integers(0, 4, size=(8, 1)), dtype=torch.uint8, device="cuda")
    weights = torch.rand(8, device="cuda")
    expected = losses.SparseCategoricalCrossentropy()(labels.cpu(), probs.cpu(), sample_weight=weights.cpu())
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        out = losses.SparseCategoricalCrossentropy()(labels, probs, sample_weight=weights)
        losses.SparseCategoricalCrossentropy(ignore_class=0)(labels, probs)
        losses.CategoricalCrossentropy(from_logits=True)(F.one_hot(labels[:, 0].long(), 4).float(), probs)
        losses.BinaryCrossentropy()(labels.float() / 3, probs[:, :1])
        losses.Hinge()(labels.float(), probs[:, :1])
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.testing.assert_close(out.cpu(), expected)
