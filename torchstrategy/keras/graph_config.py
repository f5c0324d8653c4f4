"""Layer and model configs in Keras 3's form (`{'module', 'class_name', 'config', 'registered_name',
'build_config'}`, functional graphs as `inbound_nodes` of `__keras_tensor__` references) and back; also reads
Keras 2's graphs and torchstrategy's earlier `__ref__` graphs."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras import keras_config, operation
from torchstrategy.keras.layers.base import Layer
from torchstrategy.keras.layers.input_layer import InputLayer, KerasTensor
from torchstrategy.keras.operation import OpStep
from torchstrategy.nest import flatten as flatten_structure, map_structure


# ----- classes --------------------------------------------------------------------------------------------------
def _builtin_table() -> dict:
    from torchstrategy.keras import layers, models

    table = {name: getattr(layers, name) for name in dir(layers) if isinstance(getattr(layers, name), type)}
    table.update(InputLayer=InputLayer, Sequential=models.Sequential, Functional=models.Functional,
                 Model=models.Functional)
    from torchstrategy.keras.feature_space import FeatureSpace  # keras.utils.FeatureSpace, saved as a layer

    table.setdefault("FeatureSpace", FeatureSpace)
    return table


def layer_class(name: str, custom_objects: Optional[dict], registered: Optional[str] = None) -> type:
    """The class a config names: custom_objects, then registered objects ('package>Name'), then built-ins."""
    from torchstrategy.keras import object_registration

    custom = custom_objects or {}
    for key in (registered, name):
        if key and key in custom:
            return custom[key]
    if registered:
        found = object_registration.get_registered_object(registered)
        if found is not None:
            return found
    found = object_registration.get_registered_object(name)  # a custom_object_scope's name, or 'package>Name'
    if found is not None:
        return found
    table = _builtin_table()
    if name in table and not (registered and ">" in registered):
        return table[name]
    raise ValueError(f"Unknown layer class '{name}'" + (f" (registered as '{registered}')" if registered else "")
                     + f". If it is your own class, pass it in custom_objects={{'{name}': {name}}} or register it "
                     f"with @keras.saving.register_keras_serializable().")


def _builtin(cls: type) -> bool:
    return cls.__module__.startswith("torchstrategy.keras.")


# ----- one layer ------------------------------------------------------------------------------------------------
def layer_entry(layer: Any) -> dict:
    """A layer or model as Keras serializes it (with `build_config` when its input shape is known)."""
    from torchstrategy.keras import models

    if isinstance(layer, OpStep):  # keras.ops on KerasTensors (`x != 0`, `ops.sum(x, axis=1)`)
        return {"module": layer.module, "class_name": layer.class_name, "config": layer.get_config(),
                "registered_name": layer.class_name}
    if isinstance(layer, InputLayer):
        config = {"batch_shape": list(layer._batch_input_shape), "dtype": layer.dtype, "sparse": False,
                  "ragged": False, "name": layer.name, "optional": False}
        return {"module": "keras.layers", "class_name": "InputLayer", "config": config, "registered_name": None}
    cls = type(layer)
    if cls is models.Sequential:
        entry = {"module": "keras", "class_name": "Sequential", "config": layer.get_config(), "registered_name": None}
    elif cls is models.Functional:
        entry = {"module": "keras.src.models.functional", "class_name": "Functional", "config": layer.get_config(),
                 "registered_name": None}
    else:
        entry = keras_config.object_entry("layers", cls, layer.get_config())
    shape = getattr(layer, "_build_input_shape", None)
    if layer.built and shape is not None and cls is not models.Functional and cls.__name__ not in _BUILT_BY_CALL:
        entry["build_config"] = {"input_shape": keras_config.plain(shape)}
    return entry


# Keras layers whose build takes several shapes (no `input_shape` build_config): their graph call builds them
_BUILT_BY_CALL = {"MultiHeadAttention"}


def _input_layer_config(config: dict) -> dict:
    out = {"name": config.get("name"), "dtype": keras_config.policy_name(config.get("dtype"))}
    shape = config.get("batch_shape", config.get("batch_input_shape"))
    out["batch_input_shape"] = shape
    for key in ("sparse", "ragged", "optional"):
        if config.get(key):
            raise NotImplementedError(f"InputLayer '{out['name']}': {key}=True inputs are not supported here.")
    return out


def layer_from_entry(entry: dict, custom_objects: Optional[dict] = None) -> Any:
    """Rebuilds a layer or model from its Keras (or earlier torchstrategy) config entry."""
    from torchstrategy.keras import models

    if not isinstance(entry, dict) or "class_name" not in entry:
        raise ValueError(f"A layer config must be a dict with 'class_name' and 'config'; got {entry!r:.200}.")
    name = entry["class_name"]
    if str(entry.get("module") or "").startswith("keras.src.ops"):
        return operation.from_keras_entry(name, entry["module"], entry.get("config"))
    cls = layer_class(name, custom_objects, entry.get("registered_name"))
    config = dict(entry.get("config") or {})
    what = f"layer '{config.get('name', name)}'"
    if cls is InputLayer:
        config = _input_layer_config(config)
    elif _builtin(cls) and cls not in (models.Sequential, models.Functional) and name != "FeatureSpace":
        config = keras_config.config_from_keras("layers", name, cls, config, what)
    elif "dtype" in config:
        config["dtype"] = keras_config.policy_name(config["dtype"])
    from_config = cls.from_config
    if "custom_objects" in from_config.__code__.co_varnames:
        layer = from_config(config, custom_objects=custom_objects)
    else:
        layer = from_config(config)
    build = (entry.get("build_config") or {}).get("input_shape")
    if build is not None and not layer.built and isinstance(layer, models.Model):
        layer.build(as_shape(build))
    return layer


def as_shape(shape: Any) -> Any:
    """A JSON shape (list, or list of lists) as the tuple(s) `build` takes."""
    if isinstance(shape, list) and shape and all(isinstance(s, (list, tuple)) for s in shape):
        return [tuple(s) for s in shape] if len(shape) > 1 else tuple(shape[0])
    return tuple(shape)


# ----- functional graphs ----------------------------------------------------------------------------------------
def _dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "") if isinstance(dtype, torch.dtype) else str(dtype)


def functional_config(model: Any) -> dict:
    """A functional model's config as Keras writes it: layers with their `inbound_nodes`, input/output refs."""
    node_index: dict[int, int] = {}
    calls: dict[int, int] = {}
    for node in model._nodes:
        node_index[id(node)] = calls.get(id(node.layer), 0)
        calls[id(node.layer)] = node_index[id(node)] + 1
    inputs = {id(t): t.node.layer.name for t in model._inputs}

    def history(tensor: KerasTensor) -> list:
        if id(tensor) in inputs:
            return [inputs[id(tensor)], 0, 0]
        return [tensor.node.layer.name, node_index[id(tensor.node)], tensor.index or 0]

    def ref(item: Any) -> Any:
        if isinstance(item, KerasTensor):
            return {"class_name": "__keras_tensor__", "config": {"shape": list(item.shape),
                    "dtype": _dtype_name(item.dtype), "keras_history": history(item)}}
        if isinstance(item, (slice, type(Ellipsis), torch.Tensor)):  # an op's index or constant (`x[:, 1:]`)
            from torchstrategy.keras import serialization_lib

            return serialization_lib.serialize_keras_object(item)
        return keras_config.plain(item)

    layers = []
    for layer in getattr(model, "graph_layers", model.layers):  # tensor operations (`x + 1.0`) are graph steps too
        entry = layer_entry(layer)
        entry["name"] = layer.name
        entry["inbound_nodes"] = [
            {"args": [map_structure(ref, node.inputs)] + [map_structure(ref, a) for a in node.args],
             "kwargs": {k: map_structure(ref, v) for k, v in node.kwargs.items() if k != "training" or v is not None}}
            for node in model._nodes if node.layer is layer]
        layers.append(entry)

    def refs(structure: Any) -> Any:
        if isinstance(structure, KerasTensor):
            return history(structure)
        if isinstance(structure, dict):
            return {k: history(v) for k, v in structure.items()}
        return [history(t) for t in flatten_structure(structure)]

    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": refs(model._input_structure), "output_layers": refs(model._outputs)}


