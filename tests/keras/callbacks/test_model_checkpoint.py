"""Tests for keras.callbacks.ModelCheckpoint with a real Sequential model trained by fit(): file naming,
save_best_only (what is on disk after each epoch), weights vs full model, batch frequency, chief-only writes."""
from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

from tests import _multiprocess as mp
from torchstrategy import keras
from torchstrategy.keras.callbacks import Callback, ModelCheckpoint

STEPS_PER_EPOCH = 4  # 32 rows in batches of 8


def _data() -> tuple:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 4)).astype("float32")
    y = (x @ rng.normal(size=(4, 1))).astype("float32")
    return x, y


def _model() -> keras.Sequential:
    model = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    return model


def _forward(weights: list, x: np.ndarray) -> np.ndarray:
    """The two-layer Dense network in NumPy (Keras kernel layout (in, out))."""
    kernel1, bias1, kernel2, bias2 = weights
    return np.maximum(x @ kernel1 + bias1, 0.0) @ kernel2 + bias2


def _weights_in(path: str) -> list:
    fresh = _model()
    fresh.load_weights(path)
    return fresh.get_weights()


def _assert_same_weights(ours: list, expected: list) -> None:
    assert len(ours) == len(expected)
    for got, want in zip(ours, expected):
        np.testing.assert_array_equal(got, want)


class ScriptedLogs(Callback):
    """Overwrites a log entry with a scripted per-epoch value (placed before ModelCheckpoint)."""

    def __init__(self, key: str, values: list) -> None:
        super().__init__()
        self.key, self.values = key, values

    def on_epoch_end(self, epoch, logs=None):
        logs[self.key] = self.values[epoch]


class EpochRecorder(Callback):
    """Placed after ModelCheckpoint: the weights and logs at each epoch end, and what a file holds then."""

    def __init__(self, watched: str | None = None) -> None:
        super().__init__()
        self.watched = watched
        self.weights, self.logs, self.file_weights = [], [], []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append(self.model.get_weights())
        self.logs.append(dict(logs))
        if self.watched is not None:
            self.file_weights.append(_weights_in(self.watched) if os.path.exists(self.watched) else None)


def _fit(callbacks: list, epochs: int, validation: bool = False, model=None) -> keras.Sequential:
    x, y = _data()
    model = model or _model()
    model.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0, callbacks=callbacks,
              validation_data=(x[:16], y[:16]) if validation else None)
    return model


def test_filepath_placeholders_are_filled_from_epoch_and_logs_in_created_directories(tmp_path):
    template = str(tmp_path / "nested" / "dir" / "w.{epoch:02d}-{val_loss:.3f}.weights")
    recorder = EpochRecorder()
    _fit([ModelCheckpoint(template, save_weights_only=True), recorder], epochs=3, validation=True)
    expected = [f"w.{epoch + 1:02d}-{logs['val_loss']:.3f}.weights" for epoch, logs in enumerate(recorder.logs)]
    assert sorted(os.listdir(tmp_path / "nested" / "dir")) == sorted(expected)
    for name, weights in zip(expected, recorder.weights):  # each file holds that epoch's weights
        _assert_same_weights(_weights_in(str(tmp_path / "nested" / "dir" / name)), weights)


def test_save_best_only_keeps_exactly_the_improving_epochs_and_the_best_weights_on_disk(tmp_path):
    val_losses = [0.5, 0.7, 0.3, 0.4, 0.3, 0.35]  # improves at epochs 1 and 3 only (ties do not count)
    best_path = str(tmp_path / "best.weights")
    per_epoch = ModelCheckpoint(str(tmp_path / "e{epoch}.weights"), save_best_only=True, save_weights_only=True)
    constant = ModelCheckpoint(best_path, save_best_only=True, save_weights_only=True)
    recorder = EpochRecorder(watched=best_path)
    _fit([ScriptedLogs("val_loss", val_losses), per_epoch, constant, recorder], epochs=len(val_losses))

    assert sorted(os.listdir(tmp_path)) == ["best.weights", "e1.weights", "e3.weights"]
    _assert_same_weights(_weights_in(str(tmp_path / "e1.weights")), recorder.weights[0])
    _assert_same_weights(_weights_in(str(tmp_path / "e3.weights")), recorder.weights[2])
    # after every epoch the constant file holds the weights of the best epoch so far, and only those
    for epoch in range(len(val_losses)):
        best_so_far = int(np.argmin(val_losses[: epoch + 1]))
        _assert_same_weights(recorder.file_weights[epoch], recorder.weights[best_so_far])
    assert constant.best == min(val_losses)
    assert not np.allclose(recorder.weights[2][0], recorder.weights[-1][0])  # the best is not the last


