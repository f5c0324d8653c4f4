"""The functional API's graph: recording layer calls on KerasTensors (`call_symbolic`), ordering
the recorded nodes, and running that graph on real tensors (used by functional `Model`)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy.keras.layers.base import Layer, _shape_str
from torchstrategy.keras.layers.input_layer import STRING, Input, InputLayer, KerasTensor, Node  # noqa: F401
from torchstrategy.nest import flatten as flatten_structure, map_structure, pack_as


_PROBES = ((10, 17), (64, 97))  # sizes tried for unknown (None) dimensions while inferring shapes


def _concrete(value: Any, probe: int = 1, batch: int = 1, random: bool = False) -> Any:
    """A zero tensor standing in for a KerasTensor while shapes are inferred: an unknown batch size is `batch`,
    other unknown (None) sizes `probe`; `random` fills floats with uniform values instead (`ops.linalg.inv`)."""
    if isinstance(value, KerasTensor):
        shape = () if not value.shape else \
            (batch if value.shape[0] is None else value.shape[0],) + tuple(probe if d is None else d for d in value.shape[1:])
        if value.dtype is STRING:  # text: empty strings
            return np.full(shape, "", dtype=object)
        stand_in = torch.rand(shape, dtype=value.dtype) if random and value.dtype.is_floating_point \
            else torch.zeros(shape, dtype=value.dtype)
        if value.mask_rank is not None:  # a masked value: its stand-in carries an all-True mask
            stand_in._keras_mask = torch.ones(shape[:value.mask_rank], dtype=torch.bool)
        return stand_in
    return value


def _has_unknown_sizes(structure: Any) -> bool:
    return any(isinstance(t, KerasTensor) and None in t.shape[1:] for t in flatten_structure(structure))


def static_batch(structure: Any) -> Optional[int]:
    """The batch size the KerasTensors in `structure` share (`Input(batch_shape=(2, ...))`), else None."""
    sizes = {t.shape[0] for t in flatten_structure(structure) if isinstance(t, KerasTensor) and t.shape}
    return sizes.pop() if len(sizes) == 1 and None not in sizes else None


def _run_on_probe(layer: Layer, inputs: Any, args: tuple, kwargs: dict, probe: int, batch: int = 1,
                  random: bool = False) -> Any:
    as_concrete = lambda value: _concrete(value, probe, batch, random)  # noqa: E731
    with torch.no_grad(), _context.shape_probe(static_batch((inputs, args, kwargs))):
        return layer(map_structure(as_concrete, inputs), *map_structure(as_concrete, args),
                     **dict(map_structure(as_concrete, kwargs), training=False))


def _compare(first: Any, second: Any, whole: bool, batch: Optional[int] = None) -> list:
    """Output shapes from two probes: sizes that changed with the probe are unknown (None). A layer's batch axis
    is the inputs' static `batch` (None when unknown); with `whole` (a keras.ops step, which may move or drop
    that axis) every axis is compared."""
    shapes = []
    for a, b in zip(flatten_structure(first), flatten_structure(second)):
        if not isinstance(a, torch.Tensor):
            shapes.append(None)
        elif whole:
            shapes.append(tuple(x if x == y else None for x, y in zip(a.shape, b.shape)))
        else:
            first_axis = batch if batch is not None and a.dim() and a.shape[0] == batch else None
            shapes.append(((first_axis,) if a.dim() else ()) +
                          tuple(x if x == y else None for x, y in zip(a.shape[1:], b.shape[1:])))
    return shapes


def _infer(layer: Layer, inputs: Any, args: tuple, kwargs: dict) -> tuple[Any, list]:
    """The layer's outputs on stand-in tensors, and the flat list of their shapes (batch None). Unknown input
    sizes are tried at two sizes: an output size that changes with them is unknown (None) too. A keras.ops
    step is also tried at two batch sizes (`ops.mean(x, axis=0)` has no batch axis), unless it needs one."""
    whole = getattr(layer, "_keras_operation", False)
    error: Optional[Exception] = None
    if whole:  # batches of two sizes; then of one row (`ops.reshape(x, (3, 1))` fits only that); then random values
        attempts = [(p, p, False) for p in _PROBES] + [(p, (1, 1), False) for p in _PROBES] + \
                   [(p, p, True) for p in _PROBES]
        for (small, large), batches, random in attempts:
            try:
                first = _run_on_probe(layer, inputs, args, kwargs, small, batches[0], random)
                second = _run_on_probe(layer, inputs, args, kwargs, large, batches[1], random)
            except Exception as caught:
                error = caught
                continue
            if [t.dim() for t in flatten_structure(first) if isinstance(t, torch.Tensor)] == \
                    [t.dim() for t in flatten_structure(second) if isinstance(t, torch.Tensor)]:
                return first, _compare(first, second, whole=True)
        raise error  # type: ignore[misc]
    batch = static_batch((inputs, args, kwargs))
    if not _has_unknown_sizes((inputs, args, kwargs)):
        concrete = _run_on_probe(layer, inputs, args, kwargs, 1)
        return concrete, _compare(concrete, concrete, whole=False, batch=batch)
    for small, large in _PROBES:
        try:
            first = _run_on_probe(layer, inputs, args, kwargs, small)
            second = _run_on_probe(layer, inputs, args, kwargs, large)
        except Exception as caught:  # a probe too small for the layer (a large 'valid' kernel): try larger
            error = caught
            continue
        return first, _compare(first, second, whole=False, batch=batch)
    raise error  # type: ignore[misc]


def call_symbolic(layer: Layer, inputs: Any, args: tuple, kwargs: dict) -> Any:
    """Records `layer(inputs)` as a node and returns symbolic outputs of the inferred shapes."""
    kwargs = {k: v for k, v in kwargs.items() if k != "training" or v is not None}
    from torchstrategy.keras.stateless import SymbolicScope

    with SymbolicScope():  # the layer runs on stand-ins: Keras's symbolic stage
        concrete, shapes = _infer(layer, inputs, args, kwargs)
    node = Node(layer, inputs, args, kwargs)
    layer.__dict__.setdefault("_inbound_nodes", []).append(node)  # layer.input / layer.output read the first
    counter = iter(range(1 << 30))
    shape_of = iter(shapes)
    def symbolic(value: Any) -> Any:
        shape = next(shape_of)
        if not isinstance(value, torch.Tensor):
            return value
        tensor = KerasTensor(shape, value.dtype, node=node, index=next(counter))
        mask = getattr(value, "_keras_mask", None)
        tensor.mask_rank = mask.dim() if isinstance(mask, torch.Tensor) else None
        return tensor

    node.outputs = map_structure(symbolic, concrete)
    return node.outputs


def fit_input_ranks(model_name: str, inputs: Sequence[KerasTensor], values: Sequence[Any]) -> list:
    """The values fed to a model's `inputs`, checked against their shapes; as Keras 3 does, a value one rank short
    of an input whose last size is 1 gets that axis, and one with an extra last axis of 1 loses it."""
    out = []
    for symbolic, value in zip(inputs, values):
        shape, expected = tuple(value.shape), symbolic.shape
        if len(shape) == len(expected) - 1 and expected and expected[-1] == 1:
            value = value[..., None]
        elif len(shape) == len(expected) + 1 and shape and shape[-1] == 1:
            value = value[..., 0]
        shape = tuple(value.shape)
        if len(shape) != len(expected) or any(e is not None and e != s for e, s in zip(expected[1:], shape[1:])):
            raise ValueError(f"Input '{symbolic.node.layer.name}' of model '{model_name}' is incompatible: expected "
                             f"shape={_shape_str(expected)}, found shape={_shape_str((None,) + shape[1:])}.")
        out.append(value)
    return out


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


def rooted_at_inputs(inputs: Any, outputs: Any) -> tuple[Any, Any]:
    """Keras 3's rule for a model whose inputs are intermediate tensors of another graph: each such input is
    replaced by a fresh Input of its shape and dtype (named '<tensor name>CLONE'), and the layers between the
    inputs and the outputs are called again on it (the same layers and weights, new nodes), so that the model's
    graph starts at Inputs and its config and files rebuild it. Returns (inputs, outputs) in their structures."""
    flat = flatten_structure(inputs)
    if all(isinstance(t, KerasTensor) and t.node is not None and isinstance(t.node.layer, InputLayer) for t in flat):
        return inputs, outputs
    nodes = topological_nodes(outputs, flat)
    computed: dict[int, Any] = {}
    rooted = []
    for tensor in flat:
        if not isinstance(tensor.node.layer, InputLayer):
            if tensor.name is None:  # named once, so every model cloning this tensor names its Input alike
                tensor.name = _context.unique_name("keras_tensor")
            name = tensor.name + "CLONE"
            dtype = "string" if tensor.dtype is STRING else str(tensor.dtype).replace("torch.", "")
            clone = Input(batch_shape=tuple(tensor.shape), dtype=dtype, name=name)
            computed[id(tensor)] = clone
            rooted.append(clone)
        else:
            rooted.append(tensor)

    def lookup(item: Any) -> Any:
        return computed.get(id(item), item) if isinstance(item, KerasTensor) else item

    for node in nodes:
        result = node.layer(map_structure(lookup, node.inputs), *map_structure(lookup, node.args),
                            **map_structure(lookup, node.kwargs))
        for symbolic, value in zip(flatten_structure(node.outputs), flatten_structure(result)):
            computed[id(symbolic)] = value
    return pack_as(inputs, rooted), map_structure(lookup, outputs)


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
    for symbolic, value in zip(inputs, values):  # an Input casts its value; a tensor from another graph is as given
        computed[id(symbolic)] = symbolic.node.layer(value) if isinstance(symbolic.node.layer, InputLayer) else value

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


def keras_layer_order(inputs: Sequence[KerasTensor], outputs: Any) -> list[Layer]:
    """The layers of the graph from `inputs` to `outputs` in Keras's `model.layers` order: by decreasing
    depth (the longest path to an output), ties by first visit in a depth-first walk from the outputs.
    Keras's weight files list layers in this order, so loading by order needs it."""
    input_ids = {id(t) for t in inputs}
    first_seen: dict[int, int] = {}
    layers: dict[int, Layer] = {}
    finished: set[int] = set()
    postorder: list[Node] = []

    def visit(tensor: KerasTensor) -> None:
        node = tensor.node
        if node is None or id(node) in finished:
            return
        is_input = isinstance(node.layer, InputLayer)
        if not is_input and id(tensor) in input_ids:
            finished.add(id(node))
            return
        first_seen.setdefault(id(node.layer), len(first_seen))
        layers[id(node.layer)] = node.layer
        if not is_input:
            for parent in node.input_tensors:
                visit(parent)
        finished.add(id(node))
        postorder.append(node)

    for tensor in flatten_structure(outputs):
        visit(tensor)
    in_graph = {id(node) for node in postorder}
    node_depth: dict[int, int] = {}
    layer_depth: dict[int, int] = {}
    for node in reversed(postorder):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[id(node)] = depth
        if isinstance(node.layer, InputLayer):
            continue
        for parent in node.input_tensors:
            if parent.node is not None and id(parent.node) in in_graph:
                node_depth[id(parent.node)] = max(depth + 1, node_depth.get(id(parent.node), 0))
    for tensor in inputs:  # an Input no output depends on still belongs to the model
        if tensor.node is not None and isinstance(tensor.node.layer, InputLayer) \
                and id(tensor.node.layer) not in layer_depth:
            layers[id(tensor.node.layer)] = tensor.node.layer
            layer_depth[id(tensor.node.layer)], first_seen[id(tensor.node.layer)] = 0, -1
    return sorted(layers.values(), key=lambda l: (-layer_depth[id(l)], first_seen[id(l)]))


def source_inputs(tensor: KerasTensor) -> list[KerasTensor]:
    """The `Input` tensors a symbolic tensor was computed from (Keras's get_source_inputs)."""
    found: list[KerasTensor] = []
    seen: set[int] = set()

    def visit(item: KerasTensor) -> None:
        node = item.node
        if node is None or id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node.layer, InputLayer):
            if all(item is not t for t in found):
                found.append(node.outputs)
            return
        for parent in node.input_tensors:
            visit(parent)

    visit(tensor)
    return found
