"""Tests of EarlyStopping, ReduceLROnPlateau, TerminateOnNaN and LearningRateScheduler against
hand-derived Keras outcomes (and, for EarlyStopping, an independent re-statement of its rule)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torchstrategy.keras.callbacks import EarlyStopping, LearningRateScheduler, ReduceLROnPlateau, TerminateOnNaN


def _val_losses(values, key="val_loss"):
    return [{"loss": 1.0, key: value} for value in values]


# ---------------------------------------------------------------- EarlyStopping
@pytest.mark.parametrize(
    "values, kwargs, epochs_run, stopped_epoch",
    [
        # best 0.9 at epoch 1; epochs 2 and 3 do not improve -> patience 2 used up at epoch 3
        ([1.0, 0.9, 0.95, 0.96, 0.5, 0.4], dict(patience=2), 4, 3),
        # patience 0 stops at the first epoch that does not improve
        ([1.0, 1.1, 0.5], dict(patience=0), 2, 1),
        # 0.95 is better than 1.0 but not by min_delta=0.1 -> no improvement, stop at epoch 1
        ([1.0, 0.95, 0.8, 0.75], dict(patience=1, min_delta=0.1), 2, 1),
        ([1.0, 0.95, 0.8, 0.75], dict(patience=1, min_delta=0.0), 4, 0),
        # negative min_delta is taken as its absolute value, as Keras does
        ([1.0, 0.95, 0.8, 0.75], dict(patience=1, min_delta=-0.1), 2, 1),
        # baseline 0.5 never beaten: wait keeps counting through improvements, stops at epoch 3
        ([1.0, 0.9, 0.8, 0.85], dict(patience=2, baseline=0.5), 4, 3),
        # baseline 0.95 beaten at epoch 1: wait restarts there, epoch 3 is only 1 bad epoch
        ([1.0, 0.9, 0.8, 0.85, 0.7], dict(patience=2, baseline=0.95), 5, 0),
        # epochs 0 and 1 are warm-up; from epoch 2, 4.0 at epoch 4 is the first non-improvement
        ([1.0, 2.0, 3.0, 2.5, 4.0, 0.1], dict(patience=0, start_from_epoch=2), 5, 4),
        ([1.0, 2.0, 3.0, 2.5, 4.0, 0.1], dict(patience=0), 2, 1),
    ],
)
def test_early_stopping_min_mode_cases(make_model, fit, values, kwargs, epochs_run, stopped_epoch):
    model = make_model()
    stopper = EarlyStopping(monitor="val_loss", **kwargs)
    result = fit(model, [stopper], _val_losses(values))
    assert result["history"].epoch == list(range(epochs_run))
    assert stopper.stopped_epoch == stopped_epoch
    assert model.stop_training is (stopped_epoch > 0)


def test_early_stopping_max_auto_and_explicit_modes(make_model, fit):
    accuracies = [0.5, 0.6, 0.55, 0.58, 0.9]
    auto = EarlyStopping(monitor="val_accuracy", patience=2)  # 'accuracy' -> maximize
    fit(make_model(), [auto], _val_losses(accuracies, "val_accuracy"))
    assert auto.stopped_epoch == 3 and auto.best == 0.6  # 0.55 and 0.58 do not beat 0.6
    explicit_min = EarlyStopping(monitor="val_accuracy", patience=2, mode="min")
    fit(make_model(), [explicit_min], _val_losses(accuracies, "val_accuracy"))
    assert explicit_min.stopped_epoch == 2 and explicit_min.best == 0.5
    explicit_max = EarlyStopping(monitor="val_loss", patience=1, mode="max")
    fit(make_model(), [explicit_max], _val_losses([1.0, 2.0, 1.5]))
    assert explicit_max.stopped_epoch == 2 and explicit_max.best == 2.0


def test_early_stopping_auto_mode_uses_metric_direction(make_model, fit):
    class Score:  # a metric object that says which way is better (Keras 3 `_direction`)
        name = "score"
        _direction = "up"

    model = make_model()
    model.metrics = [Score()]
    stopper = EarlyStopping(monitor="val_score", patience=1)
    fit(model, [stopper], _val_losses([1.0, 2.0, 3.0, 2.5], "val_score"))
    assert stopper.stopped_epoch == 3 and stopper.best == 3.0


def _reference_early_stop(values, patience, min_delta, maximize, baseline, start_from_epoch):
    """Keras's documented rule restated on 'higher is better' scores: (epochs run, best epoch)."""
    sign = 1.0 if maximize else -1.0
    best_score, best_epoch, bad_epochs = -math.inf, None, 0
    for epoch, value in enumerate(values):
        if epoch < start_from_epoch:
            continue
        bad_epochs += 1
        if sign * value - abs(min_delta) > best_score:
            best_score, best_epoch = sign * value, epoch
            if baseline is None or sign * value - abs(min_delta) > sign * baseline:
                bad_epochs = 0
        elif bad_epochs >= patience and epoch > 0:
            return epoch + 1, best_epoch
    return len(values), best_epoch


