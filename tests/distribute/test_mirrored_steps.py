"""The TF tutorial's shape on 2 real gloo replicas (model built in scope, fit/evaluate called outside
it): synchronized BatchNorm keeps the global batch's statistics, evaluate(steps=N) is distributed,
and a custom train_step and steps_per_execution give the built-in step's weights."""
from __future__ import annotations

import numpy as np
import pytest

from tests import _multiprocess as mp

SCRIPT = r'''
import json, os, sys
import numpy as np, torch
import torchstrategy as tf

out, replicas = sys.argv[1], int(sys.argv[2])
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
rng = np.random.default_rng(0)
x = rng.normal(size=(256, 6)).astype(np.float32)
y = rng.integers(0, 3, (256, 1)).astype(np.int64)


class GuideModel(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        for metric in self.metrics:
            metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def build(cls, **compile_args):
    tf.random.set_seed(5)
    with strategy.scope():
        inputs = tf.keras.Input(shape=(6,))
        hidden = tf.keras.layers.Dense(8, use_bias=False)(inputs)  # BN follows: a bias would get ~0 gradients
        hidden = tf.keras.layers.BatchNormalization(synchronized=True, momentum=0.5)(hidden)
        outputs = tf.keras.layers.Dense(3)(tf.keras.layers.ReLU()(hidden))
        model = cls(inputs, outputs)
        model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"], **compile_args)
    return model


def dataset():
    return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(256, seed=1).batch(32)


class BatchEnds(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(batch)


report = {}
# fit and evaluate OUTSIDE the scope, as TF's tutorial does
builtin = build(tf.keras.Model)
report["history"] = builtin.fit(dataset(), epochs=2, verbose=0).history
report["evaluate"] = builtin.evaluate(dataset().repeat(), steps=3, verbose=0, return_dict=True)
norm = [layer for layer in builtin.layers if isinstance(layer, tf.keras.layers.BatchNormalization)][0]
report["moving_mean"] = norm.moving_mean.tolist()
report["moving_variance"] = norm.moving_variance.tolist()
report["builtin"] = [w.tolist() for w in builtin.get_weights()]

custom = build(GuideModel)
custom.fit(dataset(), epochs=2, verbose=0)
report["custom"] = [w.tolist() for w in custom.get_weights()]

chunked = build(tf.keras.Model, steps_per_execution=4)
ends = BatchEnds()
chunked.fit(dataset(), epochs=2, verbose=0, callbacks=[ends])
report["chunked"] = [w.tolist() for w in chunked.get_weights()]
report["chunked_ends"] = ends.ends

rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
with open(os.path.join(out, f"report_{rank}.json"), "w") as f:
    json.dump(report, f)
'''


def _run(tmp_path, replicas: int) -> list:
    return mp.run_replica_reports(tmp_path, SCRIPT, replicas)


def _close(ours, theirs, atol: float) -> None:
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.array(a), np.array(b), atol=atol, rtol=atol)


@pytest.mark.slow
def test_tutorial_shape_on_two_replicas_equals_one_process(tmp_path):
    (one,) = _run(tmp_path, 1)
    first, second = _run(tmp_path, 2)
    # synchronized BatchNorm with fit() outside the scope: the global batch's statistics, on both replicas
    for report in (first, second):
        np.testing.assert_allclose(report["moving_mean"], one["moving_mean"], atol=1e-5)
        np.testing.assert_allclose(report["moving_variance"], one["moving_variance"], atol=1e-5)
    _close(first["builtin"], one["builtin"], 1e-5)
    np.testing.assert_allclose(first["history"]["loss"], one["history"]["loss"], rtol=1e-5)
    # evaluate(ds, steps=3) is distributed: the same numbers as one process, on every replica
    assert first["evaluate"] == second["evaluate"]
    for key, value in one["evaluate"].items():
        assert first["evaluate"][key] == pytest.approx(value, rel=1e-5)
    # a custom train_step (GradientTape + apply_gradients) and steps_per_execution=4 match the built-in step
    for report, reference in ((one, one), (first, first), (second, first)):
        _close(report["custom"], reference["builtin"], 1e-6)
        _close(report["chunked"], reference["builtin"], 1e-6)
    assert first["chunked_ends"] == [3, 7] * 2  # 8 steps per epoch: batch callbacks once per 4 steps
