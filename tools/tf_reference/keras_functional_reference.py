"""Freezes Keras 3's functional-API behaviour (run under the TF reference env):
/work/tf-venv/bin/python tools/tf_reference/keras_functional_reference.py -> tests/keras/keras_functional_reference.json

Sections: keras.ops on KerasTensors (the model config Keras writes and its outputs), masks from a custom
compute_mask, Metric.add_variable, Model.from_config of a functional model, summary() of an unbuilt
Sequential, stateful RNNs, FeatureSpace, and image augmentation layers called directly."""
import json
import os
import sys

import keras
import numpy as np
from keras import layers, ops

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_functional_reference.json")
X_A = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], "float32")
X_B = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32")


def ops_graph() -> dict:
    """A model made only of keras.ops steps: its config and outputs."""
    keras.backend.clear_session()
    a = keras.Input((3,), name="a")
    b = keras.Input((3,), name="b")
    x = ops.exp(a + b) * 2
    outs = [ops.sum(x, axis=1, keepdims=True), ops.reshape(x, (-1, 3, 1)), ops.concatenate([x, a], axis=-1),
            x[:, 1:], ops.nn.softmax(x, axis=-1), 1.0 - a, -a, ops.where(a > 0.2, a, b), ops.mean(a * b, axis=-1),
            ops.cast(a, "int32"), ops.expand_dims(a, 1), ops.matmul(a[:, :, None], b[:, None, :]), a[..., 0],
            ops.clip(a, 0.1, 0.3), abs(a - 0.5), a ** 2, a // 0.2, ops.pad(a, [[0, 0], [1, 2]], constant_values=7.0),
            ops.einsum("ij,ij->i", a, b), ops.nn.relu(a - 0.3), ops.image.resize(ops.reshape(a, (-1, 1, 3, 1)), (2, 6)),
            ops.linalg.norm(a, axis=-1)]
    model = keras.Model({"a": a, "b": b}, outs)
    results = model.predict({"a": X_A, "b": X_B}, verbose=0)
    return {"config": model.get_config(), "layer_names": [l.name for l in model.layers],
            "outputs": [r.tolist() for r in results], "dtypes": [str(r.dtype) for r in results]}


class _ZeroRowMask(layers.Layer):
    def call(self, x):
        return x * 1.0

    def compute_mask(self, x, mask=None):
        return ops.not_equal(x[..., 0], 0)


class _MaskSum(layers.Layer):
    def call(self, x, mask=None):
        return ops.sum(x * ops.cast(mask, x.dtype)[..., None], axis=1)


def masks() -> dict:
    keras.backend.clear_session()
    inputs = keras.Input((4, 2))
    masked = _ZeroRowMask()(inputs)
    model = keras.Model(inputs, [_MaskSum()(masked), layers.Concatenate()([masked, masked]), layers.Add()([masked, inputs])])
    x = np.array([[[1, 1], [0, 0], [2, 2], [0, 1]]], "float32")
    summed, concatenated, added = model(x)
    return {"x": x.tolist(), "supports_masking": bool(_ZeroRowMask().supports_masking),
            "sum": np.asarray(summed).tolist(),
            "concat_mask": np.asarray(concatenated._keras_mask).tolist(),
            "add_mask": None if getattr(added, "_keras_mask", None) is None else np.asarray(added._keras_mask).tolist()}


class _Tally(keras.metrics.Metric):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hits = self.add_variable(shape=(), initializer="ones", name="hit_count")
        self.spread = self.add_variable(shape=(2,), initializer="zeros", name="spread", aggregation="mean")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.hits.assign_add(ops.sum(ops.cast(ops.equal(y_true, ops.round(y_pred)), "float32")))
        self.hits.assign(self.hits * 2.0)
        self.spread.assign_sub(ops.stack([ops.max(y_pred), ops.min(y_pred)]))

    def result(self):
        return self.hits + ops.sum(self.spread)


def metric_variables() -> dict:
    keras.backend.clear_session()
    metric = _Tally(name="tally")
    start = float(metric.result())
    metric.update_state(np.array([1.0, 0.0, 1.0]), np.array([0.9, 0.4, 0.2]))
    after = float(metric.result())
    metric.reset_state()
    return {"start": start, "after_update": after, "after_reset": float(metric.result()),
            "paths": [v.path for v in metric.variables], "names": [v.name for v in metric.variables]}


