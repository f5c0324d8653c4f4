"""`keras.name_scope` and `keras.device`: Keras 3's naming and placement context managers (on the TensorFlow
backend they open tf.name_scope / tf.device, which is what they do here)."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from torchstrategy import framework


class name_scope:  # noqa: N801 - Keras's name
    """Prefixes the names of variables and ops created inside with `name/`; extra keyword arguments
    (Keras's `caller`, `override_parent`...) are accepted and kept."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        if not isinstance(name, str) or "/" in name:
            raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. Received: "
                             f"name={name}")
        self.name = name
        self.kwargs = kwargs
        self._scope: Any = None

    def __enter__(self) -> "name_scope":
        self._scope = framework.name_scope(self.name)
        self._scope.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        scope, self._scope = self._scope, None
        scope.__exit__(*exc)


@contextlib.contextmanager
def device(device_name: str) -> Iterator[None]:
    """Places what is created in the block on `device_name` ('cpu:0', 'gpu:1'; TF's '/GPU:0' works too)."""
    name = str(device_name)
    if not name.startswith("/"):
        name = "/" + name.upper()
    with framework.device(name):
        yield
