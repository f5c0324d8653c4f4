"""`tf.keras.metrics`: metric classes and per-sample metric functions, `get` / `serialize` /
`deserialize`, and `resolve_accuracy`, which picks the accuracy variant for 'accuracy' as Keras does."""
from __future__ import annotations

from typing import Any, Optional

from torchstrategy.keras.losses import functions as _loss_functions
from torchstrategy.keras.losses.base import Loss as _Loss
from torchstrategy.keras.losses.base import LossFunctionWrapper as _LossFunctionWrapper
from torchstrategy.keras.losses.functions import (
    KLD, MAE, MAPE, MSE, MSLE, binary_crossentropy, categorical_crossentropy, kl_divergence, kld,
    kullback_leibler_divergence, mae, mape,
    mean_absolute_error, mean_absolute_percentage_error, mean_squared_error, mean_squared_logarithmic_error, mse,
    msle, sparse_categorical_crossentropy,
)
from torchstrategy.keras.metrics.accuracy import (
    Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy, SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy, accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
    sparse_top_k_categorical_accuracy, top_k_categorical_accuracy,
)
from torchstrategy.keras.metrics.base import Mean, MeanMetricWrapper, Metric, Sum
from torchstrategy.keras.metrics.confusion import AUC, Precision, Recall
from torchstrategy.keras.metrics.regression import (
    BinaryCrossentropy, CategoricalCrossentropy, CosineSimilarity, KLDivergence, MeanAbsoluteError,
    MeanAbsolutePercentageError, MeanSquaredError, MeanSquaredLogarithmicError, RootMeanSquaredError,
    SparseCategoricalCrossentropy, cosine_similarity,
)
from torchstrategy.keras.losses.functions import hinge, huber
from torchstrategy.keras.losses.more_functions import (
    binary_focal_crossentropy, categorical_focal_crossentropy, categorical_hinge, log_cosh, poisson, squared_hinge,
)
from torchstrategy.keras.metrics.iou import IoU, BinaryIoU, MeanIoU, OneHotIoU, OneHotMeanIoU
from torchstrategy.keras.metrics.more_confusion import (
    F1Score, FBetaScore, FalseNegatives, FalsePositives, PrecisionAtRecall, RecallAtPrecision,
    SensitivityAtSpecificity, SpecificityAtSensitivity, TrueNegatives, TruePositives,
)
from torchstrategy.keras.metrics.more_regression import (
    CategoricalHinge, ConcordanceCorrelation, Hinge, LogCoshError, PearsonCorrelation, Poisson, R2Score,
    SquaredHinge, concordance_correlation, pearson_correlation,
)

__all__ = [
    "Metric", "Mean", "Sum", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy",
    "SparseCategoricalAccuracy", "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "MeanSquaredError",
    "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "RootMeanSquaredError",
    "CosineSimilarity", "Precision", "Recall", "AUC", "SparseCategoricalCrossentropy", "CategoricalCrossentropy",
    "BinaryCrossentropy", "KLDivergence", "accuracy", "binary_accuracy", "categorical_accuracy",
    "sparse_categorical_accuracy", "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy",
    "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy", "cosine_similarity",
    "kl_divergence", "kld", "KLD", "mae", "MAE", "mape", "MAPE", "mse", "MSE", "msle", "MSLE",
    "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_error", "mean_squared_logarithmic_error",
    "get", "serialize", "deserialize", "resolve_accuracy",
]
_MORE_CLASSES = (
    IoU, BinaryIoU, MeanIoU, OneHotIoU, OneHotMeanIoU, F1Score, FBetaScore, FalseNegatives, FalsePositives,
    PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity, SpecificityAtSensitivity, TrueNegatives,
    TruePositives, CategoricalHinge, ConcordanceCorrelation, Hinge, LogCoshError, PearsonCorrelation, Poisson,
    R2Score, SquaredHinge)
