"""The base Layer's `training` resolution (Keras 3: given, else handed down, else the call's default) and its
Keras 3 loss API: `add_loss` from call, `activity_regularizer=` on any layer (penalty of each
output / batch size), both cleared at every outermost call, listed before weight penalties in `losses`, kept in
get_config, and added to fit's and evaluate's loss."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from torchstrategy import keras
from torchstrategy.keras import layers

X = np.random.default_rng(3).normal(size=(8, 3)).astype(np.float32)


class AddsLoss(layers.Layer):
    def call(self, inputs):
        self.add_loss(0.5 * torch.sum(inputs ** 2))
        return inputs


def test_add_loss_is_kept_until_the_next_outermost_call():
    layer = AddsLoss()
    layer(torch.from_numpy(X))
    np.testing.assert_allclose(float(layer.losses[0]), 0.5 * np.square(X).sum(), rtol=1e-6)
    layer(torch.from_numpy(X[:2]))
    assert len(layer.losses) == 1
    np.testing.assert_allclose(float(layer.losses[0]), 0.5 * np.square(X[:2]).sum(), rtol=1e-6)
    with pytest.raises(ValueError, match="add_loss"):
        layer.add_loss(3.0)


def test_shared_layer_called_twice_in_one_model_call_keeps_both_losses():
    inner = AddsLoss()
    inputs = keras.Input((3,))
    model = keras.Model(inputs, inner(inner(inputs)))
    model(torch.from_numpy(X))
    assert len(model.losses) == 2
    np.testing.assert_allclose([float(v) for v in model.losses], [0.5 * np.square(X).sum()] * 2, rtol=1e-6)


@pytest.mark.parametrize("make", [
    lambda: layers.Conv1D(2, 2, activity_regularizer="l2"),
    lambda: layers.LSTM(2, activity_regularizer="l2"),
    lambda: layers.GroupNormalization(groups=1, activity_regularizer="l2"),
    lambda: layers.Flatten(activity_regularizer="l2"),
])
def test_activity_regularizer_on_any_layer(make):
    layer = make()
    x = torch.from_numpy(X.reshape(2, 4, 3))
    out = layer(x).detach().numpy()
    assert len(layer.losses) == 1
    np.testing.assert_allclose(float(layer.losses[0].detach()), 0.01 * np.square(out).sum() / 2, rtol=1e-5)
    config = layer.get_config()
    assert config["activity_regularizer"]["class_name"] == "L2"
    assert type(layer).from_config(config).activity_regularizer is not None


def test_added_losses_come_before_weight_penalties_and_join_fit_loss():
    dense = layers.Dense(2, kernel_initializer="ones", use_bias=False, kernel_regularizer=keras.regularizers.L2(0.1),
                         activity_regularizer=keras.regularizers.L1(0.2))
    model = keras.Sequential([keras.Input((3,)), dense])
    model.compile(optimizer="sgd", loss="mse")
    y = np.zeros((8, 2), np.float32)
    loss = model.evaluate(X, y, batch_size=8, verbose=0)
    out = X.sum(1, keepdims=True).repeat(2, 1)
    activity, kernel = 0.2 * np.abs(out).sum() / 8, 0.1 * 6.0
    np.testing.assert_allclose(loss, np.mean(out ** 2) + activity + kernel, rtol=1e-5)
    np.testing.assert_allclose([float(v.detach()) for v in model.losses], [activity, kernel], rtol=1e-5)
    history = model.fit(X, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    np.testing.assert_allclose(history.history["loss"][0], loss, rtol=1e-5)


def test_attention_layers_regularize_activity_where_keras_does():
    # Keras 3.15: MultiHeadAttention penalizes its 4 projections only; GroupQueryAttention also its own output
    x = torch.ones(1, 3, 4)
    mha = layers.MultiHeadAttention(2, 2, activity_regularizer="l2")
    mha(x, x)
    assert len(mha.losses) == 4
    gqa = layers.GroupQueryAttention(2, 2, 1, activity_regularizer="l2")
    gqa(x, x)
    assert len(gqa.losses) == 5


_AUGMENTATION = json.load(open(os.path.join(os.path.dirname(os.path.dirname(__file__)),
                                           "keras_functional_reference.json")))["augmentation"]
_AUGMENTERS = {
    "RandomFlip": lambda: layers.RandomFlip(seed=1),
    "RandomRotation": lambda: layers.RandomRotation(0.3, seed=1),
    "RandomZoom": lambda: layers.RandomZoom(0.3, seed=1),
    "RandomTranslation": lambda: layers.RandomTranslation(0.3, 0.3, seed=1),
    "RandomContrast": lambda: layers.RandomContrast(0.5, seed=1),
    "RandomBrightness": lambda: layers.RandomBrightness(0.5, seed=1),
    "RandomCrop": lambda: layers.RandomCrop(4, 4, seed=1),
    "RandomHue": lambda: layers.RandomHue(0.5, seed=1),
    "RandomSaturation": lambda: layers.RandomSaturation(0.5, seed=1),
    "RandomGrayscale": lambda: layers.RandomGrayscale(1.0, seed=1),
    "RandomColorJitter": lambda: layers.RandomColorJitter(value_range=(0, 1), brightness_factor=0.5, seed=1),
    "Dropout": lambda: layers.Dropout(0.5, seed=1),
    "GaussianNoise": lambda: layers.GaussianNoise(0.5, seed=1),
}


@pytest.mark.parametrize("name", sorted(_AUGMENTERS))
def test_a_call_without_training_uses_the_call_default_as_keras(name):
    """Keras 3.15 (frozen in keras_functional_reference.json): with no `training` given or handed down, a layer's
    call runs with its own default, so augmentation layers called directly augment and Dropout does not."""
    images = np.random.RandomState(0).rand(2, 8, 8, 3).astype("float32")

    def changed(out) -> bool:
        out = np.asarray(out)
        return bool(out.shape != images.shape or not np.allclose(out, images))

    layer = _AUGMENTERS[name]()
    got = [changed(layer(images)), changed(layer(images, training=True)), changed(layer(images, training=False))]
    assert got == _AUGMENTATION[name]


def test_a_model_call_hands_down_no_training_value_but_predict_hands_down_false():
    images = np.random.RandomState(0).rand(2, 8, 8, 3).astype("float32")
    model = keras.Sequential([keras.Input((8, 8, 3)), layers.RandomFlip(seed=1), layers.Dropout(0.5, seed=1)])

    def changed(out) -> bool:
        return bool(not np.allclose(np.asarray(out), images))

    assert {"call": changed(model(images)), "call_training": changed(model(images, training=True)),
            "predict": changed(model.predict(images, verbose=0))} == _AUGMENTATION["model"]


# ----- add_variable and metrics (Keras 3) -----------------------------------------------------------------------

class _WithMetric(layers.Layer):
    def __init__(self):
        super().__init__(name="holder")
        self.tracker = keras.metrics.Mean(name="mm")

    def build(self, input_shape):
        self.v = self.add_variable((2, 3), "ones", name="v1")
        self.w = self.add_variable(shape=(2,), initializer="zeros", dtype="float64", trainable=False)

    def call(self, x):
        return x


def test_add_variable_has_keras_signature_and_makes_weights():
    """Keras 3.15: add_variable(shape, initializer, dtype=None, trainable=True, ...) with both required."""
    layer = _WithMetric()
    layer.build((1,))
    assert tuple(layer.v.shape) == (2, 3) and float(layer.v.detach().sum()) == 6.0
    assert layer.v.name == "v1" and layer.v.path == "holder/v1"
    assert layer.w.dtype == torch.float64 and not layer.w.trainable
    assert len(layer.trainable_weights) == 1 and len(layer.non_trainable_weights) == 1
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'initializer'"):
        _WithMetric().add_variable((2,))


def test_metrics_lists_held_metrics_and_sublayers():
    """Keras 3.15: a plain Dense has metrics == []; a layer holding a Mean lists it, and so does its parent."""
    assert layers.Dense(2).metrics == []
    inner = _WithMetric()
    assert [m.name for m in inner.metrics] == ["mm"]

    class Outer(layers.Layer):
        def __init__(self):
            super().__init__()
            self.inner = inner
            self.own = [keras.metrics.Sum(name="s")]

        def call(self, x):
            return self.inner(x)

    outer = Outer()
    assert [m.name for m in outer.metrics] == ["s", "mm"]
    assert outer.metrics[1] is inner.tracker
