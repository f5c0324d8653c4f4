"""Bad arguments that Keras would accept silently or only fail on late (issue 8): fit's epoch counts,
class_weight, validation_data, conv kernels larger than their input, Input shapes, multi-label AUC."""
from __future__ import annotations

import re

import numpy as np
import pytest

import torchstrategy as tf
from tests import _multiprocess as mp


def _classifier(units: int = 3, activation: str = "softmax", loss: str = "sparse_categorical_crossentropy"):
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(units, activation=activation)])
    model.compile(optimizer="sgd", loss=loss)
    return model


def _data(rows: int = 8, classes: int = 3):
    rng = np.random.default_rng(0)
    return rng.normal(size=(rows, 4)).astype("float32"), rng.integers(0, classes, size=(rows,)).astype("int64")


def _weights(model) -> list:
    return [w.detach().clone().numpy() for w in model.trainable_variables]


class _Started(tf.keras.callbacks.Callback):
    def __init__(self) -> None:
        super().__init__()
        self.began, self.batches = False, 0

    def on_train_begin(self, logs=None):
        self.began = True

    def on_train_batch_end(self, batch, logs=None):
        self.batches += 1


# ----- epochs / initial_epoch ----------------------------------------------------------------
@pytest.mark.parametrize("epochs", [-1, -5, 2.5, "3", True])
def test_fit_refuses_an_epoch_count_that_is_not_a_non_negative_integer(epochs):
    model, (x, y) = _classifier(), _data()
    started = _Started()
    with pytest.raises(ValueError, match=r"`epochs` must be a non-negative integer; got"):
        model.fit(x, y, epochs=epochs, verbose=0, callbacks=[started])
    assert not started.began  # refused before anything ran


def test_fit_refuses_a_negative_initial_epoch():
    # TF 2.21 trains epochs -1, 0, 1 for fit(epochs=2, initial_epoch=-1); that is never meant
    model, (x, y) = _classifier(), _data()
    with pytest.raises(ValueError, match=r"`initial_epoch` must be a non-negative integer; got -1"):
        model.fit(x, y, epochs=2, initial_epoch=-1, verbose=0)


def test_initial_epoch_past_epochs_trains_nothing_as_keras_does():
    # TF 2.21: fit(epochs=2, initial_epoch=5) returns an empty history (a resumed run that is done)
    model, (x, y) = _classifier(), _data()
    model.build((None, 4))
    before = _weights(model)
    history = model.fit(x, y, epochs=2, initial_epoch=5, verbose=0)
    assert history.epoch == [] and history.history == {}
    assert all(np.array_equal(a, b) for a, b in zip(before, _weights(model)))


# ----- class_weight ---------------------------------------------------------------------------
def test_class_weight_naming_a_class_the_output_cannot_have_is_refused_before_the_first_step():
    model, (x, y) = _classifier(units=3), _data()
    started = _Started()
    with pytest.raises(ValueError, match=r"class_weight names class 5, but model '.*' has 3 output classes"):
        model.fit(x, y, class_weight={0: 1.0, 5: 2.0}, verbose=0, callbacks=[started])
    assert started.batches == 0


def test_class_weight_for_one_sigmoid_unit_allows_classes_zero_and_one_only():
    x, y = _data(classes=2)
    y = y.astype("float32").reshape(-1, 1)
    model = _classifier(units=1, activation="sigmoid", loss="binary_crossentropy")
    model.fit(x, y, class_weight={0: 1.0, 1: 3.0}, verbose=0)  # fine: two classes
    with pytest.raises(ValueError, match=r"class_weight names class 2, but model '.*' has 2 output classes"):
        model.fit(x, y, class_weight={0: 1.0, 2: 3.0}, verbose=0)


def test_class_weight_within_the_output_classes_still_weighs_the_loss():
    x, y = _data()
    tf.keras.utils.set_random_seed(3)
    plain = _classifier()
    tf.keras.utils.set_random_seed(3)
    weighted = _classifier()
    a = plain.fit(x, y, batch_size=8, shuffle=False, verbose=0).history["loss"][0]
    b = weighted.fit(x, y, batch_size=8, shuffle=False, class_weight={2: 4.0}, verbose=0).history["loss"][0]
    assert a != pytest.approx(b)


