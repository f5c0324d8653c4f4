"""`tf.Module`: a container that finds the variables and submodules held in its attributes (as TF tracks them),
opens its own name scope, and saves and restores through tf.train.Checkpoint."""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Iterator, Optional

import torch
from torch import nn

from torchstrategy import _context
from torchstrategy.framework import name_scope as _name_scope_class

__all__ = ["Module", "tracked_children"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _is_variable(value: Any) -> bool:
    """tf.Variable, Keras weights and torch parameters: tensors that are state, not intermediate values."""
    return isinstance(value, nn.Parameter) or (isinstance(value, torch.Tensor) and hasattr(value, "trainable")
                                               and hasattr(value, "assign"))


def _trainable(value: Any) -> bool:
    flag = getattr(value, "trainable", None)
    return bool(value.requires_grad) if flag is None else bool(flag)


class Module:
    """Base class for objects that own variables (tf.Module): `variables`, `trainable_variables`,
    `non_trainable_variables` and `submodules` are found by walking the attributes (lists, tuples and dicts
    too, attributes in name order), and `name_scope` opens a tf.name_scope named after the module.

    >>> import torchstrategy as tf
    >>> class Dense(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = tf.Variable([[1.0]])
    >>> len(Dense().trainable_variables)
    1
    """

    def __init__(self, name: Optional[str] = None) -> None:
        if name is None:
            name = _snake(type(self).__name__)
        elif not _NAME.match(name):
            raise ValueError(f"'{name}' is not a valid module name. Module names must be valid Python identifiers "
                             "(e.g. a valid class name).")
        self._name = name
        scope = _context.current_name_scope()
        self._scope_name = f"{scope}/{name}" if scope else name

    @property
    def name(self) -> str:
        """The module's name (the class name in snake_case unless given)."""
        return self._name

    @property
    def name_scope(self) -> _name_scope_class:
        """A tf.name_scope for this module: `with self.name_scope:` prefixes variables made inside."""
        return _name_scope_class(self._scope_name + "/")

    # ----- tracking ---------------------------------------------------------------------------
    def _flatten(self, predicate: Callable[[Any], bool], recursive: bool = True) -> list:
        found: list = []
        seen: set = set()
        visiting: set = {id(self)}

        def walk(value: Any, owner_recurses: bool) -> None:
            if _is_variable(value) or isinstance(value, (Module, nn.Module)):
                if predicate(value) and id(value) not in seen:
                    seen.add(id(value))
                    found.append(value)
                if isinstance(value, nn.Module) and not isinstance(value, Module) and recursive and \
                        id(value) not in visiting:
                    for item in _torch_state(value):
                        if predicate(item) and id(item) not in seen:
                            seen.add(id(item))
                            found.append(item)
                if isinstance(value, Module) and owner_recurses and id(value) not in visiting:
                    visiting.add(id(value))
                    for item in value._attribute_values():
                        walk(item, recursive)
                return
            if isinstance(value, dict):
                for key in sorted(value, key=str):
                    walk(value[key], owner_recurses)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    walk(item, owner_recurses)

        for item in self._attribute_values():
            walk(item, recursive)
        return found

    def _attribute_values(self) -> Iterator[Any]:
        for key in sorted(vars(self)):
            if key in ("_name", "_scope_name"):
                continue
            yield vars(self)[key]

    @property
    def variables(self) -> tuple:
        """Every variable of this module and its submodules (deduplicated, attributes in name order)."""
        return tuple(self._flatten(_is_variable))

    @property
    def trainable_variables(self) -> tuple:
        return tuple(self._flatten(lambda v: _is_variable(v) and _trainable(v)))

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(self._flatten(lambda v: _is_variable(v) and not _trainable(v)))

    @property
    def submodules(self) -> tuple:
        """Every module held (directly or deeper) in the attributes."""
        return tuple(self._flatten(lambda v: isinstance(v, (Module, nn.Module))))

    @classmethod
    def with_name_scope(cls, method: Callable) -> Callable:
        """Decorates a method so that it runs inside the module's name scope."""
        @functools.wraps(method)
        def scoped(self: "Module", *args: Any, **kwargs: Any) -> Any:
            with self.name_scope:
                return method(self, *args, **kwargs)

        return scoped

    # ----- tf.train.Checkpoint ----------------------------------------------------------------
    def state_dict(self) -> dict:
        """The values of the variables by attribute path ('layer/w'), for tf.train.Checkpoint."""
        return {path: torch.Tensor.detach(value).clone() for path, value in self._variable_paths()}

    def load_state_dict(self, state: dict) -> None:
        """Puts saved values back into the variables (shapes must match)."""
        paths = dict(self._variable_paths())
        missing = sorted(set(paths) - set(state))
        if missing:
            raise ValueError(f"Module '{self.name}': the checkpoint has no value for {missing}.")
        with torch.no_grad():
            for path, variable in paths.items():
                value = state[path]
                if tuple(value.shape) != tuple(variable.shape):
                    raise ValueError(f"Module '{self.name}': '{path}' has shape {tuple(variable.shape)} but the "
                                     f"checkpoint holds {tuple(value.shape)}.")
                torch.Tensor.copy_(variable, value.to(variable.device, variable.dtype))

    def _variable_paths(self) -> list:
        out: list = []
        seen: set = set()

        def walk(value: Any, path: str) -> None:
            if id(value) in seen:
                return
            if _is_variable(value):
                seen.add(id(value))
                out.append((path, value))
            elif isinstance(value, Module):
                seen.add(id(value))
                for key in sorted(vars(value)):
                    if key not in ("_name", "_scope_name"):
                        walk(vars(value)[key], f"{path}/{key}" if path else key)
            elif isinstance(value, nn.Module):
                seen.add(id(value))
                for key, item in value.state_dict(keep_vars=True).items():
                    walk(item, f"{path}/{key}")
            elif isinstance(value, dict):
                for key in sorted(value, key=str):
                    walk(value[key], f"{path}/{key}")
            elif isinstance(value, (list, tuple)):
                for index, item in enumerate(value):
                    walk(item, f"{path}/{index}")

        walk(self, "")
        return out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self._name!r}>"


def _tracked(value: Any) -> bool:
    return _is_variable(value) or isinstance(value, (Module, nn.Module, torch.optim.Optimizer, list, tuple, dict))


def tracked_children(value: Any) -> list:
    """The (local name, value) pairs TF's checkpoint object graph records under a tf.Module (its attributes, in the
    order they were set), a list or tuple (items by index) or a dict (items by string key), keeping only what TF
    tracks: variables, modules (tf.Module, Keras layers), optimizers and containers. Other values (numbers,
    strings, plain tensors) are left out, and the items after them keep their own index, as TF numbers them."""
    if isinstance(value, Module):
        items = [(key, item) for key, item in vars(value).items() if key not in ("_name", "_scope_name")]
    elif isinstance(value, dict):
        items = [(key, item) for key, item in value.items() if isinstance(key, str)]
    elif isinstance(value, (list, tuple)):
        items = [(str(index), item) for index, item in enumerate(value)]
    else:
        return []
    return [(name, item) for name, item in items if _tracked(item)]


def _torch_state(module: nn.Module) -> list:
    """A torch/Keras module's variables: Keras's `weights` when it has them, else parameters and buffers."""
    weights = getattr(module, "weights", None)
    if isinstance(weights, (list, tuple)):
        return list(weights)
    return list(module.parameters()) + list(module.buffers())