def test_early_stopping_matches_reference_rule_on_random_sequences(make_model, fit):
    rng = np.random.default_rng(1234)
    for trial in range(40):
        values = [float(v) for v in np.round(rng.uniform(0.0, 1.0, size=8), 2)]
        patience = int(rng.integers(0, 4))
        min_delta = float(rng.choice([0.0, 0.05]))
        maximize = bool(rng.integers(0, 2))
        baseline = None if rng.integers(0, 2) else float(np.round(rng.uniform(0.2, 0.8), 2))
        start = int(rng.integers(0, 3))
        stopper = EarlyStopping(
            monitor="val_loss", patience=patience, min_delta=min_delta, mode="max" if maximize else "min",
            baseline=baseline, start_from_epoch=start, restore_best_weights=True,
        )
        model = make_model()
        result = fit(model, [stopper], _val_losses(values), actual_steps=1)
        epochs_run, best_epoch = _reference_early_stop(values, patience, min_delta, maximize, baseline, start)
        assert len(result["history"].epoch) == epochs_run, (trial, values)
        assert stopper.best_epoch == best_epoch, (trial, values)
        for restored, expected in zip(model.get_weights(), result["weights_at_epoch_end"][best_epoch]):
            np.testing.assert_array_equal(restored, expected)


def test_early_stopping_restores_best_weights(make_model, fit, capsys):
    model = make_model()
    stopper = EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True, verbose=1)
    result = fit(model, [stopper], _val_losses([1.0, 0.5, 0.7, 0.8, 0.1]))
    snapshots = result["weights_at_epoch_end"]
    assert stopper.stopped_epoch == 3 and stopper.best_epoch == 1 and len(snapshots) == 4
    for restored, best in zip(model.get_weights(), snapshots[1]):
        np.testing.assert_array_equal(restored, best)
    assert not np.array_equal(snapshots[1][0], snapshots[3][0])  # training really moved the weights
    out = capsys.readouterr().out
    assert "Epoch 4: early stopping" in out
    assert "Restoring model weights from the end of the best epoch: 2." in out


def test_early_stopping_restores_at_train_end_without_early_stop(make_model, fit):
    # Keras 3 puts the best weights back at the end of training even when it ran every epoch.
    model = make_model()
    stopper = EarlyStopping(monitor="val_loss", patience=5, restore_best_weights=True)
    result = fit(model, [stopper], _val_losses([1.0, 0.5, 0.7]))
    assert stopper.stopped_epoch == 0 and len(result["history"].epoch) == 3
    np.testing.assert_array_equal(model.get_weights()[0], result["weights_at_epoch_end"][1][0])


