"""Restoring a TF-written checkpoint (tensor bundle + object graph) into a Checkpoint's objects: TF's
object graph is walked by child names, Keras layer lists by position, optimizer slots by variable."""
from __future__ import annotations

import re
import warnings
from typing import Any, Optional

import numpy as np
import torch
from torch import nn

from torchstrategy.checkpoint import _objects
from torchstrategy.formats.tf_bundle import BundleReader
from torchstrategy.formats.tf_object_graph import OBJECT_GRAPH_KEY, ObjectGraph
from torchstrategy.module import Module, tracked_children

# TF (Keras 3) optimizer lists that are not per-variable slots
_OPTIMIZER_BOOKKEEPING = {"_variables", "_trainable_variables", "_trainable_variables_indices", "_iterations",
                          "_learning_rate", "iter", "learning_rate", "decay", "beta_1", "beta_2", "rho", "momentum",
                          "epsilon", "_index_dict", "_built"}
# tf.keras 2 optimizers' slot names (SlotVariableReference.slot_name) -> the slot names used here
_V2_SLOTS = {"m": "momentum", "v": "velocity", "vhat": "velocity_hat", "momentum": "momentum",
             "accumulator": "accumulator", "rms": "velocity", "mg": "average_gradient"}
_EXPLICIT_SLOT_LISTS = {"_model_variables_moving_average": "average"}


def slot_list_name(key: str) -> str:
    """The list a Keras 3 TF optimizer keeps slot `key` in, e.g. 'velocity' -> '_velocities'."""
    for tf_name, ours in _EXPLICIT_SLOT_LISTS.items():
        if ours == key:
            return tf_name
    return "_" + (key[:-1] + "ies" if key.endswith("y") else key + "s")


def _slot_key(list_name: str, keys: list) -> Optional[str]:
    if list_name in _EXPLICIT_SLOT_LISTS:
        return _EXPLICIT_SLOT_LISTS[list_name] if _EXPLICIT_SLOT_LISTS[list_name] in keys else None
    for key in keys:
        if slot_list_name(key) == list_name:
            return key
    return None


def _is_keras_layer(obj: Any) -> bool:
    return isinstance(obj, nn.Module) and hasattr(obj, "_weight_order")


def own_weights(module: nn.Module) -> list[tuple[str, torch.Tensor]]:
    """(attribute, tensor) of the weights a module itself holds (Keras order for Keras layers)."""
    if _is_keras_layer(module):
        return [(attr, getattr(module, attr)) for attr, _ in module._weight_order]
    return list(module.named_parameters(recurse=False)) + list(module.named_buffers(recurse=False))


def layer_list(module: nn.Module) -> Optional[list]:
    """The layer list of a Sequential/Functional Keras model (what TF tracks as `_operations`), else None."""
    if not _is_keras_layer(module) or not hasattr(type(module), "layers"):
        return None
    if not any(hasattr(module, name) for name in ("_stack", "_graph_layers")):
        return None  # a subclassed model: TF tracks its layers by attribute name
    return list(module.layers)


def _pretty(path: str) -> str:
    return "(root)" + "".join("." + part for part in path.split("/") if part) if path else "(root)"


