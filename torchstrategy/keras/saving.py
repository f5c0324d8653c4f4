"""Model files: `model.save` / `keras.models.load_model` and `save_weights` / `load_weights` in the format the
path or the file's header names (formats/: `.keras`, `.weights.h5`, legacy `.h5`; else torchstrategy's own)."""
from __future__ import annotations

import os
import warnings
from typing import Any, Callable, Optional

import torch

from torchstrategy import formats
from torchstrategy.checkpoint import load_state, save_state, write_atomically
from torchstrategy.keras import graph_config, keras_files, legacy_files
from torchstrategy.keras.file_editor import KerasFileEditor  # noqa: F401  (keras.saving.KerasFileEditor)
from torchstrategy.keras.object_registration import (  # noqa: F401  (keras.saving's registration API)
    CustomObjectScope, custom_object_scope, get_custom_objects, get_registered_name, get_registered_object,
    register_keras_serializable,
)
from torchstrategy.keras.serialization_lib import deserialize_keras_object, serialize_keras_object  # noqa: F401
from torchstrategy.nest import map_structure

_MODEL_FORMAT = "torchstrategy.keras.model"
_WEIGHTS_FORMAT = "torchstrategy.keras.weights"


# ----- layer configs (Keras 3's form; graph_config.py) ---------------------------------------------------------
def serialize_layer(layer: Any) -> dict:
    """{'module', 'class_name', 'config', 'registered_name'[, 'build_config']} of a layer or model (Keras's)."""
    return graph_config.layer_entry(layer)


def layer_class(name: str, custom_objects: Optional[dict] = None) -> type:
    """The layer class a config's class_name names (custom_objects, registered objects, built-ins)."""
    return graph_config.layer_class(name, custom_objects)



def deserialize_layer(entry: dict, custom_objects: Optional[dict] = None) -> Any:
    """Rebuilds a layer or model from its config entry (Keras 3's, Keras 2's, or ours)."""
    return graph_config.layer_from_entry(entry, custom_objects)


def model_from_config(entry: dict, custom_objects: Optional[dict] = None) -> Any:
    """keras.models.model_from_config."""
    return deserialize_layer(entry, custom_objects)


def functional_config(model: Any) -> dict:
    """A functional model's config (Keras's `layers` with `inbound_nodes`, `input_layers`, `output_layers`)."""
    return graph_config.functional_config(model)


def functional_from_config(config: dict, custom_objects: Optional[dict] = None, cls: Optional[type] = None) -> Any:
    """Rebuilds a functional model from its config (as `cls(inputs, outputs, name=...)` when given)."""
    return graph_config.functional_from_config(config, custom_objects, cls)


# ----- writing -------------------------------------------------------------------------------------------------
def _check_overwrite(filepath: str, overwrite: bool) -> None:
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"'{filepath}' exists and overwrite=False. Pass overwrite=True or another path.")


def _weights_payload(model: Any) -> list[torch.Tensor]:
    from torchstrategy.keras import backend

    return [backend.full_value(w).cpu().clone() for w in model.weights]  # sharded ones gathered: full tensors


