"""Keras 3's further loss classes (BinaryFocalCrossentropy, Poisson, LogCosh, Dice, Tversky, Circle, CTC, ...),
each a `LossFunctionWrapper` over its function in `more_functions` with Keras 3's arguments and defaults."""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.losses import more_functions as fns
from torchstrategy.keras.losses.base import LossFunctionWrapper


class _Keras3Wrapper(LossFunctionWrapper):
    """A wrapper whose constructor takes Keras 3's `dtype` (the dtype the loss is computed in)."""

    def __init__(self, fn: Callable, reduction: Optional[str], name: Optional[str], dtype: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(fn, reduction=reduction, name=name, **kwargs)
        self._loss_dtype = dtype

    @property
    def dtype(self) -> str:
        """The dtype losses are computed in (Keras's floatx when none was given)."""
        return self._loss_dtype or backend.floatx()

    def call(self, y_true: Any, y_pred: Any) -> torch.Tensor:
        if self._loss_dtype is not None:
            y_pred = backend.to_tensor(y_pred).to(backend.to_torch_dtype(self._loss_dtype))
        return super().call(y_true, y_pred)

    def get_config(self) -> dict:
        config = super().get_config()
        config["dtype"] = self._loss_dtype
        return config


class SquaredHinge(_Keras3Wrapper):
    """Squared hinge loss; 0/1 labels are mapped to -1/1."""

    def __init__(self, reduction: Optional[str] = "sum_over_batch_size", name: str = "squared_hinge",
                 dtype: Any = None) -> None:
        super().__init__(fns.squared_hinge, reduction, name, dtype)


class CategoricalHinge(_Keras3Wrapper):
    """Categorical hinge loss max(neg - pos + 1, 0) of one-hot labels."""

    def __init__(self, reduction: Optional[str] = "sum_over_batch_size", name: str = "categorical_hinge",
                 dtype: Any = None) -> None:
        super().__init__(fns.categorical_hinge, reduction, name, dtype)


class Poisson(_Keras3Wrapper):
    """Poisson loss y_pred - y_true * log(y_pred + epsilon)."""

    def __init__(self, reduction: Optional[str] = "sum_over_batch_size", name: str = "poisson",
                 dtype: Any = None) -> None:
        super().__init__(fns.poisson, reduction, name, dtype)


class LogCosh(_Keras3Wrapper):
    """Logarithm of the hyperbolic cosine of the prediction error."""

    def __init__(self, reduction: Optional[str] = "sum_over_batch_size", name: str = "log_cosh",
                 dtype: Any = None) -> None:
        super().__init__(fns.log_cosh, reduction, name, dtype)


class BinaryFocalCrossentropy(_Keras3Wrapper):
    """Binary cross-entropy down-weighting easy examples by (1 - p_t)^gamma (Lin et al., 2018).

    >>> BinaryFocalCrossentropy(gamma=2.0)([[0.0, 1.0]], [[0.6, 0.4]]).shape
    torch.Size([])
    """

    def __init__(self, apply_class_balancing: bool = False, alpha: float = 0.25, gamma: float = 2.0,
                 from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: Optional[str] = "sum_over_batch_size", name: str = "binary_focal_crossentropy",
                 dtype: Any = None) -> None:
        super().__init__(fns.binary_focal_crossentropy, reduction, name, dtype,
                         apply_class_balancing=apply_class_balancing, alpha=alpha, gamma=gamma,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class CategoricalFocalCrossentropy(_Keras3Wrapper):
    """Categorical cross-entropy of one-hot labels weighted by alpha * (1 - p)^gamma."""

    def __init__(self, alpha: float = 0.25, gamma: float = 2.0, from_logits: bool = False,
                 label_smoothing: float = 0.0, axis: int = -1, reduction: Optional[str] = "sum_over_batch_size",
                 name: str = "categorical_focal_crossentropy", dtype: Any = None) -> None:
        super().__init__(fns.categorical_focal_crossentropy, reduction, name, dtype, alpha=alpha, gamma=gamma,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class CategoricalGeneralizedCrossEntropy(_Keras3Wrapper):
    """Generalized cross-entropy (1 - p^q) / q of integer labels; q must lie in (0, 1)."""

    def __init__(self, q: float = 0.5, reduction: Optional[str] = "sum_over_batch_size",
                 name: str = "categorical_generalized_cross_entropy", dtype: Any = None) -> None:
        if not 0 < q < 1:
            raise ValueError(f"q must be in the interval (0, 1); got q={q}.")
        super().__init__(fns.categorical_generalized_cross_entropy, reduction, name, dtype, q=q)


class Dice(_Keras3Wrapper):
    """Dice loss 1 - 2|A.B| / (|A| + |B|), over `axis` (every axis when None: one value for the batch)."""

    def __init__(self, reduction: Optional[str] = "sum_over_batch_size", name: str = "dice", axis: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(fns.dice, reduction, name, dtype, axis=axis)


class Tversky(_Keras3Wrapper):
    """Tversky loss, weighting false positives by `alpha` and false negatives by `beta`."""

    def __init__(self, alpha: float = 0.5, beta: float = 0.5, reduction: Optional[str] = "sum_over_batch_size",
                 name: str = "tversky", axis: Any = None, dtype: Any = None) -> None:
        super().__init__(fns.tversky, reduction, name, dtype, alpha=alpha, beta=beta, axis=axis)


class Circle(_Keras3Wrapper):
    """Circle loss of L2-normalized embeddings; samples whose loss is 0 are left out of the mean."""

    def __init__(self, gamma: float = 80.0, margin: float = 0.4, remove_diagonal: bool = True,
                 reduction: Optional[str] = "sum_over_batch_size", name: str = "circle", dtype: Any = None) -> None:
        super().__init__(fns.circle, reduction, name, dtype, gamma=gamma, margin=margin,
                         remove_diagonal=remove_diagonal)

    def _losses_and_mask(self, y_true: Any, y_pred: Any) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        if self._loss_dtype is not None:
            y_pred = backend.to_tensor(y_pred).to(backend.to_torch_dtype(self._loss_dtype))
        return fns._circle_with_mask(y_true, y_pred, **self._fn_kwargs)


class CTC(_Keras3Wrapper):
    """Connectionist temporal classification loss of integer labels (0 is the blank) against logits."""

    def __init__(self, reduction: Optional[str] = "sum_over_batch_size", name: str = "ctc",
                 dtype: Any = None) -> None:
        super().__init__(fns.ctc, reduction, name, dtype)
