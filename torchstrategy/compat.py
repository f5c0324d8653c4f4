"""tf.compat's top-level helpers: bytes/str conversion, path_to_str, the forward-compatibility date checks and
the Dimension helpers. tf.compat.v1 / v2 (TF1 and TF2 shims) are not provided and raise a clear error."""
from __future__ import annotations

import codecs
import datetime
import logging
import numbers
import os
from contextlib import contextmanager
from typing import Any, Iterator, Optional

import numpy as np

from torchstrategy import _context

# TF 2.21's built-in horizon (tensorflow/python/compat/compat.py); TF also shifts it by the
# TF_FORWARD_COMPATIBILITY_DELTA_DAYS environment variable, which torchstrategy does not read.
_HORIZON = datetime.date(2026, 1, 16)

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)


def as_bytes(bytes_or_text: Any, encoding: str = "utf-8") -> bytes:
    """`bytes_or_text` as bytes: str is encoded with `encoding`, bytes and bytearray are taken as they are."""
    encoding = codecs.lookup(encoding).name
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: Any, encoding: str = "utf-8") -> str:
    """`bytes_or_text` as str: bytes are decoded with `encoding`, str is returned as it is."""
    encoding = codecs.lookup(encoding).name
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_str(bytes_or_text: Any, encoding: str = "utf-8") -> str:
    """The same as `as_text` (TF's Python 3 alias)."""
    return as_text(bytes_or_text, encoding)


def as_str_any(value: Any, encoding: str = "utf-8") -> str:
    """bytes decoded with `encoding`; any other value as `str(value)`."""
    if isinstance(value, bytes):
        return as_str(value, encoding=encoding)
    return str(value)


def path_to_str(path: Any) -> Any:
    """A path-like object (pathlib.Path, anything with __fspath__) as a str path; any other value unchanged."""
    if hasattr(path, "__fspath__"):
        return as_str_any(path.__fspath__())
    return path


def _date_number(year: int, month: int, day: int) -> int:
    return year << 9 | month << 5 | day


def forward_compatible(year: int, month: int, day: int) -> bool:
    """True when the forward-compatibility horizon (TF 2.21: 2026-01-16, or the one a
    `forward_compatibility_horizon` block sets) lies after the given date."""
    horizon = _context.config_setting("forward_compatibility_horizon")
    if horizon is None:
        horizon = _date_number(_HORIZON.year, _HORIZON.month, _HORIZON.day)
    return horizon > _date_number(year, month, day)


@contextmanager
def forward_compatibility_horizon(year: int, month: int, day: int) -> Iterator[None]:
    """Within the block, `forward_compatible` measures against the given date. As in TF 2.21: a date before the
    built-in horizon is ignored (with a warning on the 'tensorflow' logger), and leaving any block goes back to
    the built-in horizon, not to an enclosing block's date."""
    date = datetime.date(year, month, day)
    try:
        if date < _HORIZON:
            logging.getLogger("tensorflow").warning(
                "Trying to set the forward compatibility date to the past date %s. This will be ignored by "
                "TensorFlow.", date)
        else:
            _context.set_config_setting("forward_compatibility_horizon", _date_number(date.year, date.month, date.day))
        yield
    finally:
        _context.set_config_setting("forward_compatibility_horizon", None)


class _Dimension:
    """One TensorShape dimension as TF's compat helpers hand it out: `.value` is the int, or None when unknown.
    Compares with ints (None when either side is unknown), works as an index, and is unhashable, as TF's is."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, value: Optional[int]):
        self.value = None if value is None else int(value)

    def __repr__(self) -> str:
        return f"Dimension({self.value})"

    def __str__(self) -> str:
        return "?" if self.value is None else str(self.value)

    def _other(self, other: Any) -> Optional[int]:
        return other.value if isinstance(other, _Dimension) else (None if other is None else int(other))

    def __eq__(self, other: Any) -> Optional[bool]:  # type: ignore[override]
        theirs = self._other(other)
        return None if self.value is None or theirs is None else self.value == theirs

    def __ne__(self, other: Any) -> Optional[bool]:  # type: ignore[override]
        theirs = self._other(other)
        return None if self.value is None or theirs is None else self.value != theirs

    def __int__(self) -> int:
        if self.value is None:
            raise TypeError("Dimension(None) has no int value: the dimension is unknown.")
        return self.value

    __index__ = __int__

    def _combine(self, other: Any, fn: Any) -> "_Dimension":
        theirs = self._other(other)
        return _Dimension(None if self.value is None or theirs is None else fn(self.value, theirs))

    def __add__(self, other: Any) -> "_Dimension":
        return self._combine(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other: Any) -> "_Dimension":
        return self._combine(other, lambda a, b: a - b)

    def __mul__(self, other: Any) -> "_Dimension":
        return self._combine(other, lambda a, b: a * b)

    __rmul__ = __mul__


def dimension_value(dimension: Any) -> Optional[int]:
    """The int (or None) a dimension holds: a Dimension's `.value`; an int or None as it is (TensorShape
    dimensions here are already ints or None)."""
    if isinstance(dimension, _Dimension):
        return dimension.value
    return dimension


def dimension_at_index(shape: Any, index: int) -> "_Dimension":
    """Dimension `index` of the TensorShape `shape` as a Dimension (Dimension(None) when the dimension or the
    rank is unknown)."""
    from torchstrategy.data import TensorShape

    if not isinstance(shape, TensorShape):
        raise TypeError(f"tf.compat.dimension_at_index expects a tf.TensorShape, got {type(shape).__name__} "
                        f"({shape!r}); wrap it with tf.TensorShape(...).")
    if shape.rank is None:
        return _Dimension(None)
    return _Dimension(shape[index])