class ArgsModel(keras.Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)


class Positional(keras.Model):
    def __init__(self, units, act="relu", **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(units, activation=act)

    def call(self, x):
        return self.dense(x)


def _net() -> keras.Model:
    inputs = keras.Input((3,), name="x")
    hidden = layers.Dense(4, name="d")(inputs)
    return keras.Model(inputs, layers.Dense(2, name="o")(ops.relu(hidden) + 1.0), name="net")


def cloning() -> dict:
    keras.backend.clear_session()
    model = _net()
    out: dict = {"from_config_names": [l.name for l in keras.Model.from_config(model.get_config()).layers]}
    clone = keras.models.clone_model(model)
    out["clone_same_config"] = clone.get_config() == model.get_config()
    out["clone_names"] = [l.name for l in clone.layers]
    revived = ArgsModel.from_config(model.get_config())
    out["args_subclass_revived_as"] = [type(revived).__name__, isinstance(revived, ArgsModel)]
    positional = Positional(3, "relu")
    out["positional_output_shape"] = list(positional(np.ones((1, 2), "float32")).shape)
    try:
        Positional.from_config(model.get_config())
    except TypeError as error:
        out["positional_from_config_error"] = str(error).split(".")[0]

    def wider(layer):
        config = layer.get_config()
        if layer.name == "d":
            config["units"] *= 2
        return layer.__class__.from_config(config)

    out["clone_function_shapes"] = [list(w.shape) for w in keras.models.clone_model(model, clone_function=wider).weights]
    sequential = keras.Sequential([keras.Input((3,)), layers.Dense(2, name="s1")], name="seq")
    sequential_clone = keras.models.clone_model(sequential)
    out["sequential_clone"] = {"names": [l.name for l in sequential_clone.layers], "built": sequential_clone.built}
    new_input = keras.Input((3,), name="new_in")
    out["input_tensors_names"] = [l.name for l in keras.models.clone_model(model, input_tensors=new_input).layers]
    calls = []

    def record(layer, *args, **kwargs):
        calls.append(layer.name)
        return layer(*args, **kwargs)

    keras.models.clone_model(model, call_function=record)
    out["call_function_calls"] = calls
    model.compile("adam", "mse", metrics=["mae"])
    compiled = keras.models.clone_model(model)
    out["compiled_clone"] = [compiled.compiled, type(compiled.optimizer).__name__, compiled.optimizer is model.optimizer]
    return out


def _summary(model, **kwargs) -> str:
    lines = []
    model.summary(print_fn=lines.append, **kwargs)
    return "".join(lines)


def summaries() -> dict:
    """Summary texts (run with COLUMNS=80, so the default width is 76 as in a plain 80-column terminal)."""
    keras.backend.clear_session()
    out = {}
    unbuilt = keras.Sequential([layers.Dense(3, name="d1"), layers.Dense(2, name="d2")], name="unbuilt")
    out["unbuilt"] = _summary(unbuilt)
    out["unbuilt_narrow"] = _summary(unbuilt, line_length=60)
    built = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="d3"), layers.BatchNormalization(name="bn")],
                             name="built")
    built.layers[0].trainable = False
    out["built_trainable"] = _summary(built, show_trainable=True, line_length=70)
    a = keras.Input((4,), name="a")
    b = keras.Input((4,), name="b")
    hidden = layers.Dense(3, name="d")(a)
    branching = keras.Model([a, b], layers.Concatenate(name="cat")([hidden, ops.exp(b)]), name="two")
    out["branching"] = _summary(branching)
    branching.compile("adam", "mse")
    branching.fit([np.ones((2, 4), "float32")] * 2, np.ones((2, 7), "float32"), verbose=0)
    out["branching_compiled"] = _summary(branching, show_trainable=True)
    inner = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="in1"), layers.Dense(3, name="in2")],
                             name="inner")
    x = keras.Input((4,), name="x")
    h = inner(x)
    multi = keras.Model(x, [layers.Dense(2, name="o1")(h), layers.Dense(5, name="o2")(h)], name="multi")
    out["nested"] = _summary(multi, expand_nested=True)
    out["layer_range"] = _summary(multi, layer_range=["inner", "o1"])
    y = keras.Input((4,), name="y")
    split = layers.Lambda(lambda t: [t[:, :2], t[:, 2:]], name="split")(y)
    out["two_outputs_chain"] = _summary(keras.Model(y, split, name="two_out"), line_length=90)
    return out


