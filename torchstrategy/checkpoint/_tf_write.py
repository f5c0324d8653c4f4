"""Writing a Checkpoint's objects in TF's format: the object graph TF 2.21 / Keras 3 would record for the same
objects (layer lists as `_operations`, optimizer slots as `_momentums`/`_velocities` lists) plus the tensor bundle."""
from __future__ import annotations

import glob
import os
import re
from typing import Any

import torch
from torch import nn

from torchstrategy.checkpoint import _objects
from torchstrategy.checkpoint._tf_restore import layer_list, own_weights, slot_list_name
from torchstrategy.formats.tf_bundle import write_bundle
from torchstrategy.formats.tf_object_graph import OBJECT_GRAPH_KEY, VARIABLE_VALUE, Attribute, ObjectNode, ObjectGraph
from torchstrategy.module import Module, tracked_children

# Keras 3 keeps these weights under a leading underscore (`layer._kernel`, with a `kernel` property)
_UNDERSCORED = {"kernel", "embeddings"}


def _escape(name: str) -> str:
    """A local name as TF writes it into a checkpoint key ('.' doubled, '/' as '.S')."""
    return name.replace(".", "..").replace("/", ".S")


def _value(tensor: torch.Tensor) -> torch.Tensor:
    tensor = tensor.detach()
    if hasattr(tensor, "full_tensor"):
        tensor = tensor.full_tensor()
    return tensor.cpu()


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[ObjectNode] = []
        self.ids: dict[int, int] = {}
        self.variables: dict[int, tuple[torch.Tensor, str]] = {}  # node id -> (tensor, full name)
        self.keep: list = []  # tensors made here (learning rates): alive until written

    def node(self, obj: Any = None) -> int:
        if obj is not None and id(obj) in self.ids:
            return self.ids[id(obj)]
        self.nodes.append(ObjectNode())
        node_id = len(self.nodes) - 1
        if obj is not None:
            self.ids[id(obj)] = node_id
        return node_id

    def link(self, parent: int, name: str, child: int) -> None:
        self.nodes[parent].children.append((child, name))

    def list_node(self, parent: int, name: str, items: list) -> None:
        holder = self.node()
        self.link(parent, name, holder)
        for index, item in enumerate(items):
            self.link(holder, str(index), self.add(item, f"{name}/{index}"))

    def variable(self, tensor: torch.Tensor, full_name: str) -> int:
        known = id(tensor) in self.ids
        node_id = self.node(tensor)
        if not known:
            self.variables[node_id] = (tensor, full_name)
        return node_id

    def add(self, obj: Any, full_name: str) -> int:
        if id(obj) in self.ids:
            return self.ids[id(obj)]
        if isinstance(obj, Module):  # tf.Module: its tracked attributes, in the order they were set
            node_id = self.node(obj)
            prefix = obj.name if full_name == "" else full_name
            for name, child in tracked_children(obj):
                self.link(node_id, name, self.add(child, f"{prefix}/{name}"))
            return node_id
        kind = _objects.kind_of(obj)
        if kind == "tensor":  # TF records a variable's name without its ':0' output index
            return self.variable(obj, re.sub(r":\d+$", "", getattr(obj, "name", None) or full_name))
        node_id = self.node(obj)
        if kind == "checkpoint":
            for name, child in obj._children.items():
                self.link(node_id, name, self.add(child, name))
        elif kind == "container":
            for name, child in tracked_children(obj):
                self.link(node_id, name, self.add(child, f"{full_name}/{name}"))
        elif kind == "module":
            self._module(node_id, obj, full_name)
        elif kind == "optimizer":
            self._optimizer(node_id, obj)
        else:
            raise ValueError(f"Cannot write '{full_name}' ({type(obj).__name__}) in TF's checkpoint format: TF "
                             f"checkpoints hold variables, layers, models and optimizers. Save it in this library's "
                             f"own format (the default), or leave it out of the Checkpoint.")
        return node_id

    def _module(self, node_id: int, module: nn.Module, full_name: str) -> None:
        prefix = getattr(module, "name", None) or full_name
        for attr, tensor in own_weights(module):
            child = self.variable(tensor, f"{prefix}/{attr}")
            if attr in _UNDERSCORED:
                self.link(node_id, "_" + attr, child)
            self.link(node_id, attr, child)
        layers = layer_list(module)
        if layers is not None:
            if hasattr(module, "_stack"):  # Sequential: Keras 3 keeps a Functional with the InputLayer first
                functional = self.node()
                self.link(node_id, "_functional", functional)
                operations = self.node()
                self.link(functional, "_operations", operations)
                self.link(operations, "0", self.node())
                start = 1
            else:
                operations = self.node()
                self.link(node_id, "_operations", operations)
                start = 0
            for index, layer in enumerate(layers):
                self.link(operations, str(index + start), self.add(layer, getattr(layer, "name", str(index))))
        for name, child in module.named_children():
            if layers is not None and isinstance(child, nn.ModuleList) and any(c in layers for c in child):
                continue
            if id(child) in self.ids and layers is not None and child in layers:
                continue
            self.link(node_id, name, self.add(child, f"{prefix}/{name}"))
        optimizer = getattr(module, "optimizer", None) if hasattr(module, "_weight_order") else None
        if isinstance(optimizer, torch.optim.Optimizer):
            self.link(node_id, "optimizer", self.add(optimizer, "optimizer"))

    def _scalar(self, value: Any, dtype: torch.dtype, full_name: str) -> int:
        """A variable node for a value made here (kept alive until the bundle is written)."""
        tensor = torch.tensor(value, dtype=dtype)
        self.keep.append(tensor)
        return self.variable(tensor, full_name)

    def _trainable(self, node_id: int, params: list) -> None:
        """An optimizer's `_trainable_variables` (the model's variables, by position) and TF's (empty) index."""
        trainable = self.node()
        self.link(node_id, "_trainable_variables", trainable)
        for index, param in enumerate(params):
            self.link(trainable, str(index), self.variable(param, getattr(param, "name", None) or f"variable_{index}"))
        self.link(node_id, "_trainable_variables_indices", self.node())

    def _loss_scale(self, node_id: int, optimizer: Any, inner: Any) -> None:
        """Keras 3's LossScaleOptimizer node: its own `_variables` (iteration, learning rate, step_counter,
        dynamic_scale; Keras keeps the first two at 0), the model's `_trainable_variables`, `_iterations`,
        `_learning_rate`, the whole inner optimizer as `inner_optimizer`, then `step_counter` and `dynamic_scale`."""
        name = getattr(optimizer, "name", "loss_scale_optimizer")
        own = [self._scalar(0, torch.int64, f"{name}/iteration"),
               self._scalar(0.0, torch.float32, f"{name}/learning_rate"),
               self.variable(optimizer.step_counter, f"{name}/step_counter"),
               self.variable(optimizer.dynamic_scale, f"{name}/dynamic_scale")]
        variables = self.node()
        self.link(node_id, "_variables", variables)
        for index, child in enumerate(own):
            self.link(variables, str(index), child)
        self._trainable(node_id, [p for group in getattr(inner, "param_groups", []) for p in group["params"]])
        self.link(node_id, "_iterations", own[0])
        self.link(node_id, "_learning_rate", own[1])
        inner_id = self.node(inner)
        self.link(node_id, "inner_optimizer", inner_id)
        self._optimizer(inner_id, inner)
        self.link(node_id, "step_counter", own[2])
        self.link(node_id, "dynamic_scale", own[3])

    def _optimizer(self, node_id: int, optimizer: Any) -> None:
        """A Keras 3 optimizer's node, children in TF's order: `_variables` (everything, by position),
        `_trainable_variables`, `_trainable_variables_indices`, `_iterations`, `_learning_rate`, the slot lists."""
        inner = getattr(optimizer, "inner_optimizer", None)
        if isinstance(inner, torch.optim.Optimizer):
            self._loss_scale(node_id, optimizer, inner)
            return
        name = getattr(optimizer, "name", "optimizer")
        params = [p for group in getattr(optimizer, "param_groups", []) for p in group["params"]]
        state = getattr(optimizer, "state", {})
        keys = [key for key in (list(state[params[0]]) if params and params[0] in state else [])
                if isinstance(state[params[0]][key], torch.Tensor)]
        variables = self.node()
        self.link(node_id, "_variables", variables)
        self._trainable(node_id, params)
        everything = []
        iterations = getattr(optimizer, "_iterations", None)
        if isinstance(iterations, torch.Tensor):
            everything.append(self.variable(iterations, f"{name}/iteration"))
            self.link(node_id, "_iterations", everything[-1])
        if isinstance(getattr(optimizer, "_learning_rate", None), float):
            everything.append(self._scalar(float(optimizer.learning_rate), torch.float32, f"{name}/learning_rate"))
            self.link(node_id, "_learning_rate", everything[-1])
        slots = {}
        for key in keys:
            holder = self.node()
            self.link(node_id, slot_list_name(key), holder)
            for index, param in enumerate(params):
                if param in state:
                    slots[(index, key)] = self.variable(state[param][key], f"{name}/{index}_{key}")
                    self.link(holder, str(index), slots[(index, key)])
        everything += [slots[(index, key)] for index, param in enumerate(params) for key in keys if param in state]
        for index, child in enumerate(everything):
            self.link(variables, str(index), child)

    def finish(self) -> tuple[ObjectGraph, dict]:
        graph = ObjectGraph(self.nodes)
        paths = graph.paths()
        tensors = {}
        for node_id, (tensor, full_name) in self.variables.items():
            key = "/".join(_escape(part) for part in paths[node_id].split("/")) + "/.ATTRIBUTES/" + VARIABLE_VALUE
            self.nodes[node_id].attributes.append(Attribute(VARIABLE_VALUE, str(full_name), key))
            tensors[key] = _value(tensor)
        holds = {}

        def mark(node_id: int, depth: int = 0) -> bool:
            if node_id in holds:
                return holds[node_id]
            holds[node_id] = False
            value = bool(self.nodes[node_id].attributes) or any(
                mark(child, depth + 1) for child, _ in self.nodes[node_id].children)
            holds[node_id] = value
            return value

        for node_id, node in enumerate(self.nodes):
            node.has_checkpoint_values = mark(node_id) or None
        tensors[OBJECT_GRAPH_KEY] = _object_array(graph.serialize())
        return graph, tensors


def _object_array(data: bytes) -> Any:
    import numpy as np

    array = np.empty((), dtype=object)
    array[()] = data
    return array


def write_tf_checkpoint(checkpoint: Any, prefix: str, with_counter: bool = True) -> list[str]:
    """Writes `checkpoint`'s objects as a TF tensor bundle at `prefix` (`.index` + one data shard)."""
    builder = _Builder()
    root = builder.node(checkpoint)
    for name, child in checkpoint._children.items():
        if name == "save_counter" and not with_counter:
            continue
        builder.link(root, name, builder.add(child, name))
    _, tensors = builder.finish()
    return write_bundle(prefix, tensors)


def remove_tf_checkpoint(prefix: str) -> bool:
    """Deletes a TF bundle's index and data shards; True if anything was removed."""
    removed = False
    for path in [prefix + ".index"] + glob.glob(glob.escape(prefix) + ".data-?????-of-?????"):
        try:
            os.unlink(path)
            removed = True
        except FileNotFoundError:
            pass
    return removed
