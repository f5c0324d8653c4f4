"""Inputs a 2-process MirroredStrategy cannot split: an unbatched dataset (fit and
experimental_distribute_dataset) and a non-dataset fail on every replica, before any step, with the
same message a one-process 2-replica strategy gives."""
from __future__ import annotations

import json

import numpy as np
import pytest

import torchstrategy as tf
from tests import _multiprocess as mp
from tests._local_replicas import ThreadReplicaStrategy

# Each replica tries the bad inputs, writes the errors it got and how many steps ran, then trains one
# epoch on the batched dataset (the control: the same data, batched, does split and train).
SCRIPT = r'''
import json, os, sys
import numpy as np
import torchstrategy as tf

out = sys.argv[1]
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
x = np.arange(24, dtype=np.float32).reshape(8, 3)
y = np.arange(8, dtype=np.float32)
unbatched = tf.data.Dataset.from_tensor_slices((x, y))
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
steps = []

class CountSteps(tf.keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        steps.append(batch)

def error_of(call):
    try:
        call()
    except (TypeError, ValueError) as error:
        return [type(error).__name__, str(error)]
    return None

before = [w.tolist() for w in model.get_weights()]
report = {
    "replicas": strategy.num_replicas_in_sync,
    "distribute": error_of(lambda: strategy.experimental_distribute_dataset(unbatched)),
    "fit": error_of(lambda: model.fit(unbatched, epochs=1, verbose=0, callbacks=[CountSteps()])),
    "not_a_dataset": error_of(lambda: strategy.experimental_distribute_dataset([x, y])),
}
report["steps_before_error"] = list(steps)
report["weights_unchanged"] = [w.tolist() for w in model.get_weights()] == before
model.fit(unbatched.batch(4), epochs=1, verbose=0, callbacks=[CountSteps()])
report["batched_steps"] = len(steps)
with open(os.path.join(out, f"report_{rank}.json"), "w") as f:
    json.dump(report, f)
print("done rank", rank, flush=True)
'''


def _one_process_errors() -> dict:
    """The same bad inputs under a 2-replica strategy in this process: the reference messages."""
    strategy = ThreadReplicaStrategy(2)
    try:
        x = np.arange(24, dtype=np.float32).reshape(8, 3)
        y = np.arange(8, dtype=np.float32)
        errors = {}
        for name, value in (("distribute", tf.data.Dataset.from_tensor_slices((x, y))), ("not_a_dataset", [x, y])):
            try:
                strategy.experimental_distribute_dataset(value)
            except (TypeError, ValueError) as error:
                errors[name] = [type(error).__name__, str(error)]
        return errors
    finally:
        strategy.teardown()


@pytest.mark.slow
def test_two_processes_refuse_unbatched_and_non_dataset_inputs_before_any_step(tmp_path):
    reference = _one_process_errors()
    script = mp.write_script(tmp_path, SCRIPT)
    result = mp.run_python([script, str(tmp_path)], timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    reports = [json.loads((tmp_path / f"report_{rank}.json").read_text()) for rank in range(2)]
    for report in reports:
        assert report["replicas"] == 2
        kind, message = report["distribute"]
        assert kind == "ValueError" and "The dataset is not batched" in message
        assert ".batch(global_batch_size)" in message and "2 replicas in sync" in message
        assert report["distribute"] == reference["distribute"]
        assert report["fit"] == report["distribute"]  # fit goes through the same check, before its first step
        assert report["steps_before_error"] == [] and report["weights_unchanged"]
        assert report["not_a_dataset"] == reference["not_a_dataset"]
        assert report["not_a_dataset"][0] == "TypeError" and "from_tensor_slices" in report["not_a_dataset"][1]
        assert report["batched_steps"] == 2  # 8 rows in global batches of 4: the batched control trains
    assert result.stdout.count("done rank") == 2