def _hand_weights(layer) -> list:
    """Deterministic weights of each layer's shapes (sin of a ramp, scaled), so both libraries load the same."""
    out = []
    for weight in layer.get_weights():
        ramp = np.arange(weight.size, dtype="float32").reshape(weight.shape)
        out.append((np.sin(ramp * 0.37 + weight.ndim) * 0.4).astype("float32"))
    return out


STATEFUL_X = (np.cos(np.arange(2 * 3 * 4, dtype="float32").reshape(2, 3, 4) * 0.5) * 0.8).astype("float32")


def stateful() -> dict:
    """predict_on_batch three times (the third after reset_states) for each stateful recurrent layer."""
    out = {}
    makers = {
        "SimpleRNN": lambda: layers.SimpleRNN(3, stateful=True),
        "LSTM": lambda: layers.LSTM(3, stateful=True),
        "GRU": lambda: layers.GRU(3, stateful=True),
        "RNN_GRUCell": lambda: layers.RNN(layers.GRUCell(3), stateful=True),
        "RNN_stacked": lambda: layers.RNN([layers.SimpleRNNCell(2), layers.LSTMCell(3)], stateful=True),
        "Bidirectional_LSTM": lambda: layers.Bidirectional(layers.LSTM(2, stateful=True, return_sequences=True)),
    }
    for name, make in makers.items():
        keras.backend.clear_session()
        layer = make()
        model = keras.Sequential([keras.Input(batch_shape=(2, 3, 4)), layer])
        layer.set_weights(_hand_weights(layer))
        first = model.predict_on_batch(STATEFUL_X)
        second = model.predict_on_batch(STATEFUL_X)
        try:
            layer.reset_states()
            third = model.predict_on_batch(STATEFUL_X).tolist()
        except AttributeError:  # Keras 3.15 cannot reset stacked cells' nested states ('ListWrapper' has no assign)
            third = None
        out[name] = {"first": first.tolist(), "second": second.tolist(), "third": third,
                     "weights": len(layer.weights)}
    return out


FS_DATA = {"f": [0.5, 1.5, -2.0, 3.0, 0.0, 1.0], "n": [1.0, 2.0, 3.0, 4.0, 5.0, 9.0],
           "r": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0], "d": [0.1, 0.4, 0.35, 0.8, 0.9, 0.2],
           "ic": [3, 1, 3, 7, 1, 3], "sc": ["a", "b", "a", "c", "b", "a"], "ih": [5, 6, 7, 5, 6, 5],
           "sh": ["x", "y", "z", "x", "y", "w"]}
FS_DTYPES = {"f": "float32", "n": "float32", "r": "float32", "d": "float32", "ic": "int64", "ih": "int64"}


def _fs_arrays() -> dict:
    return {k: np.asarray(v, FS_DTYPES.get(k)) if k in FS_DTYPES else np.asarray(v) for k, v in FS_DATA.items()}


