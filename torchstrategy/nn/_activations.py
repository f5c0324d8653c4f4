"""`tf.nn` activation functions on torch tensors (TF's signatures; `name` is accepted and unused):
relu, relu6, elu, selu, leaky_relu, crelu, softsign, sigmoid, tanh, softplus, silu, softmax, gelu."""
from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy._tensor_convert import to_tensor



def _tensor(value: Any) -> torch.Tensor:
    return to_tensor(value, op="tf.nn")


def relu(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """max(features, 0)."""
    return F.relu(_tensor(features))


def relu6(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """min(max(features, 0), 6)."""
    return F.relu6(_tensor(features))


def sigmoid(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """1 / (1 + exp(-x))."""
    return torch.sigmoid(_tensor(x))


def tanh(x: Any, name: Optional[str] = None) -> torch.Tensor:
    """Hyperbolic tangent."""
    return torch.tanh(_tensor(x))


def softplus(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """log(exp(features) + 1)."""
    return F.softplus(_tensor(features))


def silu(features: Any, beta: float = 1.0) -> torch.Tensor:
    """features * sigmoid(beta * features)."""
    features = _tensor(features)
    if beta == 1.0:
        return F.silu(features)
    return features * torch.sigmoid(beta * features)


swish = silu


def softmax(logits: Any, axis: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:
    """Softmax over `axis` (the last one when None)."""
    return torch.softmax(_tensor(logits), dim=-1 if axis is None else axis)


def log_softmax(logits: Any, axis: Optional[int] = None, name: Optional[str] = None) -> torch.Tensor:
    """Log-softmax over `axis` (the last one when None)."""
    return torch.log_softmax(_tensor(logits), dim=-1 if axis is None else axis)


def gelu(features: Any, approximate: bool = False, name: Optional[str] = None) -> torch.Tensor:
    """Gaussian error linear unit (tanh approximation when `approximate`)."""
    return F.gelu(_tensor(features), approximate="tanh" if approximate else "none")


def elu(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """features where positive, exp(features) - 1 elsewhere."""
    return F.elu(_tensor(features))


def selu(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """Scaled ELU with TF's fixed alpha and scale (the self-normalising constants)."""
    return F.selu(_tensor(features))


def leaky_relu(features: Any, alpha: float = 0.2, name: Optional[str] = None) -> torch.Tensor:
    """features where positive, alpha * features elsewhere."""
    features = _tensor(features)
    if not features.is_floating_point():
        features = features.to(torch.float32)
    return torch.where(features > 0, features, features * alpha)


def crelu(features: Any, axis: int = -1, name: Optional[str] = None) -> torch.Tensor:
    """relu(features) and relu(-features) concatenated along `axis` (twice the depth)."""
    features = _tensor(features)
    return torch.cat([F.relu(features), F.relu(-features)], dim=axis)


def softsign(features: Any, name: Optional[str] = None) -> torch.Tensor:
    """features / (|features| + 1)."""
    features = _tensor(features)
    return features / (features.abs() + 1)
