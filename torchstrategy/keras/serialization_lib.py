"""`keras.saving.serialize_keras_object` / `deserialize_keras_object`: Keras 3's config layout
({'module', 'class_name', 'config', 'registered_name'}, '__numpy__', '__tuple__'-free lists, functions by name)
for this package's Keras objects and registered custom ones."""
from __future__ import annotations

import importlib
import types
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy.keras import object_registration

_PLAIN = (str, int, float, bool)
# Keras's public namespaces, searched (in this order) for a built-in class or function by name.
_NAMESPACES = ("layers", "losses", "metrics", "optimizers", "optimizers.schedules", "initializers", "regularizers",
               "constraints", "activations", "models", "quantizers", "distillation")


def _namespace(name: str) -> Any:
    return importlib.import_module(f"torchstrategy.keras.{name}")


def _public_module(obj: Any) -> Optional[str]:
    """'keras.losses' etc. when `obj` is what that Keras namespace exports under its name, else None."""
    module = getattr(obj, "__module__", "") or ""
    if not module.startswith("torchstrategy.keras"):
        return None
    for name in _NAMESPACES:
        try:
            if getattr(_namespace(name), obj.__name__, None) is obj:
                return f"keras.{name}"
        except ImportError:  # pragma: no cover - every namespace above exists
            continue
    return None


def serialize_keras_object(obj: Any) -> Any:
    """A JSON-able description of `obj`, as Keras 3 writes it: plain values, lists and dicts as they are
    (recursively), NumPy arrays and tensors as '__numpy__' / '__tensor__', functions by registered name, objects
    with `get_config` as {'module', 'class_name', 'config', 'registered_name'}.

    >>> from torchstrategy.keras import losses
    >>> serialize_keras_object(losses.mean_squared_error)["config"]
    'mean_squared_error'
    """
    if obj is None or isinstance(obj, _PLAIN):
        return obj
    if isinstance(obj, (list, tuple)):
        items = [serialize_keras_object(item) for item in obj]
        return tuple(items) if isinstance(obj, tuple) else items
    if isinstance(obj, dict):
        return {key: serialize_keras_object(value) for key, value in obj.items()}
    if isinstance(obj, bytes):
        return {"class_name": "__bytes__", "config": {"value": obj.decode("utf-8")}}
    if isinstance(obj, slice):
        return {"class_name": "__slice__", "config": {"start": serialize_keras_object(obj.start),
                                                      "stop": serialize_keras_object(obj.stop),
                                                      "step": serialize_keras_object(obj.step)}}
    if obj is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(obj, torch.Tensor):
        value = obj.detach().cpu()
        return {"class_name": "__tensor__", "config": {"value": value.numpy().tolist(),
                                                       "dtype": str(value.dtype).replace("torch.", "")}}
    if type(obj).__module__ == np.__name__:
        if isinstance(obj, np.ndarray) and obj.ndim > 0:
            return {"class_name": "__numpy__", "config": {"value": obj.tolist(), "dtype": str(obj.dtype)}}
        return obj.item()
    if isinstance(obj, types.FunctionType) and obj.__name__ == "<lambda>":
        raise ValueError("Cannot serialize a lambda: use a named function, registered with "
                         "@keras.saving.register_keras_serializable().")
    if isinstance(obj, types.FunctionType):  # Keras's layout: the function's registered name, under 'builtins'
        return {"module": "builtins", "class_name": "function",
                "config": object_registration.get_registered_name(obj), "registered_name": "function"}
    if not hasattr(obj, "get_config"):
        raise TypeError(f"Cannot serialize object {obj!r} of type {type(obj)}. To be serializable, a class must "
                        "implement the `get_config()` method.")
    inner = serialize_keras_object(obj.get_config())
    cls = type(obj)
    public = _public_module(cls)
    if public is not None and cls not in _context.custom_names:
        return {"module": public, "class_name": cls.__name__, "config": inner, "registered_name": None}
    return {"module": cls.__module__, "class_name": cls.__name__, "config": inner,
            "registered_name": object_registration.get_registered_name(cls)}


def _retrieve(name: str, registered_name: Optional[str], module: Optional[str], custom_objects: dict,
              full_config: dict) -> Any:
    for key in (registered_name, name):
        if key and key in custom_objects:
            return custom_objects[key]
    if module and module.startswith("keras"):
        wanted = module.split(".", 1)[1] if "." in module else ""
        order = ([wanted] if wanted in _NAMESPACES else []) + [ns for ns in _NAMESPACES if ns != wanted]
        for namespace in order:
            found = getattr(_namespace(namespace), name, None)
            if found is not None:
                return found
    elif module:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            found = None
        if found is not None:
            return found
    raise TypeError(f"Could not locate {'function' if full_config.get('class_name') == 'function' else 'class'} "
                    f"'{name}'. Make sure custom classes and functions are decorated with "
                    f"`@keras.saving.register_keras_serializable()`, or pass them in `custom_objects`. "
                    f"Full object config: {full_config}")


