"""A model as Keras 2's `.h5` holds it: `layer_names` in `model.layers` order, each layer's weights
(trainable, then non-trainable) by `weight_names`, `model_config`/`training_config`; loaded by order or by name."""
from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from torchstrategy.formats import FormatError, LegacyH5
from torchstrategy.keras import backend, graph_config, keras_files, weight_paths


def _legacy_weights(layer: Any) -> list:
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def _weight_name(model: Any, layer: Any, tensor: Any) -> str:
    path = getattr(tensor, "_keras_path", None) or f"{layer.name}/weight"
    return f"{model.name}/{path}"


def _top_layers(model: Any) -> list:
    return weight_paths.keras_layers(model)


def build_content(model: Any, include_model: bool, include_optimizer: bool = True) -> LegacyH5:
    """What `model.save('x.h5')` (include_model) or `save_weights('x.h5')` writes."""
    from torchstrategy.keras import _legacy_backend

    layers = [(layer.name, [(_weight_name(model, layer, w), keras_files._numpy(w)) for w in _legacy_weights(layer)])
              for layer in _top_layers(model)]
    names = [n for _, ws in layers for n, _ in ws]
    if len(set(names)) != len(names):  # two weights with one name (a layer used in two models): number them
        layers = [(ln, [(f"{n}_{i}" if names.count(n) > 1 else n, v) for i, (n, v) in enumerate(ws)]) for ln, ws in layers]
    attrs = {"backend": "tensorflow", "keras_version": _legacy_backend.version()}
    if not include_model:
        return LegacyH5(None, None, layers, [], attrs)
    config = graph_config.layer_entry(model)
    config = {"class_name": config["class_name"], "config": config["config"]}
    training = keras_files.compile_config(model)
    optimizer = []
    if training is not None:
        opt = training.pop("optimizer")
        training["optimizer_config"] = {"class_name": opt["class_name"], "config": opt["config"]} if opt else None
        tree = keras_files.weights_tree(model, include_optimizer)
        if include_optimizer and "optimizer" in tree:
            slots = weight_paths.optimizer_variables(model.optimizer, list(model.trainable_weights)) or []
            wrapper = tree["optimizer"].name
            inner = tree["optimizer/inner_optimizer"].name if "optimizer/inner_optimizer" in tree else wrapper
            slot_prefix = inner if inner is wrapper else f"{wrapper}/{inner}"  # Keras nests a wrapped one's slots
            labels = [f"{wrapper}/{name}" for name in ("iteration", "learning_rate", "step_counter", "dynamic_scale")
                      ] if inner is not wrapper else []  # a LossScaleOptimizer's own variables come first
            labels += [f"{inner}/{kind}" if tensor is None or kind == "iteration" else
                       f"{slot_prefix}/{weight_paths.slot_name(f'{model.name}/' + str(getattr(tensor, '_keras_path', i)), kind)}"
                       for i, (kind, tensor) in enumerate(slots)]
            labels += [f"{inner}/u_product"] * (len(tree["optimizer"].values) - len(labels))
            optimizer = list(zip(labels, tree["optimizer"].values))
    return LegacyH5(config, training, layers, optimizer, attrs)


def apply_weights(model: Any, content: LegacyH5, where: str, by_name: bool = False,
                  skip_mismatch: bool = False) -> None:
    """Loads a legacy file's weights: layer by layer in order (layers without weights left out on both sides,
    as Keras), or by layer name; every check passes before anything is assigned."""
    plan = []
    stored = [(name, weights) for name, weights in content.layers if weights or by_name]
    if by_name:
        by = {layer.name: layer for layer in _top_layers(model)}
        pairs = [(by[name], name, weights) for name, weights in stored if name in by]
    else:
        layers = [layer for layer in _top_layers(model) if _legacy_weights(layer)]
        if len(layers) != len(stored):
            raise FormatError(f"'{where}' does not fit this model: the model has {len(layers)} layers with weights "
                              f"({[l.name for l in layers][:6]}...), the file {len(stored)} "
                              f"({[n for n, _ in stored][:6]}...). Use by_name=True to load matching layer names.")
        pairs = [(layer, name, weights) for layer, (name, weights) in zip(layers, stored)]
    for layer, name, weights in pairs:
        targets = _legacy_weights(layer)
        problem = None
        if len(targets) != len(weights):
            problem = (f"layer '{layer.name}' has {len(targets)} weights, the file's layer '{name}' {len(weights)} "
                       f"(shapes {[tuple(np.shape(v)) for _, v in weights]})")
        else:
            for (weight_name, value), target in zip(weights, targets):
                if tuple(np.shape(value)) != tuple(target.shape):
                    problem = (f"layer '{layer.name}', weight '{weight_name}': the model's has shape "
                               f"{tuple(target.shape)}, the file's {tuple(np.shape(value))}")
                    break
        if problem is not None:
            if skip_mismatch:
                warnings.warn(f"Skipping loading weights of {problem} ('{where}').", stacklevel=3)
                continue
            raise FormatError(f"'{where}' does not fit this model: {problem}.")
        plan += [(target, value) for target, (_, value) in zip(targets, weights)]
    for target, value in plan:
        backend.assign_full(target, backend.to_tensor(np.asarray(value)).to(target.dtype))


def model_from_content(content: LegacyH5, where: str, custom_objects: Optional[dict] = None,
                       compile: bool = True) -> Any:
    """Rebuilds a legacy full-model file: architecture, weights, compile settings, optimizer weights."""
    if content.model_config is None:
        raise FormatError(f"'{where}' holds weights only (no model_config): build the model and call "
                          f"model.load_weights('{where}').")
    model = graph_config.layer_from_entry(content.model_config, custom_objects)
    if not model.built:
        shape = (content.model_config.get("build_config") or {}).get("input_shape") or \
            content.model_config["config"].get("build_input_shape")
        if shape is not None:
            model.build(graph_config.as_shape(shape))
    apply_weights(model, content, where)
    training = content.training_config
    if compile and training:
        training = dict(training)
        optimizer = training.pop("optimizer_config", None)
        keras_files.compile_from_config(model, dict(training, optimizer=optimizer), custom_objects)
        if content.optimizer_weights:
            from torchstrategy.formats import VarGroup

            keras_files.apply_optimizer_state(model, VarGroup("", [v for _, v in content.optimizer_weights]), where)
    return model