class TFRestorePlan:
    """Matches TF's object graph to live objects, checks every shape, then copies (all or nothing)."""

    def __init__(self, prefix: str, skip: tuple = (), skip_slots: bool = False,
                 opened: Optional[tuple] = None) -> None:
        self.prefix = prefix
        if opened is not None:  # (reader, graph) of an earlier plan of the same checkpoint
            self.reader, self.graph = opened
        else:
            self.reader = BundleReader(prefix)
            if OBJECT_GRAPH_KEY not in self.reader.entries:
                raise ValueError(f"TF checkpoint '{prefix}' has no object graph ({OBJECT_GRAPH_KEY}): it was written "
                                 f"by tf.compat.v1.train.Saver (name-based). Read its tensors with "
                                 f"tf.train.load_checkpoint('{prefix}').get_tensor(name).")
            self.reader.check_shards()
            self.graph = ObjectGraph.parse(self.reader.tensor(OBJECT_GRAPH_KEY)[()])
        self.paths = self.graph.paths()
        self.skip = skip
        self.skip_slots = skip_slots
        self.bound: dict[int, Any] = {}  # node id -> live object
        self.seen: set[int] = set()  # ids of live objects visited
        self.copies: list[tuple[torch.Tensor, str, int]] = []  # (target, bundle key, node id)
        self.after: list[Any] = []  # callables run after the copies (learning rates)
        self.consumed: set[int] = set()  # node ids whose values are used
        self.unmatched_objects: list[tuple[str, Any]] = []
        self.optimizers: list[tuple[int, Any, str]] = []
        self.unbuilt: list[nn.Module] = []  # Keras layers without weights yet: restored when they are built
        self.restored: set[int] = set()  # ids of tensors already copied (a later pass leaves them alone)
        self.skipped: set[int] = set()  # node ids left out on purpose (experimental_skip_slot_variables)

    # ----- matching -------------------------------------------------------------------------
    def match_root(self, checkpoint: Any) -> None:
        self.bound[0] = checkpoint
        self.seen.add(id(checkpoint))
        # Checkpoint(root): TF saves the root object itself as node 0 (tf.train.Checkpoint(model) and a
        # SavedModel's variables bundle), so its attributes are matched with node 0's children
        as_root = checkpoint.__dict__.get("_root_given", False) and self.graph.nodes[0].child("root") is None
        if as_root:
            self.seen.discard(id(checkpoint))
            self.match(0, checkpoint._children["root"], "")
            self.bound[0] = checkpoint
        for name, child in checkpoint._children.items():
            if name in self.skip or (as_root and name == "root"):
                continue
            child_id = self.graph.nodes[0].child(name)
            if child_id is None:
                if name == "save_counter":
                    continue  # a checkpoint made by write(): no counter saved
                self._unmatched(child, name)
            else:
                self.match(child_id, child, name)
        for node_id, obj, path in self.optimizers:
            self._match_optimizer(node_id, obj, path)

    def match(self, node_id: int, obj: Any, path: str) -> None:
        if id(obj) in self.seen:
            return
        self.seen.add(id(obj))
        self.bound.setdefault(node_id, obj)
        node = self.graph.nodes[node_id]
        if isinstance(obj, Module):  # tf.Module: its attributes, as TF's object graph names them
            self._match_children(node_id, tracked_children(obj), path)
            return
        kind = _objects.kind_of(obj)
        if kind == "tensor":
            self._match_tensor(node_id, obj, path)
        elif kind == "module":
            self._match_module(node_id, obj, path)
        elif kind == "optimizer":
            self.optimizers.append((node_id, obj, path))
        elif kind == "checkpoint":
            self._match_children(node_id, [(name, child) for name, child in obj._children.items()
                                           # TF creates a Checkpoint's counter on its first save: nested ones have none
                                           if not (name == "save_counter" and node.child(name) is None)], path)
        elif kind == "container":
            self._match_children(node_id, tracked_children(obj), path)
        else:
            self._unmatched(obj, path)

    def _match_children(self, node_id: int, items: list, path: str) -> None:
        node = self.graph.nodes[node_id]
        for name, child in items:
            child_id = node.child(str(name))
            if child_id is None:
                self._unmatched(child, f"{path}/{name}")
            else:
                self.match(child_id, child, f"{path}/{name}")

    def _unmatched(self, obj: Any, path: str) -> None:
        for label, tensor in _tensors_of(obj, path, self.seen):
            self.unmatched_objects.append((label, tensor))

    def _match_tensor(self, node_id: int, tensor: torch.Tensor, path: str) -> None:
        key = self.graph.nodes[node_id].value_key()
        if key is None or key not in self.reader.entries:
            self.unmatched_objects.append((path, tensor))
            return
        entry = self.reader.entries[key]
        if tuple(entry.shape) != tuple(tensor.shape):
            raise ValueError(f"Received incompatible tensor with shape {tuple(entry.shape)} when attempting to restore "
                             f"variable with shape {tuple(tensor.shape)} and name {_pretty(path)} from TF checkpoint "
                             f"'{self.prefix}' (key '{key}'). Nothing was restored; build the same architecture.")
        if hasattr(tensor, "full_tensor") or hasattr(tensor, "_local_tensor"):
            raise NotImplementedError(f"Restoring a TF checkpoint into a sharded variable ({_pretty(path)}) is not "
                                      f"supported; restore it under a non-sharding strategy, then save in our format.")
        self.copies.append((tensor, key, node_id))
        self.consumed.add(node_id)

    def _match_module(self, node_id: int, module: nn.Module, path: str) -> None:
        node = self.graph.nodes[node_id]
        if _is_keras_layer(module) and getattr(module, "built", True) is False:
            self.unbuilt.append(module)
        for attr, tensor in own_weights(module):
            child_id = _child(node, attr)
            if child_id is None:
                self.unmatched_objects.append((f"{path}/{attr}", tensor))
            else:
                self.match(child_id, tensor, f"{path}/{attr}")
        layers = layer_list(module)
        operations = node.child("_operations")
        if operations is None and node.child("_functional") is not None:
            operations = self.graph.nodes[node.child("_functional")].child("_operations")
        if layers is not None and operations is not None:
            ops = sorted(self.graph.nodes[operations].children, key=lambda item: _index(item[1]))
            saved = [(child, name) for child, name in ops if self._holds_values(child)]
            live = [layer for layer in layers if list(layer.parameters()) or list(layer.buffers())]
            for index, layer in enumerate(live):
                if index < len(saved):
                    child, name = saved[index]
                    self.match(child, layer, f"{path}/_operations/{name}")
                else:
                    self._unmatched(layer, f"{path}/{getattr(layer, 'name', index)}")
        for name, child in module.named_children():
            if id(child) in self.seen:
                continue
            child_id = _child(node, name)
            if child_id is None and isinstance(child, nn.ModuleList) and layers is not None:
                continue  # the layer list itself, matched above
            if child_id is None:
                self._unmatched(child, f"{path}/{name}")
            else:
                self.match(child_id, child, f"{path}/{name}")
        optimizer = getattr(module, "optimizer", None) if _is_keras_layer(module) else None
        if isinstance(optimizer, torch.optim.Optimizer) and node.child("optimizer") is not None:
            self.match(node.child("optimizer"), optimizer, f"{path}/optimizer")

    def _holds_values(self, node_id: int, depth: int = 0) -> bool:
        node = self.graph.nodes[node_id]
        if node.value_key() is not None:
            return True
        return depth < 8 and any(self._holds_values(child, depth + 1) for child, _ in node.children)

    def _match_optimizer(self, node_id: int, optimizer: Any, path: str) -> None:
        node = self.graph.nodes[node_id]
        inner = getattr(optimizer, "inner_optimizer", None)
        if isinstance(inner, torch.optim.Optimizer):
            self._match_loss_scale(node_id, optimizer, inner, path)
            return
        iterations = getattr(optimizer, "_iterations", None)
        for name in ("_iterations", "iter"):
            child = node.child(name)
            if child is not None and isinstance(iterations, torch.Tensor):
                self.match(child, iterations, f"{path}/{name}")
                break
        else:
            if isinstance(iterations, torch.Tensor):
                self.unmatched_objects.append((f"{path}/iterations", iterations))
        for name in ("_learning_rate", "learning_rate"):
            child = node.child(name)
            key = self.graph.nodes[child].value_key() if child is not None else None
            if key is not None and isinstance(getattr(optimizer, "_learning_rate", None), float):
                self.consumed.add(child)
                self.after.append(lambda key=key: setattr(optimizer, "learning_rate", float(self.reader.tensor(key))))
                break
        if self.skip_slots:  # the slots' values are left out on purpose: not reported as unrestored
            for list_name in [name for _, name in node.children if name not in _OPTIMIZER_BOOKKEEPING]:
                self.skipped.update(child for child, _ in self.graph.nodes[node.child(list_name)].children)
            self.skipped.update(slot.slot for slot in node.slot_variables)
            return
        variables = self._optimizer_variables(node)
        params = [self._param_of(child) for child in variables]
        if variables and not getattr(optimizer, "built", True) and all(p is not None for p in params):
            optimizer.build(params)  # TF creates the slots now and restores them (deferred restoration)
        state = getattr(optimizer, "state", {})
        for list_name in [name for _, name in node.children if name not in _OPTIMIZER_BOOKKEEPING]:
            slots = self.graph.nodes[node.child(list_name)]
            for child, index_name in slots.children:
                index = _index(index_name)
                param = params[index] if 0 <= index < len(params) else None
                if param is None or param not in state:
                    continue
                key = _slot_key(list_name, list(state[param]))
                if key is not None:
                    self.match(child, state[param][key], f"{path}/{list_name}/{index_name}")
        for slot in node.slot_variables:  # tf.keras 2 (optimizer_v2) checkpoints: slots hang off the optimizer node
            param = self._param_of(slot.original)
            key = _V2_SLOTS.get(slot.slot_name)
            if param is not None and param in state and key in state[param]:
                self.match(slot.slot, state[param][key], f"{path}/{slot.slot_name}")
        for param in [p for group in getattr(optimizer, "param_groups", []) for p in group["params"]]:
            for key, tensor in state.get(param, {}).items():
                if isinstance(tensor, torch.Tensor) and id(tensor) not in self.seen:
                    self.unmatched_objects.append((f"{path}/{key}", tensor))

    def _match_loss_scale(self, node_id: int, optimizer: Any, inner: Any, path: str) -> None:
        """Keras 3's LossScaleOptimizer: `inner_optimizer` (a whole optimizer node), `dynamic_scale` and
        `step_counter`; its own `_iterations` and `_learning_rate` stay 0 in Keras (the inner optimizer counts
        and holds the rate), so they are used up without a target here."""
        node = self.graph.nodes[node_id]
        self.seen.add(id(inner))
        child = node.child("inner_optimizer")
        if child is None:
            self._unmatched(inner, f"{path}/inner_optimizer")
        else:
            self.bound.setdefault(child, inner)
            self._match_optimizer(child, inner, f"{path}/inner_optimizer")
        for name in ("dynamic_scale", "step_counter"):
            tensor = getattr(optimizer, name)
            child = node.child(name)
            if child is None:
                self.unmatched_objects.append((f"{path}/{name}", tensor))
            else:
                self.match(child, tensor, f"{path}/{name}")
        for name in ("_iterations", "_learning_rate"):
            child = node.child(name)
            if child is not None and self.graph.nodes[child].value_key() is not None:
                self.consumed.add(child)

    def _optimizer_variables(self, node: Any) -> list:
        child = node.child("_trainable_variables")
        if child is None:
            return []
        return [c for c, _ in sorted(self.graph.nodes[child].children, key=lambda item: _index(item[1]))]

    def _param_of(self, node_id: int) -> Optional[torch.Tensor]:
        obj = self.bound.get(node_id)
        return obj if isinstance(obj, torch.Tensor) else None

    # ----- outcome -------------------------------------------------------------------------
    def unresolved(self) -> list[int]:
        """ObjectNode ids that hold values in the checkpoint and were not restored into anything."""
        out = []
        for node_id, node in enumerate(self.graph.nodes):
            if node.value_key() is not None and node_id not in self.consumed and node_id not in self.skipped:
                if self.paths.get(node_id, "").split("/")[0] in self.skip:
                    continue
                out.append(node_id)
        return out

    def describe_node(self, node_id: int) -> str:
        node = self.graph.nodes[node_id]
        attributes = "".join(f'\n  name: "{a.name}"\n  full_name: "{a.full_name}"\n  checkpoint_key: '
                             f'"{a.checkpoint_key}"' for a in node.attributes)
        return f"{_pretty(self.paths.get(node_id, ''))}: attributes {{{attributes}\n}}"

    def apply(self) -> None:
        """Checks every matched tensor's CRC first (views of the mapped data file: nothing is allocated or copied
        for that), then copies them all in."""
        values = []
        for target, key, _ in self.copies:
            if id(target) in self.restored:
                continue
            array = self.reader.tensor(key, copy=False)
            tensor = array if isinstance(array, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(array))
            values.append((target, tensor))
        with torch.no_grad():
            for target, tensor in values:
                torch.Tensor.copy_(target, tensor.to(dtype=target.dtype).reshape(target.shape))
                self.restored.add(id(target))
        for action in self.after:
            action()
        self.after = []


