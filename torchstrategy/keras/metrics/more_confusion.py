"""Keras's further confusion-count metrics: TruePositives/FalsePositives/TrueNegatives/FalseNegatives, the
constrained ones (SensitivityAtSpecificity, PrecisionAtRecall, ...) and F1Score / FBetaScore."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.metrics.base import Metric, _device_of, _divide_no_nan
from torchstrategy.keras.metrics.confusion import _confusion_counts, _is_evenly_distributed


class _ConditionCount(Metric):
    """One weighted confusion count per threshold (a prediction above a threshold counts as positive)."""

    _key = "tp"

    def __init__(self, thresholds: Union[float, Sequence[float], None] = None, name: Optional[str] = None,
                 dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        values = [0.5] if thresholds is None else [
            float(t) for t in (thresholds if isinstance(thresholds, (list, tuple)) else [thresholds])]
        if any(not 0.0 <= t <= 1.0 for t in values):
            raise ValueError(f"Threshold values must be in [0, 1]. Received: {thresholds}")
        self.thresholds = values
        self._evenly = _is_evenly_distributed(values)
        self._threshold_tensor = torch.tensor(values, dtype=self._dtype)
        self.add_weight("accumulator", (len(values),))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        device = self._follow_device(_device_of(y_pred, y_true))
        if self._threshold_tensor.device != device:
            self._threshold_tensor = self._threshold_tensor.to(device)
        counts = _confusion_counts(y_true, y_pred, sample_weight, self._threshold_tensor, self.name,
                                   evenly=self._evenly)
        self.accumulator.add_(counts[self._key])

    def result(self) -> torch.Tensor:
        return self.accumulator[0].clone() if len(self.thresholds) == 1 else self.accumulator.clone()

    def get_config(self) -> dict:
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_ConditionCount):
    """Weighted count of true positives (one per threshold; default threshold 0.5)."""

    _key = "tp"


class FalsePositives(_ConditionCount):
    """Weighted count of false positives."""

    _key = "fp"


class TrueNegatives(_ConditionCount):
    """Weighted count of true negatives."""

    _key = "tn"


class FalseNegatives(_ConditionCount):
    """Weighted count of false negatives."""

    _key = "fn"


class _AtConstraint(Metric):
    """tp/fp/tn/fn over `num_thresholds` evenly spaced thresholds in [0, 1]; the result is the best value of
    one rate among thresholds where another rate reaches `value` (0 when none does)."""

    _value_name = "value"

    def __init__(self, value: float, num_thresholds: int, class_id: Optional[int], name: Optional[str],
                 dtype: Any) -> None:
        super().__init__(name=name, dtype=dtype)
        if num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. Received: num_thresholds={num_thresholds}")
        if not 0 <= value <= 1:
            raise ValueError(f"Argument `{self._value_name}` must be in the range [0, 1]. "
                             f"Received: {self._value_name}={value}")
        self.value = value
        self.class_id = class_id
        self.num_thresholds = num_thresholds
        if num_thresholds == 1:
            self.thresholds, self._evenly = [0.5], False
        else:
            self.thresholds = [0.0] + [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)] + [1.0]
            self._evenly = True
        self._threshold_tensor = torch.tensor(self.thresholds, dtype=self._dtype)
        for state in ("true_positives", "false_positives", "true_negatives", "false_negatives"):
            self.add_weight(state, (len(self.thresholds),))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        device = self._follow_device(_device_of(y_pred, y_true))
        if self._threshold_tensor.device != device:
            self._threshold_tensor = self._threshold_tensor.to(device)
        counts = _confusion_counts(y_true, y_pred, sample_weight, self._threshold_tensor, self.name,
                                   class_id=self.class_id, evenly=self._evenly)
        self.true_positives.add_(counts["tp"])
        self.false_positives.add_(counts["fp"])
        self.true_negatives.add_(counts["tn"])
        self.false_negatives.add_(counts["fn"])

    def _rates(self) -> dict[str, torch.Tensor]:
        tp, fp, tn, fn = self.true_positives, self.false_positives, self.true_negatives, self.false_negatives
        return {"sensitivity": _divide_no_nan(tp, tp + fn), "specificity": _divide_no_nan(tn, tn + fp),
                "precision": _divide_no_nan(tp, tp + fp)}

    def _best(self, constrained: torch.Tensor, dependent: torch.Tensor) -> torch.Tensor:
        feasible = constrained >= self.value
        return torch.where(feasible, dependent, torch.zeros_like(dependent)).amax().clamp_min(0.0)

    def get_config(self) -> dict:
        return {**super().get_config(), "class_id": self.class_id, "num_thresholds": self.num_thresholds,
                self._value_name: self.value}


class SensitivityAtSpecificity(_AtConstraint):
    """Best sensitivity (recall) among thresholds whose specificity is >= `specificity`."""

    _value_name = "specificity"

    def __init__(self, specificity: float, num_thresholds: int = 200, class_id: Optional[int] = None,
                 name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(specificity, num_thresholds, class_id, name, dtype)
        self.specificity = specificity

    def result(self) -> torch.Tensor:
        rates = self._rates()
        return self._best(rates["specificity"], rates["sensitivity"])


class SpecificityAtSensitivity(_AtConstraint):
    """Best specificity among thresholds whose sensitivity is >= `sensitivity`."""

    _value_name = "sensitivity"

    def __init__(self, sensitivity: float, num_thresholds: int = 200, class_id: Optional[int] = None,
                 name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)
        self.sensitivity = sensitivity

    def result(self) -> torch.Tensor:
        rates = self._rates()
        return self._best(rates["sensitivity"], rates["specificity"])


class PrecisionAtRecall(_AtConstraint):
    """Best precision among thresholds whose recall is >= `recall`."""

    _value_name = "recall"

    def __init__(self, recall: float, num_thresholds: int = 200, class_id: Optional[int] = None,
                 name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(recall, num_thresholds, class_id, name, dtype)
        self.recall = recall

    def result(self) -> torch.Tensor:
        rates = self._rates()
        return self._best(rates["sensitivity"], rates["precision"])


class RecallAtPrecision(_AtConstraint):
    """Best recall among thresholds whose precision is >= `precision`."""

    _value_name = "precision"

    def __init__(self, precision: float, num_thresholds: int = 200, class_id: Optional[int] = None,
                 name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(precision, num_thresholds, class_id, name, dtype)
        self.precision = precision

    def result(self) -> torch.Tensor:
        rates = self._rates()
        return self._best(rates["precision"], rates["sensitivity"])


class FBetaScore(Metric):
    """F-beta score of (batch, classes) predictions: per class (average=None), or 'micro' / 'macro' /
    'weighted' averaged. Without `threshold`, each row's largest (nonzero) prediction counts as positive."""

    _STATES = ("true_positives", "false_positives", "false_negatives", "intermediate_weights")

    def __init__(self, average: Optional[str] = None, beta: float = 1.0, threshold: Optional[float] = None,
                 name: str = "fbeta_score", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError("Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', "
                             f"'weighted'}}. Received: average={average}")
        if not isinstance(beta, float):
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float. Received: beta={beta} "
                             f"of type '{type(beta)}'")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError("Invalid `threshold` argument value. It should be a Python float. "
                                 f"Received: threshold={threshold} of type '{type(threshold)}'")
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError("Invalid `threshold` argument value. It should verify 0 < threshold <= 1. "
                                 f"Received: threshold={threshold}")
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, classes: int) -> None:
        shape = () if self.average == "micro" else (classes,)
        for state in self._STATES:
            self.add_weight(state, shape)
        self._built = True

    def _build_like(self, shapes: Sequence[tuple]) -> None:
        """Builds the states from another replica's state shapes (a replica that saw no batch)."""
        if not self._built:
            self._build(int(shapes[0][0]) if shapes[0] else 1)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        device = self._follow_device(_device_of(y_pred, y_true))
        y_true = backend.to_tensor(y_true).detach().to(device=device, dtype=self._dtype)
        y_pred = backend.to_tensor(y_pred).detach().to(device=device, dtype=self._dtype)
        if y_pred.ndim != 2 or y_true.ndim != 2:
            raise ValueError("FBetaScore expects 2D inputs with shape (batch_size, output_dim). Received input "
                             f"shapes: y_pred.shape={tuple(y_pred.shape)} and y_true.shape={tuple(y_true.shape)}.")
        if not self._built:
            self._build(y_pred.shape[-1])
        if self.threshold is None:
            top = y_pred.amax(dim=-1, keepdim=True)
            predicted = (y_pred >= top) & (y_pred.abs() > 1e-9)
        else:
            predicted = y_pred > self.threshold
        predicted = predicted.to(self._dtype)
        weights = None if sample_weight is None else \
            backend.to_tensor(sample_weight).to(device=device, dtype=self._dtype)

        def weighted_sum(value: torch.Tensor) -> torch.Tensor:
            if weights is not None:
                value = value * weights.unsqueeze(1)
            return value.sum() if self.axis is None else value.sum(dim=self.axis)

        self.true_positives.add_(weighted_sum(predicted * y_true))
        self.false_positives.add_(weighted_sum(predicted * (1.0 - y_true)))
        self.false_negatives.add_(weighted_sum((1.0 - predicted) * y_true))
        self.intermediate_weights.add_(weighted_sum(y_true))

    def result(self) -> torch.Tensor:
        if not self._built:
            return torch.zeros((), dtype=self._dtype)
        eps = backend.epsilon()
        tp = self.true_positives
        precision = tp / (tp + self.false_positives + eps)
        recall = tp / (tp + self.false_negatives + eps)
        beta2 = self.beta ** 2
        score = precision * recall / (beta2 * precision + recall + eps) * (1.0 + beta2)
        if self.average == "weighted":
            weights = self.intermediate_weights / (self.intermediate_weights.sum() + eps)
            return (score * weights).sum()
        if self.average is not None:
            return score.mean()
        return score

    def get_config(self) -> dict:
        return {**super().get_config(), "beta": self.beta, "average": self.average, "threshold": self.threshold}


class F1Score(FBetaScore):
    """F1 score (F-beta with beta = 1)."""

    def __init__(self, average: Optional[str] = None, threshold: Optional[float] = None, name: str = "f1_score",
                 dtype: Any = None) -> None:
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["beta"]
        return config

    @classmethod
    def from_config(cls, config: dict) -> "F1Score":
        config = dict(config)
        config.pop("beta", None)
        return cls(**config)
