"""Keras 3's JSON config of one object (layer, optimizer, loss, dtype policy, initializer...): written from our
objects with Keras's class names, module paths and argument names, and read back into our classes."""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Optional

from torchstrategy.keras._keras_config_defaults import KERAS_DEFAULTS

_NESTED_MODULES = (("_initializer", "keras.initializers"), ("_regularizer", "keras.regularizers"),
                   ("_constraint", "keras.constraints"))
# our value -> Keras's, per argument (ours accepts both)
_VALUE_TO_KERAS = {("reduction", "auto"): "sum_over_batch_size"}
_NESTED_LAYER_KEYS = ("layer", "backward_layer", "cell")
# our argument names that Keras 3 renamed: (class, ours) -> Keras's (ours accepts both)
_KEY_TO_KERAS = {("LeakyReLU", "alpha"): "negative_slope"}


def dtype_policy_config(name: str) -> dict:
    """A DTypePolicy as Keras serializes it."""
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": name}, "registered_name": None}


def policy_name(value: Any) -> Any:
    """A dtype entry of a config (a DTypePolicy dict, or a plain name) as the name our layers take; a quantized
    policy or DTypePolicyMap stays a serialized dict (our layers read it through `dtype_policies.get`)."""
    if isinstance(value, dict) and "config" in value:
        if value.get("class_name", "DTypePolicy") not in ("DTypePolicy", "FloatDTypePolicy", "Policy"):
            return value
        return value["config"].get("name")
    return value


def plain(value: Any) -> Any:
    """JSON-ready: tuples as lists, NumPy scalars as Python numbers."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return value.item()
    return value


def _nested_to_keras(key: str, value: Any) -> Any:
    """An initializer/regularizer/constraint entry with Keras's module and registered_name fields."""
    if isinstance(value, dict) and "class_name" in value and "config" in value and "module" not in value:
        module = next((m for suffix, m in _NESTED_MODULES if key.endswith(suffix)), None)
        if module is not None:
            return {"module": module, "class_name": value["class_name"], "config": plain(value["config"]),
                    "registered_name": None}
    return plain(value)


def registered_name(cls: type) -> Optional[str]:
    """'package>Name' for a class registered with register_keras_serializable, else None."""
    from torchstrategy.keras import object_registration

    return object_registration.registered_name_of(cls)


def _own_defaults(cls: type) -> dict:
    """Our constructor's defaults for `cls`, over its classes' __init__ signatures (a fresh dict each call)."""
    return dict(_defaults_of(cls))


@functools.lru_cache(maxsize=None)
def _defaults_of(cls: type) -> dict:
    """`_own_defaults` computed once per class: reading signatures is most of the time a model's config takes."""
    found: dict = {}
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for param in inspect.signature(init).parameters.values():
            if param.default is not inspect.Parameter.empty:
                found[param.name] = param.default
    return found