def test_verbose_messages_say_what_was_saved_and_why(tmp_path, capsys):
    path = str(tmp_path / "best.weights")
    checkpoint = ModelCheckpoint(path, save_best_only=True, save_weights_only=True, verbose=1)
    _fit([ScriptedLogs("val_loss", [0.5, 0.7, 0.25]), checkpoint], epochs=3)
    out = capsys.readouterr().out
    assert f"Epoch 1: val_loss improved from inf to 0.50000, saving model to {path}" in out
    assert "Epoch 2: val_loss did not improve from 0.50000" in out
    assert f"Epoch 3: val_loss improved from 0.50000 to 0.25000, saving model to {path}" in out
    plain = ModelCheckpoint(str(tmp_path / "p{epoch}.w"), save_weights_only=True, verbose=1)
    _fit([plain], epochs=1)
    assert f"Epoch 1: saving model to {tmp_path / 'p1.w'}" in capsys.readouterr().out


def test_full_model_file_loads_with_load_model_and_weights_file_only_with_load_weights(tmp_path):
    x, _ = _data()
    recorder = EpochRecorder()
    full, weights_only = str(tmp_path / "m{epoch}.keras"), str(tmp_path / "w{epoch}.weights")
    _fit([ModelCheckpoint(full), ModelCheckpoint(weights_only, save_weights_only=True), recorder], epochs=2)

    loaded = keras.models.load_model(str(tmp_path / "m1.keras"))
    np.testing.assert_allclose(loaded.predict(x, verbose=0), _forward(recorder.weights[0], x), rtol=1e-5, atol=1e-6)
    assert loaded.optimizer is not None  # the whole model: compile settings come back too
    _assert_same_weights(_weights_in(str(tmp_path / "w2.weights")), recorder.weights[1])
    with pytest.raises(ValueError, match="not a model file written by model.save"):
        keras.models.load_model(str(tmp_path / "w2.weights"))


class BatchRecorder(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.seen, self.weights = [], {}

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.seen.append((self.epoch, batch))
        self.weights[(self.epoch + 1, batch + 1)] = self.model.get_weights()


def test_integer_save_freq_counts_batches_across_epochs_and_fills_epoch_and_batch(tmp_path):
    save_freq, epochs = 3, 3
    checkpoint = ModelCheckpoint(str(tmp_path / "s{epoch:02d}-{batch:02d}.w"), save_weights_only=True,
                                 save_freq=save_freq)
    recorder = BatchRecorder()
    _fit([checkpoint, recorder], epochs=epochs)
    expected = []
    for global_step in range(1, epochs * STEPS_PER_EPOCH + 1):
        if global_step % save_freq == 0:
            epoch, batch = divmod(global_step - 1, STEPS_PER_EPOCH)
            expected.append((epoch + 1, batch + 1))
    assert len(recorder.seen) == epochs * STEPS_PER_EPOCH
    assert sorted(os.listdir(tmp_path)) == sorted(f"s{e:02d}-{b:02d}.w" for e, b in expected)
    for epoch, batch in expected:
        saved = _weights_in(str(tmp_path / f"s{epoch:02d}-{batch:02d}.w"))
        _assert_same_weights(saved, recorder.weights[(epoch, batch)])


def test_initial_value_threshold_must_be_beaten_first(tmp_path):
    checkpoint = ModelCheckpoint(str(tmp_path / "e{epoch}.w"), save_best_only=True, save_weights_only=True,
                                 initial_value_threshold=0.4)
    _fit([ScriptedLogs("val_loss", [0.5, 0.35, 0.45, 0.2]), checkpoint], epochs=4)
    assert sorted(os.listdir(tmp_path)) == ["e2.w", "e4.w"]


@pytest.mark.parametrize("monitor, mode", [("val_score", "max"), ("val_accuracy", "auto"), ("val_auc", "auto")])
def test_max_mode_and_auto_for_higher_is_better_names_save_on_increase(tmp_path, monitor, mode):
    checkpoint = ModelCheckpoint(str(tmp_path / "e{epoch}.w"), monitor=monitor, mode=mode, save_best_only=True,
                                 save_weights_only=True)
    _fit([ScriptedLogs(monitor, [0.1, 0.3, 0.2, 0.5]), checkpoint], epochs=4)
    assert sorted(os.listdir(tmp_path)) == ["e1.w", "e2.w", "e4.w"]


def test_min_mode_overrides_a_higher_is_better_name(tmp_path):
    checkpoint = ModelCheckpoint(str(tmp_path / "e{epoch}.w"), monitor="val_accuracy", mode="min",
                                 save_best_only=True, save_weights_only=True)
    _fit([ScriptedLogs("val_accuracy", [0.1, 0.3, 0.05]), checkpoint], epochs=3)
    assert sorted(os.listdir(tmp_path)) == ["e1.w", "e3.w"]


def test_missing_format_key_raises_naming_it_and_the_available_keys_before_writing(tmp_path):
    recorder = EpochRecorder()
    checkpoint = ModelCheckpoint(str(tmp_path / "w{epoch}-{val_acc:.2f}.w"), save_weights_only=True)
    with pytest.raises(KeyError, match=r"no value for 'val_acc'\. Available keys are: epoch, loss"):
        _fit([checkpoint, recorder], epochs=3)
    assert os.listdir(tmp_path) == [] and recorder.logs == []  # stopped at the first epoch end


def test_missing_format_key_with_batch_frequency_fails_on_the_first_batch(tmp_path):
    recorder = BatchRecorder()  # 'mae' is not compiled, but another callback could add it: checked at the batch
    checkpoint = ModelCheckpoint(str(tmp_path / "w{epoch}-{mae}.w"), save_weights_only=True, save_freq=3)
    with pytest.raises(KeyError, match=r"'mae'.*Available keys are: epoch, batch, loss"):
        _fit([recorder, checkpoint], epochs=1, validation=True)
    assert recorder.seen == [(0, 0)] and os.listdir(tmp_path) == []


def test_format_spec_that_does_not_fit_the_value_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"Failed to format this callback filepath.*format spec"):
        _fit([ModelCheckpoint(str(tmp_path / "w{loss:d}.w"), save_weights_only=True)], epochs=1)


