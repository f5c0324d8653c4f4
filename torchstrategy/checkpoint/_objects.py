"""What a Checkpoint can hold and how each kind's state is captured and put back: nested
Checkpoints, nn.Modules, optimizers, tensors/Variables, containers and `state_dict` objects."""
from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, Callable, Optional

import torch
from torch import nn

SUPPORTED = ("tf.train.Checkpoint, torch.nn.Module (Keras models and layers), torch.optim.Optimizer (Keras "
             "optimizers), torch tensors and tf.Variable, objects with state_dict()/load_state_dict() (e.g. "
             "dataset iterators), and lists/tuples/dicts of these")


class UnsupportedObjectError(TypeError, ValueError):
    """An object a Checkpoint cannot track (TypeError, and ValueError as TF raises)."""


def kind_of(obj: Any) -> str:
    """The state protocol `obj` follows, checked in this order; UnsupportedObjectError if none."""
    from torchstrategy.checkpoint.checkpoint import Checkpoint

    if isinstance(obj, Checkpoint):
        return "checkpoint"
    if isinstance(obj, nn.Module):
        return "module"
    if isinstance(obj, torch.optim.Optimizer):
        return "optimizer"
    if isinstance(obj, torch.Tensor):
        return "tensor"
    if callable(getattr(obj, "state_dict", None)) and callable(getattr(obj, "load_state_dict", None)):
        return "stateful"
    if type(obj) in (list, tuple, dict):
        return "container"
    raise UnsupportedObjectError("")


def check_trackable(obj: Any, name: str) -> None:
    """Raises a clear error at Checkpoint construction for values it could not save."""
    try:
        kind = kind_of(obj)
    except UnsupportedObjectError:
        hint = " Wrap a Python number in tf.Variable, e.g. tf.Variable(0)." if isinstance(obj, (int, float)) else ""
        raise UnsupportedObjectError(
            f"`Checkpoint` cannot track {name}={obj!r} (a {type(obj).__name__}). Supported: {SUPPORTED}.{hint}"
        ) from None
    if kind == "container":
        for key, item in _container_items(obj):
            check_trackable(item, f"{name}[{key}]")


def _container_items(obj: Any) -> list:
    if isinstance(obj, dict):
        for key in obj:
            if not isinstance(key, str):
                raise UnsupportedObjectError(f"Checkpoint dict keys must be strings; got {key!r}.")
        return list(obj.items())
    return [(str(index), item) for index, item in enumerate(obj)]


def children_of(obj: Any, kind: str) -> list:
    """(name, child) pairs an object tracks: a Checkpoint's objects, a container's items, and a
    compiled Keras model's optimizer (as TF's model tracks `model.optimizer`)."""
    if kind == "checkpoint":
        return list(obj._children.items())
    if kind == "container":
        return _container_items(obj)
    if kind == "module":
        optimizer = getattr(obj, "optimizer", None)
        return [("optimizer", optimizer)] if isinstance(optimizer, torch.optim.Optimizer) else []
    return []


class PlainStateIO:
    """How module state is read and written when no strategy says otherwise: `state_dict` as it is.
    A strategy's checkpoint-IO part (e.g. a sharded one) takes its place (same two methods)."""

    def state_dict(self, module: nn.Module) -> dict:
        return module.state_dict()

    def load_state_dict(self, module: nn.Module, state: dict) -> Any:
        return module.load_state_dict(state, strict=True)


_PLAIN = PlainStateIO()


def _capture_state(obj: Any, kind: str, io: Any) -> Any:
    if kind == "module":
        return {key: value.detach() for key, value in io.state_dict(obj).items()}
    if kind == "tensor":
        return obj.detach()
    if kind in ("optimizer", "stateful"):
        return obj.state_dict()
    return None


def capture(obj: Any, path: str, seen: dict, io: Any = _PLAIN) -> dict:
    """The saved form of `obj` and everything it tracks; an object reached twice is stored once.
    Module state comes from `io.state_dict(module)` (the strategy's checkpoint IO)."""
    if id(obj) in seen:
        return {"kind": "alias", "target": seen[id(obj)]}
    seen[id(obj)] = path
    kind = kind_of(obj)
    node = {"kind": kind, "type": type(obj).__name__, "per_replica": bool(getattr(obj, "_checkpoint_per_replica", False)),
            "state": _capture_state(obj, kind, io), "children": {}}
    for name, child in children_of(obj, kind):
        node["children"][name] = capture(child, _join(path, name), seen, io)
    return node


