"""The gate every public keras.ops function goes through: on real tensors it runs the function; when an
argument is a KerasTensor it hands the call to keras/operation.py, which records a graph step (Keras 3)."""
from __future__ import annotations

import functools
from typing import Any, Callable


@functools.lru_cache(maxsize=None)
def _marked(kind: type) -> bool:
    """Whether values of `kind` are KerasTensors (a type fact, asked once per type)."""
    return bool(getattr(kind, "_keras_symbolic", False))


def has_symbolic(values: Any) -> bool:
    """True when a KerasTensor is among `values` (searched through lists, tuples and dicts)."""
    for value in values:
        kind = type(value)
        if kind is list or kind is tuple:
            if has_symbolic(value):
                return True
        elif kind is dict:
            if has_symbolic(value.values()):
                return True
        elif _marked(kind):
            return True
    return False


def symbolic_aware(function: Callable, public_name: str) -> Callable:
    """`function` that records an Operation when called on KerasTensors (`public_name`: its keras.ops name,
    'image.resize' for keras.ops.image's)."""

    @functools.wraps(function)
    def op(*args: Any, **kwargs: Any) -> Any:
        if has_symbolic(args) or (kwargs and has_symbolic(kwargs.values())):
            from torchstrategy.keras import operation

            return operation.apply(public_name, function, args, kwargs)
        return function(*args, **kwargs)

    op.__keras_op_name__ = public_name
    return op


def wrap_namespace(namespace: dict, prefix: str = "") -> None:
    """Replaces each public function in `namespace` (a module's globals) by its symbolic-aware form."""
    import types

    for name, value in list(namespace.items()):
        if name.startswith("_") or not isinstance(value, types.FunctionType) or hasattr(value, "__keras_op_name__"):
            continue
        if not value.__module__.startswith("torchstrategy.keras.ops.") or value.__module__ == __name__:
            continue  # only keras.ops's own functions (not helpers a module imported)
        namespace[name] = symbolic_aware(value, prefix + name)