# ----- validation_data ------------------------------------------------------------------------
def test_validation_data_of_another_feature_size_fails_before_an_epoch_trains():
    model, (x, y) = _classifier(), _data()
    model.build((None, 4))
    before = _weights(model)
    started = _Started()
    bad_x = np.zeros((4, 5), np.float32)
    with pytest.raises(ValueError, match=r"validation_data does not fit model .*\[\(5,\)\]"):
        model.fit(x, y, epochs=1, validation_data=(bad_x, y[:4]), verbose=0, callbacks=[started])
    assert started.batches == 0
    assert all(np.array_equal(a, b) for a, b in zip(before, _weights(model)))


def test_validation_data_that_fits_is_used_as_before():
    model, (x, y) = _classifier(), _data()
    history = model.fit(x, y, epochs=2, validation_data=(x[:4], y[:4]), verbose=0)
    assert len(history.history["val_loss"]) == 2


def test_empty_validation_data_is_refused_before_training():
    model, (x, y) = _classifier(), _data()
    started = _Started()
    with pytest.raises(ValueError, match="validation_data has no samples"):
        model.fit(x, y, validation_data=(x[:0], y[:0]), verbose=0, callbacks=[started])
    assert started.batches == 0


# ----- conv kernels larger than their input ---------------------------------------------------
@pytest.mark.parametrize("layer_cls, sample_shape, kernel, expected", [
    (tf.keras.layers.Conv1D, (4, 3), 5, r"Input shape \(None, 4, 3\), kernel shape \(5, 3, 2\)"),
    (tf.keras.layers.Conv2D, (4, 4, 3), 5, r"Input shape \(None, 4, 4, 3\), kernel shape \(5, 5, 3, 2\)"),
    (tf.keras.layers.Conv2D, (6, 4, 3), (3, 5), r"Input shape \(None, 6, 4, 3\), kernel shape \(3, 5, 3, 2\)"),
    (tf.keras.layers.Conv3D, (4, 4, 4, 3), 5, r"Input shape \(None, 4, 4, 4, 3\), kernel shape \(5, 5, 5, 3, 2\)"),
])
def test_valid_conv_with_a_kernel_larger_than_its_input_fails_at_build(layer_cls, sample_shape, kernel, expected):
    # TF 2.21 also refuses at build: "Computed output size would be zero or negative"
    layer = layer_cls(2, kernel, name="too_big")
    refused = r"Layer 'too_big' \(Conv.D\): its kernel is larger than its input.*" + expected
    with pytest.raises(ValueError, match=refused):
        layer(tf.keras.Input(sample_shape))
    assert not layer.built


def test_dilation_counts_toward_the_kernel_span_and_same_padding_is_fine():
    with pytest.raises(ValueError, match=r"dilation_rate=\(2, 2\).*spatial size 4 < 5"):
        tf.keras.layers.Conv2D(2, 3, dilation_rate=2)(tf.keras.Input((4, 4, 3)))
    assert tf.keras.layers.Conv2D(2, 5, padding="same")(tf.keras.Input((4, 4, 3))).shape == (None, 4, 4, 2)
    assert tf.keras.layers.Conv2D(2, 4)(tf.keras.Input((4, 4, 3))).shape == (None, 1, 1, 2)  # exactly fits


def test_conv_called_eagerly_on_a_small_tensor_and_depthwise_conv_fail_at_build():
    import torch

    with pytest.raises(ValueError, match=r"Input shape \(None, 3, 3, 2\), kernel shape \(5, 5, 2, 4\)"):
        tf.keras.layers.Conv2D(4, 5)(torch.ones(1, 3, 3, 2))
    with pytest.raises(ValueError, match=r"\(DepthwiseConv2D\): its kernel is larger than its input"):
        tf.keras.layers.DepthwiseConv2D(5)(tf.keras.Input((3, 3, 2)))
    with pytest.raises(ValueError, match=r"Input shape \(None, 3, 3, 4\)"):  # channels_first: spatial axes 2, 3
        tf.keras.layers.Conv2D(2, 4, data_format="channels_first")(tf.keras.Input((3, 3, 4)))


