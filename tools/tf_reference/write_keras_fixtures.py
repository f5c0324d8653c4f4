"""Writes the Keras files of tests/formats/fixtures/ with TF 2.21 / Keras 3.15.1: four small models (the seed CIFAR
CNN at small width, a functional two-input model with a shared layer, an LSTM model, a subclassed model with a custom
layer), each as `.keras`, `.weights.h5` and legacy `.h5`, plus an input batch and TF's predictions (`<name>.npz`);
then `zoo_*.keras` (every layer kind torchstrategy has, in five small functional models) and `opt_*.keras` (one small
model per optimizer slot layout), each with TF's predictions, its target and TF's predictions after one more step;
and `loss_scale.keras` / `.weights.h5`: a model with a mixed_float16 layer and a LossScaleOptimizer(Adam) after five
steps (two of them skipped for non-finite gradients), with the loss-scale state in `loss_scale.npz`.

    /work/tf-venv/bin/python tools/tf_reference/write_keras_fixtures.py [loss_scale]   (no argument: all of them)
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


def zoo_image():
    x = L.Input((8, 8, 3))
    h = L.Rescaling(1 / 2.0, offset=0.1)(x)
    h = L.Conv2D(4, 3, padding="same", strides=1, dilation_rate=1, use_bias=False)(h)
    h = L.ZeroPadding2D(1)(h)
    h = L.DepthwiseConv2D(3, depth_multiplier=2)(h)
    h = L.SeparableConv2D(4, 3, padding="same", activation="relu")(h)
    h = L.Conv2DTranspose(3, 3, strides=2, padding="same")(h)
    h = L.Cropping2D(((1, 1), (2, 0)))(h)
    h = L.UpSampling2D(2)(h)
    h = L.MaxPooling2D(2)(h)
    h = L.AveragePooling2D(2, padding="same")(h)
    h = L.BatchNormalization(momentum=0.9)(h)
    h = L.ReLU(max_value=6.0)(h)
    out = L.Concatenate()([L.GlobalAveragePooling2D()(h), L.GlobalMaxPooling2D()(h)])
    model = tf.keras.Model(x, L.Dense(2)(out))
    model.compile(optimizer=tf.keras.optimizers.Adam(amsgrad=True), loss="mse")
    rng = np.random.default_rng(6)
    return model, rng.random((3, 8, 8, 3)).astype("float32"), rng.random((3, 2)).astype("float32")


def zoo_sequence():
    x = L.Input((6,), dtype="int32")
    h = L.Embedding(10, 4)(x)
    h = L.Conv1D(4, 2, padding="causal")(h)
    h = L.Conv1DTranspose(4, 2, strides=2)(h)
    h = L.Cropping1D((1, 1))(h)
    h = L.UpSampling1D(2)(h)
    h = L.MaxPooling1D(2)(h)
    h = L.AveragePooling1D(2)(h)
    h = L.SimpleRNN(3, return_sequences=True)(h)
    h = L.Bidirectional(L.LSTM(2, return_sequences=True), merge_mode="sum")(h)
    h = L.TimeDistributed(L.Dense(4))(h)
    h = L.MultiHeadAttention(2, 3)(h, h)
    h = L.LayerNormalization()(h)
    h = L.GRU(3, reset_after=False, return_sequences=True)(h)
    out = L.GlobalMaxPooling1D()(h)
    model = tf.keras.Model(x, L.Add()([L.Dense(2)(L.GlobalAveragePooling1D()(h)), L.Dense(2)(out)]))
    model.compile(optimizer=tf.keras.optimizers.RMSprop(momentum=0.5, centered=True), loss="mse")
    rng = np.random.default_rng(7)
    return model, rng.integers(0, 10, (3, 6)).astype("int32"), rng.random((3, 2)).astype("float32")


def zoo_3d():
    x = L.Input((4, 4, 4, 2))
    h = L.Conv3D(3, 2, padding="same")(x)
    h = L.Conv3DTranspose(2, 2, strides=2)(h)
    h = L.MaxPooling3D(2)(h)
    h = L.AveragePooling3D(2)(h)
    h = L.GlobalAveragePooling3D()(h)
    g = L.GlobalMaxPooling3D()(x)
    model = tf.keras.Model(x, L.Dense(2)(L.Concatenate()([h, g])))
    model.compile(optimizer=tf.keras.optimizers.Adadelta(learning_rate=0.5), loss="mae")
    rng = np.random.default_rng(8)
    return model, rng.random((2, 4, 4, 4, 2)).astype("float32"), rng.random((2, 2)).astype("float32")


def zoo_merge():
    a, b = L.Input((4,)), L.Input((4,))
    da, db = L.Dense(4, activation="elu")(a), L.Dense(4, activation="sigmoid")(b)
    merged = [L.Add()([da, db]), L.Subtract()([da, db]), L.Multiply()([da, db]), L.Average()([da, db]),
              L.Maximum()([da, db]), L.Minimum()([da, db])]
    h = L.Concatenate(axis=-1)(merged + [L.Dot(axes=1)([da, db])])
    h = L.Dense(6, kernel_regularizer=tf.keras.regularizers.L2(0.01), bias_initializer="ones")(h)
    h = L.LeakyReLU(negative_slope=0.2)(h)
    h = L.ELU()(h)
    h = L.Reshape((3, 2))(h)
    h = L.Permute((2, 1))(h)
    h = L.Flatten()(h)
    h = L.Activation("tanh")(L.Dropout(0.0)(h))
    model = tf.keras.Model([a, b], L.Softmax()(L.Dense(3)(h)))
    model.compile(optimizer=tf.keras.optimizers.Nadam(), loss="categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.default_rng(9)
    y = np.eye(3, dtype="float32")[[0, 1, 2, 1]]
    return model, [rng.random((4, 4)).astype("float32"), rng.random((4, 4)).astype("float32")], y


def zoo_preprocessing():
    x = L.Input((8, 8, 3))
    h = L.Normalization(mean=[0.5, 0.4, 0.3], variance=[0.1, 0.2, 0.3])(x)
    h = L.Resizing(6, 6)(h)
    h = L.RandomFlip()(h)
    h = L.RandomRotation(0.1)(h)
    h = L.RandomZoom(0.1)(h)
    h = L.RandomTranslation(0.1, 0.1)(h)
    h = L.RandomContrast(0.1)(h)
    h = L.RandomBrightness(0.1, value_range=(-5, 5))(h)
    h = L.RandomCrop(5, 5)(h)
    h = L.CenterCrop(4, 4)(h)
    seq = L.Input((5, 3))
    s = L.LSTM(2)(L.Masking(mask_value=0.0)(seq))
    model = tf.keras.Model([x, seq], L.Concatenate()([L.Dense(2)(L.Flatten()(h)), s]))
    model.compile(optimizer="sgd", loss="mse")
    rng = np.random.default_rng(11)
    sequences = rng.random((2, 5, 3)).astype("float32")
    sequences[0, 3:] = 0.0  # masked steps
    return model, [rng.random((2, 8, 8, 3)).astype("float32"), sequences], rng.random((2, 4)).astype("float32")


def zoo_optimizers():
    """One Dense model per remaining optimizer (the slot layouts)."""
    rng = np.random.default_rng(10)
    x, y = rng.random((4, 3)).astype("float32"), rng.random((4, 2)).astype("float32")
    for name, optimizer in (("adagrad", tf.keras.optimizers.Adagrad(0.1)), ("adamax", tf.keras.optimizers.Adamax()),
                            ("adamw", tf.keras.optimizers.AdamW(weight_decay=0.1)),
                            ("sgd_nesterov", tf.keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True)),
                            ("adam_amsgrad", tf.keras.optimizers.Adam(0.01, amsgrad=True)),
                            ("rmsprop_centered", tf.keras.optimizers.RMSprop(0.01, momentum=0.5, centered=True)),
                            ("adam_ema", tf.keras.optimizers.Adam(0.01, use_ema=True))):
        model = tf.keras.Sequential([L.Input((3,)), L.Dense(4, activation="relu"), L.Dense(2)])
        model.compile(optimizer=optimizer, loss="mse")
        yield f"opt_{name}", model, x, y


def loss_scale_model():
    """A float32 model with a mixed_float16 hidden layer and LossScaleOptimizer(Adam(0.01), 4096, growth every 2
    steps), and a batch whose float16 gradients overflow at scale 4096: five steps give skip, step, step (the scale
    doubles), skip, step, i.e. iterations 3, dynamic_scale 2048, step_counter 1 (TF 2.21 / Keras 3.15.1)."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([L.Input((3,)), L.Dense(4, activation="relu", dtype="mixed_float16", name="hidden"),
                              L.Dense(2, name="out")])
    optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam(0.01), initial_scale=4096.0,
                                                         dynamic_growth_steps=2)
    model.compile(optimizer=optimizer, loss="mse")
    rng = np.random.default_rng(12)
    x, y = (rng.random((4, 3)) * 4).astype("float32"), (rng.random((4, 2)) * 30).astype("float32")
    for _ in range(5):
        model.train_on_batch(x, y)
    return model, x, y