def _retrieve_function(name: str, module: Optional[str], custom_objects: dict, full_config: dict) -> Any:
    found = object_registration.get_registered_object(name, custom_objects=custom_objects)
    if found is not None:
        return found
    if module and module.startswith("keras.") and module.split(".", 1)[1] in _NAMESPACES:
        found = getattr(_namespace(module.split(".", 1)[1]), name, None)
    if found is None and (module in (None, "builtins") or (module or "").startswith("keras")):
        for namespace in ("activations", "constraints", "initializers", "losses", "metrics", "regularizers",
                          "optimizers"):
            found = getattr(_namespace(namespace), name, None)
            if found is not None:
                break
    if found is None and ">" not in name:  # a registered function named without its package
        found = next((obj for key, obj in custom_objects.items() if key.endswith(f">{name}")), None)
    if found is None:
        raise TypeError(f"Could not locate function '{name}'. Make sure custom functions are decorated with "
                        f"`@keras.saving.register_keras_serializable()`. Full object config: {full_config}")
    return found


def deserialize_keras_object(config: Any, custom_objects: Optional[dict] = None, safe_mode: bool = True,
                             **kwargs: Any) -> Any:
    """Rebuilds what `serialize_keras_object` described; classes and functions are found in `custom_objects`,
    the active `custom_object_scope`s, the registry, then Keras's namespaces (by `module` and `class_name`)."""
    module_objects = kwargs.pop("module_objects", None)
    if kwargs:
        raise TypeError(f"deserialize_keras_object() got unexpected keyword arguments {sorted(kwargs)}.")
    custom_objects = {**(custom_objects or {}), **_context.scoped_custom_objects(),
                      **object_registration.get_custom_objects()}
    if config is None:
        return None
    if isinstance(config, str) and custom_objects.get(config) is not None:
        return custom_objects[config]
    if isinstance(config, str) and module_objects and config in module_objects:
        return module_objects[config]
    if isinstance(config, (list, tuple)):
        return [deserialize_keras_object(item, custom_objects, safe_mode) for item in config]
    if isinstance(config, _PLAIN):
        return config
    if not isinstance(config, dict):
        raise TypeError(f"Could not parse config: {config}")
    if "class_name" not in config or "config" not in config:
        return {key: deserialize_keras_object(value, custom_objects, safe_mode) for key, value in config.items()}
    class_name = config["class_name"]
    inner = config["config"] if config["config"] is not None else {}
    if class_name == "__tensor__":
        return torch.as_tensor(np.asarray(inner["value"], dtype=inner["dtype"]))
    if class_name == "__numpy__":
        return np.array(inner["value"], dtype=inner["dtype"])
    if class_name == "__bytes__":
        return inner["value"].encode("utf-8")
    if class_name == "__ellipsis__":
        return Ellipsis
    if class_name == "__slice__":
        return slice(*(deserialize_keras_object(inner[key], custom_objects, safe_mode)
                       for key in ("start", "stop", "step")))
    if class_name == "__lambda__":
        if safe_mode:
            raise ValueError("Requested the deserialization of a Python lambda. This carries a potential risk of "
                             "arbitrary code execution and thus it is disallowed by default.")
        raise NotImplementedError("Deserializing Python lambdas (safe_mode=False) is not supported: use a named, "
                                  "registered function.")
    module = config.get("module")
    registered_name = config.get("registered_name", class_name)
    if class_name == "function":
        if not isinstance(inner, str):
            raise TypeError(f"Expected 'config' to be a non-null str for a function classname, instead got "
                            f"{type(inner)}\nFull config: {config}")
        return _retrieve_function(inner, module, custom_objects, config)
    if not isinstance(inner, dict):
        raise TypeError(f"Expected 'config' to be a dict for {class_name},\ninstead got {type(inner)}\n"
                        f"Full config: {config}")
    cls = _retrieve(class_name, registered_name, module, custom_objects, config)
    if isinstance(cls, types.FunctionType):
        return cls
    if not hasattr(cls, "from_config"):
        raise TypeError(f"Unable to reconstruct an instance of '{class_name}' because the class is missing a "
                        f"`from_config()` method. Full object config: {config}")
    with object_registration.CustomObjectScope(custom_objects):
        return cls.from_config(inner)