def test_early_stopping_reused_instance_starts_fresh(make_model, fit):
    stopper = EarlyStopping(monitor="val_loss", patience=1)
    fit(make_model(), [stopper], _val_losses([0.1, 0.2, 0.3]))
    assert stopper.stopped_epoch == 1
    result = fit(make_model(), [stopper], _val_losses([5.0, 4.0, 3.0]))  # 5.0 must not lose to old 0.1
    assert stopper.stopped_epoch == 0 and len(result["history"].epoch) == 3


def test_early_stopping_missing_monitor_warns_with_available_keys(make_model, fit):
    stopper = EarlyStopping(monitor="val_loss", patience=0)
    expected = r"`val_loss` which is not available. Available metrics are: loss,accuracy"
    with pytest.warns(UserWarning, match=expected):
        result = fit(make_model(), [stopper], [{"loss": 1.0, "accuracy": 0.5}] * 3)
    assert len(result["history"].epoch) == 3 and stopper.stopped_epoch == 0


def test_early_stopping_rejects_unknown_mode():
    with pytest.raises(ValueError, match=r"mode='maximum' is unknown. Use one of"):
        EarlyStopping(mode="maximum")


# ------------------------------------------------------------ ReduceLROnPlateau
def test_reduce_lr_on_plateau_with_cooldown_and_min_lr(make_model, fit):
    # Hand-traced (factor 0.5, patience 2, cooldown 2, min_lr 0.2, flat val_loss): reduce after
    # epoch 2; epochs 3-4 are cooldown (the counter drops before the check, so only epoch 3 is
    # skipped and epoch 4 counts as 1 bad epoch); reduce after 5, after 8 (clipped to min_lr),
    # and not after 11 because the rate already equals min_lr.
    model = make_model(learning_rate=1.0)
    reducer = ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=2, cooldown=2, min_lr=0.2)
    result = fit(model, [reducer], _val_losses([1.0] * 12))
    expected = [1.0] * 3 + [0.5] * 3 + [0.25] * 3 + [0.2] * 3
    assert result["lr_during_epoch"] == pytest.approx(expected)
    assert result["history"].history["learning_rate"] == pytest.approx(expected)
    assert model.optimizer.torch_optimizer.param_groups[0]["lr"] == pytest.approx(0.2)
    no_cooldown = ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=2, min_lr=0.2)
    result = fit(make_model(learning_rate=1.0), [no_cooldown], _val_losses([1.0] * 7))
    assert result["lr_during_epoch"] == pytest.approx([1.0, 1.0, 1.0, 0.5, 0.5, 0.25, 0.25])


def test_reduce_lr_on_plateau_min_delta_and_improvements(make_model, fit, capsys):
    # 0.97 is not 0.05 better than 1.0 -> reduce after epoch 1; 0.90 is -> best; 0.89 is not -> reduce.
    model = make_model(learning_rate=1.0)
    reducer = ReduceLROnPlateau(monitor="val_loss", factor=0.1, patience=1, min_delta=0.05, verbose=1)
    result = fit(model, [reducer], _val_losses([1.0, 0.97, 0.90, 0.89]))
    assert result["history"].history["learning_rate"] == pytest.approx([1.0, 1.0, 0.1, 0.1])
    assert model.optimizer.learning_rate == pytest.approx(0.01)
    out = capsys.readouterr().out
    assert "Epoch 2: ReduceLROnPlateau reducing learning rate to 0.1." in out


def test_reduce_lr_on_plateau_auto_mode_maximizes_accuracy(make_model, fit):
    model = make_model(learning_rate=1.0)
    reducer = ReduceLROnPlateau(monitor="val_accuracy", factor=0.5, patience=1, min_delta=0.0)
    result = fit(model, [reducer], _val_losses([0.5, 0.6, 0.7, 0.65], "val_accuracy"))
    assert result["lr_during_epoch"] == pytest.approx([1.0, 1.0, 1.0, 1.0])
    assert model.optimizer.learning_rate == pytest.approx(0.5)  # only the drop at epoch 3 counts


