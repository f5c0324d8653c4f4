"""`tf.autograph.experimental`: do_not_convert, set_loop_options and the Feature enum; all are accepted as in TF
and change nothing, since functions run eagerly here."""
from __future__ import annotations

import enum
import functools
from typing import Any, Callable, Optional

__all__ = ["do_not_convert", "set_loop_options", "Feature"]

_UNSET = object()


class Feature(enum.Enum):
    """Optional AutoGraph conversions (tf.autograph.experimental.Feature)."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def do_not_convert(func: Optional[Callable] = None) -> Any:
    """Marks `func` to run as plain Python (usable with or without parentheses); it is returned wrapped unchanged.

    >>> do_not_convert(lambda x: x + 1)(1)
    2
    """
    if func is None:
        return do_not_convert
    if not callable(func):
        raise TypeError(f"tf.autograph.experimental.do_not_convert decorates a function, got {type(func).__name__}.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    wrapper.autograph_info__ = {"do_not_convert": True}  # type: ignore[attr-defined]
    return wrapper


def set_loop_options(parallel_iterations: Any = _UNSET, swap_memory: Any = _UNSET, maximum_iterations: Any = _UNSET,
                     shape_invariants: Any = _UNSET) -> None:
    """Loop hints for AutoGraph's converted loops; Python loops run as written here, so they change nothing."""
    return None