_MORE_FUNCTIONS = (
    hinge, huber, binary_focal_crossentropy, categorical_focal_crossentropy, categorical_hinge, log_cosh, poisson,
    squared_hinge, concordance_correlation, pearson_correlation)
__all__ += [obj.__name__ for obj in _MORE_CLASSES + _MORE_FUNCTIONS]

_CLASSES = {cls.__name__: cls for cls in (
    Mean, Sum, Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy, TopKCategoricalAccuracy,
    SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, RootMeanSquaredError, CosineSimilarity, Precision, Recall, AUC,
    SparseCategoricalCrossentropy, CategoricalCrossentropy, BinaryCrossentropy, KLDivergence)}
# Strings Keras accepts in compile(metrics=[...]); the metric keeps the string as its name (the History key).
_NAMES = {
    "accuracy": Accuracy, "acc": Accuracy, "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy, "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError, "MSE": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError, "MAE": MeanAbsoluteError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError, "mape": MeanAbsolutePercentageError,
    "MAPE": MeanAbsolutePercentageError, "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "msle": MeanSquaredLogarithmicError, "MSLE": MeanSquaredLogarithmicError,
    "root_mean_squared_error": RootMeanSquaredError, "cosine_similarity": CosineSimilarity,
    "auc": AUC, "precision": Precision, "recall": Recall, "mean": Mean, "sum": Sum,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy, "binary_crossentropy": BinaryCrossentropy,
    "kl_divergence": KLDivergence, "kld": KLDivergence, "KLD": KLDivergence,
    "kullback_leibler_divergence": KLDivergence,
}
_CLASSES.update({cls.__name__: cls for cls in _MORE_CLASSES})
_NAMES.update({
    "hinge": Hinge, "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge, "poisson": Poisson,
    "logcosh": LogCoshError, "log_cosh": LogCoshError, "pearson_correlation": PearsonCorrelation,
    "concordance_correlation": ConcordanceCorrelation, "r2_score": R2Score, "f1_score": F1Score,
    "fbeta_score": FBetaScore, "true_positives": TruePositives, "false_positives": FalsePositives,
    "true_negatives": TrueNegatives, "false_negatives": FalseNegatives,
})


def serialize(metric: Metric) -> dict:
    """{'class_name', 'config'} of a metric."""
    return {"class_name": type(metric).__name__, "config": metric.get_config()}


def deserialize(config: dict, custom_objects: Optional[dict] = None) -> Metric:
    """Inverse of `serialize`; `custom_objects` maps class or function names to user-defined ones."""
    key = config.get("class_name") if isinstance(config, dict) else config
    if custom_objects and isinstance(key, str) and key in custom_objects:
        found = custom_objects[key]
        if isinstance(config, dict) and isinstance(found, type):
            return found.from_config(config.get("config", {}))
        return get(found)
    return get(config)


def get(identifier: Any) -> Optional[Metric]:
    """Resolves what `compile(metrics=[...])` accepts into a `Metric`.

    Strings ('mse', 'sparse_categorical_accuracy', 'auc', 'precision', class names) give a new
    metric; names in lower case keep the string as the metric name. Metric instances are returned
    as they are, config dicts are deserialized, Loss objects and other callables
    `fn(y_true, y_pred)` are wrapped in `MeanMetricWrapper` named after them. 'accuracy' gives
    exact-match `Accuracy` here; `compile` should use `resolve_accuracy` for it instead.

    >>> get("mse").name
    'mse'
    """
    if identifier is None or isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, dict):
        cls = _CLASSES.get(identifier.get("class_name"))
        if identifier.get("class_name") == "MeanMetricWrapper":
            cls = MeanMetricWrapper
        if cls is None:
            raise ValueError(f"Unknown metric class {identifier.get('class_name')!r} in config. "
                             f"Valid class names: {sorted(_CLASSES)}")
        return cls.from_config(identifier.get("config", {}))
    if isinstance(identifier, str):
        if identifier in _NAMES:
            return _NAMES[identifier](name=identifier)
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        raise ValueError(f"Unknown metric {identifier!r}. Valid names: {sorted(_NAMES) + sorted(_CLASSES)}")
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, _Loss):
        return MeanMetricWrapper(identifier.call, name=identifier.name)
    if callable(identifier):
        return MeanMetricWrapper(identifier, name=getattr(identifier, "__name__", None) or "metric")
    raise ValueError(f"Could not interpret metric identifier {identifier!r}: pass a name, a Metric or a callable.")


