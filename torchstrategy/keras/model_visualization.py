"""`keras.utils.model_to_dot` / `plot_model`: a model's layers and their connections as a pydot graph and an
image file (pydot and Graphviz are optional: without them the calls raise Keras's ImportError messages)."""
from __future__ import annotations

import html
import os
import sys
from typing import Any

try:  # optional, as in Keras
    import pydot
except ImportError:  # pragma: no cover - depends on the environment
    pydot = None

_NO_PYDOT = "You must install pydot (`pip install pydot`) for `plot_model` to work."
_NO_GRAPHVIZ = ("You must install graphviz (see instructions at https://graphviz.gitlab.io/download/) for "
                "`plot_model` to work.")


def check_pydot() -> bool:
    """True when pydot can be imported."""
    return pydot is not None


def check_graphviz() -> bool:
    """True when pydot can run Graphviz's `dot` program."""
    if not check_pydot():
        return False
    try:
        pydot.Dot.create(pydot.Dot())
        return True
    except (OSError, pydot.PydotException):  # pragma: no cover - depends on the environment
        return False


def _label(layer: Any, show_shapes: bool, show_dtype: bool, show_layer_names: bool, show_layer_activations: bool,
           show_trainable: bool) -> str:
    class_name = type(layer).__name__
    title = f"<b>{html.escape(layer.name)}</b> ({class_name})" if show_layer_names else f"<b>{class_name}</b>"
    rows = [f'<tr><td bgcolor="black"><font point-size="16" color="white">{title}</font></td></tr>']
    activation = getattr(layer, "activation", None)
    if show_layer_activations and activation is not None:
        name = getattr(activation, "__name__", str(activation))
        rows.append(f'<tr><td bgcolor="white"><font point-size="14">Activation: <b>{name}</b></font></td></tr>')
    cells = []
    if show_shapes:
        shape = getattr(layer, "output_shape", None)
        cells.append(f'<td bgcolor="white"><font point-size="14">Output shape: <b>{shape or "?"}</b></font></td>')
    if show_dtype:
        cells.append(f'<td bgcolor="white"><font point-size="14">Output dtype: <b>{getattr(layer, "dtype", "?")}'
                     '</b></font></td>')
    if show_trainable and getattr(layer, "weights", None):
        color, text = ("forestgreen", "Trainable") if layer.trainable else ("firebrick", "Non-trainable")
        cells.append(f'<td bgcolor="{color}"><font point-size="14" color="white"><b>{text}</b></font></td>')
    if cells:
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return '<<table border="0" cellborder="1" bgcolor="black" cellpadding="10">' + "".join(rows) + "</table>>"


def _edges(model: Any) -> list:
    from torchstrategy.keras import models

    if isinstance(model, models.Functional):
        pairs = []
        for node in model._nodes:
            for tensor in node.input_tensors:
                if tensor.node is not None:
                    pairs.append((tensor.node.layer, node.layer))
        return pairs
    layers = list(model.layers)
    return list(zip(layers, layers[1:]))


def model_to_dot(model: Any, show_shapes: bool = False, show_dtype: bool = False, show_layer_names: bool = True,
                 rankdir: str = "TB", expand_nested: bool = False, dpi: int = 200, subgraph: bool = False,
                 show_layer_activations: bool = False, show_trainable: bool = False, splines: str = "ortho",
                 **kwargs: Any) -> Any:
    """The model as a `pydot.Dot` graph: one node per layer, one edge per connection."""
    if not check_pydot():
        raise ImportError("You must install pydot (`pip install pydot`) for model_to_dot to work.")
    if expand_nested:
        raise NotImplementedError("model_to_dot(expand_nested=True) is not supported; leave it False.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
    if subgraph:
        dot = pydot.Cluster(style="dashed", graph_name=model.name)
        dot.set("label", model.name)
        dot.set("labeljust", "l")
    else:
        dot = pydot.Dot()
        dot.set("rankdir", rankdir)
        dot.set("concentrate", True)
        dot.set("dpi", dpi)
        dot.set("splines", splines)
    for layer in model.layers:
        node = pydot.Node(str(id(layer)), label=_label(layer, show_shapes, show_dtype, show_layer_names,
                                                       show_layer_activations, show_trainable))
        node.set("fontname", "Helvetica")
        node.set("border", "0")
        node.set("margin", "0")
        dot.add_node(node)
    for source, target in _edges(model):
        if not dot.get_edge(str(id(source)), str(id(target))):
            edge = pydot.Edge(str(id(source)), str(id(target)))
            edge.set("penwidth", "2")
            dot.add_edge(edge)
    return dot


def plot_model(model: Any, to_file: str = "model.png", show_shapes: bool = False, show_dtype: bool = False,
               show_layer_names: bool = False, rankdir: str = "TB", expand_nested: bool = False, dpi: int = 200,
               show_layer_activations: bool = False, show_trainable: bool = False, splines: str = "ortho",
               **kwargs: Any) -> Any:
    """Writes the model's graph to `to_file` (format from its extension, png by default) through Graphviz;
    returns an IPython Image when IPython is installed."""
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling `build()` or by "
                         "calling the model on a batch of data.")
    for ready, message in ((check_pydot, _NO_PYDOT), (check_graphviz, _NO_GRAPHVIZ)):
        if not ready():
            if "IPython.core.magics.namespace" in sys.modules:
                print(message)
                return None
            raise ImportError(message)
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
    dot = model_to_dot(model, show_shapes=show_shapes, show_dtype=show_dtype, show_layer_names=show_layer_names,
                       rankdir=rankdir, expand_nested=expand_nested, dpi=dpi,
                       show_layer_activations=show_layer_activations, show_trainable=show_trainable,
                       splines=splines)
    to_file = str(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    dot.write(to_file, format=extension)
    if extension != "pdf":
        try:
            from IPython import display

            return display.Image(filename=to_file)
        except ImportError:
            return None
    return None
