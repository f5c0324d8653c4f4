"""Keras masks in compiled losses and metrics: a masked output (Embedding(mask_zero=True) -> ... -> Dense)
weighs its loss by the mask and its mean metrics count unmasked positions only, as Keras 3 does."""
import numpy as np
import pytest
import torch

import torchstrategy as tf

keras = tf.keras

X = np.array([[1, 2, 3, 0, 0], [4, 1, 0, 0, 0], [2, 2, 2, 2, 1]], dtype="int32")
Y = np.array([[0, 1, 2, 0, 0], [2, 1, 0, 1, 2], [1, 1, 0, 2, 2]], dtype="int32")
MASK = X != 0

# Frozen from TF 2.21 / Keras 3, run on the same data and on the weights _reference_inputs() draws:
# evaluate(sample_weight=SW), evaluate() and the one fit step's logs, plus the sum of the weights after it.
TF_REFERENCE = {
    "dense": {"evaluate_sw": {"loss": 1.6448626518249512, "accuracy": 0.20000000298023224,
                              "weighted_accuracy": 0.17353913187980652},
              "evaluate": {"loss": 1.3488837480545044, "accuracy": 0.20000000298023224,
                           "weighted_accuracy": 0.20000000298023224},
              "weight_sum_after_fit": 0.6819418333470821},
    "lstm": {"evaluate_sw": {"loss": 1.4441070556640625, "accuracy": 0.4000000059604645,
                             "weighted_accuracy": 0.3701966404914856},
             "evaluate": {"loss": 1.1377497911453247, "accuracy": 0.4000000059604645,
                          "weighted_accuracy": 0.4000000059604645},
             "weight_sum_after_fit": 2.612961728242226},
}


def _reference_inputs():
    """The per-position weights and both models' initial weights, drawn as the TF script drew them."""
    rng = np.random.default_rng(0)
    sample_weight = rng.uniform(0.5, 2.0, size=(3, 5)).astype("float32")
    weights = {}
    for key in ("dense", "lstm"):
        model = _model(key == "lstm")
        weights[key] = [rng.normal(size=w.shape).astype("float32") * 0.5 for w in model.get_weights()]
    return sample_weight, weights


def _model(lstm: bool):
    inputs = keras.Input((5,), dtype="int32")
    hidden = keras.layers.Embedding(5, 3, mask_zero=True)(inputs)
    if lstm:
        hidden = keras.layers.LSTM(4, return_sequences=True)(hidden)
    outputs = keras.layers.Dense(3, activation="softmax")(hidden)
    return keras.Model(inputs, outputs)


def _compiled(key: str, weights: list):
    model = _model(key == "lstm")
    model.set_weights(weights)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"], weighted_metrics=["accuracy"])
    return model


@pytest.mark.parametrize("key", ["dense", "lstm"])
def test_masked_sequence_model_matches_tf(key):
    sample_weight, weights = _reference_inputs()
    model = _compiled(key, weights[key])
    reference = TF_REFERENCE[key]
    logs = model.evaluate(X, Y, sample_weight=sample_weight, batch_size=3, verbose=0, return_dict=True)
    for name, value in reference["evaluate_sw"].items():
        assert logs[name] == pytest.approx(value, abs=1e-5), name
    logs = model.evaluate(X, Y, batch_size=3, verbose=0, return_dict=True)
    for name, value in reference["evaluate"].items():
        assert logs[name] == pytest.approx(value, abs=1e-5), name
    history = model.fit(X, Y, sample_weight=sample_weight, batch_size=3, epochs=1, verbose=0, shuffle=False)
    for name, value in reference["evaluate_sw"].items():
        assert history.history[name][0] == pytest.approx(value, abs=1e-5), name
    weight_sum = sum(float(np.sum(w)) for w in model.get_weights())
    assert weight_sum == pytest.approx(reference["weight_sum_after_fit"], abs=1e-4)


def _numpy_masked_loss(model, x, y, sample_weight):
    """Keras 3's documented rule: sum(loss * weight * mask) / sum(mask)."""
    probs = model.predict(x, verbose=0)
    per_position = -np.log(np.take_along_axis(probs, y[..., None], axis=-1)[..., 0])
    mask = (x != 0).astype("float64")
    return float(np.sum(per_position * sample_weight * mask) / np.sum(mask)), probs


def test_masked_loss_follows_the_keras_rule_and_ignores_padding():
    sample_weight, weights = _reference_inputs()
    model = _compiled("dense", weights["dense"])
    expected, probs = _numpy_masked_loss(model, X, Y, sample_weight)
    logs = model.evaluate(X, Y, sample_weight=sample_weight, batch_size=3, verbose=0, return_dict=True)
    assert logs["loss"] == pytest.approx(expected, abs=1e-5)
    correct = (probs.argmax(-1) == Y)[MASK]
    assert logs["accuracy"] == pytest.approx(float(correct.mean()), abs=1e-6)
    # Labels and weights at padded positions must not matter.
    other_y, other_sw = Y.copy(), sample_weight.copy()
    other_y[~MASK] = (other_y[~MASK] + 1) % 3
    other_sw[~MASK] = 7.0
    changed = model.evaluate(X, other_y, sample_weight=other_sw, batch_size=3, verbose=0, return_dict=True)
    for name in ("loss", "accuracy", "weighted_accuracy"):
        assert changed[name] == pytest.approx(logs[name], abs=1e-6), name
    # Per-sample weights (one per sequence) spread over the time steps.
    per_sample = np.array([1.0, 2.0, 0.5], dtype="float32")
    expected, _ = _numpy_masked_loss(model, X, Y, per_sample[:, None])
    logs = model.evaluate(X, Y, sample_weight=per_sample, batch_size=3, verbose=0, return_dict=True)
    assert logs["loss"] == pytest.approx(expected, abs=1e-5)


def test_masked_prediction_in_a_standalone_loss():
    torch.manual_seed(0)
    logits = torch.randn(2, 4, 3)
    labels = torch.tensor([[0, 1, 2, 1], [2, 2, 0, 1]])
    mask = torch.tensor([[True, True, False, False], [True, True, True, False]])
    per_position = torch.nn.functional.cross_entropy(logits.reshape(-1, 3), labels.reshape(-1),
                                                     reduction="none").reshape(2, 4)
    pred = logits.clone()
    pred._keras_mask = mask
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    assert float(loss(labels, pred)) == pytest.approx(float(per_position[mask].mean()), abs=1e-6)
    summed = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")
    assert float(summed(labels, pred)) == pytest.approx(float(per_position[mask].sum()), abs=1e-5)
    # ignore_class and the mask combine: a position counts only when both keep it.
    ignoring = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=1)
    keep = mask & (labels != 1)
    assert float(ignoring(labels, pred)) == pytest.approx(float(per_position[keep].mean()), abs=1e-6)
    # Everything masked: 0, not NaN (Keras's divide_no_nan).
    pred._keras_mask = torch.zeros(2, 4, dtype=torch.bool)
    assert float(loss(labels, pred)) == 0.0


def test_mask_that_does_not_fit_the_losses_is_refused():
    pred = torch.randn(2, 4, 3)
    pred._keras_mask = torch.ones(3, 5, dtype=torch.bool)
    with pytest.raises(ValueError, match="mask"):
        keras.losses.SparseCategoricalCrossentropy(from_logits=True)(torch.zeros(2, 4, dtype=torch.long), pred)
