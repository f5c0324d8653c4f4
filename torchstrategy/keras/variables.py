"""Keras variables: the weights `add_weight` makes are torch tensors (a Parameter when trainable, a buffer
otherwise) that also answer Keras 3's variable API: `name`, `path`, `numpy()`, `assign*`, `value`, `trainable`."""
from __future__ import annotations

import copy
from typing import Any, Optional

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
    variable = TrainableVariable._wrap(data, requires_grad)
    variable.__dict__.update(state)
    return variable


def _rebuild_buffer(data: torch.Tensor, state: dict) -> "NonTrainableVariable":
    variable = NonTrainableVariable(data)
    variable.__dict__.update(state)
    return variable


_AGGREGATIONS = (None, "none", "mean", "sum", "only_first_replica")
_SYNCHRONIZATIONS = (None, "none", "on_read", "on_write", "auto")


def _initial_value(initializer: Any, shape: Any, dtype: Any) -> torch.Tensor:
    """Keras's rule: an initializer (name or callable) needs `shape` and makes floatx unless `dtype` says
    otherwise; a value keeps its own dtype unless `dtype` is given."""
    from torchstrategy.keras import backend, initializers

    if isinstance(initializer, str):
        initializer = initializers.get(initializer)
    if callable(initializer):
        if shape is None:
            raise ValueError(f"When creating a Variable from an initializer, the `shape` argument should be "
                             f"specified. Received: initializer={initializer} and shape={shape}")
        dtype = backend.floatx() if dtype is None else dtype
        return backend.to_tensor(initializer(tuple(shape), dtype=dtype), dtype)
    return backend.to_tensor(initializer, dtype)


class TrainableVariable(_VariableAPI, nn.Parameter):
    """A Keras weight that is an `nn.Parameter` (optimizers, DDP, FSDP see a Parameter); keras.Variable.

    Built as Keras 3 builds a variable: `keras.Variable(initializer, shape=None, dtype=None, trainable=True,
    ...)`, `initializer` a value or an initializer (name or callable, then `shape` is required).
    `trainable=False` gives a Parameter without gradient (`trainable` False; also for integer values, which
    torch cannot differentiate, where Keras reports True). `aggregation` is kept for
    distributed reads; `autocast=False`, a `synchronization` other than 'auto' and a `layout` are not
    available (NotImplementedError). Further keywords are ignored, as Keras does. Torch's own
    `cls(data, requires_grad)` (a tensor and a bool) still builds a plain Parameter-like weight.
    """

    def __new__(cls, initializer: Any, shape: Any = None, dtype: Any = None, trainable: bool = True,
                autocast: bool = True, aggregation: Optional[str] = "none", synchronization: Optional[str] = "auto",
                name: Optional[str] = None, layout: Any = None, **kwargs: Any) -> "TrainableVariable":
        if isinstance(shape, bool) and isinstance(initializer, torch.Tensor):  # torch's Parameter(data, grad)
            return cls._wrap(initializer, shape)
        name = name or "variable"
        if not isinstance(name, str) or "/" in name:
            raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. Received: "
                             f"name={name}")
        if aggregation not in _AGGREGATIONS:
            raise ValueError("Invalid value for argument `aggregation`. Expected one of `None`, `'none'`, "
                             f"`'mean'`, `'sum'`, `'only_first_replica'`. Received: aggregation={aggregation}")
        if synchronization not in _SYNCHRONIZATIONS:
            raise ValueError("Invalid value for argument `synchronization`. Expected one of `None`, `'none'`, "
                             f"`'on_read'`, `'on_write'`, `'auto'`. Received: synchronization={synchronization}")
        for what, value, default in (("autocast", autocast, True), ("synchronization", synchronization, "auto"),
                                     ("layout", layout, None)):
            if value != default:
                raise NotImplementedError(f"keras.Variable({what}={value!r}) is not available here; leave {what} "
                                          f"at its default ({default!r}).")
        value = _initial_value(initializer, shape, dtype).detach().clone()
        # torch lets only float and complex tensors take gradients: an integer variable is never trainable here
        variable = cls._wrap(value, bool(trainable) and (value.is_floating_point() or value.is_complex()))
        variable._keras_name, variable._keras_path = name, name
        variable._keras_aggregation = aggregation or "none"
        return variable

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # everything happened in __new__
        pass

    @classmethod
    def _wrap(cls, data: torch.Tensor, requires_grad: bool = True) -> "TrainableVariable":
        """The weight holding `data` itself (what add_weight, copies and unpickling make)."""
        return nn.Parameter.__new__(cls, data, requires_grad)  # type: ignore[return-value]

    def __deepcopy__(self, memo: dict) -> "TrainableVariable":
        result = type(self)._wrap(self.data.clone(memory_format=torch.preserve_format), self.requires_grad)
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
    weight: Any = TrainableVariable._wrap(value, requires_grad) if trainable else NonTrainableVariable(value)
    weight._keras_name, weight._keras_path = name, path
    return weight


Variable = TrainableVariable  # keras.Variable: what isinstance checks on trainable weights see