def _full_state(value: Any) -> Any:
    """An optimizer state dict with every sharded slot gathered into a full tensor (Keras files hold those)."""
    from torchstrategy.keras import backend

    if isinstance(value, torch.Tensor):
        return backend.full_value(value).cpu()
    if isinstance(value, dict):
        return {key: _full_state(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_full_state(item) for item in value)
    return value


def holds_shards(model: Any) -> bool:
    """True when some weight is sharded (a DTensor): saving it gathers, so every replica must call."""
    from torch.distributed.tensor import DTensor

    return any(isinstance(w, DTensor) for w in model.weights)


def _write_file(model: Any, filepath: str, write: Callable[[Any], Any]) -> None:
    """Writes a file atomically. A sharded model was gathered by every replica (each had to call): the chief
    writes and all return once the file is complete. Otherwise whoever calls writes."""
    if not holds_shards(model):
        write_atomically(filepath, write)
        return
    from torchstrategy.checkpoint.sharded import run_on_chief

    run_on_chief(lambda: write_atomically(filepath, write), model.distribute_strategy)


def _write(model: Any, payload: dict, filepath: str) -> None:
    if not holds_shards(model):
        save_state(payload, filepath)
        return
    from torchstrategy.checkpoint.sharded import run_on_chief

    run_on_chief(lambda: save_state(payload, filepath), model.distribute_strategy)


def _require_built(model: Any) -> None:
    if not model.built:
        raise ValueError("This model has not been built yet, so it has no weights to save. Call it on data, "
                         "give the first layer input_shape=, or call model.build(input_shape) first.")


def _format_to_write(filepath: str, save_format: Optional[str]) -> Optional[formats.FileFormat]:
    """The file format: a `.keras` / `.h5` / `.hdf5` suffix decides (Keras 3 ignores save_format there, with a
    warning); other paths take save_format ('keras', 'h5', 'torchstrategy'), else our own format."""
    by_path = formats.for_path(filepath)
    if by_path is not None and by_path in (formats.KERAS_ZIP, formats.LEGACY_H5):
        if save_format:
            warnings.warn(f"The `save_format` argument is deprecated in Keras 3 and the file path decides the format; "
                          f"remove it. Received: save_format={save_format}", stacklevel=3)
        return by_path
    if not save_format:
        return by_path
    chosen = {"keras": formats.KERAS_ZIP, "h5": formats.LEGACY_H5, "torchstrategy": None}
    if save_format not in chosen:
        raise ValueError(f"Unknown save_format={save_format!r}: use 'keras' (the .keras zip), 'h5' (Keras 2's HDF5) "
                         f"or leave it None to follow the path's suffix.")
    return chosen[save_format]


def _only(kwargs: dict, allowed: dict, where: str) -> dict:
    """`allowed` (name -> default) filled from `kwargs`; any other keyword is a ValueError naming it."""
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(f"{where} got unsupported keyword argument(s) {unknown}; it takes "
                         f"{sorted(allowed) or 'none'} besides its named parameters (as Keras 3).")
    return {name: kwargs.get(name, default) for name, default in allowed.items()}


def save_model(model: Any, filepath: str, overwrite: bool = True, zipped: Optional[bool] = None,
               **kwargs: Any) -> None:
    """Writes the whole model (architecture, weights, compile config, optimizer state) to `filepath`, atomically:
    a Keras 3 zip for `.keras`, Keras 2's HDF5 for `.h5`/`.hdf5` (or save_format='h5'), else our own format.
    Keras 3's keywords `include_optimizer` (default True) and `save_format` are taken; `zipped=False` (a `.keras`
    folder instead of a zip) is not supported."""
    from torchstrategy.keras import optimizers

    options = _only(kwargs, {"include_optimizer": True, "save_format": None}, "save_model")
    include_optimizer, save_format = options["include_optimizer"], options["save_format"]
    _require_built(model)
    _check_overwrite(filepath, overwrite)
    fmt = _format_to_write(filepath, save_format)
    if zipped is False and fmt is formats.KERAS_ZIP:
        raise NotImplementedError(f"save(..., zipped=False) writes an unzipped .keras folder, which torchstrategy "
                                  f"does not support; leave zipped=None to write the '{filepath}' zip file.")
    if fmt is formats.KERAS_ZIP:
        archive = keras_files.build_archive(model, include_optimizer)
        _write_file(model, filepath, lambda handle: formats.KERAS_ZIP.write(handle, archive))
        return
    if fmt is formats.LEGACY_H5:
        content = legacy_files.build_content(model, include_model=True, include_optimizer=include_optimizer)
        _write_file(model, filepath, lambda handle: formats.LEGACY_H5.write(handle, content))
        return
    payload: dict = {
        "format": _MODEL_FORMAT, "version": 1, "model": serialize_layer(model), "build_input_shape": _plain_shape(model),
        "weights": _weights_payload(model), "compile": model.get_compile_config(),
    }
    if include_optimizer and model.optimizer is not None:
        payload["optimizer"] = optimizers.serialize(model.optimizer)
        payload["optimizer_state"] = _full_state(model.optimizer.state_dict()) if _optimizer_built(model.optimizer) else None
    _write(model, payload, filepath)


def save_layer(layer: Any, filepath: str, overwrite: bool = True) -> None:
    """Writes a layer that is not a model (a FeatureSpace) to a `.keras` file: its config and variables;
    `load_model` reads it back."""
    _check_overwrite(filepath, overwrite)
    if formats.for_path(filepath) is not formats.KERAS_ZIP:
        raise ValueError(f"Invalid filepath extension for saving. Please add the `.keras` extension. Received: "
                         f"filepath={filepath}")
    from torchstrategy.keras import _legacy_backend

    metadata = {"keras_version": _legacy_backend.version()}
    archive = formats.KerasArchive(graph_config.layer_entry(layer), metadata,
                                   keras_files.weights_tree(layer, include_optimizer=False))
    _write_file(layer, filepath, lambda handle: formats.KERAS_ZIP.write(handle, archive))


def _optimizer_built(optimizer: Any) -> bool:
    return bool(getattr(optimizer, "param_groups", None))


def _plain_shape(model: Any) -> Any:
    shape = model._build_input_shape
    if shape is None and hasattr(model, "_inputs"):
        shape = [t.shape for t in model._inputs]
    return None if shape is None else map_structure(lambda d: d, shape)


def save_weights(model: Any, filepath: str, overwrite: bool = True, max_shard_size: Any = None,
                 **kwargs: Any) -> None:
    """Writes the model's weights (and optimizer variables, as Keras) to `filepath`, atomically: Keras 3's layout for
    `.weights.h5`, Keras 2's for `.h5`/`.hdf5`, else our own format. Sharded files (`max_shard_size`) are not
    supported."""
    _only(kwargs, {}, "save_weights")
    if max_shard_size is not None:
        raise NotImplementedError(f"save_weights(max_shard_size={max_shard_size!r}) writes sharded weights files, "
                                  f"which torchstrategy does not support; leave max_shard_size=None.")
    _require_built(model)
    _check_overwrite(filepath, overwrite)
    fmt = formats.for_path(filepath)
    if fmt is formats.KERAS_H5:
        tree = keras_files.weights_tree(model)
        _write_file(model, filepath, lambda handle: formats.KERAS_H5.write(handle, tree))
    elif fmt is formats.LEGACY_H5:
        content = legacy_files.build_content(model, include_model=False)
        _write_file(model, filepath, lambda handle: formats.LEGACY_H5.write(handle, content))
    elif fmt is formats.KERAS_ZIP:
        raise ValueError(f"save_weights writes weights only: use a '.weights.h5' path, not '{filepath}' "
                         f"(model.save('{filepath}') writes the whole model).")
    else:
        _write(model, {"format": _WEIGHTS_FORMAT, "version": 1, "weights": _weights_payload(model),
                       "build_input_shape": _plain_shape(model)}, filepath)


# ----- reading -------------------------------------------------------------------------------------------------
def _own_payload(filepath: str, what: str) -> dict:
    head = formats.read_header(filepath, 8)
    if not (head.startswith(formats.OWN_MAGIC) or head.startswith(formats.ZIP_MAGIC)):
        raise ValueError(f"'{filepath}' is not a Keras file (.keras zip, .weights.h5 or .h5) nor a torchstrategy "
                         f"{what} file; its first bytes are {head!r}.")
    return load_state(filepath)


def load_model(filepath: str, custom_objects: Optional[dict] = None, compile: bool = True,
               safe_mode: bool = True) -> Any:
    """Rebuilds a saved model (keras.models.load_model) from a `.keras` zip, a legacy `.h5` or our own format,
    whichever the file's header shows."""
    from torchstrategy.keras import optimizers

    if os.path.isdir(filepath):
        raise ValueError(_directory_message(os.fspath(filepath)))
    fmt = formats.of_file(filepath)
    if fmt is formats.KERAS_ZIP:
        return keras_files.model_from_archive(formats.KERAS_ZIP.read(filepath), filepath, custom_objects, compile)
    if fmt is formats.LEGACY_H5:
        return legacy_files.model_from_content(formats.LEGACY_H5.read(filepath), filepath, custom_objects, compile)
    if fmt is formats.KERAS_H5:
        raise ValueError(f"'{filepath}' is a weights file (.weights.h5), not a model: build the model and call "
                         f"model.load_weights('{filepath}').")
    payload = _own_payload(filepath, "model")
    if not isinstance(payload, dict) or payload.get("format") != _MODEL_FORMAT:
        raise ValueError(f"'{filepath}' is not a model file written by model.save(); for weights-only files "
                         f"use model.load_weights().")
    model = deserialize_layer(payload["model"], custom_objects)
    if not model.built and payload.get("build_input_shape") is not None:
        model.build(graph_config.as_shape(payload["build_input_shape"]))
    model.set_weights(payload["weights"])
    if compile and payload.get("compile") is not None:
        config = payload["compile"]
        optimizer = optimizers.get(payload["optimizer"]) if payload.get("optimizer") else "rmsprop"
        model.compile(optimizer=optimizer, loss=config["loss"], metrics=config["metrics"],
                      weighted_metrics=config["weighted_metrics"], loss_weights=config["loss_weights"])
        if payload.get("optimizer_state") is not None:
            model.optimizer.build(model.trainable_variables)
            model.optimizer.load_state_dict(payload["optimizer_state"])
    return model


def _directory_message(filepath: str) -> str:
    """Keras 3's refusal of a SavedModel directory in load_model (same meaning), with the route that works here."""
    from torchstrategy.formats.tf_saved_model import is_tf_saved_model
    from torchstrategy.formats.tf_saved_model_objects import weights_route

    refusal = (f"File format not supported: filepath={filepath}. Keras 3 only supports V3 `.keras` files and legacy "
               f"H5 format files (`.h5` extension); the legacy SavedModel format is not supported by `load_model()` "
               f"in Keras 3.")
    if is_tf_saved_model(filepath):
        return (f"{refusal} This directory is a TensorFlow-written SavedModel: its TF graphs cannot run here, so "
                f"keras.layers.TFSMLayer cannot serve it either. {weights_route(filepath)}")
    return (f"{refusal} To reload a SavedModel as an inference-only layer, use `keras.layers.TFSMLayer({filepath}, "
            f"call_endpoint='serving_default')` (your `call_endpoint` might have a different name).")


def load_weights(model: Any, filepath: str, skip_mismatch: bool = False, **kwargs: Any) -> None:
    """Loads weights written by `save_weights` or `save` (Keras 3, Keras 2 or our format) into a model of the same
    architecture; every layer is checked before any weight is assigned. `by_name=True` (a keyword, as in Keras 3)
    matches legacy `.h5` weights by layer name."""
    by_name = _only(kwargs, {"by_name": False}, "load_weights")["by_name"]
    fmt = formats.of_file(filepath)
    if fmt is formats.LEGACY_H5:
        content = formats.LEGACY_H5.read(filepath)
        if not model.built:
            raise ValueError(f"Build the model before loading '{filepath}' into it (call it on data or model.build).")
        legacy_files.apply_weights(model, content, filepath, by_name=by_name, skip_mismatch=skip_mismatch)
        return
    if by_name:
        raise ValueError("by_name=True is only supported for legacy Keras 2 '.h5' weights files (as in Keras).")
    if fmt in (formats.KERAS_H5, formats.KERAS_ZIP):
        if not model.built:
            raise ValueError(f"Build the model before loading '{filepath}' into it (call it on data or model.build).")
        tree = formats.KERAS_H5.read(filepath) if fmt is formats.KERAS_H5 else formats.KERAS_ZIP.read(filepath).weights
        keras_files.apply_weights_tree(model, tree, filepath, skip_mismatch=skip_mismatch)
        if "optimizer" in tree and getattr(model, "optimizer", None) is not None:
            keras_files.apply_optimizer_state(model, tree["optimizer"], filepath, build=False,
                                              inner_group=tree.get("optimizer/inner_optimizer"))
        return
    payload = _own_payload(filepath, "weights")
    if not isinstance(payload, dict) or payload.get("format") not in (_WEIGHTS_FORMAT, _MODEL_FORMAT):
        raise ValueError(f"'{filepath}' is not a weights file written by save_weights() or save().")
    if not model.built and payload.get("build_input_shape") is not None:
        model.build(graph_config.as_shape(payload["build_input_shape"]))
    model.set_weights(payload["weights"])