def test_reduce_lr_on_plateau_bad_arguments_and_missing_monitor(make_model, fit):
    with pytest.raises(ValueError, match="does not support a factor >= 1.0"):
        ReduceLROnPlateau(factor=1.5)
    with pytest.raises(ValueError, match="mode='up' is unknown"):
        ReduceLROnPlateau(mode="up")
    with pytest.raises(TypeError, match="unexpected arguments"):
        ReduceLROnPlateau(paitence=3)
    with pytest.warns(UserWarning, match="`val_loss` which is not available. Available metrics are: loss"):
        result = fit(make_model(learning_rate=0.3), [ReduceLROnPlateau(patience=0)], [{"loss": 1.0}] * 2)
    assert result["history"].history["learning_rate"] == pytest.approx([0.3, 0.3])


# ---------------------------------------------------------------- TerminateOnNaN
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), torch.tensor(float("-inf"))])
def test_terminate_on_nan_stops_after_the_bad_batch(make_model, fit, capsys, bad):
    model = make_model()
    batch_logs = [[{"loss": 1.0}, {"loss": bad}, {"loss": 2.0}]] * 3
    result = fit(model, [TerminateOnNaN()], [{"loss": 1.0}] * 3, batch_logs=batch_logs, actual_steps=3)
    assert model.stop_training is True
    assert result["history"].epoch == [0]
    assert model.optimizer.iterations == 2  # the third batch of the first epoch never ran
    assert "Batch 1: Invalid loss, terminating training" in capsys.readouterr().out


def test_terminate_on_nan_raise_error_raises_at_once():
    # Keras 3.15: raise_error=True raises RuntimeError instead of a graceful stop
    callback = TerminateOnNaN(raise_error=True)
    callback.on_batch_end(0, {"loss": 1.0})
    with pytest.raises(RuntimeError, match="NaN or Inf loss encountered at batch 3"):
        callback.on_batch_end(3, {"loss": float("nan")})


def test_terminate_on_nan_lets_finite_losses_through(make_model, fit):
    result = fit(make_model(), [TerminateOnNaN()], [{"loss": 1.0}] * 2)
    assert result["history"].epoch == [0, 1]


# --------------------------------------------------------- LearningRateScheduler
def test_scheduler_with_epoch_only(make_model, fit):
    model = make_model(learning_rate=1.0)
    result = fit(model, [LearningRateScheduler(lambda epoch: 0.1 * 0.5**epoch)], [{"loss": 1.0}] * 3)
    expected = [0.1 * 0.5**epoch for epoch in range(3)]
    assert result["lr_during_epoch"] == pytest.approx(expected)
    assert result["history"].history["learning_rate"] == pytest.approx(expected)


def test_scheduler_with_epoch_and_current_lr(make_model, fit, capsys):
    def schedule(epoch, lr):
        return lr if epoch == 0 else lr * 0.9

    model = make_model(learning_rate=0.2)
    result = fit(model, [LearningRateScheduler(schedule, verbose=1)], [{"loss": 1.0}] * 3)
    assert result["lr_during_epoch"] == pytest.approx([0.2, 0.18, 0.162])
    assert model.optimizer.torch_optimizer.param_groups[0]["lr"] == pytest.approx(0.162)
    assert "Epoch 2: LearningRateScheduler setting learning rate to 0.18" in capsys.readouterr().out


def test_scheduler_accepts_tensor_and_rejects_non_numbers(make_model, fit):
    result = fit(make_model(), [LearningRateScheduler(lambda epoch: torch.tensor(0.25))], [{"loss": 1.0}])
    assert result["lr_during_epoch"] == [0.25]
    with pytest.raises(ValueError, match="should be a float. Got: 'fast'"):
        fit(make_model(), [LearningRateScheduler(lambda epoch: "fast")], [{"loss": 1.0}])
    with pytest.raises(TypeError, match="needs a callable"):
        LearningRateScheduler(0.1)
