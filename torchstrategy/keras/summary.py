"""`model.summary()`: the Keras table of layers, output shapes and parameter counts.
Output shapes come from one forward pass on a one-row zero batch with hooks on each layer."""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch

from torchstrategy.keras.layers.base import _shape_of, _shape_str
from torchstrategy.nest import flatten as flatten_structure


def _output_shapes(model: Any) -> dict[int, str]:
    shapes: dict[int, str] = {}
    input_shape = getattr(model, "_build_input_shape", None)
    if input_shape is None:
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


def print_summary(model: Any, line_length: Optional[int] = None, print_fn: Optional[Callable[[str], Any]] = None) -> None:
    """Prints the layer table (name (type), output shape, params) and the totals."""
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling `build()` or by "
                         "calling the model on a batch of data, or give the first layer an input_shape.")
    if print_fn is None and not model.distribute_strategy.is_chief:
        return  # library output comes from the chief only
    print_fn = print_fn or print
    width = line_length or 75
    columns = [int(width * 0.45), int(width * 0.85), width]
    shapes = _output_shapes(model)

    def row(fields: list[str]) -> str:
        line = ""
        for text, stop in zip(fields, columns):
            line = (line + " " + text)[:stop - 1].ljust(stop)
        return line.rstrip()

    print_fn(f'Model: "{model.name}"')
    print_fn("_" * width)
    print_fn(row(["Layer (type)", "Output Shape", "Param #"]))
    print_fn("=" * width)
    layers = model.layers
    for index, layer in enumerate(layers):
        print_fn(row([f"{layer.name} ({type(layer).__name__})", shapes.get(id(layer), "?"),
                      f"{layer.count_params():,}"]))
        print_fn("" if index < len(layers) - 1 else "=" * width)
    trainable = sum(w.numel() for w in model.trainable_weights)
    total = model.count_params()
    print_fn(f"Total params: {total:,}")
    print_fn(f"Trainable params: {trainable:,}")
    print_fn(f"Non-trainable params: {total - trainable:,}")
    print_fn("_" * width)
