"""Lazy attribute tables for the tf-shaped namespaces, so `import torchstrategy as tf` stays cheap and each
submodule is imported only when a script touches it; a TF/Keras name we lack raises a clear AttributeError.

A namespace module knows which TF/Keras paths it stands for (`__tf_api__`: ('tf',) for torchstrategy,
('keras',) for torchstrategy.keras, ('tf.nn',) for torchstrategy.nn once reached as tf.nn). Looking up a
name it lacks raises AttributeError; when the frozen manifest (api_manifest.py) knows that name as TF or
Keras API, the message says so and what to use instead. A whole TF namespace we do not provide
(tf.lite, tf.estimator, tf.compat) raises at its own name: there is no placeholder object, so
`hasattr(tf, "lite")` is False and feature checks in user code take their fallback branch.
"""
from __future__ import annotations

import importlib
import sys
import types
from typing import Any, Callable

from torchstrategy._machinery import api_manifest

_ROOTS = {"torchstrategy": ("tf",), "torchstrategy.keras": ("keras", "tf.keras")}


class ApiModule(types.ModuleType):
    """A torchstrategy namespace module: a missing public name raises the manifest-aware AttributeError."""

    def __getattr__(self, name: str) -> Any:
        raise api_manifest.not_provided_error(api_paths(self), name, self.__name__)

    def __reduce__(self) -> tuple:
        # pickled by name, as cloudpickle pickles a plain module (its table is keyed by the exact type): closures
        # sent to parameter-server workers refer to `tf` and `tf.keras`
        return importlib.import_module, (self.__name__,)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if _is_child(self, name, value) and api_paths(self):
            mark_namespace(value, tuple(f"{p}.{name}" for p in api_paths(self)))  # a submodule just imported


def _is_child(module: types.ModuleType, name: str, value: Any) -> bool:
    """True for a public submodule bound on its own package (`torchstrategy.nn` on `torchstrategy`)."""
    return (isinstance(value, types.ModuleType) and not name.startswith("_")
            and getattr(value, "__name__", "") == f"{module.__name__}.{name}")


def api_paths(module: types.ModuleType) -> tuple:
    """The TF/Keras paths `module` stands for (empty when it was never reached as a namespace)."""
    return module.__dict__.get("__tf_api__", _ROOTS.get(module.__name__, ()))


def mark_namespace(module: types.ModuleType, paths: tuple) -> None:
    """Records that `module` stands for the TF/Keras `paths` and gives it the manifest-aware errors;
    torchstrategy submodules already bound on it (non-lazy children) are marked in turn."""
    if not module.__name__.startswith("torchstrategy"):
        return  # never touch torch, numpy or any other library's modules
    known = api_paths(module)
    merged = known + tuple(p for p in paths if p not in known)
    if merged == known and isinstance(module, ApiModule):
        return
    if not merged and type(module) is not types.ModuleType:
        return
    if type(module) is types.ModuleType:
        module.__class__ = ApiModule
    module.__dict__["__tf_api__"] = merged
    for key, value in list(module.__dict__.items()):
        if _is_child(module, key, value):
            mark_namespace(value, tuple(f"{p}.{key}" for p in merged))


def lazy_namespace(module_name: str, table: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list]]:
    """Returns `__getattr__`/`__dir__` for a module; table maps name -> 'module' or 'module:attr'."""
    this = sys.modules.get(module_name)
    if this is not None:
        mark_namespace(this, api_paths(this))

    def __getattr__(name: str) -> Any:
        module = sys.modules[module_name]
        target = table.get(name)
        if target is None:
            raise api_manifest.not_provided_error(api_paths(module), name, module_name)
        path, _, attr = target.partition(":")
        imported = importlib.import_module(path)
        value = getattr(imported, attr) if attr else imported
        if isinstance(value, types.ModuleType):
            mark_namespace(value, tuple(f"{p}.{name}" for p in api_paths(module)))
        setattr(module, name, value)
        return value

    def __dir__() -> list:
        return sorted(table)

    return __getattr__, __dir__


def namespace_module(name: str, paths: tuple, members: dict) -> types.ModuleType:
    """A namespace module made in code (tf.tpu.experimental, tf.distribute.experimental) standing for the TF
    `paths` and holding `members`: a TF name it lacks raises the manifest-aware AttributeError."""
    module = ApiModule(name, f"The {' / '.join(paths)} namespace.")
    for key, value in members.items():
        module.__dict__[key] = value
    module.__dict__["__all__"] = sorted(members)
    module.__dict__["__tf_api__"] = tuple(paths)
    sys.modules.setdefault(name, module)  # importable by name, as pickling a module by reference needs
    return module