def restore_when_built(plan: TFRestorePlan, root: Any) -> None:
    """TF's deferred restoration for Keras layers not built at restore time: each layer gets its values as soon
    as its weights exist (a forward pre-hook runs after its build and before its forward, so even the first
    output uses them), optimizer slots follow once their variables are known; `plan` (the status's) is updated."""
    handles: list = []

    def rematch() -> None:
        late = TFRestorePlan(plan.prefix, plan.skip, plan.skip_slots, opened=(plan.reader, plan.graph))
        late.restored = plan.restored
        late.match_root(root)
        late.apply()
        plan.consumed, plan.unmatched_objects, plan.bound = late.consumed, late.unmatched_objects, late.bound
        plan.skipped = late.skipped
        if not any(getattr(sub, "built", True) is False for module in plan.unbuilt for sub in module.modules()):
            for handle in handles:
                handle.remove()
            handles.clear()

    def before_forward(_module: nn.Module, _args: Any) -> None:
        if getattr(_module, "built", True) is not False and any(id(t) not in plan.restored for _, t in
                                                                 own_weights(_module)):
            rematch()

    def after_forward(_module: nn.Module, _args: Any, _output: Any) -> None:
        rematch()

    for module in plan.unbuilt:
        for sub in module.modules():
            handles.append(sub.register_forward_pre_hook(before_forward))
        handles.append(module.register_forward_hook(after_forward))