def feature_space() -> dict:
    """Every feature type, a cross, concat and dict output, adapt on a tf.data Dataset, and a model on top."""
    import tensorflow as tf
    from keras.utils import FeatureSpace

    keras.backend.clear_session()
    data = _fs_arrays()
    space = FeatureSpace(features={
        "f": "float", "n": "float_normalized", "r": FeatureSpace.float_rescaled(scale=0.1, offset=1.0),
        "d": FeatureSpace.float_discretized(num_bins=3), "ic": "integer_categorical", "sc": "string_categorical",
        "ih": FeatureSpace.integer_hashed(num_bins=4), "sh": "string_hashed"},
        crosses=[("sc", "ic")], crossing_dim=5, hashing_dim=6, output_mode="concat")
    space.adapt(tf.data.Dataset.from_tensor_slices(data).batch(4))
    out = {"concat": np.asarray(space({k: v[:3] for k, v in data.items()})).tolist(),
           "single_shape": list(space({k: v[0] for k, v in data.items()}).shape),
           "vocab_sc": [str(t) for t in space.preprocessors["sc"].get_vocabulary()],
           "vocab_ic": [int(t) for t in space.preprocessors["ic"].get_vocabulary()],
           "boundaries_d": [float(b) for b in space.preprocessors["d"].bin_boundaries],
           "input_shapes": {k: list(v.shape) for k, v in space.get_inputs().items()},
           "encoded_shape": list(space.get_encoded_features().shape),
           "config_keys": sorted(space.get_config())}
    encoded = space.get_encoded_features()
    dense = layers.Dense(1, name="head")
    predictions = dense(encoded)
    training_model = keras.Model(inputs=encoded, outputs=predictions)
    dense.set_weights([(np.arange(29, dtype="float32").reshape(29, 1) - 14) / 20, np.array([0.25], "float32")])
    inference_model = keras.Model(inputs=space.get_inputs(), outputs=predictions)
    sample = {k: tf.convert_to_tensor([v[4]]) for k, v in data.items()}
    out["inference"] = np.asarray(inference_model.predict(sample, verbose=0)).tolist()
    out["training_on_encoded"] = np.asarray(training_model.predict(space({k: v[3:] for k, v in data.items()}),
                                                                   verbose=0)).tolist()
    keras.backend.clear_session()
    small = FeatureSpace(features={"ic": "integer_categorical", "sc": FeatureSpace.string_categorical(output_mode="int"),
                                   "f": "float"}, output_mode="dict")
    small.adapt(tf.data.Dataset.from_tensor_slices({k: data[k] for k in ("ic", "sc", "f")}))
    batch = small({k: data[k][:2] for k in ("ic", "sc", "f")})
    single = small({k: data[k][0] for k in ("ic", "sc", "f")})
    out["dict"] = {k: {"dtype": v.dtype.name, "value": np.asarray(v).tolist(), "single_shape": list(single[k].shape)}
                   for k, v in batch.items()}
    return out


AUGMENTERS = {
    "RandomFlip": lambda: layers.RandomFlip(seed=1), "RandomRotation": lambda: layers.RandomRotation(0.3, seed=1),
    "RandomZoom": lambda: layers.RandomZoom(0.3, seed=1),
    "RandomTranslation": lambda: layers.RandomTranslation(0.3, 0.3, seed=1),
    "RandomContrast": lambda: layers.RandomContrast(0.5, seed=1),
    "RandomBrightness": lambda: layers.RandomBrightness(0.5, seed=1), "RandomCrop": lambda: layers.RandomCrop(4, 4, seed=1),
    "RandomHue": lambda: layers.RandomHue(0.5, seed=1), "RandomSaturation": lambda: layers.RandomSaturation(0.5, seed=1),
    "RandomGrayscale": lambda: layers.RandomGrayscale(1.0, seed=1),
    "RandomColorJitter": lambda: layers.RandomColorJitter(value_range=(0, 1), brightness_factor=0.5, seed=1),
    "Dropout": lambda: layers.Dropout(0.5, seed=1), "GaussianNoise": lambda: layers.GaussianNoise(0.5, seed=1)}


def augmentation() -> dict:
    """Whether each random layer changes its input when called with no `training`, True, False; in a model."""
    images = np.random.RandomState(0).rand(2, 8, 8, 3).astype("float32")

    def changed(out) -> bool:
        out = np.asarray(out)
        return bool(out.shape != images.shape or not np.allclose(out, images))

    out = {}
    for name, make in AUGMENTERS.items():
        layer = make()
        out[name] = [changed(layer(images)), changed(layer(images, training=True)),
                     changed(layer(images, training=False))]
    model = keras.Sequential([keras.Input((8, 8, 3)), layers.RandomFlip(seed=1), layers.Dropout(0.5, seed=1)])
    out["model"] = {"call": changed(model(images)), "call_training": changed(model(images, training=True)),
                    "predict": changed(model.predict(images, verbose=0))}
    return out


def main() -> int:
    out = {"keras_version": keras.__version__, "ops_graph": ops_graph(), "masks": masks(),
           "metric_variables": metric_variables(), "cloning": cloning(),
           "summaries": summaries(), "stateful": stateful(),
           "feature_space": feature_space(), "augmentation": augmentation()}
    with open(OUT, "w", encoding="utf-8") as handle:
        json.dump(out, handle, sort_keys=True, indent=0)
        handle.write("\n")
    print("wrote", os.path.abspath(OUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
