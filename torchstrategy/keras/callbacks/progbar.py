"""Keras-style console progress: the `Progbar` text bar (keras.utils.Progbar) and the
`ProgbarLogger` callback fit()/evaluate()/predict() use to show it, on the chief only."""
from __future__ import annotations

import math
import sys
import time
from typing import Any, Iterable, Optional

from torchstrategy.keras.callbacks.base import Callback, _is_chief, _print_msg


def _is_interactive_stream(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        if isatty is not None and isatty():
            return True
    except ValueError:  # a closed stream
        return False
    return "ipykernel" in sys.modules


def _format_eta(seconds: float) -> str:
    if seconds > 3600:
        return "%d:%02d:%02d" % (seconds // 3600, (seconds % 3600) // 60, seconds % 60)
    if seconds > 60:
        return "%d:%02d" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


def _format_duration(seconds: float, unit_name: str) -> str:
    """' 66ms/step' style: whole seconds, milliseconds or microseconds per unit."""
    if seconds >= 1 or seconds == 0:
        return " %.0fs/%s" % (seconds, unit_name)
    if seconds >= 1e-3:
        return " %.0fms/%s" % (seconds * 1e3, unit_name)
    return " %.0fus/%s" % (seconds * 1e6, unit_name)


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _format_value(value: float) -> str:
    return " %.4f" % value if abs(value) > 1e-3 else " %.4e" % value


class _AllBut:
    """Names shown as given (not averaged): every name except the stateless ones."""

    def __init__(self, stateless: set) -> None:
        self.stateless = stateless

    def __contains__(self, name: object) -> bool:
        return name not in self.stateless

    def update(self, names: Iterable[str]) -> None:
        self.stateless.difference_update(names)


class Progbar:
    """A text progress bar, as `keras.utils.Progbar`.

    verbose=1 draws `12/196 [=>......] - ETA: 1:02 - loss: 2.3026` and finishes with
    `196/196 [======] - 13s 66ms/step - loss: ...`. On a terminal or in a notebook the bar is
    redrawn in place ('\\r'); on any other stream (a log file, a pipe) only the finished line is
    written, so logs stay readable. verbose=2 writes one line when the bar finishes; 0 nothing.
    Values of names in `stateful_metrics` are shown as given, others averaged over steps.

    >>> bar = Progbar(3, verbose=0)
    >>> for step in range(1, 4):
    ...     bar.update(step, [("loss", 1.0 / step)])
    """

    def __init__(
        self,
        target: Optional[int],
        width: int = 20,
        verbose: int = 1,
        interval: float = 0.05,
        stateful_metrics: Optional[Iterable[str]] = None,
        stateless_metrics: Optional[Iterable[str]] = None,
        unit_name: str = "step",
    ) -> None:
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError("Only one of `stateful_metrics` or `stateless_metrics` can be provided. "
                             "`stateful_metrics` is used to make metrics stateless by default (with an exclusion "
                             "list), while `stateless_metrics` is used to make metrics stateful by default (with "
                             f"an inclusion list). Received: stateful_metrics={stateful_metrics} and "
                             f"stateless_metrics={stateless_metrics}")
        if target is not None and target < 0:
            raise ValueError(f"Progbar target must be None (unknown) or >= 0, got {target}.")
        if verbose not in (0, 1, 2):
            raise ValueError(f"Progbar verbose must be 0, 1 or 2, got {verbose!r}.")
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = set(stateful_metrics or ())
        self.stateless_metrics = None if stateless_metrics is None else set(stateless_metrics)
        if self.stateless_metrics is not None:  # every name but these is shown as given
            self.stateful_metrics = _AllBut(self.stateless_metrics)  # type: ignore[assignment]
        self._dynamic_display = _is_interactive_stream(sys.stdout)
        self._total_width = 0
        self._seen_so_far = 0
        self._values: dict[str, list] = {}
        self._values_order: list[str] = []
        self._start = time.time()
        self._last_update = 0.0
        self._time_after_first_step: Optional[float] = None

    def update(self, current: int, values: Optional[list] = None, finalize: Optional[bool] = None) -> None:
        """Moves the bar to step `current`; `values` is a list of `(name, value)` pairs.

        `finalize` defaults to `current >= target`; the finished line is written then.
        """
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        self._accumulate(current, values or [])
        self._seen_so_far = current
        now = time.time()
        if self.verbose == 1:
            self._draw_verbose_one(current, now, finalize)
        elif self.verbose == 2 and finalize:
            self._draw_verbose_two(current, now)
        self._last_update = now

    def add(self, n: int, values: Optional[list] = None) -> None:
        """Advances the bar by `n` steps."""
        self.update(self._seen_so_far + n, values)

    def _accumulate(self, current: int, values: list) -> None:
        for name, value in values:
            if name not in self._values_order:
                self._values_order.append(name)
            if name in self.stateful_metrics or not _is_number(value):
                self._values[name] = [value, 1]
                continue
            # Weight by the steps since the last update (at least 1, for repeated calls).
            weight = max(current - self._seen_so_far, 1)
            total = self._values.setdefault(name, [0.0, 0])
            total[0] += value * weight
            total[1] += weight

    def _metrics_text(self) -> str:
        text = ""
        for name in self._values_order:
            total, count = self._values[name]
            text += " - %s:" % name
            try:
                text += _format_value(float(total) / max(1, count))
            except (TypeError, ValueError):  # a non-numeric value is shown as is
                text += " %s" % total
        return text

    def _step_duration(self, current: int, now: float) -> float:
        # The first step (compilation, warm-up) is left out of the estimate once there are more.
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            duration = (now - self._time_after_first_step) / (current - 1)
        else:
            duration = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return duration

    def _counter(self, current: int) -> str:
        digits = int(math.log10(max(self.target, 1))) + 1
        return ("%" + str(digits) + "d/%d") % (current, self.target)

    def _bar(self, current: int) -> str:
        if self.target is None:
            return "%7d/Unknown" % current
        filled = int(self.width * (float(current) / self.target if self.target else 1.0))
        bar = self._counter(current) + " ["
        if filled > 0:
            bar += "=" * (filled - 1) + (">" if current < self.target else "=")
        return bar + "." * (self.width - filled) + "]"

    def _draw_verbose_one(self, current: int, now: float, finalize: bool) -> None:
        duration = self._step_duration(current, now)
        if not finalize and (not self._dynamic_display or now - self._last_update < self.interval):
            return
        bar = self._bar(current)
        if self.target is None or finalize:
            info = " - %.0fs" % (now - self._start) + _format_duration(duration, self.unit_name)
        else:
            info = " - ETA: %s" % _format_eta(duration * (self.target - current))
        info += self._metrics_text()
        width = len(bar) + len(info)
        prefix = ""
        if self._dynamic_display:
            prefix = "\b" * self._total_width + "\r"
            info += " " * max(self._total_width - width, 0)  # wipe a longer previous line
        self._total_width = width
        _print_msg(prefix + bar + info + ("\n" if finalize else ""))

    def _draw_verbose_two(self, current: int, now: float) -> None:
        self._step_duration(current, now)
        elapsed = now - self._start
        counter = self._counter(current) if self.target is not None else "%d" % current
        line = counter + " - %.0fs" % elapsed + self._metrics_text()
        line += " -" + _format_duration(elapsed, "epoch")
        line += " -" + _format_duration(elapsed / max(current, 1), self.unit_name)
        _print_msg(line + "\n")


class ProgbarLogger(Callback):
    """Prints the `Epoch i/n` header and a `Progbar` per epoch; fit() adds it when verbose != 0.

    Reads `params['verbose']` ('auto' means 1), `params['epochs']` and `params['steps']` (None
    when unknown: the bar then counts steps and learns the total after the first epoch). The
    values shown are the logs as given: the training loop already averages them. Only the chief
    process prints.
    """

    def __init__(self, count_mode: str = "steps", stateful_metrics: Optional[Iterable[str]] = None) -> None:
        super().__init__()
        if count_mode not in ("steps", "samples"):
            raise ValueError(f"Unknown `count_mode`: {count_mode!r}. Use 'steps' or 'samples'.")
        self.use_steps = count_mode == "steps"
        self.stateful_metrics = set(stateful_metrics or ())
        self.seen = 0
        self.progbar: Optional[Progbar] = None
        self.target: Optional[int] = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params: dict) -> None:
        super().set_params(params)
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else int(verbose)
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps") if self.use_steps else params.get("samples")

    def _implements_train_batch_hooks(self) -> bool:
        return self.verbose == 1 or self.target is None

    def _implements_test_batch_hooks(self) -> bool:
        return not self._called_in_fit and self._implements_train_batch_hooks()

    def _implements_predict_batch_hooks(self) -> bool:
        return self._implements_train_batch_hooks()

    def on_train_begin(self, logs: Optional[dict] = None) -> None:
        self._called_in_fit = True  # validation inside fit() stays silent

    def on_train_end(self, logs: Optional[dict] = None) -> None:
        self._called_in_fit = False

    def on_test_begin(self, logs: Optional[dict] = None) -> None:
        if not self._called_in_fit:
            self._reset_progbar()

    def on_predict_begin(self, logs: Optional[dict] = None) -> None:
        self._reset_progbar()

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._reset_progbar()
        if self.verbose and self.epochs > 1 and _is_chief(self.model):
            _print_msg("Epoch %d/%d\n" % (epoch + 1, self.epochs))

    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        self._update_progbar(batch, logs)

    def on_test_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        if not self._called_in_fit:
            self._update_progbar(batch, logs)

    def on_predict_batch_end(self, batch: int, logs: Optional[dict] = None) -> None:
        self._update_progbar(batch, None)  # prediction outputs are not metrics

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        self._finalize_progbar(logs)

    def on_test_end(self, logs: Optional[dict] = None) -> None:
        if not self._called_in_fit:
            self._finalize_progbar(logs)

    def on_predict_end(self, logs: Optional[dict] = None) -> None:
        self._finalize_progbar(None)

    def _reset_progbar(self) -> None:
        self.seen = 0
        self.progbar = None
        # start the clock now: with verbose=2 no batch hook runs (fit skips them), so a lazily made bar
        # would time the epoch from its last moment
        self._maybe_init_progbar()

    def _maybe_init_progbar(self) -> Progbar:
        if self.progbar is None:
            verbose = self.verbose if _is_chief(self.model) else 0
            self.progbar = Progbar(
                target=self.target, verbose=verbose, stateful_metrics=self.stateful_metrics,
                unit_name="step" if self.use_steps else "sample",
            )
        return self.progbar

    def _shown_values(self, logs: Optional[dict]) -> list:
        items = [(key, value) for key, value in (logs or {}).items() if key not in ("size", "batch", "num_steps")]
        # The loop hands running averages already: show them as they are.
        self._maybe_init_progbar().stateful_metrics.update(key for key, _ in items)
        return items

    def _update_progbar(self, batch: int, logs: Optional[dict]) -> None:
        progbar = self._maybe_init_progbar()
        if self.use_steps:  # steps_per_execution may report a last batch past the end (as Keras does)
            self.seen = batch + 1 if self.target is None else min(batch + 1, self.target)
        else:
            self.seen += int((logs or {}).get("size", 0)) * int((logs or {}).get("num_steps", 1))
        if self.verbose == 1:
            progbar.update(self.seen, self._shown_values(logs), finalize=False)

    def _finalize_progbar(self, logs: Optional[dict]) -> None:
        progbar = self._maybe_init_progbar()
        if self.target is None:
            self.target = self.seen
            progbar.target = self.target
        progbar.update(self.target, self._shown_values(logs), finalize=True)
