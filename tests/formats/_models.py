"""The custom classes of the TF fixtures (tools/tf_reference/write_keras_fixtures.py), registered as there."""
from __future__ import annotations

import torchstrategy as tf
from torchstrategy.keras.object_registration import register_keras_serializable

L = tf.keras.layers


@register_keras_serializable(package="Fixtures")
class Scale(L.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1],), initializer="random_normal")

    def call(self, x):
        return x * self.w * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


@register_keras_serializable(package="Fixtures")
class Residual(tf.keras.Model):
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.inner = L.Dense(units, activation="tanh")
        self.scale = Scale(0.5)
        self.head = L.Dense(2)

    def call(self, x):
        return self.head(x + self.scale(self.inner(x)))

    def get_config(self):
        return {**super().get_config(), "units": self.units}
