"""Symbolic inputs of the functional API: `Input`, the `InputLayer` behind it, the KerasTensor
it returns and the Node that records each layer call on KerasTensors."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer, _shape_str
from torchstrategy.nest import flatten as flatten_structure


class KerasTensor:
    """A symbolic tensor: the shape (batch None) and dtype of a value in a functional graph."""

    _keras_symbolic = True

    def __init__(self, shape: Sequence[Optional[int]], dtype: torch.dtype, node: Optional["Node"] = None,
                 index: int = 0, name: Optional[str] = None) -> None:
        self.shape = tuple(shape)
        self.dtype = dtype
        self.node = node
        self.index = index
        self.name = name

    @property
    def ndim(self) -> int:
        return len(self.shape)

    # arithmetic with numbers or other KerasTensors records an operation (Keras: ops on KerasTensors)
    def __add__(self, other: Any) -> "KerasTensor":
        return TensorOperation("add")([self, other])

    def __radd__(self, other: Any) -> "KerasTensor":
        return TensorOperation("add")([other, self])

    def __sub__(self, other: Any) -> "KerasTensor":
        return TensorOperation("subtract")([self, other])

    def __rsub__(self, other: Any) -> "KerasTensor":
        return TensorOperation("subtract")([other, self])

    def __mul__(self, other: Any) -> "KerasTensor":
        return TensorOperation("multiply")([self, other])

    def __rmul__(self, other: Any) -> "KerasTensor":
        return TensorOperation("multiply")([other, self])

    def __truediv__(self, other: Any) -> "KerasTensor":
        return TensorOperation("divide")([self, other])

    def __rtruediv__(self, other: Any) -> "KerasTensor":
        return TensorOperation("true_divide")([other, self])

    def __neg__(self) -> "KerasTensor":
        return TensorOperation("multiply")([self, -1.0])

    def __repr__(self) -> str:
        producer = self.node.layer.name if self.node else "?"
        return f"<KerasTensor shape={_shape_str(self.shape)} dtype={str(self.dtype).replace('torch.', '')} " \
               f"(created by layer '{producer}')>"


_OPERATIONS = {"add": torch.add, "subtract": torch.sub, "multiply": torch.mul, "divide": torch.div,
               "true_divide": torch.div}
_operation_count = iter(range(1 << 62))


class TensorOperation(Layer):
    """A tensor operator applied to KerasTensors (`x + 3.0`, `x * y`): a graph step without weights that,
    as in Keras, is not listed in `model.layers`."""

    _keras_operation = True

    def __init__(self, op: str, name: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(name=name or f"{op}_operation_{next(_operation_count)}", **kwargs)
        self.op = op

    def call(self, inputs: Any) -> Any:
        a, b = inputs
        return _OPERATIONS[self.op](a, b)

    def get_config(self) -> dict:
        return dict(super().get_config(), op=self.op)


@dataclass(eq=False)
class Node:
    """One call of `layer` on symbolic inputs, with the KerasTensors it produced."""

    layer: Layer
    inputs: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    outputs: Any = None

    @property
    def input_tensors(self) -> list[KerasTensor]:
        return [t for t in flatten_structure((self.inputs, self.args, self.kwargs)) if isinstance(t, KerasTensor)]


def _check_input_shape(batch_input_shape: Sequence[Any]) -> None:
    """Every dimension is None (unknown) or a non-negative integer, as TF's TensorShape requires."""
    for dim in batch_input_shape:
        if dim is None:
            continue
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 0:
            per_sample = tuple(batch_input_shape[1:])
            raise ValueError(f"Input shape {per_sample} (batch shape {tuple(batch_input_shape)}) is invalid: "
                             f"dimension {dim!r} is not allowed. Each dimension must be a non-negative integer, "
                             f"or None for a size known only at run time, e.g. Input(shape=(None, 3)).")


class InputLayer(Layer):
    """The layer behind `Input`: passes its input through (casting to its dtype)."""

    _float_policy_only = False  # integer inputs (Input(dtype='int32')) are fine

    def __init__(self, input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None,
                 dtype: Any = None, name: Optional[str] = None, batch_input_shape: Any = None,
                 **kwargs: Any) -> None:
        dtype = backend.floatx() if dtype is None else dtype  # the input's dtype, not the global policy (Keras)
        if batch_input_shape is None:
            batch_input_shape = (batch_size,) + tuple(input_shape or ())
        _check_input_shape(tuple(batch_input_shape))
        super().__init__(name=name, dtype=dtype, batch_input_shape=batch_input_shape, **kwargs)
        self.built = True
        output = KerasTensor((None,) + tuple(batch_input_shape[1:]), backend.to_torch_dtype(self.dtype),
                             Node(self, None), name=self.name)
        output.node.outputs = output
        self.__dict__["_inbound_nodes"] = [output.node]  # `self.output` (Layer) reads it

    def call(self, inputs: Any) -> Any:
        return inputs

    def _cast_inputs(self, inputs: Any) -> Any:
        value = backend.to_tensor(inputs)
        target = self._compute_torch_dtype
        return value if value.dtype == target else value.to(target)

    def get_config(self) -> dict:
        return {"batch_input_shape": list(self._batch_input_shape), "dtype": self.dtype, "name": self.name}


def Input(shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, name: Optional[str] = None,
          dtype: Any = None, batch_shape: Optional[Sequence[Optional[int]]] = None, **kwargs: Any) -> KerasTensor:
    """A symbolic input of the given per-sample `shape` (keras.Input).

    >>> x = Input(shape=(32, 32, 3))
    >>> x.shape
    (None, 32, 32, 3)
    """
    if shape is None and batch_shape is None:
        raise ValueError("Input() needs `shape` (per-sample, without the batch dimension), e.g. Input(shape=(784,)).")
    batch_input_shape = tuple(batch_shape) if batch_shape is not None else (batch_size,) + tuple(shape)
    layer = InputLayer(batch_input_shape=batch_input_shape, dtype=dtype, name=name, **kwargs)
    return layer.output
