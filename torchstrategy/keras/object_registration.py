"""`keras.saving` object registration: `register_keras_serializable`, `get_registered_name`,
`get_registered_object`, `get_custom_objects` and `custom_object_scope` over the one registry in `_context`."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

from torchstrategy import _context


def register_keras_serializable(package: str = "Custom", name: Optional[str] = None) -> Callable[[Any], Any]:
    """Decorator that registers a class or function under 'package>name' (name defaults to its `__name__`),
    so that configs naming it deserialize without `custom_objects`.

    >>> @register_keras_serializable(package="demo")
    ... def double(x):
    ...     return 2 * x
    >>> get_registered_name(double)
    'demo>double'
    """

    def decorator(arg: Any) -> Any:
        registered_name = f"{package}>{name if name is not None else arg.__name__}"
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _context.custom_objects[registered_name] = arg
        _context.custom_names[arg] = registered_name
        return arg

    return decorator


def get_registered_name(obj: Any) -> str:
    """The name `obj` was registered under, else its `__name__`."""
    if obj in _context.custom_names:
        return _context.custom_names[obj]
    return obj.__name__


def get_registered_object(name: str, custom_objects: Optional[dict] = None,
                          module_objects: Optional[dict] = None) -> Any:
    """The object called `name`: looked up in the active `custom_object_scope`s, then the registry, then
    `custom_objects`, then `module_objects`; None when none has it."""
    scoped = _context.scoped_custom_objects()
    if name in scoped:
        return scoped[name]
    if name in _context.custom_objects:
        return _context.custom_objects[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


def get_custom_objects() -> dict:
    """The registry itself (registered name -> object); adding to it registers an object.

    >>> get_custom_objects()["MyObject"] = object
    >>> get_registered_object("MyObject") is object
    True
    >>> del get_custom_objects()["MyObject"]
    """
    return _context.custom_objects


class CustomObjectScope:
    """Within `with CustomObjectScope({'Name': obj}):` deserialization finds `obj` by name (this thread).

    Several dicts (or None) may be given; scopes nest and each restores what was visible before it.
    """

    def __init__(self, custom_objects: Any) -> None:
        self.custom_objects = custom_objects or {}
        self.backup: Optional[dict] = None

    def __enter__(self) -> "CustomObjectScope":
        self.backup = _context.scoped_custom_objects()
        objects = dict(self.backup)
        for entry in (self.custom_objects if isinstance(self.custom_objects, (list, tuple))
                      else [self.custom_objects]):
            objects.update(entry or {})
        _context.set_scoped_custom_objects(objects)
        return self

    def __exit__(self, *args: Any) -> None:
        _context.set_scoped_custom_objects(self.backup or {})


custom_object_scope = CustomObjectScope