_SPECIAL_VALUES = ("__slice__", "__ellipsis__", "__numpy__", "__tensor__", "__bytes__")


def _is_ref(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and isinstance(value[1], int)


def functional_from_config(config: dict, custom_objects: Optional[dict] = None, cls: Optional[type] = None) -> Any:
    """Rebuilds a functional model from Keras 3's, Keras 2's or torchstrategy's earlier config, as
    `cls(inputs, outputs, name=...)` (default: Functional)."""
    from torchstrategy.keras import models

    cls = cls or models.Functional
    if "nodes" in config:
        return _functional_from_refs(config, custom_objects, cls)
    entries = [operation.upgrade_legacy_entry(entry) for entry in config["layers"]]
    built = {}
    for entry in entries:
        name = entry.get("name") or entry["config"]["name"]
        built[name] = layer_from_entry(entry, custom_objects)
    outputs: dict[str, list] = {name: [[layer.output]] for name, layer in built.items() if isinstance(layer, InputLayer)}
    pending = [(entry.get("name") or entry["config"]["name"], node) for entry in entries
               for node in entry.get("inbound_nodes", []) if not isinstance(built[entry.get("name") or
                                                                          entry["config"]["name"]], InputLayer)]

    def tensor(hist: list) -> KerasTensor:
        layer_name, index, position = hist[0], hist[1], hist[2]
        return outputs[layer_name][index][position]

    def ready(hist: list) -> bool:
        return hist[0] in outputs and len(outputs[hist[0]]) > hist[1]

    def resolve(item: Any, check: bool) -> Any:
        if isinstance(item, dict) and item.get("class_name") == "__keras_tensor__":
            hist = item["config"]["keras_history"]
            return ready(hist) if check else tensor(hist)
        if isinstance(item, dict) and item.get("class_name") in _SPECIAL_VALUES:  # `x[:, 1:]`'s slices, constants
            from torchstrategy.keras import serialization_lib

            return True if check else serialization_lib.deserialize_keras_object(item)
        if isinstance(item, dict):
            values = {k: resolve(v, check) for k, v in item.items()}
            return all(values.values()) if check else values
        if isinstance(item, (list, tuple)):
            values = [resolve(v, check) for v in item]
            return all(values) if check else values
        return True if check else item

    def keras2_inputs(node: list) -> tuple:
        hists = [entry[:3] for entry in node]
        kwargs = node[0][3] if node and len(node[0]) > 3 else {}
        return hists, kwargs

    while pending:
        progressed = False
        for item in list(pending):
            layer_name, node = item
            if next(entry for entry in pending if entry[0] == layer_name) is not item:
                continue  # a layer's calls run in their order, so node indices match
            if isinstance(node, dict):
                if not resolve(node.get("args", []), True) or not resolve(node.get("kwargs", {}), True):
                    continue
                args, kwargs = resolve(node.get("args", []), False), resolve(node.get("kwargs", {}), False)
            else:
                hists, kwargs = keras2_inputs(node)
                if not all(ready(h) for h in hists):
                    continue
                values = [tensor(h) for h in hists]
                args, kwargs = [values[0] if len(values) == 1 else values], resolve(kwargs, False)
            out = built[layer_name](*args, **kwargs)
            outputs.setdefault(layer_name, []).append(flatten_structure(out))
            pending.remove(item)
            progressed = True
        if not progressed:
            names = sorted({name for name, _ in pending})
            raise ValueError(f"The model config's graph cannot be rebuilt: the inputs of layer(s) {names} are never "
                             f"computed (a missing layer or a cycle in 'inbound_nodes').")

    def structure(refs: Any) -> Any:
        if _is_ref(refs):
            return tensor(refs)
        if isinstance(refs, dict):
            return {k: tensor(v) for k, v in refs.items()}
        return [tensor(r) for r in refs]

    model = cls(structure(config["input_layers"]), structure(config["output_layers"]), name=config.get("name"))
    if config.get("trainable") is False:
        model.trainable = False
    return model


def _functional_from_refs(config: dict, custom_objects: Optional[dict], cls: type) -> Any:
    """torchstrategy's earlier graph config (`nodes` with `__ref__` entries), kept readable."""

    by_name = {entry["config"]["name"]: layer_from_entry(entry, custom_objects) for entry in config["layers"]}
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
        out = by_name[entry["layer"]](resolve(entry["inputs"]), *resolve(entry["args"]), **resolve(entry["kwargs"]))
        node_outputs.append(flatten_structure(out))
    return cls(inputs, resolve(config["outputs"]), name=config["name"])
