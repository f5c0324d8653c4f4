"""Keras weight regularizers (L1, L2, L1L2, OrthogonalRegularizer): callables mapping a weight to a scalar penalty,
with `get`/`serialize`/`deserialize`, as `tf.keras.regularizers`."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import torch

from torchstrategy.keras._serialization import name_and_kwargs, serialize_object


class Regularizer:
    """Base class: `penalty = regularizer(weight)` is a scalar tensor added to the loss."""

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        return weight.new_zeros(())

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> "Regularizer":
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        return f"{type(self).__name__}({args})"


def _check_factor(value: Any, name: str) -> float:
    value = 0.0 if value is None else float(value)
    if value < 0.0:
        raise ValueError(f"Regularization factor {name} must be >= 0, got {value}.")
    return value


class L1L2(Regularizer):
    """`l1 * sum(|w|) + l2 * sum(w ** 2)` (no 1/2 factor, as Keras)."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0) -> None:
        self.l1 = _check_factor(l1, "l1")
        self.l2 = _check_factor(l2, "l2")

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        penalty = weight.new_zeros(())
        if self.l1:
            penalty = penalty + self.l1 * weight.abs().sum()
        if self.l2:
            penalty = penalty + self.l2 * weight.square().sum()
        return penalty

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """`l1 * sum(|w|)`; Keras default l1=0.01."""

    def __init__(self, l1: float = 0.01) -> None:
        super().__init__(l1=l1)

    def get_config(self) -> dict:
        return {"l1": self.l1}


class L2(L1L2):
    """`l2 * sum(w ** 2)`; Keras default l2=0.01."""

    def __init__(self, l2: float = 0.01) -> None:
        super().__init__(l2=l2)

    def get_config(self) -> dict:
        return {"l2": self.l2}


def l1_l2(l1: float = 0.0, l2: float = 0.0) -> L1L2:
    """An L1L2 regularizer with both factors (Keras 3.15's `l1_l2` defaults both to 0.0)."""
    return L1L2(l1=l1, l2=l2)


class OrthogonalRegularizer(Regularizer):
    """Pushes the rows (or columns) of a 2-D weight towards orthogonality: `factor * 0.5 * mean |cosine|` over
    the pairs of l2-normalised rows (columns)."""

    def __init__(self, factor: float = 0.01, mode: str = "rows") -> None:
        if isinstance(factor, bool) or not isinstance(factor, (float, int)) or math.isinf(factor) \
                or math.isnan(factor) or factor < 0:
            raise ValueError(f"Invalid value for argument factor: expected a non-negative float.Received: "
                             f"factor={factor}")
        if mode not in ("rows", "columns"):
            raise ValueError(f'Invalid value for argument `mode`. Expected one of {{"rows", "columns"}}. '
                             f"Received: mode={mode}")
        self.factor, self.mode = float(torch.tensor(float(factor), dtype=torch.float32)), mode  # float32, as Keras

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        if weight.dim() != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape="
                             f"{tuple(weight.shape)}")
        vectors = weight if self.mode == "rows" else weight.t()
        unit = vectors / torch.sqrt(torch.clamp((vectors * vectors).sum(dim=1, keepdim=True), min=1e-12))
        size = unit.shape[0]
        product = (unit @ unit.t()) * (1.0 - torch.eye(size, dtype=unit.dtype, device=unit.device))
        return self.factor * 0.5 * product.abs().sum() / (size * (size - 1.0) / 2.0)

    def get_config(self) -> dict:
        return {"factor": float(self.factor), "mode": self.mode}


orthogonal_regularizer = OrthogonalRegularizer
l1, l2 = L1, L2
_CLASSES: dict[str, Callable[..., Regularizer]] = {"L1": L1, "L2": L2, "L1L2": L1L2,
                                                   "OrthogonalRegularizer": OrthogonalRegularizer}
# 'l1_l2' as a name is Keras 2's (0.01 each); Keras 3.15 no longer takes that string
_ALIASES: dict[str, Callable[..., Regularizer]] = {"l1": L1, "l2": L2, "l1_l2": lambda: L1L2(l1=0.01, l2=0.01)}


def serialize(regularizer: Any) -> Any:
    """`{'class_name': ..., 'config': ...}` for a Regularizer; other callables are returned as is."""
    return serialize_object(regularizer, Regularizer)


def deserialize(config: Any, custom_objects: Optional[dict] = None) -> Regularizer:
    """Builds a regularizer from a name ('l2') or a serialized dict."""
    known = dict(_CLASSES, **_ALIASES, **(custom_objects or {}))
    name, kwargs = name_and_kwargs(config, "regularizer")
    if name not in known:
        raise ValueError(f"Unknown regularizer: {name!r}. Valid names are: {sorted(known)}.")
    return known[name](**kwargs)


def get(identifier: Any) -> Optional[Callable[[torch.Tensor], torch.Tensor]]:
    """Resolves None, a name ('l1', 'l2', 'l1_l2'), a config dict or a callable.

    >>> float(get({"class_name": "L2", "config": {"l2": 0.5}})(torch.ones(4)))
    2.0
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier {identifier!r}: pass 'l1', 'l2', "
                     "a Regularizer, or a callable.")
