"""`tf.autograph`: AutoGraph's public surface. Functions run eagerly here (tf.function does not convert
Python control flow), so conversion is the identity and these names keep TF scripts running unchanged."""
from __future__ import annotations

import inspect
import logging
from typing import Any, Callable

from torchstrategy.autograph import experimental  # noqa: F401

__all__ = ["experimental", "set_verbosity", "to_code", "to_graph", "trace"]

_verbosity = {"level": 0}


def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """Sets how much AutoGraph logs (kept for TF scripts; nothing is converted, so nothing is logged)."""
    if not isinstance(level, int) or level < 0:
        raise ValueError(f"tf.autograph.set_verbosity: level must be a non-negative int, got {level!r}.")
    _verbosity["level"] = level


def to_graph(entity: Callable, recursive: bool = True, experimental_optional_features: Any = None) -> Callable:
    """The function itself: it already runs as written (AutoGraph's conversion is not needed eagerly)."""
    if not callable(entity):
        raise TypeError(f"tf.autograph.to_graph takes a function or class, got {type(entity).__name__}.")
    return entity


def to_code(entity: Callable, recursive: bool = True, experimental_optional_features: Any = None) -> str:
    """The source code of `entity` (what runs, since nothing is converted)."""
    if not callable(entity):
        raise TypeError(f"tf.autograph.to_code takes a function or class, got {type(entity).__name__}.")
    return inspect.getsource(entity)


def trace(*args: Any) -> None:
    """Logs the arguments at INFO level on the 'tensorflow' logger (AutoGraph's trace)."""
    logging.getLogger("tensorflow").info(" ".join(str(a) for a in args))
