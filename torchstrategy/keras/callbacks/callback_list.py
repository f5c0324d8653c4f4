"""CallbackList: the one object the training loop talks to; it adds History/ProgbarLogger when
asked, hands every callback the model and params, and fans each hook out in order."""
from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

from torchstrategy.keras.callbacks.base import Callback, History, _pythonify_logs
from torchstrategy.keras.callbacks.progbar import ProgbarLogger


def _flatten_callbacks(callbacks: Any) -> list:
    if callbacks is None:
        return []
    if isinstance(callbacks, Callback):
        return [callbacks]
    if isinstance(callbacks, CallbackList):
        return list(callbacks.callbacks)
    if not isinstance(callbacks, Iterable):
        raise TypeError(f"callbacks must be a list of keras.callbacks.Callback, got {type(callbacks).__name__}.")
    flat = []
    for item in callbacks:
        flat.extend(_flatten_callbacks(item) if isinstance(item, (list, tuple)) else [item])
    for item in flat:
        if not isinstance(item, Callback):
            raise TypeError(
                f"Every callback must be a keras.callbacks.Callback instance, got {item!r}. "
                "Subclass Callback or wrap plain functions in LambdaCallback."
            )
    return flat


class CallbackList(Callback):
    """A list of callbacks that is itself a callback: each hook calls every member in order.

    `add_history` / `add_progbar` append a `History` / `ProgbarLogger` when none is present;
    `**params` (fit() passes `verbose`, `epochs`, `steps`) go to every callback's `set_params`.
    Log values that are one-element tensors are turned into Python floats before the callbacks
    see them; the same dict is shared, so a callback that adds a key (ReduceLROnPlateau adds
    'learning_rate') is seen by the ones after it and by History.

    >>> history = History()
    >>> callbacks = CallbackList([history], epochs=1, steps=2, verbose=0)
    >>> callbacks.on_epoch_end(0, {"loss": 1.5}); history.history
    {'loss': [1.5]}
    """

    def __init__(
        self,
        callbacks: Optional[Iterable[Callback]] = None,
        add_history: bool = False,
        add_progbar: bool = False,
        model: Any = None,
        **params: Any,
    ) -> None:
        super().__init__()
        self.callbacks: list[Callback] = _flatten_callbacks(callbacks)
        self._history: Optional[History] = next((cb for cb in self.callbacks if isinstance(cb, History)), None)
        self._progbar = next((cb for cb in self.callbacks if isinstance(cb, ProgbarLogger)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger()
            self.callbacks.append(self._progbar)
        self.params = {}
        self._progress: Any = None
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, callback: Callback) -> None:
        """Adds one more callback at the end."""
        for new in _flatten_callbacks([callback]):
            self.callbacks.append(new)
            if self.model is not None:
                new.set_model(self.model)
            if self.params:
                new.set_params(self.params)

    def __iter__(self) -> Iterator[Callback]:
        return iter(self.callbacks)

    def set_params(self, params: dict) -> None:
        self.params = params
        for callback in self.callbacks:
            callback.set_params(params)

    def set_model(self, model: Any) -> None:
        self.model = model
        if self._history is not None:
            model.history = self._history
        for callback in self.callbacks:
            callback.set_model(model)

    def set_training_state(self, state: Any) -> None:
        self.training_state = state
        for callback in self.callbacks:
            callback.set_training_state(state)

    @property
    def only_loggers(self) -> bool:
        """True when every member is a plain History or ProgbarLogger, which never set `model.stop_training`."""
        return all(type(cb) in (History, ProgbarLogger) for cb in self.callbacks)

    # Whether any member listens to per-step hooks: the loop can skip the host sync otherwise.
    @property
    def _should_call_train_batch_hooks(self) -> bool:
        return any(cb._implements_train_batch_hooks() for cb in self.callbacks)

    @property
    def _should_call_test_batch_hooks(self) -> bool:
        return any(cb._implements_test_batch_hooks() for cb in self.callbacks)

    @property
    def _should_call_predict_batch_hooks(self) -> bool:
        return any(cb._implements_predict_batch_hooks() for cb in self.callbacks)

    def report_to(self, progress: Any) -> None:
        """Tells `progress` (a replica's progress beacon, distribute/parts/progress.py) which callback runs, so
        that a replica blocked in one is named with it; an inactive beacon is not told."""
        self._progress = progress if progress.active else None

    def _call(self, hook: str, *args: Any, logs: Optional[dict] = None) -> None:
        logs = _pythonify_logs(logs)
        progress = self._progress
        if progress is None:
            for callback in self.callbacks:
                getattr(callback, hook)(*args, logs)
            return
        outer = progress.activity  # a callback may run another loop (evaluate) whose callbacks nest in it
        try:
            for callback in self.callbacks:
                progress.activity = (hook, callback)
                getattr(callback, hook)(*args, logs)
        finally:
            progress.activity = outer

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self._call("on_train_begin", logs=logs)

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        self._call("on_train_end", logs=logs)

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._call("on_epoch_begin", epoch, logs=logs)

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._call("on_epoch_end", epoch, logs=logs)

    def on_train_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None:
        self._call("on_train_batch_begin", batch, logs=logs)

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        self._call("on_train_batch_end", batch, logs=logs)

    # As in Keras 2, the old names on a CallbackList mean the training-batch hooks.
    def on_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None:
        self.on_train_batch_begin(batch, logs)

    def on_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        self.on_train_batch_end(batch, logs)

    def on_test_begin(self, logs: Optional[dict] = None) -> None:
        self._call("on_test_begin", logs=logs)

    def on_test_end(self, logs: Optional[dict] = None) -> None:
        self._call("on_test_end", logs=logs)

    def on_test_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None:
        self._call("on_test_batch_begin", batch, logs=logs)

    def on_test_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        self._call("on_test_batch_end", batch, logs=logs)

    def on_predict_begin(self, logs: Optional[dict] = None) -> None:
        self._call("on_predict_begin", logs=logs)

    def on_predict_end(self, logs: Optional[dict] = None) -> None:
        self._call("on_predict_end", logs=logs)

    def on_predict_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None:
        self._call("on_predict_batch_begin", batch, logs=logs)

    def on_predict_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        # Prediction outputs stay tensors: they are data, not metrics.
        logs = logs if logs is not None else {}
        for callback in self.callbacks:
            callback.on_predict_batch_end(batch, logs)
