"""The functional API's graph: recording layer calls on KerasTensors (`call_symbolic`), ordering
the recorded nodes, and running that graph on real tensors (used by functional `Model`)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.keras.layers.base import Layer, _shape_of
from torchstrategy.keras.layers.input_layer import Input, InputLayer, KerasTensor, Node  # noqa: F401
from torchstrategy.nest import flatten as flatten_structure, map_structure


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


def chained_pairs(nodes: Sequence[Node], outputs: Any) -> dict:
    """{position of the first node: position of the second} in `nodes`, where the second node's only input is
    the first's only output, read by no other node and not a model output: pairs a layer-pair rewrite
    (layers/fusion.py) may run as one. Positions, not ids, so a copied model's cache stays right."""
    uses: dict[int, int] = {}
    for node in nodes:
        for tensor in node.input_tensors:
            uses[id(tensor)] = uses.get(id(tensor), 0) + 1
    model_outputs = {id(t) for t in flatten_structure(outputs)}
    producers = {id(node.outputs): index for index, node in enumerate(nodes) if isinstance(node.outputs, KerasTensor)}
    pairs = {}
    for index, node in enumerate(nodes):
        first = producers.get(id(node.inputs)) if isinstance(node.inputs, KerasTensor) else None
        if first is None or uses[id(node.inputs)] != 1 or id(node.inputs) in model_outputs:
            continue
        if any(n.args or set(n.kwargs) - {"training"} for n in (nodes[first], node)):
            continue
        pairs[first] = index
    return pairs


def run_graph(nodes: Sequence[Node], inputs: Sequence[KerasTensor], values: Sequence[Any], outputs: Any,
              training: Optional[bool], pairs: Optional[dict] = None) -> Any:
    """Evaluates the recorded nodes on real `values` fed to `inputs`; `pairs` (from `chained_pairs`) are run
    through layers/fusion.py's rewrite where it applies."""
    from torchstrategy.keras.layers import fusion

    computed: dict[int, Any] = {}
    deferred: dict[int, Node] = {}  # position of a second node -> its first node, whose output was not computed
    for symbolic, value in zip(inputs, values):
        computed[id(symbolic)] = symbolic.node.layer(value)

    def lookup(item: Any) -> Any:
        return computed[id(item)] if isinstance(item, KerasTensor) else item

    for index, node in enumerate(nodes):
        second = (pairs or {}).get(index)
        if second is not None and fusion.pools_before_relu(node.layer, nodes[second].layer):
            deferred[second] = node
            continue
        kwargs = map_structure(lookup, node.kwargs)
        if training is not None:  # as Keras: the model's training flag overrides the one recorded at the call
            kwargs["training"] = training
        kwargs.setdefault("training", None)
        first = deferred.pop(index, None)
        if first is not None:
            first_training = training if training is not None else first.kwargs.get("training")
            result = fusion.pool_then_relu(first.layer, node.layer, lookup(first.inputs), first_training)
        else:
            result = node.layer(map_structure(lookup, node.inputs), *map_structure(lookup, node.args), **kwargs)
        for symbolic, value in zip(flatten_structure(node.outputs), flatten_structure(result)):
            computed[id(symbolic)] = value
    return map_structure(lookup, outputs)