_LOSS_KINDS = {
    "sparse_categorical_crossentropy": "sparse", "SparseCategoricalCrossentropy": "sparse",
    "categorical_crossentropy": "categorical", "CategoricalCrossentropy": "categorical",
    "binary_crossentropy": "binary", "BinaryCrossentropy": "binary",
}
_ACCURACY_BY_KIND = {"sparse": SparseCategoricalAccuracy, "categorical": CategoricalAccuracy,
                     "binary": BinaryAccuracy}
_FUNCTION_KINDS = {_loss_functions.sparse_categorical_crossentropy: "sparse",
                   _loss_functions.categorical_crossentropy: "categorical",
                   _loss_functions.binary_crossentropy: "binary"}


def _loss_kind(loss: Any) -> Optional[str]:
    """'sparse' / 'categorical' / 'binary' when the loss is (or names) that cross-entropy."""
    if isinstance(loss, str):
        return _LOSS_KINDS.get(loss)
    if isinstance(loss, _LossFunctionWrapper):
        kind = _FUNCTION_KINDS.get(loss.fn)
        return kind or _LOSS_KINDS.get(type(loss).__name__) or _LOSS_KINDS.get(getattr(loss.fn, "__name__", ""))
    if isinstance(loss, _Loss):
        return _LOSS_KINDS.get(type(loss).__name__)
    if callable(loss):
        return _FUNCTION_KINDS.get(loss) or _LOSS_KINDS.get(getattr(loss, "__name__", ""))
    return None


def _shape(value: Any) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) and all(isinstance(d, int) for d in value) \
        else tuple(getattr(value, "shape", ()))


def resolve_accuracy(name: str, loss: Any, y_true: Any, y_pred: Any) -> Metric:
    """The metric Keras uses for metrics=['accuracy'] (or 'acc'), named `name`.

    A sparse / categorical / binary cross-entropy loss picks SparseCategoricalAccuracy /
    CategoricalAccuracy / BinaryAccuracy. Otherwise the shapes decide, as Keras 2's compile does:
    y_pred's last dim 1 -> binary; labels of lower rank than y_pred, or labels with last dim 1
    against y_pred's last dim > 1 -> sparse categorical; else categorical. y_true / y_pred may be
    tensors, arrays or shapes.

    >>> resolve_accuracy("accuracy", "sparse_categorical_crossentropy", (8, 1), (8, 10))
    <SparseCategoricalAccuracy name='accuracy'>
    """
    if name not in ("accuracy", "acc"):
        raise ValueError(f"resolve_accuracy resolves 'accuracy' or 'acc'; got {name!r}. Use metrics.get({name!r}).")
    kind = _loss_kind(loss)
    if kind is None:
        true_shape, pred_shape = _shape(y_true), _shape(y_pred)
        pred_last = pred_shape[-1] if pred_shape else None
        true_last = true_shape[-1] if true_shape else None
        if pred_last == 1:
            kind = "binary"
        elif y_true is not None and (len(true_shape) < len(pred_shape) or (true_last == 1 and (pred_last or 0) > 1)):
            kind = "sparse"
        else:
            kind = "categorical"
    return _ACCURACY_BY_KIND[kind](name=name)

logcosh = log_cosh  # keras.metrics.logcosh, Keras 2's name