def loss_scale_state(optimizer) -> dict:
    """The LossScaleOptimizer's numbers: the inner optimizer's iterations, the scale, the counter, Adam's slots."""
    inner = optimizer.inner_optimizer
    out = {"iterations": np.asarray(int(inner.iterations)), "dynamic_scale": np.asarray(float(optimizer.dynamic_scale)),
           "step_counter": np.asarray(int(optimizer.step_counter.numpy()))}
    for index, (momentum, velocity) in enumerate(zip(inner._momentums, inner._velocities)):
        out[f"momentum_{index}"], out[f"velocity_{index}"] = momentum.numpy(), velocity.numpy()
    return out


def loss_scale() -> None:
    model, x, y = loss_scale_model()
    model.save(os.path.join(HERE, "loss_scale.keras"))
    model.save_weights(os.path.join(HERE, "loss_scale.weights.h5"))
    arrays = {"x": x, "target": y, "y": model.predict(x, verbose=0), **loss_scale_state(model.optimizer)}
    for index, weight in enumerate(model.get_weights()):
        arrays[f"weight_{index}"] = weight
    model.train_on_batch(x, y)  # one more step from the saved state
    arrays["after_step"] = model.predict(x, verbose=0)
    arrays.update({f"after_{key}": value for key, value in loss_scale_state(model.optimizer).items()
                   if not key.startswith(("momentum", "velocity"))})
    np.savez(os.path.join(HERE, "loss_scale.npz"), **arrays)