def _child(node: Any, name: str) -> Optional[int]:
    for candidate in (name, "_" + name, name.lstrip("_")):
        found = node.child(candidate)
        if found is not None:
            return found
    return None


def _index(name: str) -> int:
    return int(name) if re.fullmatch(r"\d+", name) else 1 << 30


def _tensors_of(obj: Any, path: str, seen: set) -> list[tuple[str, Any]]:
    """(label, tensor) of every variable an unmatched object holds (what TF lists as unbound objects)."""
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        return [(path, obj)]
    if isinstance(obj, nn.Module):
        return [(f"{path}/{name}", t) for name, t in list(obj.named_parameters()) + list(obj.named_buffers())
                if id(t) not in seen]
    if isinstance(obj, Module) or type(obj) in (list, tuple, dict):
        return [pair for key, item in tracked_children(obj) for pair in _tensors_of(item, f"{path}/{key}", seen)]
    if isinstance(obj, torch.optim.Optimizer):
        inner = getattr(obj, "inner_optimizer", None)
        if isinstance(inner, torch.optim.Optimizer):  # a LossScaleOptimizer: its scale and counter, the inner's state
            return ([(f"{path}/{name}", getattr(obj, name)) for name in ("dynamic_scale", "step_counter")]
                    + _tensors_of(inner, f"{path}/inner_optimizer", seen))
        out = [(f"{path}/iterations", obj._iterations)] if isinstance(getattr(obj, "_iterations", None),
                                                                      torch.Tensor) else []
        return out + [(f"{path}/{key}", t) for state in obj.state.values() for key, t in state.items()
                      if isinstance(t, torch.Tensor)]
    return [(path, obj)]


