"""keras.ops.nn: the activations with arguments (relu, leaky_relu, elu, gelu, hard_sigmoid), softmax, normalize,
moments, one-hot encodings and the cross-entropies; the one-argument activations are in _elementwise."""
from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from torchstrategy.dtypes import as_dtype
from torchstrategy.keras.ops._core import _float, _floatx, _t


# ----- activations --------------------------------------------------------------------------------------------


def relu(x: Any) -> torch.Tensor:
    return F.relu(_t(x))


def leaky_relu(x: Any, negative_slope: float = 0.2) -> torch.Tensor:
    """x for x >= 0, negative_slope * x below (Keras's default slope is 0.2)."""
    return F.leaky_relu(_float(x), negative_slope)


def elu(x: Any, alpha: float = 1.0) -> torch.Tensor:
    return F.elu(_float(x), alpha)


def gelu(x: Any, approximate: bool = True) -> torch.Tensor:
    """GELU; Keras's default is the tanh approximation."""
    return F.gelu(_float(x), approximate="tanh" if approximate else "none")


def hard_sigmoid(x: Any) -> torch.Tensor:
    """relu6(x + 3) / 6 (Keras 3's slope, 1/6; the legacy K.hard_sigmoid uses 0.2)."""
    return F.hardsigmoid(_float(x))


def softmax(x: Any, axis: Any = -1) -> torch.Tensor:
    """Softmax over `axis` (an int or a tuple of axes)."""
    tensor = _float(x)
    if isinstance(axis, int):
        return torch.softmax(tensor, dim=axis)
    axes = tuple(axis)
    return torch.exp(tensor - torch.logsumexp(tensor, dim=axes, keepdim=True))


def log_softmax(x: Any, axis: Any = -1) -> torch.Tensor:
    tensor = _float(x)
    if isinstance(axis, int):
        return torch.log_softmax(tensor, dim=axis)
    return tensor - torch.logsumexp(tensor, dim=tuple(axis), keepdim=True)


# ----- normalization and encodings ----------------------------------------------------------------------------


def normalize(x: Any, axis: int = -1, order: int = 2, epsilon: Optional[float] = None) -> torch.Tensor:
    """x / max(||x||_order over axis, epsilon); epsilon defaults to keras.config.epsilon()."""
    from torchstrategy.keras import backend

    tensor = _float(x)
    eps = backend.epsilon() if epsilon is None else epsilon
    norms = torch.linalg.vector_norm(tensor, ord=order, dim=axis, keepdim=True)
    return tensor / norms.clamp_min(eps)


def moments(x: Any, axes: Any, keepdims: bool = False, synchronized: bool = False) -> tuple:
    """(mean, variance) over `axes`."""
    tensor = _float(x)
    dims = tuple(axes) if isinstance(axes, (list, tuple)) else (axes,)
    return (torch.mean(tensor, dim=dims, keepdim=keepdims),
            torch.var(tensor, dim=dims, correction=0, keepdim=keepdims))


def one_hot(x: Any, num_classes: int, axis: int = -1, dtype: Any = None, sparse: bool = False) -> torch.Tensor:
    """One-hot vectors (floatx by default) on a new `axis`; negative or too-large labels give all zeros."""
    labels = _t(x).to(torch.int64)
    valid = (labels >= 0) & (labels < num_classes)
    encoded = F.one_hot(torch.where(valid, labels, torch.zeros_like(labels)), num_classes)
    encoded = encoded * valid.unsqueeze(-1).to(encoded.dtype)
    encoded = encoded.to(_floatx() if dtype is None else as_dtype(dtype))
    return encoded if axis == -1 else torch.movedim(encoded, -1, axis)


def multi_hot(inputs: Any, num_classes: Optional[int] = None, axis: int = -1, dtype: Any = None, sparse: bool = False,
              **kwargs: Any) -> torch.Tensor:
    """For each row of labels, a vector with 1 at every label present (`num_tokens`: Keras 2's name)."""
    if num_classes is None:
        num_classes = kwargs.pop("num_tokens", None)
    if num_classes is None:
        raise ValueError("Argument `num_classes` must be specified.")
    if kwargs:
        raise TypeError(f"multi_hot() got unexpected keyword arguments {sorted(kwargs)}.")
    labels = _t(inputs)
    encoded = one_hot(labels, num_classes, dtype=dtype)
    reduced = encoded.amax(dim=-2) if labels.dim() > 1 else encoded.amax(dim=0)
    return reduced if axis == -1 else torch.movedim(reduced, -1, axis)


# ----- cross-entropies ----------------------------------------------------------------------------------------


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> torch.Tensor:
    """Element-wise binary cross-entropy (probabilities clipped to [eps, 1-eps]); no mean."""
    from torchstrategy.keras import backend

    output_t = _float(output)
    target_t = _t(target).to(output_t.dtype)
    if from_logits:
        return F.binary_cross_entropy_with_logits(output_t, target_t, reduction="none")
    eps = backend.epsilon()
    probs = output_t.clamp(eps, 1.0 - eps)
    return -(target_t * torch.log(probs) + (1 - target_t) * torch.log(1 - probs))


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1) -> torch.Tensor:
    """Cross-entropy of one-hot/soft targets over `axis` (probabilities renormalized and clipped)."""
    from torchstrategy.keras import backend

    output_t = _float(output)
    target_t = _t(target).to(output_t.dtype)
    if tuple(target_t.shape) != tuple(output_t.shape):
        raise ValueError(f"keras.ops.categorical_crossentropy: target shape {tuple(target_t.shape)} and output "
                         f"shape {tuple(output_t.shape)} must be equal.")
    if from_logits:
        return -(target_t * torch.log_softmax(output_t, dim=axis)).sum(dim=axis)
    eps = backend.epsilon()
    probs = (output_t / output_t.sum(dim=axis, keepdim=True)).clamp(eps, 1.0 - eps)
    return -(target_t * torch.log(probs)).sum(dim=axis)


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1
                                    ) -> torch.Tensor:
    """Cross-entropy of integer targets (a trailing axis of size 1 is dropped)."""
    from torchstrategy.keras import backend

    output_t = _float(output)
    labels = _t(target).to(torch.int64)
    if labels.dim() == output_t.dim() and labels.shape[-1] == 1:
        labels = labels.squeeze(-1)
    moved = output_t.movedim(axis, -1)
    if from_logits:
        log_probs = torch.log_softmax(moved, dim=-1)
    else:
        eps = backend.epsilon()
        probs = moved / moved.sum(dim=-1, keepdim=True)
        log_probs = torch.log(probs.clamp(eps, 1.0 - eps))
    return -log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
