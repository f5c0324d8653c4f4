"""Keras's registry of custom objects (`keras.saving.register_keras_serializable`, `get_custom_objects`,
`get_registered_name`, `get_registered_object`): what lets a saved config name a class of your own."""
from __future__ import annotations

from typing import Any, Callable, Optional

from torchstrategy import _context


def register_keras_serializable(package: str = "Custom", name: Optional[str] = None) -> Callable[[Any], Any]:
    """A decorator that registers a class or function as 'package>name' (name: its own name by default), so
    saved configs name it and `load_model` finds it without custom_objects."""
    def decorator(arg: Any) -> Any:
        class_name = name if name is not None else arg.__name__
        key = f"{package}>{class_name}"
        if isinstance(arg, type) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        objects, names = _context.custom_object_registry()
        objects[key] = arg
        names[arg] = key
        return arg

    return decorator


def get_custom_objects() -> dict:
    """The live dict of registered objects ('package>name' -> object); adding to it registers too."""
    return _context.custom_object_registry()[0]


def get_registered_name(obj: Any) -> str:
    """'package>name' of a registered object, else its own name."""
    return _context.custom_object_registry()[1].get(obj, getattr(obj, "__name__", None))


def registered_name_of(obj: Any) -> Optional[str]:
    """'package>name' of a registered object, or None when it is not registered."""
    return _context.custom_object_registry()[1].get(obj)


def get_registered_object(name: str, custom_objects: Optional[dict] = None, module_objects: Optional[dict] = None) -> Any:
    """The object registered (or passed in `custom_objects`/`module_objects`) under `name`, else None."""
    objects = _context.custom_object_registry()[0]
    if name in objects:
        return objects[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None