def _save_zoo(name, model, x, y):
    model.fit(x, y, epochs=2, verbose=0, batch_size=len(y))
    model.save(os.path.join(HERE, f"{name}.keras"))
    arrays = {"x0": x[0], "x1": x[1]} if isinstance(x, list) else {"x": x}
    arrays["y"] = model.predict(x, verbose=0)
    arrays["target"] = y
    arrays["iterations"] = np.asarray(int(model.optimizer.iterations))
    model.train_on_batch(x, y)  # one more step: the restored optimizer state must give the same one
    arrays["after_step"] = model.predict(x, verbose=0)
    np.savez(os.path.join(HERE, f"{name}.npz"), **arrays)


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
    for name, make in (("zoo_image", zoo_image), ("zoo_sequence", zoo_sequence), ("zoo_3d", zoo_3d),
                       ("zoo_merge", zoo_merge), ("zoo_preprocessing", zoo_preprocessing)):
        _save_zoo(name, *make())
    for name, model, x, y in zoo_optimizers():
        _save_zoo(name, model, x, y)
    print("wrote", sorted(os.listdir(HERE)))


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["loss_scale"]:
        loss_scale()
    elif sys.argv[1:]:
        raise SystemExit(f"unknown fixture set {sys.argv[1:]}; run without arguments to write them all")
    else:
        main()
        loss_scale()
