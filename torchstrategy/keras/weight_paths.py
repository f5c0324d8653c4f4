"""Where each variable of a model sits in Keras 3's weights file: the object paths Keras's saver walks
(`layers/dense_1`, `lstm/cell`, attribute names of subclassed models) and the optimizer's variable order."""
from __future__ import annotations

import re
from typing import Any, Optional

import torch
from torch import nn

from torchstrategy.keras.layers.base import Layer, _snake_case

# Keras's children of built-in layers that hold layers (attribute on our layer -> Keras's attribute name)
_CHILDREN = {
    "LSTM": {"cell": "cell"}, "GRU": {"cell": "cell"}, "SimpleRNN": {"cell": "cell"},
    "Bidirectional": {"backward_layer": "backward_layer", "forward_layer": "forward_layer"},
    "TimeDistributed": {"layer": "layer"},
    "MultiHeadAttention": {"_key_dense": "key_dense", "_output_dense": "output_dense", "_query_dense": "query_dense",
                           "_value_dense": "value_dense", "_dropout_layer": "_dropout_layer"},
}
# groups Keras writes for variable-free sublayers we do not have as objects: (attribute, that layer's name)
_EMPTY_CHILDREN = {"MultiHeadAttention": [("_softmax", "softmax")]}


def _name_key(name: str) -> str:
    return "~" + name if name.startswith("_") else name  # Keras visits private attributes last


def own_variables(layer: Layer) -> list[torch.Tensor]:
    """A layer's own variables in Keras's order: those created trainable, then the others, each in creation order."""
    if isinstance(layer, Layer) and layer.quantization_mode is not None:
        # a quantized layer's variables in Keras's stored order (variable_serialization_spec), e.g. Dense's
        # int8 kernel, bias, kernel_scale, where the trainable-first order would put the bias first
        names = layer.variable_serialization_spec[layer.quantization_mode]
        return [value for value in (getattr(layer, name, None) for name in names) if value is not None]
    order = getattr(layer, "_weight_order", [])
    return [getattr(layer, a) for a, t in order if t] + [getattr(layer, a) for a, t in order if not t]


def _is_builtin(obj: Any) -> bool:
    from torchstrategy.keras import models

    return type(obj).__module__.startswith("torchstrategy.keras.") and not isinstance(obj, models.Model)


def keras_layers(model: Any) -> list:
    """`model.layers` as Keras lists it: a Sequential's stack, a functional model's layers with its inputs, a
    subclassed model's directly assigned layers (list members too) in assignment order."""
    from torchstrategy.keras import models

    if isinstance(model, (models.Sequential, models.Functional)):
        return list(model.layers)
    out: list = []
    for child in model.children():
        if isinstance(child, Layer):
            out.append(child)
        elif isinstance(child, (nn.ModuleList, nn.Sequential)):
            out.extend(c for c in child if isinstance(c, Layer))
    return out


def _children(obj: Any) -> list[tuple[str, Any]]:
    """(Keras attribute, layer or list of layers) in the order Keras's saver visits them."""
    from torchstrategy.keras import models

    kind = type(obj).__name__
    if _is_builtin(obj) and kind in _CHILDREN:
        table = _CHILDREN[kind]
        pairs = [(table[name], child) for name, child in obj.named_children() if name in table]
        return sorted(pairs, key=lambda p: _name_key(p[0]))
    first: list = []
    if isinstance(obj, (models.Sequential, models.Functional)):
        first = [("layers", keras_layers(obj))]
        if type(obj) in (models.Sequential, models.Functional) or type(obj).__module__ == models.__name__:
            return first
    pairs = []
    for name, child in obj.named_children():
        if isinstance(child, Layer):
            pairs.append((name, child))
        elif isinstance(child, (nn.ModuleList, nn.Sequential)):
            if name.startswith("_tracked_"):
                name = name[len("_tracked_"):]
            pairs.append((name, [c for c in child if isinstance(c, Layer)]))
    if isinstance(obj, models.Model) and not first:
        pairs.append(("layers", keras_layers(obj)))
    return first + sorted(pairs, key=lambda p: _name_key(p[0]))


def _join(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def variable_groups(model: Any) -> dict:
    """{object path: (object name, [variables])} in the order Keras writes them; the model itself is ''."""
    groups: dict = {}
    visited: set = set()

    def save(obj: Any, path: str) -> None:
        if id(obj) in visited:
            return
        visited.add(id(obj))
        groups[path] = (obj.name, own_variables(obj))
        for attr, empty_name in _EMPTY_CHILDREN.get(type(obj).__name__, []) if _is_builtin(obj) else []:
            groups[_join(path, attr)] = (empty_name, [])
        for attr, child in _children(obj):
            if isinstance(child, Layer):
                save(child, _join(path, attr))
            else:
                used: dict = {}
                for item in child:
                    base = _snake_case(type(item).__name__)
                    used[base] = used.get(base, -1) + 1
                    save(item, _join(_join(path, attr), base if used[base] == 0 else f"{base}_{used[base]}"))

    save(model, "")
    return groups


# ----- the optimizer --------------------------------------------------------------------------------------------
# each optimizer's slots as Keras lays them out: groups of slot names; within a group, per variable interleaved
_SLOT_LAYOUT = {
    "Adam": [("momentum", "velocity"), ("velocity_hat",)], "AdamW": [("momentum", "velocity"), ("velocity_hat",)],
    "Nadam": [("momentum", "velocity")], "Adamax": [("momentum", "norm")],
    "SGD": [("momentum",)], "RMSprop": [("velocity",), ("momentum",), ("average_gradient",)],
    "Adagrad": [("accumulator",)], "Adadelta": [("accumulated_grad", "accumulated_delta_var")],
}


def _inner(optimizer: Any) -> Any:
    return getattr(optimizer, "inner_optimizer", None) or optimizer


def optimizer_variables(optimizer: Any, variables: list, create: bool = False) -> Optional[list]:
    """The optimizer's variables in Keras's order for `variables` (the model's trainable ones): iteration, the
    learning rate (unless a schedule), EMA averages, then the slots. None when a slot is missing (not built)."""
    opt = _inner(optimizer)
    kind = type(opt).__name__
    if kind not in _SLOT_LAYOUT:
        raise NotImplementedError(f"Saving the state of optimizer {kind} in Keras's layout is not supported; save "
                                  f"with include_optimizer=False or use a built-in optimizer.")
    out: list = [("iteration", opt._iterations)]
    if not callable(opt._learning_rate) or isinstance(opt._learning_rate, float):
        out.append(("learning_rate", None))  # a float32 scalar, read and written through opt.learning_rate
    states = [opt.state.get(v) for v in variables]
    if any(s is None for s in states):
        return None
    if getattr(opt, "use_ema", False):
        out += [("average", s["average"]) for s in states]
    for group in _SLOT_LAYOUT[kind]:
        if not all(slot in states[0] for slot in group):
            continue
        for state in states:
            out += [(slot, state[slot]) for slot in group]
    return out


def slot_name(variable_path: str, slot: str) -> str:
    """Keras's optimizer variable name for a slot of a weight path ('sequential/dense/kernel' -> ..._momentum)."""
    return re.sub(r"[/:]", "_", variable_path) + "_" + slot
