"""`model.summary()`: Keras 3's boxed table of layers (name and type, output shape, parameter count, the
inputs of each layer of a branching functional model, whether it trains) and the totals with their sizes.
Unbuilt layers show '?' and '0 (unbuilt)'. Output shapes come from the graph, else from one forward pass."""
from __future__ import annotations

import re
import shutil
from typing import Any, Callable, Optional, Sequence

import torch

from torchstrategy.keras.layers.base import _shape_of, _shape_str
from torchstrategy.nest import flatten as flatten_structure

_BOX_TOP, _BOX_HEAD, _BOX_LINE, _BOX_BOTTOM = "┏━┳┓", "┡━╇┩", "├─┼┤", "└─┴┘"


# ----- the table ----------------------------------------------------------------------------------------------
def _column_widths(line_length: int, positions: Sequence[float]) -> list[int]:
    """Each column's width with its one-space padding either side, the whole table (borders included)
    `line_length` wide: the columns' shares, reduced evenly to fit, as Keras's table does."""
    widths, current = [], 0
    for position in positions:
        width = int(position * line_length) - current if position <= 1 else int(position) - current
        if width < 4:
            raise ValueError("Insufficient console width to print summary.")
        widths.append(width + 2)
        current += width
    excess = sum(widths) - (line_length - len(widths) - 1)
    if excess > 0:  # take the excess off evenly, left to right, rounding each share
        remaining_columns = len(widths)
        for index, width in enumerate(widths):
            share = min(width, round(excess / remaining_columns))
            widths[index] = width - share
            excess -= share
            remaining_columns -= 1
    return widths


def _wrap(text: str, width: int) -> list[str]:
    """`text` broken at spaces into lines of at most `width`; a word too long for a line is cut with '…'."""
    lines: list[str] = []
    line = ""
    for word in re.findall(r"\s*\S+\s*", text) or [""]:  # an indent stays with the first word
        if line and len(line) + len(word.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += word
    lines.append(line.rstrip())
    return [l if len(l) <= width else l[:max(width - 1, 0)] + "…" for l in lines]


def _justify(text: str, width: int, how: str) -> str:
    if how == "right":
        return text.rjust(width)
    if how == "center":
        left = (width - len(text)) // 2
        return (" " * left + text).ljust(width)
    return text.ljust(width)


def _rule(box: str, widths: Sequence[int]) -> str:
    return box[0] + box[2].join(box[1] * width for width in widths) + box[3]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[int],
           alignment: Sequence[str]) -> list[str]:
    def cells(fields: Sequence[str], bar: str) -> list[str]:
        wrapped = [_wrap(field, width - 2) for field, width in zip(fields, widths)]
        height = max(len(lines) for lines in wrapped)
        return [bar + bar.join(" " + _justify(lines[i] if i < len(lines) else "", width - 2, how) + " "
                               for lines, width, how in zip(wrapped, widths, alignment)) + bar
                for i in range(height)]

    out = [_rule(_BOX_TOP, widths)] + cells(header, "┃") + [_rule(_BOX_HEAD, widths)]
    for index, row in enumerate(rows):
        if index:
            out.append(_rule(_BOX_LINE, widths))
        out.extend(cells(row, "│"))
    return out + [_rule(_BOX_BOTTOM, widths)]


# ----- facts about the layers -----------------------------------------------------------------------------------
def _forward_shapes(model: Any) -> dict[int, str]:
    """Output shapes of a Sequential's or subclassed model's layers, from one pass on a one-row zero batch."""
    shapes: dict[int, str] = {}
    input_shape = getattr(model, "_build_input_shape", None)
    if input_shape is None or not model.built:
        return shapes

    def record(layer: Any, args: Any, output: Any) -> None:
        outs = [_shape_str(_shape_of(t)) for t in flatten_structure(output) if isinstance(t, torch.Tensor)]
        shapes[id(layer)] = outs[0] if len(outs) == 1 else "[" + ", ".join(outs) + "]"

    handles = [layer.register_forward_hook(record) for layer in model.layers]
    try:
        shaped = input_shape if isinstance(input_shape, list) else [input_shape]
        dummies = [torch.zeros((1,) + tuple(1 if d is None else d for d in s[1:])) for s in shaped]
        params = list(model.parameters())
        if params:
            dummies = [d.to(params[0].device) for d in dummies]
        with torch.no_grad():
            model(dummies[0] if len(dummies) == 1 else dummies, training=False)
    finally:
        for handle in handles:
            handle.remove()
    return shapes


def _graph_shape(layer: Any, nodes: Sequence[Any]) -> str:
    """The output shape(s) of `layer`'s last call in the graph (an Input's own), as Keras shows them."""
    own = [node for node in nodes if node.layer is layer] or \
        [node for node in layer.__dict__.get("_inbound_nodes", []) if node.inputs is None]
    if not own:
        return "?"
    outputs = flatten_structure(own[-1].outputs)
    shapes = [_shape_str(t.shape) for t in outputs if hasattr(t, "shape")]
    return shapes[0] if len(shapes) == 1 else "[" + ", ".join(shapes) + "]"


def _chain(model: Any) -> bool:
    """Keras's 'sequential-like': no two steps at one depth (distance to the outputs), none reading more than one
    tensor, no layer called twice."""
    nodes = list(model._nodes)
    if any(len(node.input_tensors) > 1 for node in nodes) or len({id(n.layer) for n in nodes}) != len(nodes):
        return False
    depth: dict[int, int] = {}
    for node in reversed(nodes):  # consumers come after producers in `_nodes`
        for tensor in node.input_tensors:
            producer = tensor.node
            depth[id(producer)] = max(depth.get(id(producer), 0), depth.get(id(node), 0) + 1)
        depth.setdefault(id(node), 0)
    for tensor in model.inputs:
        depth.setdefault(id(tensor.node), 0)
    return len(set(depth.values())) == len(depth)


