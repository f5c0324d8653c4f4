"""One fused torch op for the common built-in losses (MSE, MAE, sparse and categorical cross-entropy) averaged
over the batch: the Keras formula's value up to float rounding, with far fewer ops and autograd nodes per step."""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch
import torch.nn.functional as F

from torchstrategy._machinery.eager import EagerTensor
from torchstrategy.keras import backend
from torchstrategy.keras.losses import functions
from torchstrategy.keras.losses._checks import cached_logits, check_batch, check_sparse_labels

_FLOATS = (torch.float32, torch.float64)
#: tensors the fused ops take as they are (a DTensor, for one, has no sharding rule for mse_loss or l1_loss)
_PLAIN = (torch.Tensor, EagerTensor)


def _same_shape_pair(y_true: Any, y_pred: Any) -> Optional[tuple]:
    """(y_true, y_pred) when both are non-empty tensors of one shape and y_pred is float32/64 (y_true then cast to
    it, as the Keras path does); None for anything the Keras path converts, aligns or checks further."""
    if type(y_pred) not in _PLAIN or type(y_true) not in _PLAIN or y_pred.dtype not in _FLOATS:
        return None
    if y_true.shape != y_pred.shape or y_pred.ndim == 0 or y_pred.numel() == 0:
        return None
    if y_true.dtype != y_pred.dtype or y_true.device != y_pred.device:
        y_true = y_true.to(device=y_pred.device, dtype=y_pred.dtype, non_blocking=True)
    return y_true, y_pred


def _mse(y_true: Any, y_pred: Any, kwargs: dict) -> Optional[torch.Tensor]:
    pair = None if kwargs else _same_shape_pair(y_true, y_pred)
    return None if pair is None else F.mse_loss(pair[1], pair[0])


def _mae(y_true: Any, y_pred: Any, kwargs: dict) -> Optional[torch.Tensor]:
    pair = None if kwargs else _same_shape_pair(y_true, y_pred)
    return None if pair is None else F.l1_loss(pair[1], pair[0])


def _class_scores(y_pred: torch.Tensor, from_logits: bool) -> torch.Tensor:
    """What cross_entropy's log_softmax takes: the logits, or Keras's log of the clipped probabilities."""
    if from_logits:
        return y_pred
    eps = backend.epsilon()
    return torch.log(y_pred.clamp(eps, 1.0 - eps))


def _classes_second(scores: torch.Tensor) -> torch.Tensor:
    return scores if scores.ndim == 2 else scores.movedim(-1, 1)  # cross_entropy's class axis is 1


def _sparse_ce(y_true: Any, y_pred: Any, kwargs: dict) -> Optional[torch.Tensor]:
    if kwargs.get("ignore_class") is not None or kwargs.get("axis", -1) != -1 or type(y_true) not in _PLAIN:
        return None
    y_pred, from_logits = cached_logits(y_pred, kwargs.get("from_logits", False))
    if type(y_pred) not in _PLAIN or y_pred.dtype not in _FLOATS or y_pred.ndim < 2 \
            or y_true.is_floating_point() or y_true.is_complex() or y_pred.numel() == 0:
        return None
    check_batch(y_true, y_pred, "sparse_categorical_crossentropy")
    check_sparse_labels(y_true, y_pred, -1, None)  # the same shape and value errors as the Keras path
    labels = y_true.to(y_pred.device, non_blocking=True).to(torch.int64).reshape(y_pred.shape[:-1])
    return F.cross_entropy(_classes_second(_class_scores(y_pred, from_logits)), labels)


def _categorical_ce(y_true: Any, y_pred: Any, kwargs: dict) -> Optional[torch.Tensor]:
    if kwargs.get("label_smoothing", 0.0) or kwargs.get("axis", -1) != -1:
        return None
    y_pred, from_logits = cached_logits(y_pred, kwargs.get("from_logits", False))
    pair = _same_shape_pair(y_true, y_pred) if from_logits else None  # probabilities: Keras normalizes them first
    if pair is None or y_pred.ndim < 2:
        return None
    return F.cross_entropy(_classes_second(pair[1]), _classes_second(pair[0]))


_FUSED: dict[Callable, Callable] = {
    functions.mean_squared_error: _mse,
    functions.mean_absolute_error: _mae,
    functions.sparse_categorical_crossentropy: _sparse_ce,
    functions.categorical_crossentropy: _categorical_ce,
}


def declared(wrapper: Any) -> bool:
    """Whether `wrapper`'s own class (a loss or metric wrapping one of these functions) says its values are
    exactly its function's, by `_fusable = True` in its body: a subclass, which may override how values are
    made, never inherits the fused form."""
    return type(wrapper).__dict__.get("_fusable", False)


def batch_mean(fn: Callable, kwargs: dict, y_true: Any, y_pred: Any) -> Optional[torch.Tensor]:
    """`fn`'s per-sample losses averaged over every sample ('sum_over_batch_size' without weights or a mask) in
    one fused op, or None where `fn` has no fused form or these inputs need the Keras path (conversions, rank
    alignment, broadcasting, an empty batch, ignore_class, label smoothing, half-precision predictions)."""
    fused = _FUSED.get(fn)
    return None if fused is None else fused(y_true, y_pred, kwargs)