def test_missing_monitor_warns_with_available_metrics_and_saves_nothing(tmp_path):
    checkpoint = ModelCheckpoint(str(tmp_path / "best.w"), monitor="val_los", save_best_only=True,
                                 save_weights_only=True)
    with pytest.warns(UserWarning, match=r"only with val_los available, skipping\. Available metrics are: loss"):
        _fit([checkpoint], epochs=2)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kwargs, error, match", [
    ({"save_freq": "batch"}, ValueError, "Unrecognized save_freq: 'batch'"),
    ({"save_freq": 0}, ValueError, "at least 1 batch"),
    ({"mode": "best"}, ValueError, "mode='best' is unknown"),
    ({"filepath": "w{}.keras"}, ValueError, "positional placeholder"),
    ({"filepath": "w{epoch.keras"}, ValueError, "not a valid format string"),
    ({"filepath": 3}, TypeError, "must be a str or path"),
    ({"save_every": 2}, TypeError, "unexpected keyword argument 'save_every'"),
])
def test_bad_arguments_are_refused_at_construction(kwargs, error, match):
    kwargs = {"filepath": "w.keras", **kwargs}
    with pytest.raises(error, match=match):
        ModelCheckpoint(**kwargs)


def test_existing_directory_as_filepath_is_refused(tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(IsADirectoryError, match="non-directory filepath"):
        _fit([ModelCheckpoint(str(tmp_path / "taken"), save_weights_only=True)], epochs=1)


@pytest.mark.parametrize("name, value, advice", [("period", 2, "save_freq"), ("options", None, "drop the argument")])
def test_keras2_keywords_are_refused_with_what_to_use_instead(tmp_path, name, value, advice):
    # Keras 3.15 (TF 2.21): TypeError "...got an unexpected keyword argument 'period'" (and 'options').
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'.*{advice}"):
        ModelCheckpoint(str(tmp_path / "w.keras"), **{name: value})


def test_signature_is_keras3s(tmp_path):
    assert list(inspect.signature(ModelCheckpoint).parameters) == [
        "filepath", "monitor", "verbose", "save_best_only", "save_weights_only", "mode", "save_freq",
        "initial_value_threshold"]


def test_epoch_frequency_does_not_ask_fit_for_batch_hooks():
    assert not ModelCheckpoint("w.keras")._implements_train_batch_hooks()
    assert ModelCheckpoint("w.keras", save_freq=5)._implements_train_batch_hooks()


TWO_REPLICAS = r'''
import json, os, sys
import numpy as np
import torchstrategy as tf
out = sys.argv[1]
strategy = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
role = "chief" if strategy.extended.should_checkpoint else "worker"
rng = np.random.default_rng(0)
x = rng.normal(size=(32, 4)).astype("float32"); y = rng.normal(size=(32, 1)).astype("float32")
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(4,))])
    model.compile(optimizer="sgd", loss="mse")
path = os.path.join(out, role, "w{epoch}.weights")
model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False,
          callbacks=[tf.keras.callbacks.ModelCheckpoint(path, save_weights_only=True, verbose=1)])
# every replica passed the save barrier, so the chief's last file is complete for everyone to read
twin = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(4,))])
twin.load_weights(os.path.join(out, "chief", "w2.weights"))
same = all(np.array_equal(a, b) for a, b in zip(twin.get_weights(), model.get_weights()))
with open(os.path.join(out, role + ".json"), "w") as handle:
    json.dump({"same": same}, handle)
'''


@pytest.mark.slow
def test_only_the_chief_writes_in_a_two_replica_run_and_every_replica_can_read_it(tmp_path):
    script = mp.write_script(tmp_path, TWO_REPLICAS)
    result = mp.run_python([script, str(tmp_path)], timeout=120)
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path / "chief")) == ["w1.weights", "w2.weights"]
    assert not (tmp_path / "worker").exists()
    assert mp.read_json(tmp_path / "chief.json") == {"same": True}
    assert mp.read_json(tmp_path / "worker.json") == {"same": True}
    assert result.stdout.count("saving model to") == 2  # the chief's two messages only
