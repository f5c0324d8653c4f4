"""Writes Keras files with torchstrategy (run with the project's environment) for check_keras_files.py to open
under TF: the TF fixtures loaded here and saved again, and models built here (Sequential CNN, functional two-input
model with a shared layer, recurrent model, subclassed model with a registered custom layer, a mixed_float16 model
with a LossScaleOptimizer), each as `.keras`, `.weights.h5` and `.h5`, with inputs and our predictions in
`<name>.npz` (and the loss scale, its counter and a looser tolerance where a layer computes in float16).

    PYTHONPATH=. .venv/bin/python tools/tf_reference/write_our_files.py OUT_DIR
"""
from __future__ import annotations

import os
import sys

import numpy as np

import torchstrategy as tf
from torchstrategy.keras.object_registration import register_keras_serializable

L = tf.keras.layers
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "formats", "fixtures")


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


def ours():
    rng = np.random.default_rng(5)
    cnn = tf.keras.Sequential([L.Input((10, 10, 3)), L.Conv2D(4, 3, activation="relu", padding="same"),
                               L.BatchNormalization(), L.MaxPooling2D(), L.DepthwiseConv2D(3), L.Flatten(),
                               L.Dropout(0.1), L.Dense(5, activation="relu"), L.LayerNormalization(), L.Dense(3)])
    cnn.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=["accuracy"])
    x = rng.random((4, 10, 10, 3)).astype("float32")
    yield "our_cnn", cnn, x, rng.integers(0, 3, (4,))
    a, b = tf.keras.Input((4,), name="a"), tf.keras.Input((4,), name="b")
    shared = L.Dense(3, activation="relu", name="shared")
    ha, hb = shared(a), shared(b)
    model = tf.keras.Model([a, b], [L.Dense(1, name="score")(L.Concatenate()([ha, hb])),
                                    L.Dense(2, name="mix")(L.Multiply()([ha, hb]))])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05, momentum=0.9), loss=["mse", "mae"],
                  metrics=[[tf.keras.metrics.MeanSquaredError()], ["mae"]])
    xs = [rng.random((5, 4)).astype("float32"), rng.random((5, 4)).astype("float32")]
    yield "our_two_inputs", model, xs, [rng.random((5, 1)).astype("float32"), rng.random((5, 2)).astype("float32")]
    rnn = tf.keras.Sequential([L.Input((6, 3)), L.LSTM(5, return_sequences=True), L.Bidirectional(L.GRU(2)),
                               L.Dense(2)])
    rnn.compile(optimizer="rmsprop", loss="mse")
    yield "our_rnn", rnn, rng.random((3, 6, 3)).astype("float32"), rng.random((3, 2)).astype("float32")
    sub = Residual(units=4)
    x = rng.random((3, 4)).astype("float32")
    sub(x)
    sub.compile(optimizer="adam", loss="mse")
    yield "our_subclassed", sub, x, rng.random((3, 2)).astype("float32")
    mixed = tf.keras.Sequential([L.Input((3,)), L.Dense(4, activation="relu", dtype="mixed_float16", name="hidden"),
                                 L.Dense(2, name="out")])
    mixed.compile(optimizer=tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(0.01),
                                                                       initial_scale=4096.0, dynamic_growth_steps=2),
                  loss="mse")
    yield "our_loss_scale", mixed, (rng.random((4, 3)) * 4).astype("float32"), (rng.random((4, 2)) * 30).astype("float32")


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for name, model, x, y in ours():
        model.fit(x, y, epochs=5 if name == "our_loss_scale" else 2, verbose=0)
        _write(out, name, model, x)
    for name in ("cnn", "two_inputs", "lstm", "subclassed", "zoo_image", "zoo_sequence", "zoo_3d", "zoo_merge", "zoo_preprocessing",
                 "opt_adagrad", "opt_adamax", "opt_adamw", "opt_sgd_nesterov", "opt_adam_amsgrad", "opt_rmsprop_centered",
                 "opt_adam_ema", "loss_scale"):
        data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
        x = [data["x0"], data["x1"]] if "x0" in data else data["x"]
        _write(out, f"resaved_{name}", tf.keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras")), x)
    print("wrote", sorted(os.listdir(out)))


def _write(out: str, name: str, model, x) -> None:
    model.save(os.path.join(out, f"{name}.keras"))
    model.save_weights(os.path.join(out, f"{name}.weights.h5"))
    if not name.endswith("subclassed"):
        model.save(os.path.join(out, f"{name}.h5"))
    prediction = model.predict(x, verbose=0)
    arrays = {"x0": x[0], "x1": x[1]} if isinstance(x, list) else {"x": x}
    predictions = prediction if isinstance(prediction, list) else [prediction]
    arrays.update({f"y{i}": p for i, p in enumerate(predictions)})
    arrays["iterations"] = np.asarray(int(model.optimizer.iterations))
    if isinstance(model.optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
        arrays["dynamic_scale"] = np.asarray(float(model.optimizer.dynamic_scale))
        arrays["step_counter"] = np.asarray(int(model.optimizer.step_counter))
        # a float16 layer: TF's kernels round otherwise than torch's, by float16's relative precision (~1e-3)
        arrays["atol"] = np.asarray(2e-3 * (1.0 + max(float(np.abs(p).max()) for p in predictions)))
    np.savez(os.path.join(out, f"{name}.npz"), **arrays)


if __name__ == "__main__":
    main(sys.argv[1])
