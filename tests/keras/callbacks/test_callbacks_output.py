"""Tests of what callbacks write: Progbar/ProgbarLogger text, CSVLogger files, TensorBoard event
files, and that only the chief writes any of it."""
from __future__ import annotations

import csv
import re

import pytest
from lightning_utilities.core.imports import module_available

from torchstrategy.keras.callbacks import (
    CallbackList,
    CSVLogger,
    EarlyStopping,
    LambdaCallback,
    Progbar,
    ProgbarLogger,
    TensorBoard,
)
from torchstrategy.keras.callbacks.progbar import _format_eta

TIME = r"\d+(?:s|ms|us)"  # a duration as Keras prints it, e.g. 66ms


def _bar(current, target, width=20):  # Keras 3.15 (TF 2.21): ProgbarLogger draws Progbar(width=20)
    """The Keras bar drawn independently: '=' * (filled-1) + '>' while running, all '=' when done."""
    filled = int(width * current / target)
    head = "" if filled == 0 else "=" * (filled - 1) + (">" if current < target else "=")
    return "%d/%d [" % (current, target) + head + "." * (width - filled) + "]"


# ---------------------------------------------------------------- Progbar
def test_progbar_live_updates_on_a_terminal(tty_stdout):
    tty = tty_stdout()
    bar = Progbar(4, interval=0.0)
    losses = [4.0, 3.0, 2.0, 1.0]
    for step, loss in enumerate(losses, start=1):
        bar.update(step, [("loss", loss)])
    frames = tty.getvalue().split("\r")[1:]
    assert len(frames) == 4
    for step, frame in enumerate(frames[:3], start=1):
        running_mean = sum(losses[:step]) / step
        pattern = re.escape(_bar(step, 4)) + r" - ETA: \d+s - loss: " + re.escape("%.4f" % running_mean)
        assert re.match(pattern, frame.rstrip("\b ")), frame
    final = re.escape(_bar(4, 4)) + rf" - \d+s {TIME}/step - loss: 2\.5000\n$"
    assert re.match(final, frames[3]), frames[3]


def test_progbar_weights_values_by_steps_and_keeps_stateful_ones(tty_stdout):
    tty = tty_stdout()
    bar = Progbar(3, interval=0.0, stateful_metrics=["lr"])
    bar.update(1, [("loss", 4.0), ("lr", 0.5)])
    bar.update(3, [("loss", 2.0), ("lr", 0.25)])  # two steps at 2.0 -> (4 + 2*2) / 3
    last = tty.getvalue().split("\r")[-1]
    assert "loss: %.4f" % ((4.0 + 2 * 2.0) / 3) in last
    assert "lr: 0.2500" in last


def test_progbar_small_values_use_scientific_format(capsys):
    bar = Progbar(1)
    bar.update(1, [("loss", 1e-4)])
    assert "loss: 1.0000e-04" in capsys.readouterr().out


def test_progbar_off_terminal_writes_only_the_finished_line(capsys):
    bar = Progbar(3, interval=0.0)
    for step in (1, 2, 3):
        bar.update(step, [("loss", 1.0)])
    out = capsys.readouterr().out
    assert "\r" not in out and "ETA" not in out
    assert re.fullmatch(re.escape(_bar(3, 3)) + rf" - \d+s {TIME}/step - loss: 1\.0000\n", out), out


def test_progbar_verbose_two_and_zero(capsys):
    bar = Progbar(5, verbose=2)
    for step in range(1, 6):
        bar.update(step, [("loss", 0.5)])
    out = capsys.readouterr().out
    assert re.fullmatch(rf"5/5 - \d+s - loss: 0\.5000 - {TIME}/epoch - {TIME}/step\n", out), out
    silent = Progbar(5, verbose=0)
    for step in range(1, 6):
        silent.update(step, [("loss", 0.5)])
    assert capsys.readouterr().out == ""


def test_progbar_unknown_target_counts_steps(tty_stdout):
    tty = tty_stdout()
    bar = Progbar(None, interval=0.0)
    bar.update(3, [("loss", 1.0)])
    assert re.match(rf"\r      3/Unknown - \d+s {TIME}/step - loss: 1\.0000", tty.getvalue())


def test_progbar_eta_format_and_bad_arguments():
    assert _format_eta(5) == "5s"
    assert _format_eta(62) == "1:02"
    assert _format_eta(3725) == "1:02:05"
    with pytest.raises(ValueError, match="target must be None"):
        Progbar(-1)
    with pytest.raises(ValueError, match="verbose must be 0, 1 or 2"):
        Progbar(10, verbose=3)


# ---------------------------------------------------------------- ProgbarLogger
EPOCH_LOGS = [
    {"loss": 0.5, "accuracy": 0.25, "val_loss": 0.75},
    {"loss": 0.25, "accuracy": 0.5, "val_loss": 0.625},
]
BATCH_LOGS = [[{"loss": 1.0, "accuracy": 0.0}, {"loss": 0.5, "accuracy": 0.25}]] * 2