class TFCheckpointLoadStatus:
    """What `restore`/`read` of a TF-written checkpoint return; the assertions use TF's wording."""

    def __init__(self, plan: TFRestorePlan, root: Any) -> None:
        self.save_path = plan.prefix
        self.metadata = {"library": "tensorflow"}
        self._plan = plan
        self._root = root
        self._silenced = False

    def _objects_unbound(self) -> None:
        unmatched = self._plan.unmatched_objects
        if unmatched:
            shown = unmatched[:10]
            raise AssertionError(
                f"Found {len(unmatched)} Python objects that were not bound to checkpointed values, likely due to "
                f"changes in the Python program. Showing {len(shown)} of {len(unmatched)} unmatched objects: "
                f"[{', '.join(_label(path, obj) for path, obj in shown)}]")

    def assert_consumed(self) -> "TFCheckpointLoadStatus":
        """AssertionError unless every object here got a value and every value in the checkpoint was used."""
        self._objects_unbound()
        unresolved = self._plan.unresolved()
        if unresolved:
            raise AssertionError(f"Unresolved object in checkpoint {self._plan.describe_node(unresolved[0])}")
        return self

    def assert_existing_objects_matched(self) -> "TFCheckpointLoadStatus":
        """AssertionError if an object here got no value (extra values in the checkpoint are fine)."""
        self._objects_unbound()
        return self

    def assert_nontrivial_match(self) -> "TFCheckpointLoadStatus":
        """AssertionError if nothing but the root (and its save counter) matched a value."""
        restored = [node for node in self._plan.consumed if self._plan.paths.get(node) != "save_counter"]
        if not restored:
            raise AssertionError(
                "Nothing except the root object matched a checkpointed value. Typically this means that the "
                "checkpoint does not match the Python program. The following objects have no matching checkpointed "
                f"value: [{', '.join(_label(path, obj) for path, obj in self._plan.unmatched_objects[:10])}]")
        return self

    def expect_partial(self) -> "TFCheckpointLoadStatus":
        """Silences the warning about checkpoint values that matched nothing."""
        self._silenced = True
        return self

    def run_restore_ops(self, session: Any = None) -> None:
        """Graph-mode TF API; restores already happened eagerly."""

    def initialize_or_restore(self, session: Any = None) -> None:
        """Graph-mode TF API; restores already happened eagerly."""

    def __del__(self) -> None:
        plan = getattr(self, "_plan", None)
        if plan is None or self._silenced:
            return
        try:
            unresolved = plan.unresolved()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            return
        if unresolved:
            names = [_pretty(plan.paths.get(node, "")) for node in unresolved[:10]]
            warnings.warn(f"Values in TF checkpoint '{plan.prefix}' were not restored because nothing here matches "
                          f"them: {names}. Call .expect_partial() on the restore status if this is intended.",
                          stacklevel=2)


def _label(path: str, obj: Any) -> str:
    if isinstance(obj, torch.Tensor):
        return f"<variable '{_pretty(path)}' shape={tuple(obj.shape)} dtype={str(obj.dtype).replace('torch.', '')}>"
    return f"<{type(obj).__name__} '{_pretty(path)}'>"
