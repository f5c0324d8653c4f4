"""fit/evaluate/predict array inputs under a multi-process strategy: replicas that drew their own unseeded
NumPy data train on the chief's arrays, as TF's one-process MirroredStrategy trains on the script's."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf
from tests import _multiprocess as mp

UNSEEDED = r'''
import json, os, sys
import numpy as np
import torchstrategy as tf

out, replicas = sys.argv[1], int(sys.argv[2])
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
x = np.random.random((64, 4)).astype("float32")  # no seed: each replica process draws its own arrays
y = np.random.random((64, 1)).astype("float32")
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="tanh"),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
initial = [w.tolist() for w in model.get_weights()]
history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
evaluation = model.evaluate(x, y, batch_size=16, verbose=0)
predictions = model.predict(x[:8], batch_size=8, verbose=0)
with open(os.path.join(out, f"report_{strategy.process_rank}.json"), "w") as f:
    json.dump({"x": x.tolist(), "y": y.tolist(), "initial": initial, "loss": history.history["loss"],
               "final": [w.tolist() for w in model.get_weights()], "evaluation": evaluation,
               "predictions": predictions.tolist()}, f)
'''


@pytest.mark.slow
def test_unseeded_numpy_data_trains_on_the_chiefs_arrays(tmp_path):
    reports = mp.run_replica_reports(tmp_path, UNSEEDED, replicas=2)
    assert reports[0]["x"] != reports[1]["x"]  # the replicas really drew different data
    x, y = np.array(reports[0]["x"], dtype="float32"), np.array(reports[0]["y"], dtype="float32")
    reference = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="tanh"),
                                     tf.keras.layers.Dense(1)])
    reference.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    reference.set_weights([np.array(w, dtype="float32") for w in reports[0]["initial"]])
    history = reference.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    for report in reports:
        for got, want in zip(report["final"], reference.get_weights()):
            np.testing.assert_allclose(np.array(got), want, atol=1e-5)
        np.testing.assert_allclose(report["loss"], history.history["loss"], rtol=1e-5)
        np.testing.assert_allclose(report["evaluation"], reference.evaluate(x, y, batch_size=16, verbose=0), rtol=1e-5)
        # predict on the (chief's) first rows, whichever replica asked
        np.testing.assert_allclose(np.array(report["predictions"]), reference.predict(x[:8], verbose=0), atol=1e-5)


SHUFFLED = r'''
import json, os, sys
import numpy as np
import torch
import torchstrategy as tf

out, replicas = sys.argv[1], int(sys.argv[2])
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
rank = strategy.process_rank
x = np.random.random((64, 4)).astype("float32")  # no seed: each replica process draws its own arrays
y = np.random.random((64, 1)).astype("float32")
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
initial = [w.tolist() for w in model.get_weights()]
torch.manual_seed(100 + rank)  # each replica's RNG differs: the shuffle seed each one draws differs too
history = model.fit(x, y, batch_size=16, epochs=2, shuffle=True, verbose=0)
after = torch.rand(3).tolist()  # what the replica's RNG gives after fit's own draws
with open(os.path.join(out, f"report_{rank}.json"), "w") as f:
    json.dump({"x": x.tolist(), "y": y.tolist(), "initial": initial, "loss": history.history["loss"],
               "final": [w.tolist() for w in model.get_weights()], "after": after}, f)
'''


@pytest.mark.slow
def test_shuffled_fit_takes_the_chiefs_arrays_and_order_and_draws_as_one_process_does(tmp_path):
    import torch

    reports = mp.run_replica_reports(tmp_path, SHUFFLED, replicas=2)
    assert reports[0]["x"] != reports[1]["x"]
    x, y = np.array(reports[0]["x"], dtype="float32"), np.array(reports[0]["y"], dtype="float32")

    def reference(seed: int) -> tuple:
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
        model.set_weights([np.array(w, dtype="float32") for w in reports[0]["initial"]])
        torch.manual_seed(seed)
        history = model.fit(x, y, batch_size=16, epochs=2, shuffle=True, verbose=0)
        return history.history["loss"], model.get_weights(), torch.rand(3).tolist()

    loss, weights, _ = reference(100)  # the chief's RNG: its shuffle order
    for rank, report in enumerate(reports):
        np.testing.assert_allclose(report["loss"], loss, rtol=1e-5)
        for got, want in zip(report["final"], weights):
            np.testing.assert_allclose(np.array(got), want, atol=1e-5)
        # the replica that rebuilt its pipeline from the chief's arrays drew its shuffle seed once, as one
        # process does: its later random numbers are unchanged
        assert report["after"] == reference(100 + rank)[2], rank