def _summary(logs):
    return re.escape(_bar(2, 2)) + rf" - \d+s {TIME}/step" + "".join(
        re.escape(" - %s: %.4f" % (key, value)) for key, value in logs.items()
    )


def test_progbar_logger_verbose_one_on_a_terminal(make_model, fit, tty_stdout):
    tty = tty_stdout()
    fit(make_model(), [], EPOCH_LOGS, steps=2, batch_logs=BATCH_LOGS, verbose=1)
    out = tty.getvalue()
    assert out.startswith("Epoch 1/2\n") and "\nEpoch 2/2\n" in out
    # The first step of each epoch is always drawn, with an ETA and the step's logs as given.
    assert re.search(re.escape("\r" + _bar(1, 2)) + r" - ETA: \d+s - loss: 1\.0000 - accuracy: 0\.0000", out)
    for logs in EPOCH_LOGS:  # the epoch line shows the epoch logs as passed, val_* included
        assert re.search(_summary(logs) + r" *\n", out), out


def test_progbar_logger_verbose_one_off_terminal(make_model, fit, capsys):
    fit(make_model(), [], EPOCH_LOGS, steps=2, batch_logs=BATCH_LOGS, verbose="auto")
    lines = capsys.readouterr().out.split("\n")
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and lines[4] == ""
    assert re.fullmatch(_summary(EPOCH_LOGS[0]), lines[1]), lines[1]
    assert re.fullmatch(_summary(EPOCH_LOGS[1]), lines[3]), lines[3]


