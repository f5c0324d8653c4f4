"""Keras merge layers called on a list of tensors: Add, Subtract, Multiply, Average, Maximum,
Minimum, Concatenate, Dot, and their function forms (add, concatenate, ...)."""
from __future__ import annotations

import functools
import math
from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

from torchstrategy.keras.layers.base import Layer, _shape_str


def _shapes_str(shapes: Sequence[Any]) -> str:
    return "[" + ", ".join(_shape_str(s) for s in shapes) + "]"


class _Merge(Layer):
    """Element-wise merge; inputs of lower rank get size-1 axes after the batch axis (Keras rule)."""

    _MIN_INPUTS = 1
    _MAX_INPUTS: Optional[int] = None

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)

    def _check_list(self, input_shape: Any) -> list[tuple]:
        if not isinstance(input_shape, (list, tuple)) or not input_shape or not all(
                isinstance(s, tuple) for s in input_shape):
            raise ValueError(f"A merge layer ('{self.name}', {type(self).__name__}) should be called on a list of "
                             f"tensors. Received: input_shape={input_shape!r}")
        count = len(input_shape)
        if count < self._MIN_INPUTS or (self._MAX_INPUTS is not None and count > self._MAX_INPUTS):
            wanted = (f"exactly {self._MIN_INPUTS}" if self._MIN_INPUTS == self._MAX_INPUTS
                      else f"at least {self._MIN_INPUTS}")
            raise ValueError(f"Layer '{self.name}' ({type(self).__name__}) should be called on a list of {wanted} "
                             f"inputs. Received {count} inputs with shapes {_shapes_str(input_shape)}.")
        return list(input_shape)

    def build(self, input_shape: Any) -> None:
        shapes = self._check_list(input_shape)
        # Compare the non-batch axes, right-aligned, with None matching anything.
        width = max(len(s) for s in shapes) - 1
        aligned = [(1,) * (width - len(s) + 1) + tuple(s[1:]) for s in shapes]
        for position in range(width):
            if len({s[position] for s in aligned} - {None, 1}) > 1:
                raise ValueError(f"Layer '{self.name}' ({type(self).__name__}): inputs have incompatible shapes "
                                 f"{_shapes_str(shapes)}; non-batch axes must be equal or 1.")
        self.built = True

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError

    def _check_masks(self, inputs: Any, mask: Any) -> None:
        if not isinstance(mask, (tuple, list)):
            raise ValueError(f"`mask` should be a list. Received: mask={mask}")
        if not isinstance(inputs, (tuple, list)):
            raise ValueError(f"`inputs` should be a list. Received: inputs={inputs}")
        if len(mask) != len(inputs):
            raise ValueError(f"The lists `inputs` and `mask` should have the same length. Received: inputs of "
                             f"length {len(inputs)}, and mask of length {len(mask)}.")

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """Keras 3: the OR of the inputs' masks (None when any input has none)."""
        if mask is None:
            return None
        self._check_masks(inputs, mask)
        if any(m is None for m in mask):
            return None
        return functools.reduce(torch.logical_or, mask)

    def call(self, inputs: Sequence[torch.Tensor]) -> torch.Tensor:
        inputs = list(inputs)
        rank = max(t.dim() for t in inputs)
        inputs = [t.reshape(t.shape[:1] + (1,) * (rank - t.dim()) + t.shape[1:]) if t.dim() < rank else t
                  for t in inputs]
        return self._merge(inputs)


class Add(_Merge):
    """Sum of the inputs."""

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return functools.reduce(torch.add, inputs)


class Subtract(_Merge):
    """inputs[0] - inputs[1] (exactly two inputs)."""

    _MIN_INPUTS = _MAX_INPUTS = 2

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return inputs[0] - inputs[1]


class Multiply(_Merge):
    """Element-wise product of the inputs."""

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return functools.reduce(torch.mul, inputs)


class Average(_Merge):
    """Element-wise mean of the inputs."""

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return functools.reduce(torch.add, inputs) / len(inputs)


class Maximum(_Merge):
    """Element-wise maximum of the inputs."""

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return functools.reduce(torch.maximum, inputs)


