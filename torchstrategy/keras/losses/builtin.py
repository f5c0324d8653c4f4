"""The built-in Keras loss classes (SparseCategoricalCrossentropy, MeanSquaredError, Huber, ...), each a
`LossFunctionWrapper` over its per-sample function with the Keras constructor arguments and defaults."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras.losses import functions
from torchstrategy.keras.losses.base import LossFunctionWrapper, Reduction


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy for integer labels of shape (N,) or (N, 1) against (N, classes) predictions.

    Labels equal to `ignore_class` contribute nothing and are not counted by 'sum_over_batch_size'.

    >>> SparseCategoricalCrossentropy(from_logits=True)([0, 1], torch.tensor([[2.0, 0.0], [0.0, 2.0]]))
    tensor(0.1269)
    """

    _fusable = True  # LossFunctionWrapper._fusable

    def __init__(self, from_logits: bool = False, ignore_class: Optional[int] = None,
                 reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE, axis: int = -1,
                 name: str = "sparse_categorical_crossentropy", dtype: Any = None) -> None:
        super().__init__(functions.sparse_categorical_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, ignore_class=ignore_class, axis=axis)

    def _losses_and_mask(self, y_true: Any, y_pred: Any) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        kwargs = self._fn_kwargs
        return functions._sparse_ce(y_true, y_pred, kwargs["from_logits"], kwargs["axis"], kwargs["ignore_class"])


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy for one-hot (or soft) labels with the same shape as the predictions."""

    _fusable = True  # LossFunctionWrapper._fusable

    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE, name: str = "categorical_crossentropy", dtype: Any = None) -> None:
        super().__init__(functions.categorical_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class BinaryCrossentropy(LossFunctionWrapper):
    """Binary cross-entropy for 0/1 (or soft) labels, averaged over the last axis per sample."""

    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE, name: str = "binary_crossentropy", dtype: Any = None) -> None:
        super().__init__(functions.binary_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class MeanSquaredError(LossFunctionWrapper):
    """Mean of squared errors (per sample over the last axis, then reduced)."""

    _fusable = True  # LossFunctionWrapper._fusable

    def __init__(self, reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE, name: str = "mean_squared_error", dtype: Any = None) -> None:
        super().__init__(functions.mean_squared_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    """Mean of absolute errors."""

    _fusable = True  # LossFunctionWrapper._fusable

    def __init__(self, reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE, name: str = "mean_absolute_error", dtype: Any = None) -> None:
        super().__init__(functions.mean_absolute_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """100 * mean of |error| / max(|y_true|, epsilon)."""

    def __init__(self, reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE,
                 name: str = "mean_absolute_percentage_error", dtype: Any = None) -> None:
        super().__init__(functions.mean_absolute_percentage_error, reduction=reduction, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    """Mean of squared differences of log(1 + max(x, epsilon))."""

    def __init__(self, reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE,
                 name: str = "mean_squared_logarithmic_error", dtype: Any = None) -> None:
        super().__init__(functions.mean_squared_logarithmic_error, reduction=reduction, name=name, dtype=dtype)


class Huber(LossFunctionWrapper):
    """Huber loss: quadratic for |error| <= delta, linear beyond."""

    def __init__(self, delta: float = 1.0, reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE,
                 name: str = "huber_loss", dtype: Any = None) -> None:
        super().__init__(functions.huber, reduction=reduction, name=name, dtype=dtype, delta=delta)


class KLDivergence(LossFunctionWrapper):
    """Kullback-Leibler divergence sum(y_true * log(y_true / y_pred)) over the last axis."""

    def __init__(self, reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE, name: str = "kl_divergence", dtype: Any = None) -> None:
        super().__init__(functions.kl_divergence, reduction=reduction, name=name, dtype=dtype)


class Hinge(LossFunctionWrapper):
    """Hinge loss max(1 - y_true * y_pred, 0); 0/1 labels are mapped to -1/1."""

    def __init__(self, reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE, name: str = "hinge", dtype: Any = None) -> None:
        super().__init__(functions.hinge, reduction=reduction, name=name, dtype=dtype)


class CosineSimilarity(LossFunctionWrapper):
    """Negative cosine similarity along `axis` (-1 is best)."""

    def __init__(self, axis: int = -1, reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE,
                 name: str = "cosine_similarity", dtype: Any = None) -> None:
        super().__init__(functions.cosine_similarity, reduction=reduction, name=name, dtype=dtype, axis=axis)
