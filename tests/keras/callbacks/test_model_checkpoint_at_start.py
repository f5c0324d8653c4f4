"""Checkpoint callbacks refuse what can never work before training starts: a filepath placeholder fit()
will not fill (a typo such as '{val_los}'), and a regular file where their folder should be."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from torchstrategy import keras
from torchstrategy.keras.callbacks import BackupAndRestore, Callback, ModelCheckpoint


def _data() -> tuple:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 4)).astype("float32")
    return x, (x @ rng.normal(size=(4, 1))).astype("float32")


def _model(metrics=None) -> keras.Sequential:
    model = keras.Sequential([keras.layers.Dense(4, activation="relu", input_shape=(4,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=metrics)
    return model


class BatchCounter(Callback):
    """How many training batches ran (zero when a callback refused at on_train_begin)."""

    def __init__(self) -> None:
        super().__init__()
        self.batches = 0

    def on_train_batch_end(self, batch, logs=None):
        self.batches += 1


class AddsLog(Callback):
    """Another callback's own log entry (placed before ModelCheckpoint), e.g. a custom score."""

    def on_epoch_end(self, epoch, logs=None):
        logs["custom_score"] = 10.0 + epoch


def _fit(callbacks: list, epochs: int = 2, validation: bool = True, metrics=None) -> keras.Sequential:
    x, y = _data()
    model = _model(metrics)
    model.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0, callbacks=callbacks,
              validation_data=(x[:16], y[:16]) if validation else None)
    return model


@pytest.mark.parametrize("template, problem", [
    ("w{epoch:02d}-{val_los:.2f}.w", "'val_los' (did you mean 'val_loss'?)"),
    ("w{epochs:02d}.w", "'epochs' (did you mean 'epoch'?)"),
    ("w{epoch}-{val_mea:.3f}.w", "'val_mea' (did you mean 'val_mae'?)"),
])
def test_a_mistyped_placeholder_fails_at_train_begin_naming_it_and_the_keys_fit_provides(tmp_path, template,
                                                                                          problem):
    counter = BatchCounter()
    with pytest.raises(KeyError) as raised:
        _fit([counter, ModelCheckpoint(str(tmp_path / template), save_weights_only=True)], metrics=["mae"])
    message = str(raised.value)
    assert problem in message
    assert "Keys fit() provides: epoch, loss, mae, val_loss, val_mae" in message
    assert counter.batches == 0 and os.listdir(tmp_path) == []  # refused before the first batch


def test_a_validation_placeholder_with_batch_frequency_fails_at_train_begin(tmp_path):
    counter = BatchCounter()
    checkpoint = ModelCheckpoint(str(tmp_path / "w{epoch}-{val_loss}.w"), save_weights_only=True, save_freq=2)
    with pytest.raises(KeyError, match=r"'val_loss' \(batch logs hold no validation metrics.*"
                                       r"Keys fit\(\) provides: epoch, batch, loss\."):
        _fit([counter, checkpoint])
    assert counter.batches == 0


def test_valid_and_unsure_placeholders_are_let_through_and_filled(tmp_path):
    template = str(tmp_path / "w{epoch:02d}-{loss:.3f}-{mae:.3f}-{val_loss:.3f}-{val_mae:.3f}-{custom_score:.0f}.w")
    recorder = []

    class Logs(Callback):
        def on_epoch_end(self, epoch, logs=None):
            recorder.append(dict(logs))

    _fit([AddsLog(), ModelCheckpoint(template, save_weights_only=True), Logs()], metrics=["mae"])
    expected = [f"w{epoch + 1:02d}-{logs['loss']:.3f}-{logs['mae']:.3f}-{logs['val_loss']:.3f}-"
                f"{logs['val_mae']:.3f}-{logs['custom_score']:.0f}.w" for epoch, logs in enumerate(recorder)]
    assert len(expected) == 2 and sorted(os.listdir(tmp_path)) == sorted(expected)


def test_a_filepath_under_a_regular_file_fails_at_train_begin_naming_it(tmp_path):
    a_file = tmp_path / "results.txt"
    a_file.write_text("keep me")
    counter = BatchCounter()
    checkpoint = ModelCheckpoint(str(a_file / "w{epoch:02d}.w"), save_weights_only=True)
    with pytest.raises(NotADirectoryError, match=re.escape(f"'{a_file}' cannot hold files: it is an existing file")):
        _fit([counter, checkpoint])
    nested = ModelCheckpoint(str(a_file / "sub" / "best.keras"))
    with pytest.raises(NotADirectoryError, match=re.escape(f"its parent '{a_file}' is an existing file")):
        _fit([counter, nested])
    assert counter.batches == 0 and a_file.read_text() == "keep me"


def test_backup_dir_that_is_a_regular_file_is_refused_at_construction_naming_it(tmp_path):
    a_file = tmp_path / "backup"
    a_file.write_text("x")
    with pytest.raises(NotADirectoryError, match=re.escape(f"backup_dir '{a_file}' cannot hold files: it is an "
                                                           f"existing file")):
        BackupAndRestore(backup_dir=str(a_file))
