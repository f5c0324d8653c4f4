"""Writes torchstrategy/_machinery/tf_api_manifest.json.gz: every public name of TF 2.21's `tf.*` and
Keras 3.15's `keras.*` with its kind and signature (facts only; no TF code), read by the API tests.

Run with the TF reference env: `/work/tf-venv/bin/python tools/tf_api_manifest.py`.

Layout of the JSON (sorted keys, gzip with mtime 0, so the file is byte-for-byte reproducible):
  versions  {"tensorflow": ..., "keras": ...}
  aliases   {path: canonical path}: module paths that are the same tree as another (tf.keras -> keras,
            tf.metrics -> keras.metrics, tf.compat.v2 -> tf)
  names     {path: entry}; entry is
              ["module"]
              ["function", signature]                     signature text or null
              ["constant", type name]
              ["class", signature, {"base": path|null, "members": {name: member}}]
              ["class", signature, {"same": path}]        the same class object as `path`
            member is [kind, signature?] with kind method/classmethod/staticmethod/property/attribute;
            members list what differs from `base` (the nearest public class in the MRO).
  tf.compat.v1 is names-only (entries are [kind]); its modules are walked for names, no signatures.
"""
from __future__ import annotations

import gzip
import importlib.util
import inspect
import io
import json
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "torchstrategy", "_machinery", "tf_api_manifest.json.gz")
NAMES_ONLY = ("tf.compat.v1",)
ALIASES_FIXED = {"tf.compat.v2": "tf"}


def _load_formatting():
    """torchstrategy/_machinery/api_manifest.py, loaded by path (it is stdlib only; no torch here)."""
    path = os.path.join(ROOT, "torchstrategy", "_machinery", "api_manifest.py")
    spec = importlib.util.spec_from_file_location("_api_manifest", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fmt = _load_formatting()


def _public(obj) -> list:
    try:
        names = dir(obj)
    except Exception:  # noqa: BLE001 - a lazy loader that fails to load
        return []
    return sorted(n for n in names if not n.startswith("_"))


def _get(obj, name):
    try:
        return getattr(obj, name)
    except Exception:  # noqa: BLE001
        return None


def _is_api_module(module: types.ModuleType) -> bool:
    name = getattr(module, "__name__", "")
    return (name.startswith("tensorflow._api.") or name in ("keras", "tensorflow.experimental") or
            (name.startswith("keras.") and not name.startswith("keras.src")))


class Walker:
    """Collects paths, kinds and objects over the public API modules."""

    def __init__(self) -> None:
        self.names: dict = {}
        self.objects: dict = {}  # path -> object (functions and classes)
        self.aliases: dict = dict(ALIASES_FIXED)
        self.module_paths: dict = {}  # module __name__ -> first path

    def walk(self, module, path: str, names_only: bool = False) -> None:
        self.module_paths.setdefault(module.__name__, path)
        for name in _public(module):
            if (path == "keras" and name == "src") or (path == "tf" and name == "compat" and not names_only):
                continue  # keras.src is private; tf.compat is walked last, names only
            child = f"{path}.{name}"
            if child in self.aliases:
                continue
            value = _get(module, name)
            only = names_only or child in NAMES_ONLY
            if isinstance(value, types.ModuleType):
                module_name = _get(value, "__name__")
                if module_name is None:  # a Keras-2 lazy loader (tf.compat.v1.keras): unusable with Keras 3
                    self.names.setdefault(child, ["module"])
                    continue
                seen = self.module_paths.get(module_name)
                if seen is None and module_name.startswith("keras._tf_keras.keras"):
                    seen = "keras" + module_name[len("keras._tf_keras.keras"):]  # TF's lazy loader's name
                    seen = seen if seen in self.names else None
                if seen is not None and seen != child:
                    if child not in self.names:
                        self.aliases[child] = seen
                    continue
                self.names.setdefault(child, ["module"])
                if names_only and name == "compat":
                    continue  # tf.compat.v1.compat.v1... repeats itself
                if _is_api_module(value):
                    self.walk(value, child, only)
                continue
            if child in self.names:
                continue  # tf.keras's tree merged into keras.*: keras's own entry wins
            if inspect.isclass(value):
                self.names[child] = ["class"]
            elif callable(value):
                self.names[child] = ["function"]
            else:
                self.names[child] = ["constant", type(value).__name__]
            if not only and (inspect.isclass(value) or callable(value)):
                self.objects[child] = value

    def finish(self) -> None:
        """Signatures for functions; signatures, bases and members for classes."""
        class_paths: dict = {}
        for path, obj in self.objects.items():
            if inspect.isclass(obj):
                class_paths.setdefault(id(obj), path)
        for path, obj in self.objects.items():
            sig = fmt.signature_text(obj)
            if not inspect.isclass(obj):
                self.names[path] = ["function", sig]
                continue
            first = class_paths[id(obj)]
            if first != path:
                self.names[path] = ["class", sig, {"same": first}]
                continue
            base = next((k for k in obj.__mro__[1:] if id(k) in class_paths), None)
            members = {}
            for name in _public(obj):
                try:
                    raw = inspect.getattr_static(obj, name)
                except AttributeError:
                    continue
                if base is not None and name in dir(base):
                    try:
                        if inspect.getattr_static(base, name) is raw:
                            continue
                    except AttributeError:
                        pass
                members[name] = self._member(obj, name, raw)
            self.names[path] = ["class", sig, {"base": class_paths[id(base)] if base else None,
                                               "members": members}]

    @staticmethod
    def _member(owner, name: str, raw) -> list:
        kind = fmt.canonical_member_kind(owner, name)
        if kind == "method":
            return [kind, fmt.signature_text(raw)]
        if kind in ("classmethod", "staticmethod"):
            return [kind, fmt.signature_text(_get(owner, name))]
        if kind == "attribute":
            return [kind, type(raw).__name__]
        return [kind]


def main() -> None:
    import keras
    import tensorflow as tf

    walker = Walker()
    walker.walk(keras, "keras")
    tf_keras = _get(tf, "keras")
    tf_keras_module = sys.modules.get(getattr(tf_keras, "__name__", ""), None) or tf_keras
    walker.walk(tf_keras_module, "keras")  # tf.keras's extra names (legacy backend, preprocessing)
    walker.module_paths[tf_keras_module.__name__] = "keras"
    walker.aliases["tf.keras"] = "keras"
    walker.walk(tf, "tf")
    walker.names["tf.compat"] = ["module"]
    walker.walk(tf.compat, "tf.compat", names_only=True)
    walker.finish()
    data = {"versions": {"tensorflow": tf.__version__, "keras": keras.__version__},
            "aliases": dict(sorted(walker.aliases.items())), "names": dict(sorted(walker.names.items()))}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9, filename="") as handle:
        handle.write(text.encode("utf-8"))
    tmp = OUT + ".tmp"
    with open(tmp, "wb") as handle:
        handle.write(buffer.getvalue())
    os.replace(tmp, OUT)
    counts: dict = {}
    for entry in data["names"].values():
        counts[entry[0]] = counts.get(entry[0], 0) + 1
    print(f"wrote {OUT}: {len(data['names'])} names {counts}, {len(data['aliases'])} aliases, "
          f"{len(text)} bytes json, {len(buffer.getvalue())} bytes gz")


if __name__ == "__main__":
    main()
