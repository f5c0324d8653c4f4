"""Keras's interactive-logging switch (`enable/disable/is_interactive_logging_enabled`) and the name
`keras.utils.Progbar` (the bar lives in keras/callbacks/progbar.py with the loggers that draw it)."""
from __future__ import annotations

from torchstrategy import _context
from torchstrategy.keras.callbacks.progbar import Progbar  # noqa: F401  (its home; keras.utils names it here too)


def enable_interactive_logging() -> None:
    """Keras writes its logs (progress bars, summaries) to stdout (the default)."""
    _context.set_keras_setting("interactive_logging", True)


def disable_interactive_logging() -> None:
    """Keras writes its logs through Python's `logging` instead of stdout."""
    _context.set_keras_setting("interactive_logging", False)


def is_interactive_logging_enabled() -> bool:
    """Whether Keras logs to stdout (True) or through `logging` (False)."""
    return bool(_context.keras_config.get("interactive_logging", True))
