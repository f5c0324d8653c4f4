"""Writes the Keras files of tests/formats/fixtures/ with TF 2.21 / Keras 3.15.1: four small models (the seed CIFAR
CNN at small width, a functional two-input model with a shared layer, an LSTM model, a subclassed model with a custom
layer), each as `.keras`, `.weights.h5` and legacy `.h5`, plus an input batch and TF's predictions (`<name>.npz`).

    /work/tf-venv/bin/python tools/tf_reference/write_keras_fixtures.py
"""
from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "formats", "fixtures")
L = tf.keras.layers


@keras.saving.register_keras_serializable(package="Fixtures")
class Scale(keras.layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1],), initializer="random_normal")

    def call(self, x):
        return x * self.w * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


@keras.saving.register_keras_serializable(package="Fixtures")
class Residual(keras.Model):
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


def cnn():
    model = tf.keras.Sequential([
        L.Input((12, 12, 3)), L.Conv2D(4, (3, 3), activation="relu"), L.MaxPooling2D((2, 2)),
        L.Conv2D(8, (3, 3), activation="relu"), L.BatchNormalization(), L.Flatten(), L.Dense(6, activation="relu"),
        L.Dense(10)])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model, np.random.default_rng(0).random((4, 12, 12, 3)).astype("float32"), np.array([1, 2, 3, 4])


def two_inputs():
    a, b = L.Input((4,), name="a"), L.Input((4,), name="b")
    shared = L.Dense(3, activation="relu", name="shared")
    ha, hb = shared(a), shared(b)
    out1 = L.Dense(1, name="score")(L.Concatenate()([ha, hb]))
    out2 = L.Dense(2, name="diff")(L.Subtract()([ha, hb]))
    model = tf.keras.Model([a, b], [out1, out2])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05, momentum=0.9), loss=["mse", "mae"])
    rng = np.random.default_rng(1)
    x = [rng.random((5, 4)).astype("float32"), rng.random((5, 4)).astype("float32")]
    return model, x, [rng.random((5, 1)).astype("float32"), rng.random((5, 2)).astype("float32")]


def lstm():
    model = tf.keras.Sequential([L.Input((6, 3)), L.LSTM(5, return_sequences=True), L.GRU(4), L.Dense(2)])
    model.compile(optimizer="rmsprop", loss="mse")
    rng = np.random.default_rng(2)
    return model, rng.random((3, 6, 3)).astype("float32"), rng.random((3, 2)).astype("float32")


def subclassed():
    model = Residual(units=4)
    x = np.random.default_rng(3).random((3, 4)).astype("float32")
    model(x)
    model.compile(optimizer="adam", loss="mse")
    return model, x, np.random.default_rng(4).random((3, 2)).astype("float32")


def main() -> None:
    os.makedirs(HERE, exist_ok=True)
    keras.utils.set_random_seed(0)
    for name, make in (("cnn", cnn), ("two_inputs", two_inputs), ("lstm", lstm), ("subclassed", subclassed)):
        model, x, y = make()
        model.fit(x, y, epochs=2, verbose=0)  # optimizer state exists: the files carry it
        model.save(os.path.join(HERE, f"{name}.keras"))
        model.save_weights(os.path.join(HERE, f"{name}.weights.h5"))
        if name != "subclassed":  # Keras writes no legacy .h5 of a subclassed model's architecture it can't reload
            model.save(os.path.join(HERE, f"{name}.h5"))
        prediction = model.predict(x, verbose=0)
        arrays = {"x" if not isinstance(x, list) else "x0": x if not isinstance(x, list) else x[0]}
        if isinstance(x, list):
            arrays["x1"] = x[1]
        if isinstance(prediction, list):
            arrays.update({f"y{i}": p for i, p in enumerate(prediction)})
        else:
            arrays["y"] = prediction
        arrays["iterations"] = np.asarray(int(model.optimizer.iterations))
        np.savez(os.path.join(HERE, f"{name}.npz"), **arrays)
    print("wrote", sorted(os.listdir(HERE)))


if __name__ == "__main__":
    main()
