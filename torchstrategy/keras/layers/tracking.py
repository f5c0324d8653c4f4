"""Which layers and weights a Keras layer holds: its nested layers depth first, and its weights in Keras's
order (layer by layer; within a layer trainable then non-trainable), each once."""
from __future__ import annotations

from typing import Any, Optional

import torch
from torch import nn


def nested_layers(root: nn.Module, include_self: bool, layer_type: type) -> list:
    """`root` (optionally) and every `layer_type` module nested in it, depth first, each once."""
    seen: set[int] = set()
    out: list = []

    def visit(module: nn.Module) -> None:
        if id(module) in seen:
            return
        seen.add(id(module))
        if isinstance(module, layer_type):
            out.append(module)
        for child in module._modules.values():  # children() in order, without its generator layers
            if child is not None:
                visit(child)

    if include_self:
        visit(root)
    else:
        seen.add(id(root))
        for child in root._modules.values():
            if child is not None:
                visit(child)
    return out


def own_weights(layer: Any, trainable: Optional[bool]) -> list[torch.Tensor]:
    """The weights `layer` created itself (not its sublayers'): all, or only the (non-)trainable ones."""
    out = []
    for attr, created_trainable in layer._weight_order:
        is_trainable = created_trainable and layer._trainable
        if trainable is None or trainable == is_trainable:
            out.append(getattr(layer, attr))
    return out


def collect_weights(layers: list, kinds: tuple) -> list[torch.Tensor]:
    """Each layer's own weights of each kind in `kinds` (True, False or None), in that order, each once (through
    the layer's `_own_weights`, which layers holding weights elsewhere, such as TorchModuleWrapper, override)."""
    seen: set[int] = set()
    out = []
    for layer in layers:
        for kind in kinds:
            for weight in layer._own_weights(kind):
                if id(weight) not in seen:
                    seen.add(id(weight))
                    out.append(weight)
    return out
