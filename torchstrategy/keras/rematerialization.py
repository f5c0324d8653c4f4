"""`keras.remat` and `keras.RematScope` (Keras 3's rematerialization API) over `tf.recompute_grad`,
and the per-mode rule that decides whether a layer's call is recomputed in backward."""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable, NamedTuple, Optional, Sequence

import torch

from torchstrategy import _context
from torchstrategy.nest import flatten, map_structure
from torchstrategy.recompute import recompute_grad, run_recomputed

REMAT_MODES = ("full", "activations", "larger_than", "list_of_layers", None)


class RematMode(NamedTuple):
    """What a layer records at creation: the scope's mode and its settings (Keras's RematMode)."""

    mode: str
    output_size_threshold: int
    layer_names: tuple


def remat(f: Callable[..., Any]) -> Callable[..., Any]:
    """Keras 3's `keras.remat`: `f` (function, layer or model) recomputed in backward, not stored.

    >>> import torchstrategy as tf
    >>> dense = tf.keras.layers.Dense(4, activation="relu")
    >>> block = tf.keras.remat(dense)
    >>> block(torch.ones(2, 3)).shape
    torch.Size([2, 4])
    """
    return recompute_grad(f)


class RematScope:
    """Layers created inside recompute their calls in backward according to `mode` (Keras 3).

    Modes: "full" (every layer), "activations" (only the `activation` of layers that have one, e.g.
    `Dense(..., activation="relu")`), "larger_than" (layers whose outputs hold more than
    `output_size_threshold` elements), "list_of_layers" (layers named in `layer_names`), None (off).
    As in Keras the mode is read when a layer is created, so a layer keeps it when called later;
    scopes nest, and leaving one restores the outer mode.

    >>> import torchstrategy as tf
    >>> with tf.keras.RematScope(mode="list_of_layers", layer_names=["big"]):
    ...     big = tf.keras.layers.Dense(512, name="big")      # recomputed in backward
    ...     small = tf.keras.layers.Dense(8, name="small")    # stored as usual
    """

    def __init__(self, mode: Optional[str] = "full", output_size_threshold: int = 1024,
                 layer_names: Optional[Sequence[str]] = None) -> None:
        if mode not in REMAT_MODES:
            raise ValueError(f"Invalid RematScope mode {mode!r}. Supported modes are: "
                             f"{', '.join(repr(m) for m in REMAT_MODES)}.")
        if isinstance(layer_names, str) or not all(isinstance(n, str) for n in (layer_names or [])):
            raise TypeError(f"RematScope `layer_names` must be a list of layer names (strings), got "
                            f"{layer_names!r}; write layer_names=[{layer_names!r}] for one layer.")
        if isinstance(output_size_threshold, bool) or not isinstance(output_size_threshold, int) \
                or output_size_threshold < 0:
            raise ValueError(f"RematScope `output_size_threshold` must be a non-negative int (a number of "
                             f"elements), got {output_size_threshold!r}.")
        self.mode = mode
        self.output_size_threshold = output_size_threshold
        self.layer_names = list(layer_names or [])
        self._entered = 0

    def __enter__(self) -> "RematScope":
        recorded = None if self.mode is None else RematMode(
            self.mode, self.output_size_threshold, tuple(self.layer_names))
        _context.push_keras_scope("remat", recorded)
        self._entered += 1
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._entered:
            self._entered -= 1
            _context.pop_keras_scope("remat")

    def __repr__(self) -> str:
        return (f"RematScope(mode={self.mode!r}, output_size_threshold={self.output_size_threshold}, "
                f"layer_names={self.layer_names!r})")


def _call_with_remat(layer: Any, call: Callable[..., Any], inputs: Any, *args: Any, **kwargs: Any) -> Any:
    """Runs `call` (the layer's module call) recomputed or not, by the mode the layer was created under."""
    mode: RematMode = layer._remat_mode
    if mode.mode == "full" or (mode.mode == "list_of_layers" and layer.name in mode.layer_names):
        return run_recomputed(call, (inputs, *args), kwargs)
    if mode.mode == "activations" and getattr(layer, "activation", None) is not None:
        return _call_with_recomputed_activation(layer, call, inputs, *args, **kwargs)
    if mode.mode == "larger_than":
        size = _output_size(layer, inputs)
        if size is not None and size > mode.output_size_threshold:
            return run_recomputed(call, (inputs, *args), kwargs)
    return call(inputs, *args, **kwargs)


def _call_with_recomputed_activation(layer: Any, call: Callable[..., Any], inputs: Any, *args: Any,
                                     **kwargs: Any) -> Any:
    # The instance __dict__ wins over nn.Module's submodule lookup, so this also covers a Module activation.
    own = layer.__dict__
    had_entry, original = "activation" in own, own.get("activation")
    activation = layer.activation
    if getattr(activation, "_remat_activation", False):  # already swapped (a nested or concurrent call)
        return call(inputs, *args, **kwargs)
    recomputed = recompute_grad(activation)
    recomputed._remat_activation = True
    own["activation"] = recomputed
    try:
        return call(inputs, *args, **kwargs)
    finally:
        if had_entry:
            own["activation"] = original
        else:
            own.pop("activation", None)


def _output_size(layer: Any, inputs: Any) -> Optional[int]:
    """Elements in the layer's outputs for these inputs (batch included, as Keras counts eager outputs).
    Per-sample sizes come from `compute_output_shape`, once per input shape; None if it cannot tell."""
    tensors = [leaf for leaf in flatten(inputs) if isinstance(leaf, torch.Tensor)]
    if not tensors or tensors[0].dim() == 0:
        return None
    key = tuple(tuple(t.shape[1:]) for t in tensors)
    cache = layer.__dict__.setdefault("_remat_sample_sizes", {})
    if key not in cache:
        input_shapes = map_structure(lambda t: (None,) + tuple(t.shape[1:]) if isinstance(t, torch.Tensor)
                                     else None, inputs)
        try:
            output_shapes = layer.compute_output_shape(input_shapes)
        except Exception as error:  # noqa: BLE001 - any failure only means "size unknown"
            warnings.warn(f"RematScope(mode='larger_than'): could not find the output shape of layer "
                          f"'{layer.name}' ({error}); it is not recomputed.", stacklevel=3)
            cache[key] = None
        else:
            cache[key] = sum(math.prod(d or 1 for d in shape[1:]) for shape in _shapes_in(output_shapes))
    per_sample = cache[key]
    return None if per_sample is None else per_sample * int(tensors[0].shape[0])


def _is_shape(value: Any) -> bool:
    return isinstance(value, tuple) and all(d is None or isinstance(d, int) for d in value)


def _shapes_in(structure: Any) -> list:
    """The shape tuples in a (nested) output-shape structure; a shape's own tuple is not opened."""
    if _is_shape(structure):
        return [structure]
    if isinstance(structure, dict):
        structure = list(structure.values())
    if isinstance(structure, (list, tuple)):
        return [shape for item in structure for shape in _shapes_in(item)]
    return []
