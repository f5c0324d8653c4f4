"""A model as Keras 3's files hold it: the `.keras` archive (config, compile config, weights tree with the
optimizer) and the `.weights.h5` tree, built from a model and applied to one (everything checked first)."""
from __future__ import annotations

import datetime
import warnings
from typing import Any, Optional

import numpy as np

from torchstrategy.formats import FormatError, KerasArchive, VarGroup
from torchstrategy.keras import backend, graph_config, keras_config, weight_paths


def _numpy(tensor: Any) -> np.ndarray:
    return backend.full_value(tensor).detach().cpu().numpy()  # sharded weights gathered whole (written at once)


# ----- compile settings -----------------------------------------------------------------------------------------
def _spec_to_keras(spec: Any, kind: str) -> Any:
    if isinstance(spec, dict) and "class_name" in spec and "config" in spec:
        config = keras_config.config_to_keras(kind, spec["class_name"], spec["config"])
        return {"module": f"keras.{kind}", "class_name": spec["class_name"], "config": config, "registered_name": None}
    if isinstance(spec, dict):
        return {k: _spec_to_keras(v, kind) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return [_spec_to_keras(v, kind) for v in spec]
    return spec


def optimizer_entry(optimizer: Any) -> dict:
    """The optimizer as Keras serializes it."""
    return keras_config.object_entry("optimizers", type(optimizer), optimizer.get_config())


def compile_config(model: Any) -> Optional[dict]:
    """Keras's `compile_config` of a compiled model (None when it is not compiled)."""
    ours = model.get_compile_config()
    if ours is None:
        return None
    return {"optimizer": optimizer_entry(model.optimizer) if model.optimizer is not None else None,
            "loss": _spec_to_keras(ours["loss"], "losses"), "loss_weights": keras_config.plain(ours["loss_weights"]),
            "metrics": _spec_to_keras(ours["metrics"], "metrics"),
            "weighted_metrics": _spec_to_keras(ours["weighted_metrics"], "metrics"),
            "run_eagerly": bool(model.run_eagerly), "steps_per_execution": int(model.steps_per_execution),
            "jit_compile": False}


def _spec_from_keras(spec: Any, kind: str) -> Any:
    from torchstrategy.keras import losses, metrics

    if isinstance(spec, dict) and "class_name" in spec and "config" in spec:
        module = losses if kind == "losses" else metrics
        cls = getattr(module, spec["class_name"], None)
        if not isinstance(cls, type):
            raise ValueError(f"Unknown {kind[:-1]} class '{spec['class_name']}' in the compile config.")
        config = keras_config.config_from_keras(kind, spec["class_name"], cls, spec["config"], spec["class_name"])
        return cls(**config)
    if isinstance(spec, dict):
        return {k: _spec_from_keras(v, kind) for k, v in spec.items()}
    if isinstance(spec, list):
        return [_spec_from_keras(v, kind) for v in spec]
    return spec


def optimizer_from_entry(entry: Any, custom_objects: Optional[dict] = None) -> Any:
    """Our optimizer from Keras's serialized one (a name passes through)."""
    from torchstrategy.keras import optimizers

    if not isinstance(entry, dict):
        return entry
    name = entry["class_name"]
    cls = (custom_objects or {}).get(name) or getattr(optimizers, name, None)
    if not isinstance(cls, type):
        raise ValueError(f"Unknown optimizer class '{name}' in the compile config; pass it in custom_objects.")
    config = keras_config.config_from_keras("optimizers", name, cls, dict(entry.get("config") or {}),
                                            f"optimizer {name}")
    return cls.from_config(config)


def compile_from_config(model: Any, config: dict, custom_objects: Optional[dict] = None) -> None:
    """Compiles `model` as Keras's `compile_config` says."""
    model.compile(optimizer=optimizer_from_entry(config.get("optimizer") or "rmsprop", custom_objects),
                  loss=_spec_from_keras(config.get("loss"), "losses"),
                  metrics=_spec_from_keras(config.get("metrics"), "metrics"),
                  weighted_metrics=_spec_from_keras(config.get("weighted_metrics"), "metrics"),
                  loss_weights=config.get("loss_weights"), run_eagerly=config.get("run_eagerly") or None,
                  steps_per_execution=config.get("steps_per_execution") or 1)


# ----- weights and optimizer state ------------------------------------------------------------------------------
def _nadam_u_product(optimizer: Any) -> float:
    product, beta_1 = 1.0, float(optimizer.beta_1)
    for step in range(1, int(optimizer.iterations) + 1):
        product *= beta_1 * (1.0 - 0.5 * 0.96 ** (0.004 * step))
    return product


def _loss_scale_values(optimizer: Any) -> list:
    """A LossScaleOptimizer's own variables as Keras 3 lists them: its iteration and learning rate (Keras keeps
    them at 0: the inner optimizer counts the steps and holds the rate), `step_counter`, `dynamic_scale`."""
    return [np.asarray(0, dtype=np.int64), np.asarray(0.0, dtype=np.float32),
            np.asarray(int(optimizer.step_counter), dtype=np.int64),
            np.asarray(float(optimizer.dynamic_scale), dtype=np.float32)]


def _wraps(optimizer: Any) -> bool:
    from torchstrategy.keras.optimizers import LossScaleOptimizer

    return isinstance(optimizer, LossScaleOptimizer)


def weights_tree(model: Any, include_optimizer: bool = True) -> dict:
    """{path: VarGroup} of the model's variables (and its optimizer's, once built) in Keras's layout. A
    LossScaleOptimizer is `optimizer` (its own variables, then the inner optimizer's, as Keras's `variables`)
    with the inner optimizer again at `optimizer/inner_optimizer`."""
    tree = {path: VarGroup(name, [_numpy(t) for t in tensors])
            for path, (name, tensors) in weight_paths.variable_groups(model).items()}
    optimizer = getattr(model, "optimizer", None)
    if include_optimizer and optimizer is not None and getattr(optimizer, "built", False):
        slots = weight_paths.optimizer_variables(optimizer, list(model.trainable_weights))
        if slots is not None:
            inner = getattr(optimizer, "inner_optimizer", None) or optimizer
            values = []
            for kind, tensor in slots:
                if kind == "iteration":
                    values.append(np.asarray(int(tensor), dtype=np.int64))
                elif kind == "learning_rate":
                    values.append(np.asarray(float(inner.learning_rate), dtype=np.float32))
                else:
                    values.append(_numpy(tensor))
            if type(inner).__name__ == "Nadam":
                values.append(np.asarray(_nadam_u_product(inner), dtype=np.float32))
            if _wraps(optimizer):
                tree["optimizer"] = VarGroup(optimizer.name, _loss_scale_values(optimizer) + values)
                tree["optimizer/inner_optimizer"] = VarGroup(inner.name, values)
            else:
                tree["optimizer"] = VarGroup(inner.name, values)
    return tree


def _shapes(values: list) -> list:
    return [tuple(np.shape(v)) for v in values]


def apply_weights_tree(model: Any, tree: dict, where: str, skip_mismatch: bool = False) -> list:
    """Checks every layer's variables against the file, then assigns them all (nothing is assigned when a check
    fails). Returns the [(tensor, array)] pairs assigned."""
    groups = weight_paths.variable_groups(model)
    plan = []
    for path, (name, tensors) in groups.items():
        stored = tree.get(path)
        values = stored.values if stored is not None else []
        problem = None
        if len(values) != len(tensors):
            problem = (f"layer '{name}' (path '{path or '/'}') has {len(tensors)} variables of shapes "
                       f"{_shapes(tensors)}, the file has {len(values)} of shapes {_shapes(values)}")
        else:
            for index, (tensor, value) in enumerate(zip(tensors, values)):
                if tuple(tensor.shape) != tuple(np.shape(value)):
                    problem = (f"layer '{name}' (path '{path or '/'}'), variable #{index}: the model's has shape "
                               f"{tuple(tensor.shape)}, the file's {tuple(np.shape(value))}")
                    break
        if problem is not None:
            if skip_mismatch:
                warnings.warn(f"Skipping loading weights of {problem} ('{where}').", stacklevel=3)
                continue
            raise FormatError(f"'{where}' does not fit this model: {problem}. Load it into the model it was saved "
                              f"from (or pass skip_mismatch=True to skip such layers).")
        plan += list(zip(tensors, values))
    extra = [p for p, g in tree.items() if g.values and p not in groups and p.split("/")[0] != "optimizer"]
    if extra and not skip_mismatch:
        raise FormatError(f"'{where}' does not fit this model: it holds variables at {extra[:5]}, which this model "
                          f"does not have (the model has {sorted(p for p in groups if p)[:8]}...).")
    for tensor, value in plan:
        backend.assign_full(tensor, backend.to_tensor(np.asarray(value)).to(tensor.dtype))
    return plan


def apply_optimizer_state(model: Any, group: VarGroup, where: str, build: bool = True,
                          inner_group: Optional[VarGroup] = None) -> None:
    """Loads Keras's optimizer variables into the model's optimizer (built here when `build`, as load_model does;
    load_weights leaves an unbuilt optimizer alone, as Keras); a layout that does not fit warns and leaves the
    optimizer as it was, as Keras does. For a LossScaleOptimizer `group` holds its own four variables before the
    inner optimizer's, and `inner_group` (`optimizer/inner_optimizer`, which Keras loads last) the inner's."""
    optimizer = model.optimizer
    inner = getattr(optimizer, "inner_optimizer", None) or optimizer
    if not inner.built:
        if not build:
            warnings.warn(f"'{where}' holds optimizer variables, but the optimizer of this model is not built yet: "
                          f"they are not loaded (as in Keras). Build it first (optimizer.build(model.trainable_variables)) "
                          f"to load them.", stacklevel=3)
            return
        inner.build(list(model.trainable_weights))
    slots = weight_paths.optimizer_variables(optimizer, list(model.trainable_weights))
    expected = len(slots) + (1 if type(inner).__name__ == "Nadam" else 0)
    own: list = []
    values = list(group.values)
    if _wraps(optimizer):
        own, values = values[:4], values[4:]
        if inner_group is not None and len(inner_group.values) == expected:
            values = list(inner_group.values)
    kind_name = f"LossScaleOptimizer({type(inner).__name__})" if _wraps(optimizer) else type(inner).__name__
    if len(values) != expected or (_wraps(optimizer) and len(own) != 4) or any(
            tensor is not None and tuple(tensor.shape) != tuple(np.shape(value))
            for (kind, tensor), value in zip(slots[1:], values[1:]) if kind not in ("learning_rate",)):
        saved = len(group.values)
        warnings.warn(f"'{where}': the optimizer state saved ({saved} variables) does not fit {kind_name} of this "
                      f"model ({expected + (4 if _wraps(optimizer) else 0)}); the optimizer starts fresh.",
                      stacklevel=3)
        return
    for (kind, tensor), value in zip(slots, values):
        if kind == "iteration":
            inner.iterations = int(np.asarray(value))
        elif kind == "learning_rate":
            inner.learning_rate = float(np.asarray(value))
        else:
            backend.assign_full(tensor, backend.to_tensor(np.asarray(value)).to(tensor.dtype))
    if own:  # the scale and its counter (Keras's own iteration and learning rate stay 0: nothing to restore)
        optimizer.step_counter.fill_(int(np.asarray(own[2])))
        optimizer.dynamic_scale.fill_(float(np.asarray(own[3])))


# ----- the .keras archive ---------------------------------------------------------------------------------------
def model_config(model: Any) -> dict:
    """The top-level config.json entry: the model's layer entry plus its compile config."""
    entry = graph_config.layer_entry(model)
    if "build_config" not in entry:
        shape = getattr(model, "_build_input_shape", None)
        entry["build_config"] = {"input_shape": keras_config.plain(shape)}
    config = compile_config(model)
    if config is not None:
        entry["compile_config"] = config
    return entry


def build_archive(model: Any, include_optimizer: bool = True) -> KerasArchive:
    """Everything `model.save('x.keras')` writes."""
    from torchstrategy.keras import _legacy_backend

    metadata = {"keras_version": _legacy_backend.version(),
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    return KerasArchive(model_config(model), metadata, weights_tree(model, include_optimizer))


def model_from_archive(archive: KerasArchive, where: str, custom_objects: Optional[dict] = None,
                       compile: bool = True) -> Any:
    """Rebuilds the model of a `.keras` archive: architecture, weights, compile settings, optimizer state."""
    config = archive.config
    model = graph_config.layer_from_entry(config, custom_objects)
    if not model.built:
        shape = (config.get("build_config") or {}).get("input_shape")
        if shape is not None:
            model.build(graph_config.as_shape(shape))
    apply_weights_tree(model, archive.weights, where)
    if compile and config.get("compile_config"):
        compile_from_config(model, config["compile_config"], custom_objects)
        if "optimizer" in archive.weights and model.optimizer is not None:
            apply_optimizer_state(model, archive.weights["optimizer"], where,
                                  inner_group=archive.weights.get("optimizer/inner_optimizer"))
    return model
