"""The cross-replica pieces of the data-parallel strategies, exercised by one 2-process job and
compared with the same computations done in this test's own process."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tests import _multiprocess as mp

FEATURES = r'''
import json, os, sys
import numpy as np, torch
import torchstrategy as tf

out = sys.argv[1]
strategy = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
report = {}
rng = np.random.default_rng(1)
x = rng.random((50, 4)).astype(np.float32)
y = rng.integers(0, 3, (50, 1))

# evaluate / predict on data whose last global batch (50 = 16 + 16 + 16 + 2) splits unevenly
tf.random.set_seed(0)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,))])
    model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
report["weights"] = [w.tolist() for w in model.get_weights()]
report["evaluate"] = model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
report["predict"] = model.predict(x, batch_size=16, verbose=0).tolist()
report["predict_tail"] = model.predict(x[:33], batch_size=16, verbose=0).tolist()  # last batch: 1 row

# custom-loop collectives
local = torch.tensor([[float(rank + 1)] * 3] * (rank + 1))  # replica 0: 1 row, replica 1: 2 rows
report["reduce_sum"] = strategy.reduce("SUM", local.sum(0), axis=None).tolist()
report["reduce_mean_axis0"] = strategy.reduce(tf.distribute.ReduceOp.MEAN, local, axis=0).tolist()
report["gather"] = strategy.gather(local, axis=0).tolist()
report["local_results"] = len(strategy.experimental_local_results(local))
def replica_fn():
    ctx = tf.distribute.get_replica_context()
    return (ctx.all_reduce("SUM", torch.tensor(float(ctx.replica_id_in_sync_group + 1))).item(),
            ctx.all_gather(torch.tensor([ctx.replica_id_in_sync_group]), axis=0).tolist())
report["replica_ctx"] = strategy.run(replica_fn)

# datasets built per replica
def dataset_fn(ctx):
    return (tf.data.Dataset.range(12).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
            .batch(ctx.get_per_replica_batch_size(4)))
report["from_function"] = [b.tolist() for b in strategy.distribute_datasets_from_function(dataset_fn)]
report["context"] = [strategy._input_context().num_input_pipelines, strategy._input_context().input_pipeline_id]

# synchronized batch norm: statistics over the global batch
bn_x = torch.from_numpy(rng.random((8, 5)).astype(np.float32))
with strategy.scope():
    bn = tf.keras.layers.BatchNormalization(synchronized=True, momentum=0.5)
    bn.build((None, 5))
rows = slice(4 * rank, 4 * rank + 4)
bn_out = strategy.run(lambda: bn(bn_x[rows], training=True))
report["bn_out"] = bn_out.tolist()
report["bn_moving"] = [bn.moving_mean.tolist(), bn.moving_variance.tolist()]

# a callback that stops only replica 1 mid-epoch: both stop together (no hang)
class StopOnOne(tf.keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        if rank == 1 and batch == 2:
            self.model.stop_training = True
steps = []
model.fit(x, y, batch_size=4, epochs=3, verbose=0, callbacks=[
    StopOnOne(), tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda b, logs: steps.append(b))])
report["steps_before_stop"] = steps

# shuffles seeded differently per replica are put in step (rank 0's seeds): one global order
synced = tf.data.Dataset.from_tensor_slices(np.arange(50)).shuffle(50, seed=rank).batch(10)
report["synced"] = strategy.gather(next(iter(strategy.experimental_distribute_dataset(synced))), axis=0).tolist()
# data that differs between replicas is detected, on every replica
try:
    ds = tf.data.Dataset.from_tensor_slices(x * (rank + 1)).batch(10)
    next(iter(strategy.experimental_distribute_dataset(ds)))
    report["mismatch"] = "not detected"
except ValueError as error:
    report["mismatch"] = str(error)
# ... unless sharding is OFF, where each replica reads its own copy
options = tf.data.Options()
options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
off = tf.data.Dataset.from_tensor_slices(x).shuffle(50, seed=rank).batch(10).with_options(options)
report["off_rows"] = int(next(iter(strategy.experimental_distribute_dataset(off))).shape[0])

with open(os.path.join(out, f"report_{rank}.json"), "w") as f:
    json.dump(report, f)
'''


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("features")
    script = mp.write_script(folder, FEATURES)
    result = mp.run_python([script, str(folder)], timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    return [mp.read_json(folder / f"report_{rank}.json") for rank in (0, 1)]


def _reference_model(report):
    kernel, bias = (torch.tensor(w) for w in report["weights"])
    return lambda x: torch.from_numpy(x) @ kernel + bias


def _data():
    rng = np.random.default_rng(1)
    return rng.random((50, 4)).astype(np.float32), rng.integers(0, 3, (50, 1))


@pytest.mark.slow
def test_weights_start_equal_and_evaluate_matches_one_process(reports):
    assert reports[0]["weights"] == reports[1]["weights"]
    x, y = _data()
    logits = _reference_model(reports[0])(x)
    labels = torch.from_numpy(y).long().squeeze(-1)
    for report in reports:
        assert report["evaluate"]["loss"] == pytest.approx(float(F.cross_entropy(logits, labels)), rel=1e-5)
        assert report["evaluate"]["accuracy"] == pytest.approx(float((logits.argmax(-1) == labels).float().mean()))


@pytest.mark.slow
def test_predict_returns_every_row_once_in_order(reports):
    x, _ = _data()
    logits = _reference_model(reports[0])(x)
    for report in reports:
        np.testing.assert_allclose(report["predict"], logits.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(report["predict_tail"], logits[:33].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_reduce_gather_and_replica_context(reports):
    expected_mean = (torch.tensor([[1.0] * 3]).sum(0) + torch.tensor([[2.0] * 3] * 2).sum(0)) / 3
    for report in reports:
        np.testing.assert_allclose(report["reduce_mean_axis0"], expected_mean.numpy())
        assert report["gather"] == [[1.0] * 3, [2.0] * 3, [2.0] * 3]
        assert report["local_results"] == 1
        assert report["reduce_sum"] == [5.0, 5.0, 5.0]
        assert report["replica_ctx"] == [3.0, [0, 1]]


@pytest.mark.slow
def test_distribute_datasets_from_function_gives_each_replica_its_shard(reports):
    assert reports[0]["context"] == [2, 0] and reports[1]["context"] == [2, 1]
    assert reports[0]["from_function"] == [[0, 2], [4, 6], [8, 10]]
    assert reports[1]["from_function"] == [[1, 3], [5, 7], [9, 11]]


@pytest.mark.slow
def test_synchronized_batch_norm_uses_global_batch_statistics(reports):
    rng = np.random.default_rng(1)
    rng.random((50, 4)), rng.integers(0, 3, (50, 1))
    full = rng.random((8, 5)).astype(np.float32)
    mean, var = full.mean(0), full.var(0)
    normalized = (full - mean) / np.sqrt(var + 1e-3)
    np.testing.assert_allclose(reports[0]["bn_out"], normalized[:4], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(reports[1]["bn_out"], normalized[4:], rtol=1e-4, atol=1e-5)
    for report in reports:
        np.testing.assert_allclose(report["bn_moving"][0], 0.5 * 0 + 0.5 * mean, rtol=1e-5)
        np.testing.assert_allclose(report["bn_moving"][1], 0.5 * 1 + 0.5 * var, rtol=1e-5)


@pytest.mark.slow
def test_stop_training_on_one_replica_stops_all_together(reports):
    assert reports[0]["steps_before_stop"] == reports[1]["steps_before_stop"] == [0, 1, 2]


@pytest.mark.slow
def test_diverging_pipelines_are_detected_and_off_policy_reads_its_own_copy(reports):
    assert reports[0]["synced"] == reports[1]["synced"]
    assert sorted(reports[0]["synced"]) == sorted(set(reports[0]["synced"]))  # 10 distinct rows, none twice
    assert len(reports[0]["synced"]) == 10
    for report in reports:
        assert "different batches on different replicas" in report["mismatch"]
        assert report["off_rows"] == 5
