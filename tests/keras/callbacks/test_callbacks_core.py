"""Tests of Callback, CallbackList, History and LambdaCallback: hook order, params, aliases, logs."""
from __future__ import annotations

import pytest
import torch

from torchstrategy.keras.callbacks import (
    Callback,
    CallbackList,
    EarlyStopping,
    History,
    LambdaCallback,
    ProgbarLogger,
    TerminateOnNaN,
)
from torchstrategy.keras.callbacks.base import _is_chief


class Recorder(Callback):
    """Records (hook, index, sorted log keys) for every hook it receives."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = []

    def _record(self, name, index, logs):
        self.calls.append((name, index, tuple(sorted(logs or {}))))

    def on_train_begin(self, logs=None):
        self._record("train_begin", None, logs)

    def on_train_end(self, logs=None):
        self._record("train_end", None, logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._record("epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._record("epoch_end", epoch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._record("batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._record("batch_end", batch, logs)


def test_callback_defaults_and_setters():
    callback = Callback()
    assert callback.model is None and callback.params is None
    callback.set_params({"epochs": 3})
    callback.set_model("the model")
    assert callback.params == {"epochs": 3} and callback.model == "the model"


def test_hooks_run_in_keras_fit_order(make_model, fit):
    recorder = Recorder()
    fit(make_model(), [recorder], [{"loss": 1.0, "val_loss": 2.0}] * 2, actual_steps=2)
    expected = [("train_begin", None, ())]
    for epoch in range(2):
        expected.append(("epoch_begin", epoch, ()))
        for step in range(2):
            expected += [("batch_begin", step, ()), ("batch_end", step, ("loss",))]
        expected.append(("epoch_end", epoch, ("loss", "val_loss")))
    expected.append(("train_end", None, ()))
    assert recorder.calls == expected


def test_on_batch_aliases_receive_train_batch_hooks():
    seen = []

    class OldStyle(Callback):
        def on_batch_begin(self, batch, logs=None):
            seen.append(("begin", batch))

        def on_batch_end(self, batch, logs=None):
            seen.append(("end", batch, logs["loss"]))

    callbacks = CallbackList([OldStyle()])
    callbacks.on_train_batch_begin(0)
    callbacks.on_train_batch_end(0, {"loss": 0.5})
    callbacks.on_batch_end(1, {"loss": 0.25})  # the old name on the list means a training batch
    assert seen == [("begin", 0), ("end", 0, 0.5), ("end", 1, 0.25)]


def test_callback_list_adds_history_and_progbar_once(make_model):
    model = make_model()
    callbacks = CallbackList([EarlyStopping()], add_history=True, add_progbar=True, model=model,
                             verbose=1, epochs=3, steps=10)
    kinds = [type(cb) for cb in callbacks]
    assert kinds == [EarlyStopping, History, ProgbarLogger]
    assert model.history is callbacks.callbacks[1]
    for callback in callbacks:
        assert callback.model is model
        assert callback.params == {"verbose": 1, "epochs": 3, "steps": 10}
    history, progbar = History(), ProgbarLogger()
    again = CallbackList([history, progbar], add_history=True, add_progbar=True)
    assert again.callbacks == [history, progbar]
    assert CallbackList(None).callbacks == []


def test_callback_list_append_sets_model_and_params(make_model):
    model = make_model()
    callbacks = CallbackList([], model=model, verbose=0, epochs=1, steps=1)
    late = Recorder()
    callbacks.append(late)
    assert list(callbacks) == [late]
    assert late.model is model and late.params == {"verbose": 0, "epochs": 1, "steps": 1}


def test_callback_list_rejects_non_callbacks():
    with pytest.raises(TypeError, match="must be a keras.callbacks.Callback instance"):
        CallbackList([lambda epoch, logs: None])
    with pytest.raises(TypeError, match="callbacks must be a list"):
        CallbackList(3)


def test_tensor_logs_become_floats_and_dict_is_shared():
    received = []

    class AddKey(Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["extra"] = 7.0

    class Check(Callback):
        def on_train_batch_end(self, batch, logs=None):
            received.append(logs["loss"])

    history = History()
    callbacks = CallbackList([AddKey(), Check(), history])
    loss = torch.tensor(0.75, dtype=torch.float32)
    callbacks.on_train_begin()
    callbacks.on_train_batch_end(0, {"loss": loss})
    callbacks.on_epoch_end(0, {"loss": torch.tensor([1.5])})
    assert received == [pytest.approx(loss.item())] and type(received[0]) is float
    assert history.history == {"loss": [1.5], "extra": [7.0]}
    with pytest.raises(TypeError, match="logs must be a dict"):
        callbacks.on_epoch_end(1, [("loss", 1.0)])


def test_history_records_epoch_logs(make_model, fit):
    epoch_logs = [{"loss": 2.0, "accuracy": 0.1, "val_loss": 2.5}, {"loss": 1.0, "accuracy": 0.4, "val_loss": 1.5}]
    model = make_model()
    result = fit(model, [], epoch_logs)
    history = result["history"]
    assert isinstance(history, History) and model.history is history
    assert history.epoch == [0, 1]
    assert history.history == {key: [logs[key] for logs in epoch_logs] for key in epoch_logs[0]}


def test_lambda_callback_calls_functions_positionally():
    events = []
    callback = LambdaCallback(
        on_epoch_begin=lambda epoch, logs: events.append(("epoch_begin", epoch)),
        on_epoch_end=lambda epoch, logs: events.append(("epoch_end", epoch, logs["loss"])),
        on_batch_end=lambda batch, logs: events.append(("batch_end", batch)),
        on_train_begin=lambda logs: events.append(("train_begin",)),
        on_test_end=lambda logs: events.append(("test_end", logs["loss"])),
    )
    callbacks = CallbackList([callback])
    callbacks.on_train_begin()
    callbacks.on_epoch_begin(0)
    callbacks.on_train_batch_end(3, {"loss": 1.0})
    callbacks.on_epoch_end(0, {"loss": 0.5})
    callbacks.on_test_end({"loss": 0.25})
    callbacks.on_train_end()  # not given: the base class does nothing
    assert events == [
        ("train_begin",), ("epoch_begin", 0), ("batch_end", 3), ("epoch_end", 0, 0.5), ("test_end", 0.25),
    ]


def test_lambda_callback_rejects_bad_hooks():
    with pytest.raises(TypeError, match="unknown hook 'on_epoch_ends'"):
        LambdaCallback(on_epoch_ends=lambda epoch, logs: None)
    with pytest.raises(TypeError, match="on_train_end must be callable"):
        LambdaCallback(on_train_end="print")


def test_batch_hook_detection_lets_the_loop_skip_syncs():
    assert not CallbackList([History(), EarlyStopping()])._should_call_train_batch_hooks
    assert CallbackList([TerminateOnNaN()])._should_call_train_batch_hooks
    assert CallbackList([LambdaCallback(on_batch_end=lambda b, l: None)])._should_call_train_batch_hooks
    quiet = CallbackList([], add_progbar=True, verbose=2, epochs=1, steps=5)
    assert not quiet._should_call_train_batch_hooks
    live = CallbackList([], add_progbar=True, verbose=1, epochs=1, steps=5)
    assert live._should_call_train_batch_hooks


def test_is_chief_reads_the_strategy_flag(make_model):
    assert _is_chief(make_model()) is True  # no distribute_strategy attribute
    assert _is_chief(make_model(is_chief=True)) is True
    assert _is_chief(make_model(is_chief=False)) is False
    model = make_model()
    model.distribute_strategy = None
    assert _is_chief(model) is True
