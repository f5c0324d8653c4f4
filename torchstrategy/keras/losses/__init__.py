"""`tf.keras.losses`: loss classes, per-sample loss functions and aliases, `Reduction`, and `get` /
`serialize` / `deserialize` that resolve what `compile(loss=...)` is given."""
from __future__ import annotations

from typing import Any, Callable, Optional, Union

from torchstrategy.keras.losses.base import Loss, LossFunctionWrapper, Reduction, compute_weighted_loss
from torchstrategy.keras.losses.builtin import (
    BinaryCrossentropy, CategoricalCrossentropy, CosineSimilarity, Hinge, Huber, KLDivergence, MeanAbsoluteError,
    MeanAbsolutePercentageError, MeanSquaredError, MeanSquaredLogarithmicError, SparseCategoricalCrossentropy,
)
from torchstrategy.keras.losses.functions import (
    KLD, MAE, MAPE, MSE, MSLE, binary_crossentropy, categorical_crossentropy, cosine_similarity, hinge, huber,
    kl_divergence, kld, kullback_leibler_divergence, mae, mape, mean_absolute_error, mean_absolute_percentage_error,
    mean_squared_error, mean_squared_logarithmic_error, mse, msle, sparse_categorical_crossentropy,
)
from torchstrategy.keras.losses.more_classes import (
    CTC, BinaryFocalCrossentropy, CategoricalFocalCrossentropy, CategoricalGeneralizedCrossEntropy, CategoricalHinge,
    Circle, Dice, LogCosh, Poisson, SquaredHinge, Tversky,
)
from torchstrategy.keras.losses.more_functions import (
    binary_focal_crossentropy, categorical_focal_crossentropy, categorical_generalized_cross_entropy,
    categorical_hinge, circle, ctc, dice, log_cosh, poisson, squared_hinge, tversky,
)

__all__ = [
    "Loss", "LossFunctionWrapper", "Reduction", "compute_weighted_loss", "BinaryCrossentropy",
    "CategoricalCrossentropy", "CosineSimilarity", "Hinge", "Huber", "KLDivergence", "MeanAbsoluteError",
    "MeanAbsolutePercentageError", "MeanSquaredError", "MeanSquaredLogarithmicError", "SparseCategoricalCrossentropy",
    "binary_crossentropy", "categorical_crossentropy", "cosine_similarity", "hinge", "huber", "kl_divergence",
    "kld", "KLD", "kullback_leibler_divergence", "mae", "MAE", "mape", "MAPE", "mean_absolute_error",
    "mean_absolute_percentage_error", "mean_squared_error", "mean_squared_logarithmic_error", "mse", "MSE",
    "msle", "MSLE", "sparse_categorical_crossentropy", "get", "serialize", "deserialize",
]
_MORE_CLASSES = (
    CTC, BinaryFocalCrossentropy, CategoricalFocalCrossentropy, CategoricalGeneralizedCrossEntropy, CategoricalHinge,
    Circle, Dice, LogCosh, Poisson, SquaredHinge, Tversky)
_MORE_FUNCTIONS = (
    binary_focal_crossentropy, categorical_focal_crossentropy, categorical_generalized_cross_entropy,
    categorical_hinge, circle, ctc, dice, log_cosh, poisson, squared_hinge, tversky)
__all__ += [obj.__name__ for obj in _MORE_CLASSES + _MORE_FUNCTIONS]

_CLASSES = {cls.__name__: cls for cls in (
    BinaryCrossentropy, CategoricalCrossentropy, CosineSimilarity, Hinge, Huber, KLDivergence, MeanAbsoluteError,
    MeanAbsolutePercentageError, MeanSquaredError, MeanSquaredLogarithmicError, SparseCategoricalCrossentropy)}
_FUNCTIONS = {
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
    "categorical_crossentropy": categorical_crossentropy, "binary_crossentropy": binary_crossentropy,
    "mean_squared_error": mean_squared_error, "mse": mse, "MSE": MSE,
    "mean_absolute_error": mean_absolute_error, "mae": mae, "MAE": MAE,
    "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mape, "MAPE": MAPE,
    "mean_squared_logarithmic_error": mean_squared_logarithmic_error, "msle": msle, "MSLE": MSLE,
    "huber": huber, "huber_loss": huber, "kl_divergence": kl_divergence, "kld": kld, "KLD": KLD,
    "kullback_leibler_divergence": kullback_leibler_divergence, "hinge": hinge,
    "cosine_similarity": cosine_similarity,
}
_CLASSES.update({cls.__name__: cls for cls in _MORE_CLASSES})
_FUNCTIONS.update({fn.__name__: fn for fn in _MORE_FUNCTIONS})
_FUNCTIONS.update(logcosh=log_cosh)
logcosh = log_cosh  # keras.losses.logcosh, Keras 2's name


def serialize(loss: Union[Loss, Callable]) -> Union[dict, str]:
    """A Loss becomes {'class_name', 'config'}; a function becomes its name."""
    if isinstance(loss, Loss):
        return {"class_name": type(loss).__name__, "config": loss.get_config()}
    return getattr(loss, "__name__", str(loss))


def deserialize(name: Union[dict, str], custom_objects: Optional[dict] = None) -> Optional[Loss]:
    """Inverse of `serialize`; `custom_objects` maps class or function names to user-defined ones."""
    key = name.get("class_name") if isinstance(name, dict) else name
    if custom_objects and isinstance(key, str) and key in custom_objects:
        found = custom_objects[key]
        if isinstance(name, dict) and isinstance(found, type):
            config = name.get("config", {})
            return found.from_config(config) if hasattr(found, "from_config") else found(**config)
        return get(found)
    return get(name)


def get(identifier: Any) -> Optional[Loss]:
    """Resolves what `compile(loss=...)` accepts into a `Loss` that takes `sample_weight` and reduces.

    Function names and aliases ('mse', 'sparse_categorical_crossentropy') give a `LossFunctionWrapper`
    over that function named as Keras names it (so 'mse' logs as 'mean_squared_error'), class names
    give a default instance, config dicts are deserialized, Loss instances are returned as they are,
    and other callables `fn(y_true, y_pred)` are wrapped (named after the callable).
    Unlike Keras's own `losses.get`, names never give the bare per-sample function: use the module
    functions (`losses.mean_squared_error`) for that.

    >>> get("mse").name
    'mean_squared_error'
    """
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, dict):
        cls = _CLASSES.get(identifier.get("class_name"))
        if cls is None and identifier.get("class_name") == "LossFunctionWrapper":
            cls = LossFunctionWrapper
        if cls is None:
            raise ValueError(f"Unknown loss class {identifier.get('class_name')!r} in config. "
                             f"Valid class names: {sorted(_CLASSES)}")
        return cls.from_config(identifier.get("config", {}))
    if isinstance(identifier, str):
        if identifier in _FUNCTIONS:
            fn = _FUNCTIONS[identifier]
            return LossFunctionWrapper(fn, name=fn.__name__)
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        raise ValueError(f"Unknown loss {identifier!r}. Valid names: {sorted(_FUNCTIONS) + sorted(_CLASSES)}")
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return LossFunctionWrapper(identifier, name=getattr(identifier, "__name__", None) or "loss")
    raise ValueError(f"Could not interpret loss identifier {identifier!r}: pass a loss name, a Loss, or a callable.")
