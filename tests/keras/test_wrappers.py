"""keras.wrappers: Keras 3.15's ImportError without scikit-learn (the message frozen from Keras's source);
with scikit-learn installed, real fits of the three estimators (skipped where it is absent)."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import torchstrategy as tf
from torchstrategy.keras import wrappers

HAVE_SKLEARN = importlib.util.find_spec("sklearn") is not None


def _model(units=1, activation=None, loss="mse"):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(units, activation=activation)])
    model.compile(optimizer="adam", loss=loss)
    return model


@pytest.mark.skipif(HAVE_SKLEARN, reason="scikit-learn is installed")
@pytest.mark.parametrize("name", ["SKLearnClassifier", "SKLearnRegressor", "SKLearnTransformer"])
def test_without_sklearn_construction_raises_keras_message(name):
    with pytest.raises(ImportError) as info:
        getattr(tf.keras.wrappers, name)(model=_model())
    assert str(info.value) == (f"{name} requires `scikit-learn` to be installed. "
                               "Run `pip install scikit-learn` to install it.")


def test_names_are_reached_through_keras():
    assert tf.keras.wrappers.SKLearnRegressor is wrappers.SKLearnRegressor


@pytest.mark.skipif(not HAVE_SKLEARN, reason="scikit-learn is not installed (optional)")
def test_regressor_and_transformer_fit_and_predict():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(32, 3)).astype("float32")
    y = X @ np.array([1.0, -2.0, 0.5], dtype="float32")
    reg = wrappers.SKLearnRegressor(model=_model(), fit_kwargs={"epochs": 2, "verbose": 0})
    reg.fit(X, y)
    assert reg.predict(X).shape == (32,) and reg.epoch_ == 2
    trans = wrappers.SKLearnTransformer(model=_model(2), fit_kwargs={"epochs": 1, "verbose": 0})
    assert trans.fit(X, np.stack([y, y], axis=1)).transform(X).shape == (32, 2)


@pytest.mark.skipif(not HAVE_SKLEARN, reason="scikit-learn is not installed (optional)")
def test_classifier_maps_labels_back():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3)).astype("float32")
    labels = np.array(["a", "b", "c"])[np.argmax(X, axis=1)]
    clf = wrappers.SKLearnClassifier(model=_model(3, "softmax", "categorical_crossentropy"),
                                     fit_kwargs={"epochs": 2, "verbose": 0})
    clf.fit(X, labels)
    assert list(clf.classes_) == ["a", "b", "c"]
    assert set(clf.predict(X)) <= {"a", "b", "c"} and clf.decision_function(X).shape == (40, 3)
    with pytest.raises(ValueError, match="only one class"):
        wrappers.SKLearnClassifier(model=_model(3, "softmax", "categorical_crossentropy")).fit(X, ["a"] * 40)
