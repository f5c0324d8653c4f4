"""Keras activation functions on torch tensors, with `get`/`serialize`/`deserialize`
so layers accept names ('relu'), functions, or None (linear), as `tf.keras.activations`."""
from __future__ import annotations

from typing import Any, Callable, Optional, Union

import torch
import torch.nn.functional as F

from torchstrategy.keras.ops import nn as _ops

Activation = Callable[[torch.Tensor], torch.Tensor]


def linear(x: torch.Tensor) -> torch.Tensor:
    """Identity (Keras 'linear', also what `None` means)."""
    return x


def relu(
    x: torch.Tensor, negative_slope: float = 0.0, max_value: Optional[float] = None, threshold: float = 0.0
) -> torch.Tensor:
    """Keras relu: `x` above `threshold` (capped at `max_value`), else `negative_slope * (x - threshold)`.

    >>> relu(torch.tensor([-2.0, 1.0, 8.0]), negative_slope=0.5, max_value=6.0).tolist()
    [-1.0, 1.0, 6.0]
    """
    alpha = negative_slope
    if alpha == 0.0 and max_value is None and threshold == 0.0:
        return torch.relu(x)
    positive = torch.relu(x) if threshold == 0.0 else torch.where(x > threshold, x, torch.zeros_like(x))
    if max_value is not None:
        positive = torch.clamp(positive, 0.0, float(max_value))
    if alpha != 0.0:
        positive = positive - alpha * torch.relu(threshold - x)
    return positive


def relu6(x: torch.Tensor) -> torch.Tensor:
    """min(max(x, 0), 6)."""
    return F.relu6(x)


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.2) -> torch.Tensor:
    """x for x >= 0, else `negative_slope * x` (tf.nn.leaky_relu default 0.2)."""
    return F.leaky_relu(x, negative_slope)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    """1 / (1 + exp(-x))."""
    return torch.sigmoid(x)


def hard_sigmoid(x: torch.Tensor) -> torch.Tensor:
    """Keras 2 piecewise-linear sigmoid: clip(0.2 * x + 0.5, 0, 1)."""
    return torch.clamp(x * 0.2 + 0.5, 0.0, 1.0)


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """exp(x) / sum(exp(x)) along `axis`; 1-D inputs are rejected as in Keras."""
    if x.dim() <= 1:
        raise ValueError(
            f"softmax needs a tensor with at least 2 dimensions (batch, features), got shape {tuple(x.shape)}. "
            "Add a batch dimension first."
        )
    return torch.softmax(x, dim=axis)


def log_softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """log(softmax(x)) along `axis`, computed stably."""
    return torch.log_softmax(x, dim=axis)


def tanh(x: torch.Tensor) -> torch.Tensor:
    """Hyperbolic tangent."""
    return torch.tanh(x)