def _connections(layer: Any, nodes: Sequence[Any]) -> str:
    found = []
    for node in nodes:
        if node.layer is not layer:
            continue
        for tensor in node.input_tensors:
            producer = tensor.node.layer
            index = next((i for i, n in enumerate(producer.__dict__.get("_inbound_nodes", [])) if n is tensor.node), 0)
            found.append(f"{producer.name}[{index}][{tensor.index or 0}]")
    return ", ".join(found) or "-"


def _params(layer: Any) -> str:
    return f"{layer.count_params():,}" if layer.built else "0 (unbuilt)"


def _bytes(weights: Sequence[torch.Tensor]) -> float:
    unique = {id(w): w for w in weights}.values()
    return sum(w.numel() * (1 if w.dtype is torch.bool else w.element_size() * 8) for w in unique) / 8


def _readable(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _optimizer_weights(model: Any) -> Optional[list]:
    """The optimizer's variables as Keras counts them (iterations, the learning rate unless a schedule, slots)."""
    optimizer = getattr(model, "optimizer", None)
    if model.get_compile_config() is None or optimizer is None or not getattr(optimizer, "built", False):
        return None
    from torchstrategy.keras.optimizers import schedules

    weights = list(optimizer.variables)
    if not isinstance(optimizer.learning_rate, schedules.LearningRateSchedule):
        weights.insert(1, torch.zeros((), dtype=torch.float32))
    return weights


def _layer_range(layers: Sequence[Any], layer_range: Any) -> tuple[int, int]:
    if layer_range is None:
        return 0, len(layers)
    if len(layer_range) != 2:
        raise ValueError(f"layer_range must be a list or tuple of length 2. Received: layer_range = {layer_range} of "
                         f"length {len(layer_range)}")
    if not all(isinstance(name, str) for name in layer_range):
        raise ValueError(f"layer_range should contain string type only. Received: {layer_range}")
    lower = [i for i, layer in enumerate(layers) if re.match(layer_range[0], layer.name)]
    upper = [i for i, layer in enumerate(layers) if re.match(layer_range[1], layer.name)]
    if not lower or not upper:
        raise ValueError(f"Passed layer_names do not match the layer names in the model. Received: {layer_range}")
    return lower[0], upper[-1] + 1


def print_summary(model: Any, line_length: Optional[int] = None, positions: Any = None,
                  print_fn: Optional[Callable[[str], Any]] = None, expand_nested: bool = False,
                  show_trainable: bool = False, layer_range: Any = None) -> None:
    """Prints Keras 3's summary table; `print_fn` gets the whole text in one call (as Keras's)."""
    if print_fn is None and not model.distribute_strategy.is_chief:
        return  # library output comes from the chief only
    functional = hasattr(model, "graph_layers")
    chain = not functional or _chain(model)
    layers = model.graph_layers if functional else model.layers
    nodes = list(model._nodes) if functional else []
    shapes = {} if functional else _forward_shapes(model)
    if chain:
        default, positions = 88, list(positions or [0.45, 0.80, 1.0])
        header, alignment = ["Layer (type)", "Output Shape", "Param #"], ["left", "left", "right"]
    else:
        default, positions = 108, list(positions or [0.3, 0.56, 0.74, 1.0])
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
        alignment = ["left", "left", "right", "left"]
    if show_trainable:
        default += 12
        positions = [p * 0.90 for p in positions] + [1.0]
        header.append("Trainable")
        alignment.append("center")
    console = shutil.get_terminal_size().columns
    line_length = line_length or min(default, console - 4)
    widths = _column_widths(line_length, positions)

    def fields(layer: Any, prefix: str, shape: str) -> list[str]:
        row = [f"{prefix}{layer.name} ({type(layer).__name__})", shape, _params(layer)]
        if not chain:
            row.append(_connections(layer, nodes))
        if show_trainable:
            row.append(("Y" if layer.trainable else "N") if layer.weights else "-")
        return row

    def rows_of(layer: Any, level: int, shape: str) -> list[list[str]]:
        rows = [fields(layer, "   " * level + "└ " if level else "", shape)]
        if expand_nested and getattr(layer, "layers", None):
            inner = _forward_shapes(layer) if not hasattr(layer, "graph_layers") else {}
            inner_nodes = list(layer._nodes) if hasattr(layer, "graph_layers") else []
            for sub in layer.layers:
                sub_shape = _graph_shape(sub, inner_nodes) if inner_nodes else inner.get(id(sub), "?")
                rows.extend(rows_of(sub, level + 1, sub_shape))
        return rows

    start, stop = _layer_range(layers, layer_range)
    rows = []
    for layer in layers[start:stop]:
        rows.extend(rows_of(layer, 0, _graph_shape(layer, nodes) if functional else shapes.get(id(layer), "?")))
    trainable, frozen = model.trainable_weights, model.non_trainable_weights
    optimizer = _optimizer_weights(model)
    everything = list(trainable) + list(frozen) + (optimizer or [])
    lines = [f'Model: "{model.name}"'] + _table(header, rows, widths, alignment)
    for label, weights in (("Total", everything), ("Trainable", trainable), ("Non-trainable", frozen)) + \
            ((("Optimizer", optimizer),) if optimizer is not None else ()):
        lines.append(f" {label} params: {sum(w.numel() for w in weights):,} ({_readable(_bytes(weights))})")
    text = "\n".join(line[:console] for line in lines) + "\n"  # a table wider than the console is cut, as Keras's
    (print_fn or (lambda whole: print(whole, end="")))(text)
