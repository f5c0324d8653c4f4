"""`keras.wrappers`: scikit-learn estimators around a Keras model (SKLearnClassifier, SKLearnRegressor,
SKLearnTransformer). scikit-learn is optional: without it, building one raises Keras's ImportError."""
from __future__ import annotations

import copy
from typing import Any, Optional

import numpy as np

try:  # scikit-learn is not a dependency; its base classes give the estimators sklearn's API when present
    import sklearn
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin
except ImportError:
    sklearn = None

    class BaseEstimator:  # type: ignore[no-redef]
        """Stands in for sklearn's BaseEstimator when scikit-learn is absent (construction then fails)."""

    class ClassifierMixin:  # type: ignore[no-redef]
        """Stands in for sklearn's ClassifierMixin."""

    class RegressorMixin:  # type: ignore[no-redef]
        """Stands in for sklearn's RegressorMixin."""

    class TransformerMixin:  # type: ignore[no-redef]
        """Stands in for sklearn's TransformerMixin."""


def _require_sklearn(symbol_name: str) -> None:
    if sklearn is None:
        raise ImportError(f"{symbol_name} requires `scikit-learn` to be installed. "
                          "Run `pip install scikit-learn` to install it.")


def _check_model(model: Any) -> None:
    if not model.compiled or not model.loss or not model.optimizer:
        raise RuntimeError("Given model needs to be compiled, and have a loss and an optimizer.")


def _target_type(y: Any) -> str:
    from sklearn.utils.multiclass import type_of_target

    kind = type_of_target(y)
    if kind == "unknown":
        raise ValueError(f"Unknown label type for data: {y!r}")
    return kind


def _validate(estimator: Any, X: Any, y: Any = None, reset: bool = True) -> Any:
    """sklearn's input validation (validate_data on scikit-learn >= 1.6, the estimator method before)."""
    try:
        from sklearn.utils.validation import validate_data
    except ImportError:
        validate_data = None
    args = (X,) if y is None else (X, y)
    if validate_data is not None:
        return validate_data(estimator, *args, reset=reset)
    return estimator._validate_data(*args, reset=reset)


class _SKLBase(BaseEstimator):
    """What the three estimators share: the model (a compiled Model, cloned at fit, or a callable
    `model(X=, y=, **model_kwargs)` building one), fit, predict and the target reshaping."""

    def __init__(self, model: Any, warm_start: bool = False, model_kwargs: Optional[dict] = None,
                 fit_kwargs: Optional[dict] = None) -> None:
        _require_sklearn(self.__class__.__name__)
        self.model = model
        self.warm_start = warm_start
        self.model_kwargs = model_kwargs
        self.fit_kwargs = fit_kwargs

    def __sklearn_clone__(self) -> Any:
        model = self.model if callable(self.model) else copy.deepcopy(self.model)
        return type(self)(model=model, warm_start=self.warm_start, model_kwargs=self.model_kwargs)

    @property
    def epoch_(self) -> int:
        """How many epochs the last fit ran."""
        history = getattr(self, "history_", None)
        return len(history.epoch) if history is not None else 0

    def set_fit_request(self, **kwargs: Any) -> Any:
        """Requests metadata (param=alias) for scikit-learn's metadata routing, which must be enabled."""
        if sklearn is None or not sklearn.get_config().get("enable_metadata_routing", False):
            raise RuntimeError("This method is only available when metadata routing is enabled. You can enable "
                               "it using sklearn.set_config(enable_metadata_routing=True).")
        from sklearn.utils.metadata_routing import MetadataRequest

        self._metadata_request = MetadataRequest(owner=self.__class__.__name__)
        for param, alias in kwargs.items():
            self._metadata_request.score.add_request(param=param, alias=alias)
        return self

    def _get_model(self, X: Any, y: Any) -> Any:
        from torchstrategy.keras.model_cloning import clone_model
        from torchstrategy.keras.models import Model

        if isinstance(self.model, Model):
            return clone_model(self.model)
        return self.model(X=X, y=y, **(self.model_kwargs or {}))

    def fit(self, X: Any, y: Any, **kwargs: Any) -> Any:
        """Builds (or clones) the model and fits it on X, y; fit_kwargs and kwargs go to `Model.fit`."""
        X, y = _validate(self, X, y)
        y = self._process_target(y, reset=True)
        model = self._get_model(X, y)
        _check_model(model)
        fit_kwargs = dict(self.fit_kwargs or {})
        fit_kwargs.update(kwargs)
        self.history_ = model.fit(X, y, **fit_kwargs)
        self.model_ = model
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The fitted model's predictions, mapped back to the targets' form."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        X = _validate(self, X, reset=False)
        return self._reverse_process_target(self.model_.predict(X))

    def _process_target(self, y: Any, reset: bool = False) -> np.ndarray:
        _target_type(y)
        if reset:
            self._target_ndim = np.ndim(y)
        return np.reshape(y, (-1, 1)) if np.ndim(y) == 1 else y

    def _reverse_process_target(self, y: Any) -> np.ndarray:
        return np.squeeze(y, axis=1) if self._target_ndim == 1 and np.ndim(y) == 2 else y


class SKLearnClassifier(ClassifierMixin, _SKLBase):
    """A scikit-learn classifier: targets are one-hot encoded for the model (`classes_` keeps the labels)
    and predictions map back to labels."""

    def decision_function(self, X: Any) -> np.ndarray:
        """The model's raw outputs for X."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        return self.model_.predict(_validate(self, X, reset=False))

    def _process_target(self, y: Any, reset: bool = False) -> np.ndarray:
        kind = _target_type(y)
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"Only binary and multiclass target types are supported. Target type: {kind}")
        y = np.asarray(y)
        if reset:
            self._target_ndim = y.ndim
            self.classes_ = np.unique(y)
            if len(self.classes_) == 1:
                raise ValueError("Classifier can't train when only one class is present.")
        index = np.searchsorted(self.classes_, y.reshape(-1))
        return np.eye(len(self.classes_), dtype="float64")[index]

    def _reverse_process_target(self, y: Any) -> np.ndarray:
        labels = self.classes_[np.argmax(np.asarray(y), axis=-1)]
        return labels.reshape(-1, 1) if self._target_ndim == 2 else labels


class SKLearnRegressor(RegressorMixin, _SKLBase):
    """A scikit-learn regressor around a Keras model."""


class SKLearnTransformer(TransformerMixin, _SKLBase):
    """A scikit-learn transformer: `transform(X)` is the fitted model's prediction."""

    def transform(self, X: Any) -> np.ndarray:
        """The fitted model's outputs for X."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        return self.model_.predict(_validate(self, X, reset=False))