def elu(x: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """x for x > 0, else alpha * (exp(x) - 1)."""
    return F.elu(x, alpha)


def selu(x: torch.Tensor) -> torch.Tensor:
    """scale * elu(x, alpha) with the self-normalising constants (as Keras)."""
    return F.selu(x)


def gelu(x: torch.Tensor, approximate: bool = False) -> torch.Tensor:
    """x * Phi(x); with `approximate=True` the tanh formula."""
    return F.gelu(x, approximate="tanh" if approximate else "none")


def swish(x: torch.Tensor) -> torch.Tensor:
    """x * sigmoid(x) (also named silu)."""
    return F.silu(x)


silu = swish


def mish(x: torch.Tensor) -> torch.Tensor:
    """x * tanh(softplus(x))."""
    return F.mish(x)


def softplus(x: torch.Tensor) -> torch.Tensor:
    """log(exp(x) + 1)."""
    return F.softplus(x)


def softsign(x: torch.Tensor) -> torch.Tensor:
    """x / (|x| + 1)."""
    return F.softsign(x)


def exponential(x: torch.Tensor) -> torch.Tensor:
    """exp(x)."""
    return torch.exp(x)


_BY_NAME: dict[str, Activation] = {
    "linear": linear, "relu": relu, "relu6": relu6, "leaky_relu": leaky_relu, "sigmoid": sigmoid,
    "hard_sigmoid": hard_sigmoid, "softmax": softmax, "log_softmax": log_softmax, "tanh": tanh,
    "elu": elu, "selu": selu, "gelu": gelu, "swish": swish, "silu": silu, "mish": mish,
    "softplus": softplus, "softsign": softsign, "exponential": exponential,
}


def hard_silu(x: torch.Tensor) -> torch.Tensor:
    """Keras 3's hard SiLU (alias hard_swish): x * relu6(x + 3) / 6."""
    return x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0


hard_swish = hard_silu
_BY_NAME.update({"hard_silu": hard_silu, "hard_swish": hard_swish})


# Keras 3's further activations: thin wrappers over keras.ops (its argument names and defaults)
def celu(x: Any, alpha: float = 1.0) -> torch.Tensor:
    """x for x > 0, else alpha * (exp(x / alpha) - 1)."""
    return _ops.celu(x, alpha=alpha)


def glu(x: Any, axis: int = -1) -> torch.Tensor:
    """Gated linear unit: the first half of `axis` times the sigmoid of the second half."""
    return _ops.glu(x, axis=axis)


def hard_shrink(x: Any, threshold: float = 0.5) -> torch.Tensor:
    """x where |x| > threshold, else 0."""
    return _ops.hard_shrink(x, threshold=threshold)


def hard_tanh(x: Any) -> torch.Tensor:
    """clip(x, -1, 1)."""
    return _ops.hard_tanh(x)


def log_sigmoid(x: Any) -> torch.Tensor:
    """log(sigmoid(x)), computed stably."""
    return _ops.log_sigmoid(x)


def soft_shrink(x: Any, threshold: float = 0.5) -> torch.Tensor:
    """x - threshold above threshold, x + threshold below -threshold, else 0."""
    return _ops.soft_shrink(x, threshold=threshold)


def sparse_plus(x: Any) -> torch.Tensor:
    """0 below -1, x above 1, else (x + 1)**2 / 4."""
    return _ops.sparse_plus(x)


def sparse_sigmoid(x: Any) -> torch.Tensor:
    """0 below -1, 1 above 1, else (x + 1) / 2."""
    return _ops.sparse_sigmoid(x)


def sparsemax(x: Any, axis: int = -1) -> torch.Tensor:
    """The Euclidean projection of `x` onto the probability simplex along `axis` (sparse probabilities)."""
    return _ops.sparsemax(x, axis=axis)


def squareplus(x: Any, b: float = 4) -> torch.Tensor:
    """(x + sqrt(x**2 + b)) / 2."""
    return _ops.squareplus(x, b=b)


def tanh_shrink(x: Any) -> torch.Tensor:
    """x - tanh(x)."""
    return _ops.tanh_shrink(x)


def threshold(x: Any, threshold: float, default_value: float) -> torch.Tensor:
    """x where x > threshold, else default_value."""
    return _ops.threshold(x, threshold, default_value)


_BY_NAME.update({fn.__name__: fn for fn in (threshold, celu, glu, hard_shrink, hard_tanh, log_sigmoid, soft_shrink, sparse_plus,
                                            sparse_sigmoid, sparsemax, squareplus, tanh_shrink)})
# silu is the same function as swish; serialize it under the Keras 2 name.
_NAME_OF = {id(fn): name for name, fn in reversed(list(_BY_NAME.items()))}


def serialize(activation: Optional[Activation]) -> Union[str, Activation, None]:
    """The name of a built-in activation ('relu'); other callables are returned as they are."""
    if activation is None:
        return "linear"
    name = _NAME_OF.get(id(activation))
    if name is not None and _BY_NAME[name] is activation:
        return name
    return activation


def deserialize(config: Union[str, dict], custom_objects: Optional[dict] = None) -> Activation:
    """The activation function called `config` (a built-in, or one from `custom_objects`)."""
    name = config
    if isinstance(name, dict):  # {'class_name': 'relu', 'config': ...} as some Keras configs store it
        name = name.get("config", {}).get("name", name.get("class_name"))
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if not isinstance(name, str) or name not in _BY_NAME:
        raise ValueError(
            f"Unknown activation function: {name!r}. Valid names are: {sorted(_BY_NAME)}, "
            "or pass a callable."
        )
    return _BY_NAME[name]


def get(identifier: Any) -> Activation:
    """Resolves a name, a callable, or None (-> linear) to an activation function.

    >>> get("relu") is relu, get(None) is linear
    (True, True)
    """
    if identifier is None:
        return linear
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError(
        f"Could not interpret activation identifier {identifier!r}: pass a name such as 'relu', "
        "a callable, or None."
    )


__all__ = sorted(_BY_NAME) + ["get", "serialize", "deserialize"]