def test_progbar_logger_verbose_two_is_one_line_per_epoch(make_model, fit, capsys):
    fit(make_model(), [], EPOCH_LOGS, steps=2, batch_logs=BATCH_LOGS, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2"
    pattern = r"2/2 - \d+s - loss: 0\.5000 - accuracy: 0\.2500 - val_loss: 0\.7500 - {t}/epoch - {t}/step"
    assert re.fullmatch(pattern.format(t=TIME), lines[1]), lines[1]


def test_progbar_logger_silent_with_verbose_zero_and_no_header_for_one_epoch(make_model, fit, capsys):
    fit(make_model(), [ProgbarLogger()], EPOCH_LOGS, steps=2, verbose=0)
    assert capsys.readouterr().out == ""
    fit(make_model(), [], EPOCH_LOGS[:1], steps=2, batch_logs=BATCH_LOGS, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch" not in out and re.fullmatch(_summary(EPOCH_LOGS[0]) + "\n", out), out


def test_progbar_logger_unknown_steps_learns_the_count(make_model, fit, tty_stdout):
    tty = tty_stdout()
    fit(make_model(), [], EPOCH_LOGS, steps=None, batch_logs=BATCH_LOGS, verbose=1, actual_steps=2)
    out = tty.getvalue()
    assert re.search(rf"\r      1/Unknown - \d+s {TIME}/step - loss: 1\.0000", out)
    for logs in EPOCH_LOGS:
        assert re.search(_summary(logs), out)
    assert "\r" + _bar(1, 2) in out  # second epoch knows the target from the first


def test_progbar_logger_keeps_validation_inside_fit_silent(make_model, capsys):
    callbacks = CallbackList([], add_progbar=True, model=make_model(), verbose=1, epochs=1, steps=2)
    callbacks.on_train_begin()
    callbacks.on_epoch_begin(0)
    callbacks.on_test_begin()
    callbacks.on_test_batch_end(0, {"loss": 9.0})
    callbacks.on_test_end({"loss": 9.0})
    assert capsys.readouterr().out == ""
    callbacks.on_epoch_end(0, {"loss": 1.0, "val_loss": 9.0})
    callbacks.on_train_end()
    epoch_line = capsys.readouterr().out
    expected = re.escape(_bar(2, 2)) + rf" - \d+s {TIME}/step - loss: 1\.0000 - val_loss: 9\.0000\n"
    assert re.fullmatch(expected, epoch_line), epoch_line
    # evaluate() alone shows its own bar
    callbacks.on_test_begin()
    callbacks.on_test_batch_end(0, {"loss": 3.0})
    callbacks.on_test_batch_end(1, {"loss": 2.0})
    callbacks.on_test_end({"loss": 2.0})
    out = capsys.readouterr().out
    assert re.fullmatch(re.escape(_bar(2, 2)) + rf" - \d+s {TIME}/step - loss: 2\.0000\n", out), out


def test_progbar_logger_rejects_unknown_count_mode():
    with pytest.raises(ValueError, match="Unknown `count_mode`: 'epochs'"):
        ProgbarLogger(count_mode="epochs")


# ---------------------------------------------------------------- CSVLogger
def test_csv_logger_writes_keras_columns_and_flushes_each_epoch(make_model, fit, tmp_path):
    path = tmp_path / "run" / "log.csv"
    lines_seen_after_epoch = []
    watcher = LambdaCallback(on_epoch_end=lambda epoch, logs: lines_seen_after_epoch.append(
        len(path.read_text().splitlines())))
    epoch_logs = [
        {"loss": 2.0, "val_loss": 2.5, "accuracy": 0.125, "val_accuracy": 0.1},
        {"loss": 1.0, "val_loss": 1.5, "accuracy": 0.5, "val_accuracy": 0.375},
    ]
    fit(make_model(), [CSVLogger(path), watcher], epoch_logs)
    expected = "epoch,accuracy,loss,val_accuracy,val_loss\r\n" + "".join(
        f"{epoch},{logs['accuracy']!r},{logs['loss']!r},{logs['val_accuracy']!r},{logs['val_loss']!r}\r\n"
        for epoch, logs in enumerate(epoch_logs)
    )
    assert path.read_bytes().decode() == expected
    assert lines_seen_after_epoch == [2, 3]


def test_csv_logger_append_separator_and_missing_values(make_model, fit, tmp_path):
    path = tmp_path / "log.csv"
    model = make_model()
    model.metrics_names = ["loss", "val_loss"]  # validation expected although epoch 0 has none
    fit(model, [CSVLogger(str(path), separator=";")], [{"loss": 3.0}, {"loss": 2.0, "val_loss": 2.5}])
    fit(model, [CSVLogger(str(path), separator=";", append=True)], [{"loss": 1.0, "val_loss": 1.5}])
    rows = list(csv.reader(path.open(newline=""), delimiter=";"))
    assert rows == [
        ["epoch", "loss", "val_loss"],
        ["0", "3.0", "NA"],
        ["1", "2.0", "2.5"],
        ["0", "1.0", "1.5"],
    ]
    with pytest.raises(ValueError, match="separator must be a single character"):
        CSVLogger(path, separator="::")


# ---------------------------------------------------------------- chief only
def test_non_chief_writes_nothing(make_model, fit, tty_stdout, tmp_path):
    tty = tty_stdout()
    path = tmp_path / "log.csv"
    model = make_model(is_chief=False)
    callbacks = [CSVLogger(path), EarlyStopping(monitor="loss", patience=0, verbose=1, restore_best_weights=True)]
    result = fit(model, callbacks, [{"loss": 1.0}, {"loss": 2.0}], batch_logs=BATCH_LOGS, verbose=1)
    assert tty.getvalue() == ""
    assert not path.exists()
    assert callbacks[1].stopped_epoch == 1 and len(result["history"].epoch) == 2  # it still acts
    chief = make_model(is_chief=True)
    fit(chief, [CSVLogger(path)], [{"loss": 1.0}, {"loss": 2.0}], batch_logs=BATCH_LOGS, verbose=1)
    assert "Epoch 1/2" in tty.getvalue() and path.exists()


# ---------------------------------------------------------------- TensorBoard
@pytest.mark.skipif(module_available("tensorboard"), reason="tensorboard is installed")
def test_tensorboard_without_package_says_how_to_install():
    with pytest.raises(ImportError, match=r"pip install torchstrategy\[tensorboard\]"):
        TensorBoard(log_dir="unused")


def test_tensorboard_writes_train_and_validation_scalars(make_model, fit, tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.plugin_event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    epoch_logs = [{"loss": 2.0, "val_loss": 2.5}, {"loss": 1.0, "val_loss": 1.5}]
    batch_logs = [[{"loss": 3.0}, {"loss": 2.0}], [{"loss": 1.5}, {"loss": 0.5}]]
    model = make_model(learning_rate=0.05)
    fit(model, [TensorBoard(log_dir=tmp_path, update_freq="batch", histogram_freq=1)], epoch_logs,
        batch_logs=batch_logs)

    def scalars(subdir, tag):
        # Keras 3 writes TF 2 summaries (tensors with plugin metadata), read as TensorBoard 2 does
        events = EventAccumulator(str(tmp_path / subdir), size_guidance={"tensors": 0}).Reload()
        assert events.SummaryMetadata(tag).plugin_data.plugin_name == "scalars"
        return [(event.step, float(tensor_util.make_ndarray(event.tensor_proto))) for event in events.Tensors(tag)], events

    train, train_events = scalars("train", "epoch_loss")
    assert train == [(0, 2.0), (1, 1.0)]
    validation, _ = scalars("validation", "epoch_loss")
    assert validation == [(0, 2.5), (1, 1.5)]
    learning_rate, _ = scalars("train", "epoch_learning_rate")
    assert [step for step, _ in learning_rate] == [0, 1]
    assert learning_rate[0][1] == pytest.approx(0.05)
    batches, _ = scalars("train", "batch_loss")
    assert batches == [(1, 3.0), (2, 2.0), (3, 1.5), (4, 0.5)]
    # one histogram per entry of get_weights() (kernel, bias)
    histograms = [tag for tag in train_events.Tags()["tensors"]
                  if train_events.SummaryMetadata(tag).plugin_data.plugin_name == "histograms"]
    assert sorted(histograms) == ["weight_0/histogram", "weight_1/histogram"]

    quiet_dir = tmp_path / "worker"
    fit(make_model(is_chief=False), [TensorBoard(log_dir=quiet_dir)], epoch_logs)
    assert not quiet_dir.exists()
