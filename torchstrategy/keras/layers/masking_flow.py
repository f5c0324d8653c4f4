"""How Keras masks travel between layers: the `_keras_mask` a tensor carries, the `mask=` a layer's call
receives, the mask a layer's `compute_mask` sets on its outputs, and the warning when a layer drops one."""
from __future__ import annotations

import warnings
from typing import Any

import torch

from torchstrategy.nest import flatten


def mask_of(inputs: Any) -> Any:
    """The `_keras_mask` riding on `inputs` (a list of them for a list input), or None when there is none."""
    if isinstance(inputs, (list, tuple)):
        masks = [getattr(x, "_keras_mask", None) for x in inputs]
        return None if all(m is None for m in masks) else masks
    return getattr(inputs, "_keras_mask", None)


def attach_masks(outputs: Any, masks: Any) -> None:
    """Sets each output's `_keras_mask` (Keras leaves a mask already there, e.g. on a returned input)."""
    if masks is None:
        return
    flat_outputs, flat_masks = flatten(outputs), flatten(masks) if isinstance(masks, (list, tuple)) else [masks]
    if all(getattr(t, "_keras_mask", None) is not None for t in flat_outputs):
        return
    for tensor, mask in zip(flat_outputs, flat_masks):
        if mask is not None and isinstance(tensor, torch.Tensor) and getattr(tensor, "_keras_mask", None) is None:
            tensor._keras_mask = mask


def overrides_compute_mask(layer: Any, base: type) -> bool:
    """Keras 3's default for `supports_masking`: True when the layer's class writes its own `compute_mask`."""
    return type(layer).compute_mask is not base.compute_mask


def set_output_masks(layer: Any, inputs: Any, outputs: Any, previous_mask: Any) -> None:
    """After a call: the outputs get `layer.compute_mask(inputs, previous_mask)` when the layer supports masking;
    otherwise a mask that came in is dropped, with Keras's warning."""
    if layer.supports_masking:
        attach_masks(outputs, layer.compute_mask(inputs, previous_mask))
    elif previous_mask is not None and any(m is not None for m in flatten(previous_mask)):
        warnings.warn(f"Layer '{layer.name}' (of type {type(layer).__name__}) was passed an input with a mask "
                      "attached to it. However, this layer does not support masking and will therefore destroy the "
                      "mask information. Downstream layers will not see the mask.", stacklevel=3)
