"""Sequential, functional and subclassed models: building, Keras weight order and layouts,
outputs against hand-written torch math, summary, and the errors a user meets first."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import torchstrategy as tf

layers = tf.keras.layers


def seed_cnn(input_shape=(32, 32, 3)):
    return tf.keras.Sequential([
        layers.Conv2D(32, (3, 3), activation="relu", input_shape=input_shape),
        layers.MaxPooling2D((2, 2)),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.MaxPooling2D((2, 2)),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.Flatten(),
        layers.Dense(64, activation="relu"),
        layers.Dense(10),
    ])


def reference_cnn(x_nhwc, weights):
    """The seed CNN written with torch.nn.functional on NCHW, from Keras-layout weights."""
    k1, b1, k2, b2, k3, b3, d1, c1, d2, c2 = [torch.as_tensor(w) for w in weights]
    h = x_nhwc.permute(0, 3, 1, 2)
    conv = lambda t, k, b: F.relu(F.conv2d(t, k.permute(3, 2, 0, 1), b))  # noqa: E731  HWIO -> OIHW
    h = F.max_pool2d(conv(h, k1, b1), 2)
    h = F.max_pool2d(conv(h, k2, b2), 2)
    h = conv(h, k3, b3)
    h = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1)  # Keras flattens channels_last
    return F.relu(h @ d1 + c1) @ d2 + c2


def test_seed_cnn_shapes_keras_layouts_and_outputs():
    model = seed_cnn()
    assert model.built and model.output_shape == (None, 10)
    shapes = [w.shape for w in model.get_weights()]
    assert shapes == [(3, 3, 3, 32), (32,), (3, 3, 32, 64), (64,), (3, 3, 64, 64), (64,),
                      (1024, 64), (64,), (64, 10), (10,)]
    assert model.count_params() == sum(int(np.prod(s)) for s in shapes) == 122570
    rng = np.random.default_rng(0)
    keras_weights = [rng.normal(0, 0.1, s).astype(np.float32) for s in shapes]
    model.set_weights(keras_weights)
    x = torch.from_numpy(rng.random((4, 32, 32, 3)).astype(np.float32))
    assert torch.allclose(model(x), reference_cnn(x, keras_weights), atol=1e-5)
    assert all(np.allclose(a, b) for a, b in zip(model.get_weights(), keras_weights))


def test_default_initialisers_are_glorot_uniform_kernels_and_zero_biases():
    model = tf.keras.Sequential([layers.Dense(300, input_shape=(200,))])
    kernel, bias = model.get_weights()
    limit = np.sqrt(6.0 / (200 + 300))
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.95 * limit
    assert np.all(bias == 0)


def test_summary_lists_layers_shapes_and_totals(capsys):
    seed_cnn().summary()
    out = capsys.readouterr().out
    assert "conv2d (Conv2D)" in out and "(None, 30, 30, 32)" in out and "896" in out
    assert "(None, 4, 4, 64)" in out and "Total params: 122,570 (478.79 KB)" in out
    assert "Non-trainable params: 0 (0.00 B)" in out


def test_sequential_builds_on_first_call_and_add_pop():
    model = tf.keras.Sequential()
    model.add(layers.Dense(3))
    model.add(layers.Dense(1))
    assert not model.built
    out = model(torch.ones(5, 4))
    assert out.shape == (5, 1) and model.built
    popped = model.pop()
    assert isinstance(popped, layers.Dense) and len(model.layers) == 1


def test_sequential_with_input_object_and_uint8_inputs_cast_to_float():
    model = tf.keras.Sequential([tf.keras.Input(shape=(2,)), layers.Dense(1, use_bias=False)])
    model.set_weights([np.array([[1.0], [2.0]], dtype=np.float32)])
    out = model(np.array([[3, 4]], dtype=np.uint8))
    assert out.dtype == torch.float32 and float(out) == 11.0


def test_input_shape_mismatch_names_the_layer_and_both_shapes():
    model = tf.keras.Sequential([layers.Dense(2, input_shape=(4,), name="head")])
    with pytest.raises(ValueError, match=r"layer 'head'.*\(None, 4\).*\(None, 5\)"):
        model(torch.ones(3, 5))


def test_set_weights_with_wrong_count_or_shape_is_refused():
    model = tf.keras.Sequential([layers.Dense(2, input_shape=(3,))])
    with pytest.raises(ValueError, match="expects 2 weight arrays.*got 1"):
        model.set_weights([np.zeros((3, 2))])
    with pytest.raises(ValueError, match=r"weight #0 has shape \(3, 2\).*\(2, 3\)"):
        model.set_weights([np.zeros((2, 3)), np.zeros(2)])


def test_functional_model_with_two_inputs_matches_manual_math():
    a = tf.keras.Input(shape=(3,), name="a")
    b = tf.keras.Input(shape=(2,), name="b")
    merged = layers.Concatenate()([layers.Dense(4, activation="relu")(a), b])
    out = layers.Dense(1)(merged)
    model = tf.keras.Model(inputs=[a, b], outputs=out)
    assert isinstance(model, tf.keras.Model) and model.output_shape == (None, 1)
    xa, xb = torch.randn(6, 3), torch.randn(6, 2)
    k1, b1, k2, b2 = [torch.as_tensor(w) for w in model.get_weights()]
    expected = torch.cat([F.relu(xa @ k1 + b1), xb], dim=-1) @ k2 + b2
    assert torch.allclose(model([xa, xb]), expected, atol=1e-6)
    assert torch.allclose(model({"a": xa, "b": xb}), expected, atol=1e-6)
    with pytest.raises(ValueError, match="expects 2 input"):
        model([xa])


def test_functional_input_shape_mismatch_is_reported():
    x = tf.keras.Input(shape=(3,), name="features")
    model = tf.keras.Model(x, layers.Dense(1)(x))
    with pytest.raises(ValueError, match=r"'features'.*\(None, 3\).*\(None, 7\)"):
        model(torch.ones(2, 7))


def test_functional_graph_disconnected_input_is_an_error():
    a = tf.keras.Input(shape=(2,))
    b = tf.keras.Input(shape=(2,))
    with pytest.raises(ValueError, match="Graph disconnected"):
        tf.keras.Model(inputs=a, outputs=layers.Add()([a, b]))


class TwoTower(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.towers = [layers.Dense(3), layers.Dense(3)]
        self.head = layers.Dense(1)
        self.drop = layers.Dropout(0.5)

    def call(self, inputs, training=False):
        h = self.towers[0](inputs) + self.towers[1](inputs)
        return self.head(self.drop(h, training=training))


def test_subclassed_model_tracks_list_layers_and_passes_training():
    model = TwoTower()
    x = torch.randn(8, 4)
    y1, y2 = model(x), model(x)
    assert torch.equal(y1, y2)  # inference: dropout off by default, as in Keras
    assert len(model.trainable_weights) == 6
    kt0, bt0, kt1, bt1, kh, bh = [torch.as_tensor(w) for w in model.get_weights()]
    assert torch.allclose(y1, ((x @ kt0 + bt0) + (x @ kt1 + bt1)) @ kh + bh, atol=1e-6)
    torch.manual_seed(0)
    assert not torch.equal(model(x, training=True), y1)


def test_trainable_false_freezes_weights_in_keras_order():
    model = tf.keras.Sequential([layers.Dense(2, input_shape=(3,)), layers.BatchNormalization()])
    assert len(model.trainable_weights) == 4 and len(model.non_trainable_weights) == 2
    model.layers[0].trainable = False
    assert len(model.trainable_weights) == 2 and len(model.non_trainable_weights) == 4
    assert [tuple(w.shape) for w in model.weights] == [(3, 2), (2,), (2,), (2,), (2,), (2,)]


def test_a_sequential_with_an_input_has_symbolic_inputs_and_outputs_and_feeds_a_feature_model():
    # Keras 3.15: Sequential([Input, ...]).input/.inputs/.output/.outputs are KerasTensors; an unbuilt one raises
    # AttributeError "Sequential model '<name>' has no defined inputs yet."
    from torchstrategy import keras

    bare = keras.Sequential([keras.layers.Dense(2)], name="bare")
    with pytest.raises(AttributeError, match="Sequential model 'bare' has no defined inputs yet"):
        bare.inputs
    assert not hasattr(bare, "output")
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="hidden"), keras.layers.Dense(2)])
    assert [t.shape for t in model.inputs] == [(None, 3)] and model.input is model.inputs[0]
    assert [t.shape for t in model.outputs] == [(None, 2)] and model.output is model.outputs[0]
    features = keras.Model(model.input, model.get_layer("hidden").output)
    x = np.random.default_rng(0).random((5, 3)).astype("float32")
    kernel, bias = model.get_layer("hidden").get_weights()
    np.testing.assert_allclose(features.predict(x, verbose=0), x @ kernel + bias, rtol=1e-5, atol=1e-6)
    assert features.get_layer("hidden") is model.get_layer("hidden")  # shared weights
    model.add(keras.layers.Dense(7))
    assert model.output.shape == (None, 7)  # the graph follows add()


def test_add_metric_is_refused_as_in_keras_3():
    from torchstrategy import keras

    with pytest.raises(NotImplementedError, match="add_metric\\(\\) was removed in Keras 3"):
        keras.layers.Dense(2).add_metric(1.0, name="m")


def test_model_metrics_list_held_trackers_after_the_compiled_ones():
    """Keras 3.15: a subclassed model holding a Mean tracker lists it uncompiled (['trk']) and after compile's
    (['loss', 'compile_metrics', 'trk'] there; the compiled part is listed metric by metric here)."""
    keras = tf.keras

    class Holder(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)
            self.tracker = keras.metrics.Mean(name="trk")

        def call(self, x):
            return self.dense(x)

    model = Holder()
    model(np.ones((2, 3), "float32"))
    assert [m.name for m in model.metrics] == ["trk"]
    model.compile("sgd", "mse")
    names = [m.name for m in model.metrics]
    assert names[0] == "loss" and names[-1] == "trk" and names.count("trk") == 1
    model.tracker.update_state([4.0])
    model.reset_metrics()
    assert float(model.tracker.result()) == 0.0  # reset with the model's metrics, as in Keras

    class Outer(keras.Model):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def call(self, x):
            return self.inner(x)

    assert Outer(model).metrics == []  # a nested model's metrics stay its own (Keras 3's Trainer skips it)