# ----- Input shapes ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape, bad", [((-3,), "-3"), ((4, -1), "-1"), ((2.5,), "2.5"), (("7",), "'7'")])
def test_input_with_a_negative_or_non_integer_dimension_is_refused(shape, bad):
    message = f"Input shape {shape!r} (batch shape {(None,) + shape!r}) is invalid: dimension {bad} is not allowed"
    with pytest.raises(ValueError, match=re.escape(message)):
        tf.keras.Input(shape=shape)


def test_input_layer_refuses_a_negative_batch_size_and_keeps_none_and_zero_dimensions():
    with pytest.raises(ValueError, match=r"dimension -2 is not allowed"):
        tf.keras.layers.InputLayer(input_shape=(3,), batch_size=-2)
    assert tf.keras.Input(shape=(None, 3)).shape == (None, None, 3)
    assert tf.keras.Input(shape=(0,)).shape == (None, 0)  # TF 2.21 accepts a zero dimension too


# ----- multi-label AUC across processes -------------------------------------------------------
AUC_SCRIPT = r'''
import json, sys
import numpy as np
import torchstrategy as tf

strategy = tf.distribute.MirroredStrategy(sys.argv[2].split(","))
strategy.extended.allow_uneven_split = True
rng = np.random.default_rng(0)
x = rng.normal(size=(16, 4)).astype("float32")
y = (rng.random((16, 3)) < 0.5).astype("float32")


class SkipEmpty(tf.keras.Sequential):
    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.compute_loss(x, y, y_pred)
        if x.shape[0]:  # a replica's empty share of an uneven batch updates no metric
            self.compute_metrics(x, y, y_pred)
        return self.get_metrics_result()


def make(cls):
    tf.keras.utils.set_random_seed(1)
    with strategy.scope():
        model = cls([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="sigmoid")])
        model.compile(optimizer="sgd", loss="binary_crossentropy",
                      metrics=[tf.keras.metrics.AUC(multi_label=True, name="auc")])
    return model


model = make(tf.keras.Sequential)
history = model.fit(x, y, batch_size=4, epochs=2, verbose=0).history
evaluated = model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True)
# global batches of one row: replica 0 gets every row, replica 1 none, so its AUC state is never made
skipping = make(SkipEmpty).evaluate(x[:6], y[:6], batch_size=1, verbose=0, return_dict=True)
if strategy.extended.should_checkpoint:
    with open(sys.argv[1], "w") as handle:
        json.dump({"fit": history, "evaluate": evaluated, "skip": skipping}, handle)
'''


@pytest.mark.slow
def test_multi_label_auc_without_num_labels_matches_one_process_on_two_processes(tmp_path):
    script = mp.write_script(tmp_path, AUC_SCRIPT)
    results = {}
    for name, devices in (("one", "cpu:0"), ("two", "cpu:0,cpu:1")):
        out = tmp_path / f"{name}.json"
        run = mp.run_python([script, str(out), devices], timeout=120)
        assert run.returncode == 0, run.stderr[-3000:]
        results[name] = mp.read_json(str(out))
    one, two = results["one"], results["two"]
    assert two["fit"]["auc"] == pytest.approx(one["fit"]["auc"], abs=1e-6)
    assert two["fit"]["loss"] == pytest.approx(one["fit"]["loss"], abs=1e-5)
    assert two["evaluate"]["auc"] == pytest.approx(one["evaluate"]["auc"], abs=1e-6)
    assert 0.0 < one["skip"]["auc"] < 1.0
    assert two["skip"]["auc"] == pytest.approx(one["skip"]["auc"], abs=1e-6)
