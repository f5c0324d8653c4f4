"""Model files: layer and graph configs, `model.save` / `keras.models.load_model` (architecture,
weights, compile settings, optimizer state in one file) and `save_weights` / `load_weights`."""
from __future__ import annotations

import os
from typing import Any, Optional

import torch

from torchstrategy.checkpoint import load_state, save_state
from torchstrategy.nest import flatten as flatten_structure, map_structure

_MODEL_FORMAT = "torchstrategy.keras.model"
_WEIGHTS_FORMAT = "torchstrategy.keras.weights"


# ----- layer configs ---------------------------------------------------------------------------
def serialize_layer(layer: Any) -> dict:
    """{'class_name', 'config'} for a layer or model (Keras's serialize)."""
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def _registry(custom_objects: Optional[dict]) -> dict:
    from torchstrategy.keras import functional, layers, models

    table = {name: getattr(layers, name) for name in dir(layers) if isinstance(getattr(layers, name), type)}
    table.update(InputLayer=functional.InputLayer, Sequential=models.Sequential, Functional=models.Functional,
                 Model=models.Functional)
    from torchstrategy.keras.layers.input_layer import TensorOperation  # `x + 1.0` on KerasTensors

    table.setdefault("TensorOperation", TensorOperation)
    table.update(custom_objects or {})
    return table


def deserialize_layer(entry: dict, custom_objects: Optional[dict] = None) -> Any:
    """Rebuilds a layer or model from `serialize_layer`'s output."""
    table = _registry(custom_objects)
    name = entry["class_name"]
    if name not in table:
        raise ValueError(f"Unknown layer class '{name}'. If it is your own class, pass it in "
                         f"custom_objects={{'{name}': {name}}}.")
    cls = table[name]
    config = dict(entry["config"])
    if hasattr(cls, "from_config") and "custom_objects" in cls.from_config.__code__.co_varnames:
        return cls.from_config(config, custom_objects=custom_objects)
    return cls.from_config(config)


def model_from_config(entry: dict, custom_objects: Optional[dict] = None) -> Any:
    return deserialize_layer(entry, custom_objects)


# ----- functional graphs -----------------------------------------------------------------------
def functional_config(model: Any) -> dict:
    """The graph as JSON-able data: layers by name, then each call with references to tensors."""
    refs: dict[int, list] = {}
    for index, tensor in enumerate(model._inputs):
        refs[id(tensor)] = ["input", index, 0]
    node_entries = []
    for node_index, node in enumerate(model._nodes):
        to_ref = lambda item: {"__ref__": refs[id(item)]} if id(item) in refs else item  # noqa: E731
        node_entries.append({
            "layer": node.layer.name,
            "inputs": map_structure(to_ref, node.inputs),
            "args": map_structure(to_ref, list(node.args)),
            "kwargs": map_structure(to_ref, node.kwargs),
        })
        for out_index, tensor in enumerate(flatten_structure(node.outputs)):
            refs[id(tensor)] = ["node", node_index, out_index]
    return {
        "name": model.name,
        "layers": [serialize_layer(layer) for layer in model.graph_layers],
        "inputs": [layer.name for layer in model._input_layers],
        "nodes": node_entries,
        "outputs": map_structure(lambda t: {"__ref__": refs[id(t)]}, model._outputs),
    }


