"""`add_weight`'s positional arguments: Keras 3's (shape, initializer, dtype) and Keras 2's (name, shape,
initializer), told apart and checked against the keywords given with them."""
from __future__ import annotations

from typing import Any


def legacy_weight_args(args: tuple, shape: Any, initializer: Any, dtype: Any, name: Any) -> tuple:
    """add_weight's positional arguments: Keras 3's (shape, initializer, dtype), or Keras 2's (name, shape, ...)."""
    if not args:
        return shape, initializer, dtype, name
    if isinstance(args[0], str):
        if len(args) > 3:
            raise TypeError("add_weight(name, shape, initializer) takes at most 3 positional arguments; pass the rest "
                            "by keyword.")
        values = dict(zip(("name", "shape", "initializer"), args))
        return (values.get("shape", shape), values.get("initializer", initializer), dtype, values["name"])
    if len(args) > 3:
        raise TypeError(f"add_weight() takes at most 3 positional arguments (shape, initializer, dtype) but "
                        f"{len(args)} were given.")
    values = dict(zip(("shape", "initializer", "dtype"), args))
    for key in values:
        if {"shape": shape, "initializer": initializer, "dtype": dtype}[key] is not None:
            raise ValueError(f"add_weight(): `{key}` was passed both positionally and as a keyword argument.")
    return values.get("shape", shape), values.get("initializer", initializer), values.get("dtype", dtype), name
