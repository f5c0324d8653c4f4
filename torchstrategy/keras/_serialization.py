"""Keras's config convention shared by initializers, regularizers and friends: an object is
serialized as {'class_name': ..., 'config': {...}} and read back from that or from a plain name."""
from __future__ import annotations

from typing import Any


def serialize_object(value: Any, base: type) -> Any:
    """`{'class_name', 'config'}` for an instance of `base`; anything else (a callable) as is."""
    if isinstance(value, base):
        return {"class_name": type(value).__name__, "config": value.get_config()}
    return value


def name_and_kwargs(config: Any, kind: str) -> tuple[str, dict]:
    """Splits a name ('he_normal') or a serialized dict into (class name, constructor kwargs)."""
    if isinstance(config, str):
        return config, {}
    if isinstance(config, dict) and "class_name" in config:
        return config["class_name"], dict(config.get("config") or {})
    raise ValueError(f"Could not interpret {kind} config {config!r}: expected a name or a "
                     "{'class_name': ..., 'config': {...}} dict.")
