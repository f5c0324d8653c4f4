"""The object paths of Keras 3's weights files, compared with the paths TF 2.21 wrote for the same models
(tests/formats/fixtures), and the optimizer variable order Keras uses (iteration, learning rate, slots)."""
from __future__ import annotations

import os

import h5py

import torchstrategy as tf
from tests.formats import _models  # noqa: F401  (registers the fixtures' custom classes)
from torchstrategy.keras import weight_paths

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "formats", "fixtures")


def _tf_paths(name):
    found = []
    with h5py.File(os.path.join(FIXTURES, name)) as handle:
        handle.visit(lambda path: found.append(path[: -len("/vars")]) if path.endswith("vars") and
                     "optimizer" not in path else None)
    return sorted(p if p != "vars" else "" for p in found)


def test_paths_match_the_ones_tf_wrote():
    for name in ("cnn", "lstm", "two_inputs", "subclassed"):
        model = tf.keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras"), compile=False)
        ours = sorted(weight_paths.variable_groups(model))
        assert ours == _tf_paths(f"{name}.weights.h5"), name


def test_optimizer_variables_follow_keras_order():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.Adam(amsgrad=True), loss="mse")
    model.optimizer.build(model.trainable_variables)
    kinds = [kind for kind, _ in weight_paths.optimizer_variables(model.optimizer, list(model.trainable_variables))]
    assert kinds == ["iteration", "learning_rate", "momentum", "velocity", "momentum", "velocity", "velocity_hat",
                     "velocity_hat"]  # as keras.optimizers.Adam(amsgrad=True).variables lists them