def _accepted(cls: type) -> Optional[set]:
    """The keyword arguments `cls(...)` accepts, or None when it takes any (a **kwargs not passed to a Layer)."""
    from torchstrategy.keras.layers.base import Layer

    names: set = set()
    cell = getattr(cls, "_cell_class", None)  # the recurrent layers hand their cell's arguments on
    if isinstance(cell, type):
        names |= _accepted(cell) or set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters.values()
        names.update(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        if klass is Layer or not any(p.kind is p.VAR_KEYWORD for p in params):
            return names
    return names


def config_to_keras(kind: str, class_name: str, config: dict, cls: Optional[type] = None) -> dict:
    """Our `get_config()` of a built-in `class_name` as Keras's config: Keras's keys, our extra keys dropped
    (a warning when one is not at its default), the keys we lack filled with Keras's defaults."""
    table = KERAS_DEFAULTS.get(kind, {}).get(class_name)
    config = dict(config)
    config.pop("batch_input_shape", None)  # Keras 3 layers have no input shape: the InputLayer holds it
    out: dict = {}
    if "name" in config:
        out["name"] = config.pop("name")
    if table is None:  # a class Keras does not have (or a custom one): keep its config as it is
        out.update({k: _keras_entry_value(k, v, kind) for k, v in config.items()})
        return out
    keras_defaults, own = table["config"], (_own_defaults(cls) if cls is not None else {})
    for key, value in config.items():
        key = _KEY_TO_KERAS.get((class_name, key), key)
        if key in keras_defaults or key in table["required"]:
            value = _VALUE_TO_KERAS.get((key, value), value) if isinstance(value, str) else value
            out[key] = _keras_entry_value(key, value, kind)
        elif value is not None and key in own and value != own[key]:
            warnings.warn(f"{class_name}: '{key}={value!r}' has no Keras 3 equivalent; the saved config leaves it "
                          f"out, so Keras will not reproduce it.", stacklevel=3)
    for key, value in keras_defaults.items():
        if key not in out:
            out[key] = dtype_policy_config(value) if key == "dtype" and isinstance(value, str) else value
    return out


def _keras_entry_value(key: str, value: Any, kind: str = "layers") -> Any:
    if key == "dtype" and isinstance(value, str) and kind == "layers":  # metrics keep a plain dtype name
        return dtype_policy_config(value)
    if key in _NESTED_LAYER_KEYS and isinstance(value, dict) and "class_name" in value:
        return layer_entry_to_keras(value)
    return _nested_to_keras(key, value)


def layer_entry_to_keras(entry: dict) -> dict:
    """A `{'class_name', 'config'}` layer entry (ours) in Keras's form (used for nested layers)."""
    if "module" in entry:
        return entry
    from torchstrategy.keras import saving

    cls = saving.layer_class(entry["class_name"], None)
    return object_entry("layers", cls, entry["config"])


def object_entry(kind: str, cls: type, config: dict) -> dict:
    """{'module', 'class_name', 'config', 'registered_name'} of an object of `cls` with our `config`."""
    registered = registered_name(cls)
    name = cls.__name__
    if registered is not None:
        return {"module": None, "class_name": name, "config": config_to_keras(kind, "", config),
                "registered_name": registered}
    if name in KERAS_DEFAULTS.get(kind, {}):
        module = KERAS_DEFAULTS[kind][name]["module"]
        return {"module": module, "class_name": name, "config": config_to_keras(kind, name, config, cls),
                "registered_name": None}
    if cls.__module__.startswith("torchstrategy.keras"):
        module = "keras." + kind
    else:
        module = cls.__module__
    return {"module": module, "class_name": name, "config": config_to_keras(kind, "", config),
            "registered_name": None if module.startswith("keras.") else name}


# ----- reading --------------------------------------------------------------------------------------------------
_KERAS_ONLY_NONE = {"input_axes", "output_axes"}  # Keras 3.15 initializer arguments with nothing to do here


def _nested_from_keras(value: Any) -> Any:
    if isinstance(value, dict) and "class_name" in value and isinstance(value.get("config"), dict):
        config = {k: v for k, v in value["config"].items() if not (k in _KERAS_ONLY_NONE and v is None)}
        if value["class_name"] == "__tuple__":
            return tuple(value["config"].get("value", ()))
        return {"class_name": value["class_name"], "config": config}
    return value


def config_from_keras(kind: str, class_name: str, cls: type, config: dict, what: str) -> dict:
    """Keras's config of `class_name` as keyword arguments of our `cls`: a key we do not take is dropped when it
    holds Keras's default, else NotImplementedError names it."""
    accepted = _accepted(cls)
    table = KERAS_DEFAULTS.get(kind, {}).get(class_name, {"config": {}})["config"]
    out: dict = {}
    for key, value in config.items():
        if key == "dtype":
            value = policy_name(value)
        elif key in _NESTED_LAYER_KEYS:
            pass  # the class's from_config rebuilds nested layers
        else:
            value = _nested_from_keras(value)
        if accepted is None or key in accepted or key in _READ_BY_FROM_CONFIG:
            out[key] = value
            continue
        default = table.get(key, _MISSING)
        if value is None or value is False or _same(value, default) or key in ("module", "registered_name"):
            continue
        raise NotImplementedError(f"{what}: Keras's argument {key}={value!r} of {class_name} is not supported here "
                                  f"yet; only its default ({default if default is not _MISSING else None!r}) is.")
    return out


_MISSING = object()
# config keys a class's from_config reads (or drops) itself, not constructor arguments: a lookup's vocabulary_size
_READ_BY_FROM_CONFIG = {"vocabulary_size"}


def _same(value: Any, default: Any) -> bool:
    """Equal as configs: nested entries compared without module/registered_name and None-valued keys."""
    def norm(item: Any) -> Any:
        if isinstance(item, dict):
            return {k: norm(v) for k, v in item.items() if k not in ("module", "registered_name") and v is not None}
        if isinstance(item, (list, tuple)):
            return [norm(v) for v in item]
        return item

    return norm(value) == norm(default)
