"""CSVLogger (epoch results streamed to a CSV file by the chief) and LambdaCallback
(a callback built from plain functions), with Keras's columns and hook names."""
from __future__ import annotations

import collections.abc
import csv
import os
from typing import Any, Callable, Optional

import numpy as np

from torchstrategy.keras.callbacks.base import Callback, _is_chief, _to_python

_HOOK_NAMES = frozenset(
    name for name in vars(Callback) if name.startswith("on_")
)


def _csv_value(value: Any) -> Any:
    value = _to_python(value)
    if isinstance(value, str):
        return value
    if hasattr(value, "tolist") and not (isinstance(value, np.ndarray) and value.ndim == 0):
        value = value.tolist()  # tensors and arrays with several elements
    if isinstance(value, collections.abc.Iterable):
        return '"[%s]"' % ", ".join(map(str, value))
    return value


class CSVLogger(Callback):
    """Streams each epoch's logs to a CSV file: an 'epoch' column, then the log names sorted.

    `append=True` continues an existing file (its header is kept). The file is flushed every
    epoch, lines end with '\\r\\n' (the csv module's Excel dialect, as Keras), a value missing in
    some epoch is written 'NA', and only the chief process writes.

    >>> logger = CSVLogger("training.log", separator=",", append=False)
    """

    def __init__(self, filename: str | os.PathLike, separator: str = ",", append: bool = False) -> None:
        super().__init__()
        if not isinstance(separator, str) or len(separator) != 1:
            raise ValueError(f"CSVLogger separator must be a single character, got {separator!r}.")
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer: Optional[csv.DictWriter] = None
        self.keys: Optional[list] = None
        self.append_header = True
        self.csv_file: Any = None

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self._close()
        self.keys = None
        if not _is_chief(self.model):
            return
        mode = "w"
        if self.append:
            mode = "a"
            if os.path.exists(self.filename):
                with open(self.filename, "r", newline="") as existing:
                    self.append_header = not existing.readline()
        directory = os.path.dirname(self.filename)
        if directory:
            os.makedirs(directory, exist_ok=True)
        self.csv_file = open(self.filename, mode, newline="")

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        if self.csv_file is None:
            return  # not the chief (or training never began)
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            # Validation may skip the first epochs (validation_freq): reserve its columns.
            for name in getattr(self.model, "metrics_names", None) or ():
                if name.startswith("val_") and name not in self.keys:
                    self.keys.append(name)
        if self.writer is None:
            dialect = type("_Dialect", (csv.excel,), {"delimiter": self.sep})
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, dialect=dialect)
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, _csv_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        self._close()

    def _close(self) -> None:
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = None
        self.writer = None


class LambdaCallback(Callback):
    """A callback made of plain functions, called with positional arguments:
    epoch hooks get `(epoch, logs)`, batch hooks `(batch, logs)`, begin/end hooks `(logs)`.

    Any other hook (`on_test_end=...`, `on_predict_batch_end=...`) may be passed by name.

    >>> losses = []
    >>> record = LambdaCallback(on_epoch_end=lambda epoch, logs: losses.append(logs["loss"]))
    >>> record.on_epoch_end(0, {"loss": 0.25}); losses
    [0.25]
    """

    def __init__(
        self,
        on_epoch_begin: Optional[Callable] = None,
        on_epoch_end: Optional[Callable] = None,
        on_train_begin: Optional[Callable] = None,
        on_train_end: Optional[Callable] = None,
        on_train_batch_begin: Optional[Callable] = None,
        on_train_batch_end: Optional[Callable] = None,
        **kwargs: Callable,
    ) -> None:
        super().__init__()
        hooks = dict(  # any other hook (on_batch_end, on_test_begin, ...) comes through kwargs, as in Keras 3
            on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_train_begin=on_train_begin,
            on_train_end=on_train_end, on_train_batch_begin=on_train_batch_begin,
            on_train_batch_end=on_train_batch_end, **kwargs,
        )
        for name, function in hooks.items():
            if name not in _HOOK_NAMES:
                raise TypeError(
                    f"LambdaCallback got unknown hook {name!r}. Valid hooks: {sorted(_HOOK_NAMES)}."
                )
            if function is None:
                continue
            if not callable(function):
                raise TypeError(f"LambdaCallback {name} must be callable, got {function!r}.")
            setattr(self, name, function)