def _join(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def _lookup(root: dict, path: str) -> dict:
    node = root
    for part in path.split("/"):
        node = node["children"][part]
    return node


class RestorePlan:
    """Matches saved nodes to live objects, checks shapes before anything changes, then applies."""

    def __init__(self, file_path: str, root_node: dict, skip: tuple = (), io: Any = _PLAIN) -> None:
        self.file_path = file_path
        self.io = io  # module state goes in through io.load_state_dict (the strategy's checkpoint IO)
        self.root_node = root_node
        self.skip = skip  # top-level names neither side must match (save_counter for read())
        self.matched: list[str] = []
        self.unmatched_in_file: list[str] = []
        self.unmatched_objects: list[str] = []
        self.deferred: list[dict] = []
        self.per_replica: list[str] = []  # matched objects whose saved state is per replica
        # (kind, object, saved state, deferred) of every object whose state is put back: where the tensors of
        # a sharded checkpoint are loaded to, laid out like these objects, before `apply`
        self.targets: list[tuple[str, Any, Any, bool]] = []
        self._actions: list[tuple[int, Callable[[], None]]] = []
        self._visited: set[int] = set()

    def match(self, node: dict, obj: Any, path: str) -> None:
        if node["kind"] == "alias":
            node = _lookup(self.root_node, node["target"])
        if id(obj) in self._visited:
            self.matched.append(path)
            return
        self._visited.add(id(obj))
        if node.get("per_replica"):
            self.per_replica.append(path)
        kind = kind_of(obj)
        if kind != node["kind"]:
            raise ValueError(f"Cannot restore '{path}' from '{self.file_path}': it is a {kind} ({type(obj).__name__}) "
                             f"here but a {node['kind']} ({node.get('type')}) in the checkpoint.")
        self._plan_state(node, obj, kind, path)
        if kind not in ("checkpoint", "container") and node.get("state") is not None:
            self.targets.append((kind, obj, node["state"], bool(self.deferred and self.deferred[-1]["path"] == path)))
        live = dict(children_of(obj, kind))
        saved = node.get("children", {})
        for name, child in live.items():
            if path == "" and name in self.skip:
                continue
            if name in saved:
                self.match(saved[name], child, _join(path, name))
            else:
                self._missing_object(child, _join(path, name))
        for name in saved:
            if name not in live and not (path == "" and name in self.skip):
                self.unmatched_in_file.append(_join(path, name))

    def _missing_object(self, obj: Any, path: str) -> None:
        if id(obj) in self._visited:
            return
        self.unmatched_objects.append(path)

    def _plan_state(self, node: dict, obj: Any, kind: str, path: str) -> None:
        state = node.get("state")
        if kind in ("checkpoint", "container"):
            self.matched.append(path)
        elif kind == "module":
            self._plan_module(obj, state, path)
        elif kind == "tensor":  # the state is read when applied: a sharded checkpoint loads it after planning
            check_tensor(obj, state, path, self.file_path)
            self._add(0, path, lambda: _copy_into(obj, node["state"]))
        elif kind == "optimizer":
            self._add(1, path, lambda: _load_with_context(obj, _owned(node["state"]), path, self.file_path))
        else:
            self._add(2, path, lambda: _load_with_context(obj, _owned(node["state"]), path, self.file_path))

    def _add(self, order: int, path: str, action: Callable[[], None]) -> None:
        self.matched.append(path)
        self._actions.append((order, action))

    def _plan_module(self, module: nn.Module, state: dict, path: str) -> None:
        if getattr(module, "built", True) is False and not module.state_dict() and state:
            # A Keras model not built yet (TF defers the restore until its variables exist): load on first call.
            entry = {"path": path, "done": False}
            self.deferred.append(entry)
            self.matched.append(path)
            self._actions.append((0, lambda: _defer_until_built(module, _owned(state), path, self.file_path, entry)))
            return
        check_module(module, state, path, self.file_path, current=self.io.state_dict(module))
        self._add(0, path, lambda: self.io.load_state_dict(module, state))

    def apply(self) -> None:
        for _, action in sorted(self._actions, key=lambda item: item[0]):
            action()


def _variable_label(module: nn.Module, key: str) -> str:
    owner, _, attr = key.rpartition(".")
    try:
        layer = module.get_submodule(owner) if owner else module
    except AttributeError:
        return f"'{key}'"
    name = getattr(layer, "name", None)
    return f"'{key}' (weight '{attr}' of layer '{name}')" if isinstance(name, str) else f"'{key}'"


def check_module(module: nn.Module, saved: dict, path: str, file_path: str, current: Optional[dict] = None) -> None:
    """ValueError naming the first variable whose presence or shape differs (another architecture)."""
    current = module.state_dict() if current is None else current
    problem = None
    for key, value in current.items():
        if key not in saved:
            problem = f"variable {_variable_label(module, key)} of shape {tuple(value.shape)} is not in the checkpoint"
        elif tuple(saved[key].shape) != tuple(value.shape):
            problem = (f"variable {_variable_label(module, key)} has shape {tuple(saved[key].shape)} in the checkpoint "
                       f"but {tuple(value.shape)} in this model")
        if problem:
            break
    if problem is None:
        extra = [key for key in saved if key not in current]
        if extra:
            problem = f"the checkpoint has variable '{extra[0]}' (shape {tuple(saved[extra[0]].shape)}) that this model lacks"
    if problem:
        raise ValueError(f"Cannot restore '{path}' from '{file_path}': {problem}. The checkpoint was written for a "
                         f"model of another architecture; build the same layers (same order and sizes) to restore it.")


def check_tensor(obj: torch.Tensor, saved: Any, path: str, file_path: str) -> None:
    if not isinstance(saved, torch.Tensor) or tuple(saved.shape) != tuple(obj.shape):
        shape = tuple(saved.shape) if isinstance(saved, torch.Tensor) else type(saved).__name__
        raise ValueError(f"Cannot restore '{path}' from '{file_path}': it has shape {shape} in the checkpoint but "
                         f"{tuple(obj.shape)} here. Create the variable with the saved shape.")


def _owned(value: Any) -> Any:
    """`value` with its tensors copied out of the mapped checkpoint file (for objects that keep them)."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if type(value) in (dict, OrderedDict):
        return type(value)((key, _owned(item)) for key, item in value.items())
    if type(value) in (list, tuple):
        return type(value)(_owned(item) for item in value)
    return value


def _copy_into(obj: torch.Tensor, saved: torch.Tensor) -> None:
    with torch.no_grad():
        torch.Tensor.copy_(obj, saved)


def _load_with_context(obj: Any, state: Any, path: str, file_path: str) -> None:
    try:
        obj.load_state_dict(state)
    except (ValueError, KeyError, RuntimeError) as error:
        raise ValueError(f"Cannot restore '{path}' ({type(obj).__name__}) from '{file_path}': {error}") from error


def _defer_until_built(module: nn.Module, state: dict, path: str, file_path: str, entry: dict) -> None:
    """Keras layers create their weights on first call: each submodule loads its own saved tensors in a
    forward pre-hook (after its build, before its forward), so even the first output uses restored
    weights; when the outer call ends, anything left is loaded and the architecture is checked."""
    remaining = dict(state)
    handles: list = []

    def load_own(prefix: str, owner: nn.Module) -> Callable:
        def hook(_module: nn.Module, _args: Any) -> None:
            own = list(owner.named_parameters(recurse=False)) + list(owner.named_buffers(recurse=False))
            for name, target in own:
                saved = remaining.get(prefix + name)
                if saved is None:
                    continue
                if tuple(saved.shape) != tuple(target.shape):
                    check_module(module, state, path, file_path)  # raises, naming the variable and shapes
                _copy_into(target, remaining.pop(prefix + name))
        return hook

    def finish(_module: nn.Module, _args: Any, _output: Any) -> None:
        for handle in handles:
            handle.remove()
        check_module(module, state, path, file_path)
        if remaining:  # weights created outside any hooked module's build
            current = module.state_dict()
            for key, saved in remaining.items():
                _copy_into(current[key], saved)
        entry["done"] = True

    for name, owner in module.named_modules():
        handles.append(owner.register_forward_pre_hook(load_own(f"{name}." if name else "", owner)))
    handles.append(module.register_forward_hook(finish))


def warn_unrestored(file_path: str, paths: list) -> None:
    warnings.warn(
        f"Values in checkpoint '{file_path}' were not restored because nothing here matches them: {paths}. "
        f"Call .expect_partial() on the restore status if this is intended.", stacklevel=3)


def describe(paths: list, limit: Optional[int] = 10) -> str:
    shown = paths[:limit] if limit else paths
    more = f" and {len(paths) - len(shown)} more" if len(paths) > len(shown) else ""
    return ", ".join(f"'{p}'" for p in shown) + more
