"""The functional API's graph: symbolic KerasTensors from `Input`, the nodes that layer calls on
them record, and running that graph on real tensors (used by functional `Model`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import torch

from torchstrategy.data.distribute import flatten_structure, map_structure
from torchstrategy.keras import backend
from torchstrategy.keras.layers.base import Layer, _shape_of, _shape_str


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

    def __repr__(self) -> str:
        producer = self.node.layer.name if self.node else "?"
        return f"<KerasTensor shape={_shape_str(self.shape)} dtype={str(self.dtype).replace('torch.', '')} " \
               f"(created by layer '{producer}')>"


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


class InputLayer(Layer):
    """The layer behind `Input`: passes its input through (casting to its dtype)."""

    def __init__(self, input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None,
                 dtype: Any = None, name: Optional[str] = None, batch_input_shape: Any = None,
                 **kwargs: Any) -> None:
        if batch_input_shape is None:
            batch_input_shape = (batch_size,) + tuple(input_shape or ())
        super().__init__(name=name, dtype=dtype, batch_input_shape=batch_input_shape, **kwargs)
        self.built = True
        self.output = KerasTensor((None,) + tuple(batch_input_shape[1:]), backend.to_torch_dtype(self.dtype),
                                  Node(self, None), name=self.name)
        self.output.node.outputs = self.output

    def call(self, inputs: Any) -> Any:
        return inputs

    def _cast_inputs(self, inputs: Any) -> Any:
        value = backend.to_tensor(inputs)
        target = self.compute_dtype
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


def _concrete(value: Any) -> Any:
    """A one-row zero tensor standing in for a KerasTensor while shapes are inferred."""
    if isinstance(value, KerasTensor):
        return torch.zeros((1,) + tuple(1 if d is None else d for d in value.shape[1:]), dtype=value.dtype)
    return value


def call_symbolic(layer: Layer, inputs: Any, args: tuple, kwargs: dict) -> Any:
    """Records `layer(inputs)` as a node and returns symbolic outputs of the inferred shapes."""
    kwargs = {k: v for k, v in kwargs.items() if k != "training" or v is not None}
    with torch.no_grad():
        concrete = layer(map_structure(_concrete, inputs), *map_structure(_concrete, args),
                         **dict(map_structure(_concrete, kwargs), training=False))
    node = Node(layer, inputs, args, kwargs)
    counter = iter(range(1 << 30))
    node.outputs = map_structure(
        lambda t: KerasTensor(_shape_of(t), t.dtype, node, next(counter)) if isinstance(t, torch.Tensor) else t,
        concrete,
    )
    return node.outputs


def topological_nodes(outputs: Any, inputs: Sequence[KerasTensor]) -> list[Node]:
    """Nodes needed to compute `outputs` from `inputs`, each after the nodes it reads."""
    input_ids = {id(t) for t in inputs}
    order: list[Node] = []
    state: dict[int, int] = {}

    def visit(tensor: KerasTensor) -> None:
        if id(tensor) in input_ids:
            return
        node = tensor.node
        if node is None or node.inputs is None and not isinstance(node.layer, InputLayer):
            raise ValueError(f"{tensor!r} was not computed from the model's inputs.")
        if isinstance(node.layer, InputLayer):
            raise ValueError(
                f"Graph disconnected: output depends on input '{node.layer.name}', which is not in the "
                f"model's inputs. Pass it in Model(inputs=[...])."
            )
        if state.get(id(node)) == 2:
            return
        state[id(node)] = 1
        for parent in node.input_tensors:
            visit(parent)
        state[id(node)] = 2
        order.append(node)

    for tensor in flatten_structure(outputs):
        visit(tensor)
    return order


def run_graph(nodes: Sequence[Node], inputs: Sequence[KerasTensor], values: Sequence[Any], outputs: Any,
              training: Optional[bool]) -> Any:
    """Evaluates the recorded nodes on real `values` fed to `inputs`."""
    computed: dict[int, Any] = {}
    for symbolic, value in zip(inputs, values):
        computed[id(symbolic)] = symbolic.node.layer(value)

    def lookup(item: Any) -> Any:
        return computed[id(item)] if isinstance(item, KerasTensor) else item

    for node in nodes:
        kwargs = map_structure(lookup, node.kwargs)
        kwargs.setdefault("training", training)
        result = node.layer(map_structure(lookup, node.inputs), *map_structure(lookup, node.args), **kwargs)
        for symbolic, value in zip(flatten_structure(node.outputs), flatten_structure(result)):
            computed[id(symbolic)] = value
    return map_structure(lookup, outputs)
