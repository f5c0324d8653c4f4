"""`keras.legacy.saving` / `keras.utils.legacy`: Keras 2's object serialization ({'class_name', 'config'}
with nested objects marked '__passive_serialization__', functions by registered name), as Keras 3.15 keeps it."""
from __future__ import annotations

import inspect
from typing import Any, Optional

from torchstrategy.keras import object_registration

_PASSIVE = "__passive_serialization__"


def serialize_keras_object(instance: Any) -> Any:
    """Keras 2's form of `instance`: {'class_name': registered name, 'config': get_config() with nested
    objects serialized (and marked passive)}; a function or class by its registered name; None as None."""
    instance = inspect.unwrap(instance)
    if instance is None:
        return None
    if hasattr(instance, "get_config"):
        config = {}
        for key, item in instance.get_config().items():
            if isinstance(item, str):
                config[key] = item
                continue
            try:
                serialized = serialize_keras_object(item)
            except ValueError:
                config[key] = item
                continue
            if isinstance(serialized, dict) and not isinstance(item, dict):
                serialized[_PASSIVE] = True
            config[key] = serialized
        return {"class_name": object_registration.get_registered_name(type(instance)), "config": config}
    if hasattr(instance, "__name__"):
        return object_registration.get_registered_name(instance)
    raise ValueError(f"Cannot serialize {instance} because it doesn't implement `get_config()`.")


def _unknown(printable_module_name: str, name: str) -> ValueError:
    return ValueError(f"Unknown {printable_module_name}: '{name}'. Please ensure you are using a "
                      "`keras.utils.custom_object_scope` and that this object is included in the scope. See "
                      "https://www.tensorflow.org/guide/keras/save_and_serialize#registering_the_custom_object "
                      "for details.")


def _class_and_config(config: Any, module_objects: Optional[dict], custom_objects: Optional[dict],
                      printable_module_name: str) -> tuple:
    if not isinstance(config, dict) or "class_name" not in config or "config" not in config:
        raise ValueError(f"Improper config format for {config}. Expecting python dict contains `class_name` and "
                         f"`config` as keys")
    cls = object_registration.get_registered_object(config["class_name"], custom_objects, module_objects)
    if cls is None:
        raise _unknown(printable_module_name, config["class_name"])
    cls_config = config["config"]
    if isinstance(cls_config, list):
        return cls, cls_config
    for key, item in list(cls_config.items()):
        if key == "name":
            continue
        if isinstance(item, dict) and _PASSIVE in item:
            cls_config[key] = deserialize_keras_object(item, module_objects, custom_objects, "config_item")
        elif isinstance(item, str):
            found = object_registration.get_registered_object(item, custom_objects, module_objects)
            if inspect.isfunction(found):
                cls_config[key] = found
    return cls, cls_config


def deserialize_keras_object(identifier: Any, module_objects: Optional[dict] = None,
                             custom_objects: Optional[dict] = None, printable_module_name: str = "object") -> Any:
    """The object Keras 2's `identifier` describes: a {'class_name', 'config'} dict (built with the class's
    `from_config`, or its constructor), a registered or `module_objects` name (a class is instantiated with
    no arguments), or a function as it is."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        cls, cls_config = _class_and_config(identifier, module_objects, custom_objects, printable_module_name)
        custom_objects = custom_objects or {}
        with object_registration.CustomObjectScope(custom_objects):
            if not hasattr(cls, "from_config"):
                return cls(**cls_config)
            if "custom_objects" in inspect.signature(cls.from_config).parameters:
                return cls.from_config(cls_config, custom_objects={**object_registration.get_custom_objects(),
                                                                   **custom_objects})
            return cls.from_config(cls_config)
    if isinstance(identifier, str):
        obj = object_registration.get_registered_object(identifier, custom_objects, module_objects)
        if obj is None:
            raise _unknown(printable_module_name, identifier)
        return obj() if inspect.isclass(obj) else obj
    if inspect.isfunction(identifier):
        return identifier
    raise ValueError(f"Could not interpret serialized {printable_module_name}: {identifier}")
