"""Keras variables: the weights `add_weight` makes are torch tensors (a Parameter when trainable, a buffer
otherwise) that also answer Keras 3's variable API: `name`, `path`, `numpy()`, `assign*`, `value`, `trainable`."""
from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch import nn


class _VariableAPI:
    """Keras 3's `keras.Variable` methods, shared by the trainable and the non-trainable kind."""

    _keras_name: str
    _keras_path: str

    @property
    def name(self) -> str:
        """The weight's own name, e.g. 'kernel' (Keras 3; TF's tf.Variable would add ':0')."""
        return self.__dict__.get("_keras_name", "variable")

    @property
    def path(self) -> str:
        """'<layer>/<name>', e.g. 'dense/kernel' (Keras 3 also prefixes the Sequential that built the layer)."""
        return self.__dict__.get("_keras_path", self.name)

    @property
    def aggregation(self) -> str:
        """How replicas' values combine when read outside a replica (Keras 3): 'sum', 'mean',
        'only_first_replica' for metric states, 'none' for layer weights."""
        return self.__dict__.get("_keras_aggregation", "none")

    @property
    def trainable(self) -> bool:
        return isinstance(self, nn.Parameter) and bool(self.requires_grad)  # type: ignore[attr-defined]

    @property
    def value(self) -> torch.Tensor:
        """The current value as a plain tensor (shares memory with the weight)."""
        return torch.Tensor.detach(self)  # type: ignore[arg-type]

    def numpy(self) -> np.ndarray:  # type: ignore[override]
        """A NumPy copy of the current value."""
        return torch.Tensor.detach(self).cpu().numpy().copy()  # type: ignore[arg-type]

    def _assigned(self, value: Any, op: str) -> torch.Tensor:
        from torchstrategy import _context
        from torchstrategy.variables import assignable  # tf.Variable's rule: same shape, cast to this dtype

        scope = _context.keras_scope("stateless")
        if scope is not None:  # inside a keras.StatelessScope the write lands in the scope's copy
            scope._adopt(self)

        return assignable(value, self, op, self.path)  # type: ignore[arg-type]

    def assign(self, value: Any) -> torch.Tensor:
        """Sets the weight in place to `value` (same shape); returns the new value."""
        with torch.no_grad():
            torch.Tensor.copy_(self, self._assigned(value, "assign"))  # type: ignore[arg-type]
        return self.value

    def assign_add(self, value: Any) -> torch.Tensor:
        with torch.no_grad():
            torch.Tensor.add_(self, self._assigned(value, "assign_add"))  # type: ignore[arg-type]
        return self.value

    def assign_sub(self, value: Any) -> torch.Tensor:
        with torch.no_grad():
            torch.Tensor.sub_(self, self._assigned(value, "assign_sub"))  # type: ignore[arg-type]
        return self.value

    def _described(self) -> str:
        return f"<Variable path={self.path}, shape={tuple(self.shape)}, dtype={str(self.dtype).replace('torch.', '')}>"  # type: ignore[attr-defined]


def _rebuild_trainable(data: torch.Tensor, requires_grad: bool, state: dict) -> "TrainableVariable":
    variable = TrainableVariable(data, requires_grad)
    variable.__dict__.update(state)
    return variable


def _rebuild_buffer(data: torch.Tensor, state: dict) -> "NonTrainableVariable":
    variable = NonTrainableVariable(data)
    variable.__dict__.update(state)
    return variable


class TrainableVariable(_VariableAPI, nn.Parameter):
    """A trainable Keras weight: an `nn.Parameter` (optimizers, DDP, FSDP see a Parameter)."""

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> "TrainableVariable":
        return nn.Parameter.__new__(cls, data, requires_grad)  # type: ignore[return-value]

    def __deepcopy__(self, memo: dict) -> "TrainableVariable":
        result = type(self)(self.data.clone(memory_format=torch.preserve_format), self.requires_grad)
        memo[id(self)] = result
        result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return result

    def __reduce_ex__(self, protocol: int) -> Any:
        return _rebuild_trainable, (self.data, self.requires_grad, dict(self.__dict__))

    def __repr__(self) -> str:
        return self._described()


class NonTrainableVariable(_VariableAPI, torch.Tensor):
    """A non-trainable Keras weight (moving statistics, counters): a module buffer."""

    __torch_function__ = torch._C._disabled_torch_function_impl  # ops give plain tensors, at plain-tensor speed

    def __new__(cls, data: Any = None) -> "NonTrainableVariable":
        return torch.Tensor._make_subclass(cls, data, False)  # type: ignore[return-value]

    def __deepcopy__(self, memo: dict) -> "NonTrainableVariable":
        result = type(self)(torch.Tensor.clone(self))
        memo[id(self)] = result
        result.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return result

    def __reduce_ex__(self, protocol: int) -> Any:
        return _rebuild_buffer, (torch.Tensor.detach(self), dict(self.__dict__))

    def __repr__(self) -> str:
        return self._described()


class MappedValue(_VariableAPI, torch.Tensor):
    """What a layer reads, inside a keras.StatelessScope, for a weight mapped to a value that needs gradients: an
    alias of that value (gradients reach it) that answers the weight's Keras API; writes go to the weight, that
    is to the scope's copy of it."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    @property
    def trainable(self) -> bool:
        return self.__dict__["_keras_of"].trainable

    def assign(self, value: Any) -> torch.Tensor:
        return self.__dict__["_keras_of"].assign(value)

    def assign_add(self, value: Any) -> torch.Tensor:
        return self.__dict__["_keras_of"].assign_add(value)

    def assign_sub(self, value: Any) -> torch.Tensor:
        return self.__dict__["_keras_of"].assign_sub(value)

    def __repr__(self) -> str:
        return self._described()


def mapped_value(variable: torch.Tensor, value: torch.Tensor) -> MappedValue:
    """`value` as `variable` reads inside a StatelessScope (see MappedValue)."""
    mapped = value.as_subclass(MappedValue)
    mapped.__dict__.update(_keras_of=variable, _keras_name=variable.__dict__.get("_keras_name", "variable"),
                           _keras_path=variable.__dict__.get("_keras_path", "variable"))
    return mapped


def make_weight(value: torch.Tensor, trainable: bool, requires_grad: bool, name: str, path: str) -> torch.Tensor:
    """The tensor `add_weight` stores: a TrainableVariable (Parameter) or a NonTrainableVariable (buffer)."""
    weight: Any = TrainableVariable(value, requires_grad) if trainable else NonTrainableVariable(value)
    weight._keras_name, weight._keras_path = name, path
    return weight


Variable = TrainableVariable  # keras.Variable: what isinstance checks on trainable weights see
