"""Keras weight constraints (MaxNorm, MinMaxNorm, NonNeg, UnitNorm, tf.keras 2's RadialConstraint): projections
the optimizer applies to a weight after each update, with `get`/`serialize`/`deserialize`, as `tf.keras.constraints`."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Optional, Sequence, Union

import torch

from torchstrategy.keras import backend

Axis = Union[int, Sequence[int]]


class Constraint:
    """Base class: `projected = constraint(weight)`; the default returns the weight unchanged.

    Subclass it and override `__call__` (and `get_config` when it takes arguments):

    >>> class Clip(Constraint):
    ...     def __call__(self, w):
    ...         return w.clamp(-1.0, 1.0)
    >>> Clip()(torch.tensor([-3.0, 0.5])).tolist()
    [-1.0, 0.5]
    """

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> "Constraint":
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        return f"{type(self).__name__}({args})"


def _axes(axis: Axis) -> Any:
    if isinstance(axis, (list, tuple)):
        return [int(a) for a in axis]
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"`axis` must be an int or a list of ints; got axis={axis!r}.")
    return axis


def _norms(w: torch.Tensor, axis: Axis) -> torch.Tensor:
    # sqrt(sum(w^2)) over `axis`, kept for broadcasting (Keras's formula, not torch.linalg.norm's)
    return torch.sqrt(torch.sum(torch.square(w), dim=_axes(axis), keepdim=True))


def _as_float(w: Any) -> torch.Tensor:
    w = backend.to_tensor(w)
    return w if w.is_floating_point() else w.to(torch.get_default_dtype())


class MaxNorm(Constraint):
    """Rescales each slice along `axis` whose L2 norm exceeds `max_value` down to it:
    `w * clip(n, 0, max_value) / (epsilon + n)` with `n` the slice norm (Keras's epsilon placement).

    For a Dense kernel `(input_dim, units)`, `axis=0` constrains each unit's incoming weights; for a
    Conv2D kernel use `axis=[0, 1, 2]`.

    >>> MaxNorm(1.0)(torch.tensor([[3.0], [4.0]])).flatten().tolist()  # norm 5 -> 1
    [0.6000000238418579, 0.800000011920929]
    """

    def __init__(self, max_value: float = 2, axis: Axis = 0) -> None:
        self.max_value = max_value
        self.axis = _axes(axis)

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        w = _as_float(w)
        norms = _norms(w, self.axis)
        desired = torch.clamp(norms, 0, self.max_value)
        return w * (desired / (backend.epsilon() + norms))

    def get_config(self) -> dict:
        return {"max_value": self.max_value, "axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves each slice's norm `n` towards `[min_value, max_value]`: the target norm is
    `rate * clip(n, min_value, max_value) + (1 - rate) * n`, and `w * target / (epsilon + n)` is returned
    (`rate=1` enforces the bounds strictly)."""

    def __init__(self, min_value: float = 0.0, max_value: float = 1.0, rate: float = 1.0, axis: Axis = 0) -> None:
        if min_value > max_value:
            raise ValueError(f"MinMaxNorm needs min_value <= max_value; got min_value={min_value}, "
                             f"max_value={max_value}.")
        self.min_value, self.max_value, self.rate = min_value, max_value, rate
        self.axis = _axes(axis)

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        w = _as_float(w)
        norms = _norms(w, self.axis)
        desired = self.rate * torch.clamp(norms, self.min_value, self.max_value) + (1 - self.rate) * norms
        return w * (desired / (backend.epsilon() + norms))

    def get_config(self) -> dict:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


class NonNeg(Constraint):
    """Sets negative weights to zero (`maximum(w, 0)`).

    >>> NonNeg()(torch.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        w = backend.to_tensor(w)
        return torch.clamp(w, min=0)


class UnitNorm(Constraint):
    """Divides each slice along `axis` by its L2 norm: `w / (epsilon + n)`."""

    def __init__(self, axis: Axis = 0) -> None:
        self.axis = _axes(axis)

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        w = _as_float(w)
        return w / (backend.epsilon() + _norms(w, self.axis))

    def get_config(self) -> dict:
        return {"axis": self.axis}


class RadialConstraint(Constraint):
    """tf.keras 2's constraint for square Conv kernels `(size, size, in, out)`: every ring around the centre
    takes one value, as tf.keras 2 (and tf_keras) computes it. The centre (1x1, or 2x2 for an even size) takes
    the diagonal entry `[s - 1, s - 1]` with `s = size // 2`; ring `d` (d >= 1, counted outwards) takes the
    diagonal entry `[s + d - 1, s + d - 1]` for an odd size and `[s + d, s + d]` for an even one. Keras 3
    dropped this class; it is kept for tf.keras 2 scripts.

    >>> RadialConstraint()(torch.arange(9.0).reshape(3, 3, 1, 1))[..., 0, 0].tolist()
    [[4.0, 4.0, 4.0], [4.0, 0.0, 4.0], [4.0, 4.0, 4.0]]
    """

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        w = backend.to_tensor(w)
        if w.dim() != 4:
            raise ValueError(f"RadialConstraint needs a rank-4 Conv kernel (rows, cols, input_depth, output_depth); "
                             f"got a weight of shape {tuple(w.shape)}.")
        size = int(w.shape[0])
        if int(w.shape[1]) != size or size < 2:
            raise ValueError(f"RadialConstraint needs a square kernel of size >= 2 (rows == cols); got a kernel "
                             f"of shape {tuple(w.shape)}.")
        half = size // 2
        positions = torch.arange(size, device=w.device)
        if size % 2:  # distance from the centre cell `half`
            distance = (positions - half).abs()
        else:  # distance from the centre 2x2 block (cells half - 1 and half)
            distance = torch.maximum(half - 1 - positions, positions - half)
        ring = torch.maximum(distance[:, None], distance[None, :])
        source = torch.where(ring == 0, torch.full_like(ring, half - 1), half + ring - size % 2)
        return w[source, source]


max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm
radial_constraint = RadialConstraint

_CLASSES: dict[str, type] = {cls.__name__: cls for cls in (Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm,
                                                             RadialConstraint)}
# Keras 3 also accepts each class's snake_case name ('max_norm', 'non_neg', ...)
_CLASSES.update({"constraint": Constraint, "max_norm": MaxNorm, "min_max_norm": MinMaxNorm,
                 "non_neg": NonNeg, "unit_norm": UnitNorm, "radial_constraint": RadialConstraint})


def serialize(constraint: Any) -> Any:
    """`{'module', 'class_name', 'config', 'registered_name'}` for a Constraint (Keras 3's layout);
    None stays None and other callables are returned as they are.

    >>> serialize(MaxNorm(3))["config"]
    {'max_value': 3, 'axis': 0}
    """
    if isinstance(constraint, Constraint):
        return {"module": "keras.constraints", "class_name": type(constraint).__name__,
                "config": constraint.get_config(), "registered_name": None}
    return constraint


def deserialize(config: Any, custom_objects: Optional[dict] = None) -> Constraint:
    """Builds a constraint from a name ('max_norm', 'NonNeg') or a `serialize()` dict."""
    known = dict(_CLASSES, **(custom_objects or {}))
    if isinstance(config, str):
        name, kwargs = config, {}
    elif isinstance(config, dict) and "class_name" in config:
        name, kwargs = config["class_name"], dict(config.get("config") or {})
    else:
        raise ValueError(f"Could not interpret constraint config {config!r}: expected a name or a "
                         "{'class_name': ..., 'config': {...}} dict.")
    if name not in known:
        raise ValueError(f"Unknown constraint: {name!r}. Valid names are: {sorted(known)}, or pass your "
                         "class through `custom_objects`.")
    cls = known[name]
    if inspect.isclass(cls) and hasattr(cls, "from_config"):
        return cls.from_config(kwargs)
    return cls(**kwargs)


def get(identifier: Any) -> Optional[Callable[[torch.Tensor], torch.Tensor]]:
    """Resolves what `kernel_constraint=` accepts: None, a name ('max_norm', 'non_neg', ...), a config
    dict, a Constraint class (instantiated with its defaults) or any callable (returned as is).

    >>> get("max_norm").get_config()
    {'max_value': 2, 'axis': 0}
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if inspect.isclass(identifier):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret constraint identifier: {identifier!r}. Pass a name "
                     f"({sorted(n for n in _CLASSES if n != 'constraint' and n != 'Constraint')}), a config "
                     "dict, a Constraint or a callable.")


__all__ = [
    "Constraint",
    "MaxNorm",
    "MinMaxNorm",
    "NonNeg",
    "RadialConstraint",
    "UnitNorm",
    "deserialize",
    "get",
    "max_norm",
    "min_max_norm",
    "non_neg",
    "radial_constraint",
    "serialize",
    "unit_norm",
]
