"""Transfer learning with keras.applications.ResNet50 under MirroredStrategy: a frozen base with a new
head, then fine-tuning with the last layers unfrozen (recompiled); 2 replicas equal 1 process."""
from __future__ import annotations

import numpy as np
import pytest

from tests import _multiprocess as mp

TRANSFER = r'''
import json, os, sys, time
import numpy as np
import torchstrategy as tf

out, replicas = sys.argv[1], int(sys.argv[2])
start = time.time()
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
rng = np.random.default_rng(0)
x = rng.random((16, 32, 32, 3)).astype(np.float32)  # small inputs keep the untrained base's features tame
y = rng.integers(0, 2, (16, 1)).astype(np.int64)
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)

tf.random.set_seed(0)
with strategy.scope():
    base = tf.keras.applications.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3))
    base.trainable = False
    inputs = tf.keras.Input((32, 32, 3))
    features = tf.keras.layers.GlobalAveragePooling2D()(base(inputs, training=False))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2, name="head")(features))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1),  # (Adam turns reduction noise into full steps)
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
frozen_trainable = len(model.trainable_weights)
first = model.fit(dataset, epochs=1, verbose=0).history["loss"]

# fine-tune: the last convolution of the base trains too (batch norms stay frozen), after recompiling
base.trainable = True
for layer in base.layers:
    if layer.name != "conv5_block3_3_conv":
        layer.trainable = False
with strategy.scope():
    model.compile(optimizer=tf.keras.optimizers.SGD(1e-3),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
tuned_trainable = len(model.trainable_weights)
second = model.fit(dataset, epochs=1, verbose=0).history["loss"]
if strategy.extended.should_checkpoint:
    np.savez(os.path.join(out, "weights.npz"), *[w for w, l in zip(model.get_weights(), model.weights)])
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump({"first": first, "second": second, "frozen_trainable": frozen_trainable,
                   "tuned_trainable": tuned_trainable, "seconds": time.time() - start}, f)
'''


def _run(tmp_path, replicas):
    out = tmp_path / f"r{replicas}"
    out.mkdir()
    script = mp.write_script(tmp_path, TRANSFER, name=f"transfer_{replicas}.py")
    result = mp.run_python([script, str(out), str(replicas)], timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    weights = np.load(out / "weights.npz")
    return [weights[f"arr_{i}"] for i in range(len(weights.files))], mp.read_json(out / "report.json")


@pytest.mark.slow
def test_resnet50_transfer_learning_on_two_replicas_equals_one_process(tmp_path):
    reference, ref_report = _run(tmp_path, 1)
    weights, report = _run(tmp_path, 2)
    assert ref_report["frozen_trainable"] == report["frozen_trainable"] == 2  # only the head's kernel and bias
    assert report["tuned_trainable"] == 4  # + conv5_block3_3_conv's kernel and bias
    np.testing.assert_allclose(report["first"], ref_report["first"], rtol=1e-5)
    np.testing.assert_allclose(report["second"], ref_report["second"], rtol=1e-5)
    assert len(weights) == len(reference)
    for ours, expected in zip(weights, reference):
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
