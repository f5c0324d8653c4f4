"""`keras.utils.Progbar` with Keras 3's arguments (`stateless_metrics`, width 20) over the progress bar the
loggers draw, and Keras's interactive-logging switch (`enable/disable/is_interactive_logging_enabled`)."""
from __future__ import annotations

from typing import Iterable, Optional

from torchstrategy import _context
from torchstrategy.keras.callbacks import progbar as _progbar_module


class _AllBut:
    """Names shown as given (not averaged): every name except the stateless ones."""

    def __init__(self, stateless: set) -> None:
        self.stateless = stateless

    def __contains__(self, name: object) -> bool:
        return name not in self.stateless

    def update(self, names: Iterable[str]) -> None:
        self.stateless.difference_update(names)


class Progbar(_progbar_module.Progbar):
    """A text progress bar. Values of names in `stateful_metrics` are shown as given and the others averaged
    over steps; or, with `stateless_metrics`, the named ones are averaged and the others shown as given.

    >>> bar = Progbar(2, verbose=0, stateless_metrics=["loss"])
    >>> bar.update(1, [("loss", 1.0), ("lr", 0.1)]); bar.update(2, [("loss", 3.0), ("lr", 0.2)])
    """

    def __init__(self, target: Optional[int], width: int = 20, verbose: int = 1, interval: float = 0.05,
                 stateful_metrics: Optional[Iterable[str]] = None, stateless_metrics: Optional[Iterable[str]] = None,
                 unit_name: str = "step") -> None:
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError("Only one of `stateful_metrics` or `stateless_metrics` can be provided. "
                             "`stateful_metrics` is used to make metrics stateless by default (with an exclusion "
                             "list), while `stateless_metrics` is used to make metrics stateful by default (with "
                             f"an inclusion list). Received: stateful_metrics={stateful_metrics} and "
                             f"stateless_metrics={stateless_metrics}")
        super().__init__(target, width=width, verbose=verbose, interval=interval,
                         stateful_metrics=stateful_metrics, unit_name=unit_name)
        self.stateless_metrics = None if stateless_metrics is None else set(stateless_metrics)
        if self.stateless_metrics is not None:
            self.stateful_metrics = _AllBut(self.stateless_metrics)  # type: ignore[assignment]


def enable_interactive_logging() -> None:
    """Keras writes its logs (progress bars, summaries) to stdout (the default)."""
    _context.set_keras_setting("interactive_logging", True)


def disable_interactive_logging() -> None:
    """Keras writes its logs through Python's `logging` instead of stdout."""
    _context.set_keras_setting("interactive_logging", False)


def is_interactive_logging_enabled() -> bool:
    """Whether Keras logs to stdout (True) or through `logging` (False)."""
    return bool(_context.keras_config.get("interactive_logging", True))
