"""The object tree `tf.saved_model.load` returns for a TF-written SavedModel: attributes by the object graph's child
names, variables as tf.Variables with their saved values, and its TF graph functions as stand-ins that say why
they cannot run and what to do instead."""
from __future__ import annotations

import os
from typing import Any, Callable, Optional

import numpy as np

from torchstrategy.data import TensorSpec
from torchstrategy.dtypes import as_dtype
from torchstrategy.formats.tf_saved_model import (SignatureInfo, TensorInfo, TFSavedModel, read_tf_saved_model,
                                                  read_variable_values, variables_prefix)
from torchstrategy.variables import Variable

__all__ = ["TFGraphFunction", "LoadedTFObject", "TFSignatureMap", "load_tf_saved_model", "weights_route"]

#: SavedUserObject identifiers TF restores as Python containers
_LIST, _DICT, _TUPLE, _SIGNATURES = ("trackable_list_wrapper", "trackable_dict_wrapper", "trackable_tuple_wrapper",
                                     "signature_map")


def weights_route(export_dir: str) -> str:
    """The sentence telling a user how to use a TF SavedModel's weights here (rebuild the model in Python)."""
    prefix = variables_prefix(export_dir)
    return (f"Rebuild the model in Python (the same tf.Module / Keras layers) and load the SavedModel's weights "
            f"into it: tf.train.Checkpoint(model).restore('{prefix}') for a tf.Module or subclassed model saved with "
            f"tf.saved_model.save, or, for a Keras model exported with model.export, "
            f"model.set_weights([v.numpy() for v in tf.saved_model.load('{export_dir}').variables]).")


def _spec(key: str, info: TensorInfo) -> TensorSpec:
    try:
        dtype: Any = as_dtype(info.dtype)
    except TypeError:  # strings and TF-only dtypes: described, never computed with
        dtype = np.dtype(object)
    return TensorSpec(info.shape, dtype, key)


class TFGraphFunction:
    """A function of a TF-written SavedModel (a tf.function or one of its signatures). Its body is a TF graph,
    which torchstrategy does not execute: calling it raises NotImplementedError naming what to do instead.
    Signatures keep their input/output specs (`structured_input_signature`, `structured_outputs`)."""

    def __init__(self, path: str, export_dir: str, signature: Optional[SignatureInfo] = None,
                 concrete_functions: tuple = ()) -> None:
        self.name = path
        self.export_dir = export_dir
        self.concrete_function_names = list(concrete_functions)
        self._signature = signature

    @property
    def structured_input_signature(self) -> Optional[tuple]:
        """((), {input name: TensorSpec}) for a signature, as TF's ConcreteFunction; None for other functions."""
        if self._signature is None:
            return None
        return (), {key: _spec(key, info) for key, info in self._signature.inputs.items()}

    @property
    def structured_outputs(self) -> Optional[dict]:
        """{output name: TensorSpec} for a signature; None for other functions."""
        if self._signature is None:
            return None
        return {key: _spec(key, info) for key, info in self._signature.outputs.items()}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"'{self.name}' of the SavedModel at '{self.export_dir}' is a TensorFlow graph function, which "
            f"torchstrategy cannot run (it runs Python code on PyTorch, not TF graphs); its variables are loaded. "
            f"{weights_route(self.export_dir)}")

    def __repr__(self) -> str:
        return f"<TFGraphFunction '{self.name}' (not runnable here) from '{self.export_dir}'>"


class TFSignatureMap(dict):
    """`loaded.signatures`: signature name -> TFGraphFunction (specs readable, not callable here)."""


class LoadedTFObject:
    """One object of a TF-written SavedModel (TF's restored user object): its children as attributes."""

    def __init__(self, path: str, export_dir: str) -> None:
        self._path = path
        self._export_dir = export_dir

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        function = self.__dict__.get("__call__")
        if function is None:
            raise TypeError(f"The object '{self._path or 'root'}' of the SavedModel at '{self._export_dir}' has no "
                            f"__call__ function.")
        return function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<LoadedTFObject '{self._path or 'root'}' from '{self._export_dir}'>"


class _Builder:
    """Makes one Python object per saved node (shared nodes stay shared), children first set by name."""

    def __init__(self, model: TFSavedModel, values: dict, asset: Callable[[str], Any]) -> None:
        self.model, self.values, self.asset = model, values, asset
        self.built: dict = {}

    def _path(self, parent: str, name: str) -> str:
        return f"{parent}.{name}" if parent else name

    def build(self, node_id: int, path: str) -> Any:
        if node_id in self.built:
            return self.built[node_id]
        node, export_dir = self.model.nodes[node_id], self.model.export_dir
        if node.kind == "variable":
            value = self.values[node_id]
            if isinstance(value, np.ndarray) and value.dtype == object:  # a tf.string variable: its saved bytes
                self.built[node_id] = value
                return value
            obj: Any = Variable(value, trainable=node.trainable, name=node.name or None,
                                dtype=as_dtype(node.dtype) if not isinstance(value, np.ndarray) else None)
        elif node.kind in ("function", "bare_concrete_function"):
            obj = TFGraphFunction(path, export_dir, concrete_functions=tuple(node.concrete_functions))
        elif node.kind == "asset":
            files = self.model.asset_files
            name = files[node.asset_index] if node.asset_index < len(files) else ""
            obj = self.asset(os.path.join(export_dir, "assets", name))
        elif node.kind != "user_object":
            return None  # constants, resources and captured tensors belong to the graphs, which do not run
        elif node.identifier == _SIGNATURES:
            obj = TFSignatureMap()
            for _, name in node.children:
                obj[name] = TFGraphFunction(f"signatures['{name}']", export_dir, self.model.signatures.get(name))
        elif node.identifier in (_LIST, _TUPLE):
            items = [self.build(child, f"{path}[{name}]") for child, name in sorted(
                node.children, key=lambda pair: int(pair[1]) if pair[1].isdigit() else 0)]
            obj = tuple(items) if node.identifier == _TUPLE else items
        elif node.identifier == _DICT:
            obj = {name: self.build(child, f"{path}['{name}']") for child, name in node.children}
        else:
            obj = LoadedTFObject(path, export_dir)
            self.built[node_id] = obj  # before the children: a child may point back at its parent
            for child, name in node.children:
                value = self.build(child, self._path(path, name))
                if value is not None:
                    obj.__dict__[name] = value
        self.built[node_id] = obj
        return obj


def load_tf_saved_model(export_dir: str, asset: Callable[[str], Any] = str) -> LoadedTFObject:
    """Reads a TF-written SavedModel directory: the object tree rooted at the saved object, with its variables'
    values (CRC-checked) and `signatures`; `asset(path)` makes the object for each asset file."""
    model = read_tf_saved_model(export_dir)
    values = read_variable_values(model)
    root = _Builder(model, values, asset).build(0, "")
    if not isinstance(root, LoadedTFObject):
        root = LoadedTFObject("", model.export_dir)
    if not isinstance(root.__dict__.get("signatures"), TFSignatureMap):
        root.__dict__["signatures"] = TFSignatureMap(
            {name: TFGraphFunction(f"signatures['{name}']", model.export_dir, info)
             for name, info in model.signatures.items()})
    root.__dict__["tensorflow_version"] = model.tensorflow_version
    root.__dict__["tensorflow_git_version"] = model.tensorflow_git_version
    return root
