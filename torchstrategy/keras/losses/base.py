"""The Keras `Loss` base and its reductions: `Reduction`, `compute_weighted_loss` (sample weights,
'sum_over_batch_size' / 'sum' / 'none'), `Loss` and `LossFunctionWrapper`."""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

import torch

from torchstrategy._machinery.eager import eager_outputs
from torchstrategy.keras import backend
from torchstrategy.keras.losses import fused


class Reduction:
    """Loss reduction names (`tf.keras.losses.Reduction`); the values are the strings Keras uses."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls) -> tuple:
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key: Any) -> str:
        """Returns the effective reduction ('auto' and None map to Keras's meaning) or raises."""
        if key is None:
            return cls.NONE
        if key not in cls.all():
            raise ValueError(f"Invalid loss reduction {key!r}. Valid values: {list(cls.all())}.")
        return cls.SUM_OVER_BATCH_SIZE if key == cls.AUTO else key


def _match_weight_rank(weights: torch.Tensor, losses: torch.Tensor) -> torch.Tensor:
    if weights.ndim == 0:
        return weights
    if weights.ndim == losses.ndim + 1 and weights.shape[-1] == 1:
        weights = weights.squeeze(-1)
    while weights.ndim < losses.ndim:  # per-sample weights broadcast over the remaining loss axes
        weights = weights.unsqueeze(-1)
    return weights


def compute_weighted_loss(
    losses: torch.Tensor,
    sample_weight: Any = None,
    reduction: str = Reduction.SUM_OVER_BATCH_SIZE,
    valid_mask: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Applies sample weights (and an optional validity mask) to per-sample losses, then reduces.

    'sum_over_batch_size' divides the weighted sum by the number of loss elements (valid ones when
    masked), as Keras does; 'sum' sums; 'none' returns the weighted per-sample values.
    """
    reduction = Reduction.validate(reduction)
    weighted = losses
    if sample_weight is not None:
        weights = backend.to_tensor(sample_weight).to(device=losses.device, dtype=losses.dtype, non_blocking=True)
        if weights.ndim and losses.ndim and weights.shape[0] not in (1, losses.shape[0]):
            raise ValueError(
                f"sample_weight has {weights.shape[0]} entries (shape {tuple(weights.shape)}) but the batch has "
                f"{losses.shape[0]} samples. Pass one weight per sample."
            )
        weighted = weighted * _match_weight_rank(weights, losses)
    if valid_mask is not None:
        weighted = torch.where(valid_mask, weighted, torch.zeros_like(weighted))
    if reduction == Reduction.NONE:
        return weighted
    total = weighted.sum()
    if reduction == Reduction.SUM:
        return total
    if valid_mask is not None:
        return total / valid_mask.sum().clamp_min(1).to(total.dtype)
    return total / max(weighted.numel(), 1)


def _mask_like(mask: Any, losses: torch.Tensor) -> torch.Tensor:
    """A prediction's Keras mask as a bool tensor shaped like the per-sample losses."""
    mask = backend.to_tensor(mask).to(device=losses.device).bool()
    if mask.ndim == losses.ndim + 1 and mask.shape[-1] == 1:
        mask = mask.squeeze(-1)
    while mask.ndim < losses.ndim:
        mask = mask.unsqueeze(-1)
    try:
        return torch.broadcast_to(mask, losses.shape)
    except RuntimeError:
        raise ValueError(f"The prediction's mask (shape {tuple(mask.shape)}) does not fit the per-sample losses "
                         f"(shape {tuple(losses.shape)}); a masked output needs a mask over its leading "
                         "(batch, time) axes.") from None


#: the reductions that average every per-sample loss (what a fused op computes)
_BATCH_MEAN = (Reduction.SUM_OVER_BATCH_SIZE, Reduction.AUTO)


class Loss:
    """Base of Keras losses: `call` gives per-sample values, `__call__` weights and reduces them.

    >>> class Absolute(Loss):
    ...     def call(self, y_true, y_pred):
    ...         return (torch.as_tensor(y_pred) - torch.as_tensor(y_true)).abs()
    >>> Absolute()(torch.zeros(4), torch.ones(4))
    tensor(1.)
    """

    def __init__(self, name: Optional[str] = None, reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE,
                 dtype: Any = None) -> None:
        Reduction.validate(reduction)
        self.reduction = reduction
        self.name = name or _snake_case(type(self).__name__)
        self._loss_dtype = None if dtype is None else backend.to_torch_dtype(dtype)  # the result's dtype

    def call(self, y_true: Any, y_pred: Any) -> torch.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement call(y_true, y_pred).")

    def _losses_and_mask(self, y_true: Any, y_pred: Any) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        # arrays and lists become tensors so a subclass's `call` can use tensor ops; tensors pass unchanged
        return self.call(backend.to_tensor(y_true), backend.to_tensor(y_pred)), None

    def _fused_mean(self, y_true: Any, y_pred: Any) -> Optional[torch.Tensor]:
        """The unweighted, unmasked batch mean in one fused op where this loss has one (else None)."""
        return None

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> torch.Tensor:
        keras_mask = getattr(y_pred, "_keras_mask", None)  # Keras 3: a masked prediction masks its loss
        loss = None
        if keras_mask is None and sample_weight is None and self.reduction in _BATCH_MEAN:
            loss = self._fused_mean(y_true, y_pred)
        if loss is None:
            losses, valid_mask = self._losses_and_mask(y_true, y_pred)
            if keras_mask is not None:
                keras_mask = _mask_like(keras_mask, losses)
                valid_mask = keras_mask if valid_mask is None else valid_mask & keras_mask
            loss = compute_weighted_loss(losses, sample_weight, self.reduction, valid_mask)
        return eager_outputs(loss if self._loss_dtype is None else loss.to(self._loss_dtype))

    def get_config(self) -> dict:
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> "Loss":
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r} reduction={self.reduction!r}>"


class LossFunctionWrapper(Loss):
    """Turns a per-sample loss function `fn(y_true, y_pred, **kwargs)` into a `Loss`."""

    #: the fused form of `fn` may replace its losses (see fused.declared)
    _fusable = True

    def __init__(self, fn: Callable, reduction: Optional[str] = Reduction.SUM_OVER_BATCH_SIZE,
                 name: Optional[str] = None, dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(reduction=reduction, name=name or getattr(fn, "__name__", "loss"), dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true: Any, y_pred: Any) -> torch.Tensor:
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def _fused_mean(self, y_true: Any, y_pred: Any) -> Optional[torch.Tensor]:
        return None if not fused.declared(self) else fused.batch_mean(self.fn, self._fn_kwargs, y_true, y_pred)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(self._fn_kwargs)
        if type(self) is LossFunctionWrapper:
            config["fn"] = getattr(self.fn, "__name__", None)
        return config

    @classmethod
    def from_config(cls, config: dict) -> "Loss":
        config = dict(config)
        if cls is LossFunctionWrapper:
            from torchstrategy.keras.losses import functions

            fn = getattr(functions, str(config.get("fn")), None) if not callable(config.get("fn")) else config["fn"]
            if not callable(fn):
                raise ValueError(f"Unknown loss function {config.get('fn')!r} in LossFunctionWrapper config: "
                                 "pass the function itself (custom functions are not looked up by name).")
            config["fn"] = fn
        return cls(**config)


def _snake_case(name: str) -> str:
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