class Minimum(_Merge):
    """Element-wise minimum of the inputs."""

    def _merge(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        return functools.reduce(torch.minimum, inputs)


class Concatenate(_Merge):
    """Concatenates the inputs along `axis` (default the last); other axes must match."""

    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def build(self, input_shape: Any) -> None:
        shapes = self._check_list(input_shape)
        rank = len(shapes[0])
        axis = self.axis % rank if -rank <= self.axis < rank else None
        problem = any(len(s) != rank for s in shapes) or axis is None or axis == 0
        if not problem:
            for position in range(1, rank):
                sizes = {s[position] for s in shapes} - {None}
                if position != axis and len(sizes) > 1:
                    problem = True
        if problem:
            raise ValueError(f"A `Concatenate` layer ('{self.name}', axis={self.axis}) requires inputs with matching "
                             f"shapes except for the concatenation axis. Received: input_shape={_shapes_str(shapes)}")
        self.built = True

    def call(self, inputs: Sequence[torch.Tensor]) -> torch.Tensor:
        return torch.cat(list(inputs), dim=self.axis)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """Keras 3: the inputs' masks (all True for an unmasked input) joined along `axis`, then any() over the
        last axis."""
        if mask is None:
            return None
        self._check_masks(inputs, mask)
        if all(m is None for m in mask):
            return None
        masks = []
        for tensor, one in zip(inputs, mask):
            if one is None:
                masks.append(torch.ones_like(tensor, dtype=torch.bool))
            elif one.dim() < tensor.dim():
                masks.append(one.unsqueeze(-1).expand(tensor.shape).to(torch.bool))
            else:
                masks.append(one.to(torch.bool))
        return torch.cat(masks, dim=self.axis).any(dim=-1)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


class Dot(_Merge):
    """Batched dot product of two inputs over `axes` (int or pair); `normalize` uses cosine similarity.

    For (batch, n) inputs and axes=1 the output is (batch, 1); in general it is
    (batch, *remaining axes of x, *remaining axes of y), as Keras's batch_dot.
    """

    _MIN_INPUTS = _MAX_INPUTS = 2

    def __init__(self, axes: Union[int, Sequence[int]], normalize: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axes = axes if isinstance(axes, int) else list(axes)
        self.normalize = bool(normalize)

    def _resolved_axes(self, shapes: Sequence[tuple]) -> tuple[int, int]:
        pair = [self.axes, self.axes] if isinstance(self.axes, int) else list(self.axes)
        return tuple(a % len(s) for a, s in zip(pair, shapes))  # type: ignore[return-value]

    def build(self, input_shape: Any) -> None:
        shapes = self._check_list(input_shape)
        ax, ay = self._resolved_axes(shapes)
        x_size, y_size = shapes[0][ax], shapes[1][ay]
        if ax == 0 or ay == 0 or (x_size is not None and y_size is not None and x_size != y_size):
            raise ValueError(f"Layer '{self.name}' (Dot): incompatible input shapes {_shapes_str(shapes)} for "
                             f"axes={self.axes}; the dotted axes must be non-batch axes of equal size.")
        self.built = True

    def call(self, inputs: Sequence[torch.Tensor]) -> torch.Tensor:
        x, y = inputs
        ax, ay = self._resolved_axes([tuple(x.shape), tuple(y.shape)])
        if self.normalize:
            x, y = F.normalize(x, dim=ax), F.normalize(y, dim=ay)
        x = x.movedim(ax, -1)
        y = y.movedim(ay, 1)
        rest_x, rest_y = tuple(x.shape[1:-1]), tuple(y.shape[2:])
        batch, depth = x.shape[0], x.shape[-1]
        out = torch.bmm(x.reshape(batch, math.prod(rest_x), depth), y.reshape(batch, depth, math.prod(rest_y)))
        out = out.reshape((batch,) + rest_x + rest_y)
        return out.unsqueeze(1) if out.dim() == 1 else out

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None  # Keras 3: a dot product ends the mask

    def get_config(self) -> dict:
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def add(inputs: Sequence[Any], **kwargs: Any) -> Any:
    """Functional form of `Add()(inputs)`."""
    return Add(**kwargs)(inputs)


def subtract(inputs: Sequence[Any], **kwargs: Any) -> Any:
    """Functional form of `Subtract()(inputs)`."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs: Sequence[Any], **kwargs: Any) -> Any:
    """Functional form of `Multiply()(inputs)`."""
    return Multiply(**kwargs)(inputs)


def average(inputs: Sequence[Any], **kwargs: Any) -> Any:
    """Functional form of `Average()(inputs)`."""
    return Average(**kwargs)(inputs)


def maximum(inputs: Sequence[Any], **kwargs: Any) -> Any:
    """Functional form of `Maximum()(inputs)`."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs: Sequence[Any], **kwargs: Any) -> Any:
    """Functional form of `Minimum()(inputs)`."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs: Sequence[Any], axis: int = -1, **kwargs: Any) -> Any:
    """Functional form of `Concatenate(axis)(inputs)`."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs: Sequence[Any], axes: Union[int, Sequence[int]] = -1, **kwargs: Any) -> Any:
    """Functional form of `Dot(axes, normalize)(inputs)` (`normalize` may come in kwargs)."""
    return Dot(axes=axes, **kwargs)(inputs)