def functional_from_config(config: dict, custom_objects: Optional[dict] = None) -> Any:
    from torchstrategy.keras import models

    by_name = {entry["config"]["name"]: deserialize_layer(entry, custom_objects) for entry in config["layers"]}
    inputs = [by_name[name].output for name in config["inputs"]]
    node_outputs: list[list] = []

    def resolve(item: Any) -> Any:
        if isinstance(item, dict) and "__ref__" in item:
            kind, a, b = item["__ref__"]
            return inputs[a] if kind == "input" else node_outputs[a][b]
        if isinstance(item, dict):
            return {k: resolve(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return type(item)(resolve(v) for v in item)
        return item

    for entry in config["nodes"]:
        kwargs = resolve(entry["kwargs"])
        out = by_name[entry["layer"]](resolve(entry["inputs"]), *resolve(entry["args"]), **kwargs)
        node_outputs.append(flatten_structure(out))
    return models.Functional(inputs, resolve(config["outputs"]), name=config["name"])


# ----- files -----------------------------------------------------------------------------------
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


def save_model(model: Any, filepath: str, overwrite: bool = True, include_optimizer: bool = True) -> None:
    """Writes the whole model to `filepath` (atomically)."""
    from torchstrategy.keras import optimizers

    if not model.built:
        raise ValueError("This model has not been built yet, so it has no weights to save. Call it on data, "
                         "give the first layer input_shape=, or call model.build(input_shape) first.")
    _check_overwrite(filepath, overwrite)
    payload: dict = {
        "format": _MODEL_FORMAT,
        "version": 1,
        "model": serialize_layer(model),
        "build_input_shape": _plain_shape(model),
        "weights": _weights_payload(model),
        "compile": model.get_compile_config(),
    }
    if include_optimizer and model.optimizer is not None:
        payload["optimizer"] = optimizers.serialize(model.optimizer)
        payload["optimizer_state"] = _full_state(model.optimizer.state_dict()) if _optimizer_built(model.optimizer) else None
    _write(model, payload, filepath)


def holds_shards(model: Any) -> bool:
    """True when some weight is sharded (a DTensor): saving it gathers, so every replica must call."""
    from torch.distributed.tensor import DTensor

    return any(isinstance(w, DTensor) for w in model.weights)


def _write(model: Any, payload: dict, filepath: str) -> None:
    """Writes a Keras file. A sharded model was gathered by every replica (each had to call): the chief writes
    and all return once the file is complete. Otherwise whoever calls writes (as before: often the chief alone)."""
    if not holds_shards(model):
        save_state(payload, filepath)
        return
    from torchstrategy.checkpoint.sharded import run_on_chief

    run_on_chief(lambda: save_state(payload, filepath), model.distribute_strategy)


def _optimizer_built(optimizer: Any) -> bool:
    return bool(getattr(optimizer, "param_groups", None))


def _plain_shape(model: Any) -> Any:
    shape = model._build_input_shape
    if shape is None and hasattr(model, "_inputs"):
        shape = [t.shape for t in model._inputs]
    return None if shape is None else map_structure(lambda d: d, shape)


def load_model(filepath: str, custom_objects: Optional[dict] = None, compile: bool = True, **kwargs: Any) -> Any:
    """Rebuilds a model saved by `model.save` (keras.models.load_model)."""
    from torchstrategy.keras import optimizers

    payload = load_state(filepath)
    if not isinstance(payload, dict) or payload.get("format") != _MODEL_FORMAT:
        raise ValueError(f"'{filepath}' is not a model file written by model.save(); for weights-only files "
                         f"use model.load_weights().")
    model = deserialize_layer(payload["model"], custom_objects)
    if not model.built and payload.get("build_input_shape") is not None:
        model.build(_as_shape(payload["build_input_shape"]))
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


def _as_shape(shape: Any) -> Any:
    if isinstance(shape, list) and shape and all(isinstance(s, (list, tuple)) for s in shape):
        return [tuple(s) for s in shape] if len(shape) > 1 else tuple(shape[0])
    return tuple(shape)


def save_weights(model: Any, filepath: str, overwrite: bool = True) -> None:
    """Writes the model's weights, in Keras order, to `filepath` (atomically)."""
    if not model.built:
        raise ValueError("This model has not been built yet, so it has no weights to save.")
    _check_overwrite(filepath, overwrite)
    _write(model, {"format": _WEIGHTS_FORMAT, "version": 1, "weights": _weights_payload(model),
                   "build_input_shape": _plain_shape(model)}, filepath)


def load_weights(model: Any, filepath: str) -> None:
    """Loads weights written by `save_weights` or `save` into an architecture-compatible model."""
    payload = load_state(filepath)
    if not isinstance(payload, dict) or payload.get("format") not in (_WEIGHTS_FORMAT, _MODEL_FORMAT):
        raise ValueError(f"'{filepath}' is not a weights file written by save_weights() or save().")
    if not model.built and payload.get("build_input_shape") is not None:
        model.build(_as_shape(payload["build_input_shape"]))
    model.set_weights(payload["weights"])
