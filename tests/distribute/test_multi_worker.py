"""Multi-process launches other than the built-in one: torchrun on one and two "nodes" (c10d
rendezvous on 127.0.0.1), TF_CONFIG clusters, and the seed-style script under each."""
from __future__ import annotations

import contextlib
import json
import os
import socket
import sys

import numpy as np
import pytest

from tests import _multiprocess as mp

# The two-node script: argv = mode, output folder, replica count. Each replica writes what it
# saw; the chief writes the final weights. The 1-replica run is the single-process reference.
TRAIN = r'''
import json, os, sys
import numpy as np, torch
import torchstrategy as tf

mode, out, replicas = sys.argv[1], sys.argv[2], int(sys.argv[3])
if len(sys.argv) > 4 and sys.argv[4] == "multi_worker":
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
else:
    strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
rng = np.random.default_rng(0)
n = 512
x = rng.random((n, 6, 6, 3)).astype(np.float32)
x[:, 0, 0, 0] = np.arange(n)  # sample id, read back by the model to count visits
y = rng.integers(0, 4, (n, 1)).astype(np.uint8)
seen = []

class Counting(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.body = tf.keras.Sequential([
            tf.keras.layers.Conv2D(4, 3, activation="relu"), tf.keras.layers.Flatten(), tf.keras.layers.Dense(4)])

    def call(self, inputs, training=False):
        if training:
            seen.extend(int(v) for v in inputs[:, 0, 0, 0].tolist())
        return self.body(inputs * 0.01)

tf.random.set_seed(0)
with strategy.scope():
    model = Counting()
    model.build((None, 6, 6, 3))
    optimizer = tf.keras.optimizers.Adam(1e-2)
    model.compile(optimizer=optimizer, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])

dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512, seed=3).batch(256)
if mode == "fit":
    history = model.fit(dataset, epochs=2, verbose=0)
    logs = history.history
else:
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE)

    def step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_object(labels, model(images, training=True)),
                                              global_batch_size=256)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    logs = {"loss": []}
    for epoch in range(2):
        for batch in strategy.experimental_distribute_dataset(dataset):
            total = strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(step, args=(batch,)), axis=None)
            logs["loss"].append(float(total))

rank = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
with open(os.path.join(out, f"seen_{rank}.json"), "w") as f:
    json.dump({"seen": seen, "logs": logs, "replicas": strategy.num_replicas_in_sync,
               "threads": torch.get_num_threads(), "master_addr": os.environ.get("MASTER_ADDR")}, f)
if strategy.extended.should_checkpoint:
    np.savez(os.path.join(out, "weights.npz"), *model.get_weights())
print("done rank", rank, flush=True)
'''


SEED_SCRIPT = r'''
import json, os, sys
import torchstrategy as tf

strategy = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
(train_images, train_labels), (test_images, test_labels) = tf.keras.datasets.cifar10.load_data()
train_images, test_images = train_images / 255.0, test_images / 255.0
tf.random.set_seed(0)
with strategy.scope():
    model = tf.keras.models.Sequential([
        tf.keras.layers.Conv2D(32, (3, 3), activation="relu", input_shape=(32, 32, 3)),
        tf.keras.layers.MaxPooling2D((2, 2)),
        tf.keras.layers.Conv2D(64, (3, 3), activation="relu"),
        tf.keras.layers.MaxPooling2D((2, 2)),
        tf.keras.layers.Conv2D(64, (3, 3), activation="relu"),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
train_ds = strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices((train_images, train_labels)).shuffle(10000).batch(128)
    .prefetch(tf.data.AUTOTUNE))
history = model.fit(train_ds, epochs=2, verbose=2)
if strategy.extended.should_checkpoint:
    print("HISTORY " + json.dumps(history.history), flush=True)
'''


@pytest.fixture(scope="module")
def cifar_dir(tmp_path_factory):
    from torchstrategy.keras.datasets import testing

    root = tmp_path_factory.mktemp("cifar")
    testing.write_cifar10(str(root), num_train=1024, num_test=256, learnable=True, seed=5)
    return str(root)


def _history(result):
    lines = [line for line in result.stdout.splitlines() if line.startswith("HISTORY ")]
    assert len(lines) == 1, result.stdout + result.stderr  # printed by the chief only
    return json.loads(lines[0][len("HISTORY "):])


def _torchrun_args(port, nnodes=1, nproc=2, node_rank=0):
    return [f"--nnodes={nnodes}", f"--nproc_per_node={nproc}", f"--node_rank={node_rank}", "--rdzv-backend=c10d",
            f"--rdzv-endpoint={mp.LOOPBACK}:{port}", "--rdzv-id=torchstrategy-test", f"--local-addr={mp.LOOPBACK}",
            "--max-restarts=0"]


@pytest.mark.slow
def test_seed_style_script_plain_python_and_torchrun_agree(tmp_path, cifar_dir):
    script = mp.write_script(tmp_path, SEED_SCRIPT)
    env = mp.clean_env(TORCHSTRATEGY_DATA=cifar_dir, TORCHSTRATEGY_OFFLINE="1")
    plain = mp.run_python([script], env=env, timeout=300)
    assert plain.returncode == 0, plain.stderr
    launched = mp.run_torchrun(_torchrun_args(mp.free_port()), [script], env=env, timeout=300)
    assert launched.returncode == 0, launched.stderr
    first, second = _history(plain), _history(launched)
    assert first["accuracy"][1] > first["accuracy"][0] and first["accuracy"][1] > 0.3
    np.testing.assert_allclose(first["loss"], second["loss"], rtol=1e-5)
    assert plain.stdout.count("Epoch 1/2") == 1  # the progress lines come from the chief only


def _weights(folder):
    data = np.load(os.path.join(folder, "weights.npz"))
    return [data[f"arr_{i}"] for i in range(len(data.files))]


@pytest.mark.slow
def test_two_nodes_by_torchrun_and_by_tf_config_agree_with_one_process(tmp_path):
    script = mp.write_script(tmp_path, TRAIN)
    outs = {name: tmp_path / name for name in ("one", "torchrun", "tf_config")}
    for folder in outs.values():
        folder.mkdir()
    single = mp.run_python([script, "fit", str(outs["one"]), "1"], timeout=240)
    assert single.returncode == 0, single.stderr

    port = mp.free_port()
    with contextlib.ExitStack() as stack:
        nodes = [stack.enter_context(mp.process_group(
            [sys.executable, "-m", "torch.distributed.run", *_torchrun_args(port, nnodes=2, nproc=1, node_rank=rank),
             script, "fit", str(outs["torchrun"]), "1", "multi_worker"])) for rank in (0, 1)]
        results = [node.communicate(timeout=300) for node in nodes]
        assert all(node.returncode == 0 for node in nodes), results

    chief, worker = mp.free_port(), mp.free_port()
    cluster = {"chief": [f"{mp.LOOPBACK}:{chief}"], "worker": [f"{mp.LOOPBACK}:{worker}"]}
    tasks = [{"type": "chief", "index": 0}, {"type": "worker", "index": 0}]
    with contextlib.ExitStack() as stack:
        procs = [stack.enter_context(mp.process_group(
            [sys.executable, script, "fit", str(outs["tf_config"]), "1", "multi_worker"],
            env=mp.clean_env(TF_CONFIG=json.dumps({"cluster": cluster, "task": task})))) for task in tasks]
        results = [proc.communicate(timeout=300) for proc in procs]
        assert all(proc.returncode == 0 for proc in procs), results

    reference = _weights(outs["one"])
    for name in ("torchrun", "tf_config"):
        reports = [mp.read_json(outs[name] / f"seen_{rank}.json") for rank in (0, 1)]
        assert [r["replicas"] for r in reports] == [2, 2]
        counts = np.bincount(np.array(reports[0]["seen"] + reports[1]["seen"]), minlength=512)
        assert counts.tolist() == [2] * 512
        for ours, expected in zip(_weights(outs[name]), reference):
            np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
    torchrun_reports = [mp.read_json(outs["torchrun"] / f"seen_{rank}.json") for rank in (0, 1)]
    assert {r["master_addr"] for r in torchrun_reports} == {mp.LOOPBACK}  # traffic stayed on loopback


@pytest.mark.slow
def test_tf_config_with_the_chief_port_in_use_is_a_clear_error(tmp_path):
    import torchstrategy as tf

    with socket.socket() as busy:
        busy.bind((mp.LOOPBACK, 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        config = {"cluster": {"chief": [f"{mp.LOOPBACK}:{port}"], "worker": [f"{mp.LOOPBACK}:{mp.free_port()}"]},
                  "task": {"type": "chief", "index": 0}}
        script = mp.write_script(tmp_path, "import torchstrategy as tf\ntf.distribute.MultiWorkerMirroredStrategy()\n")
        result = mp.run_python([script], env=mp.clean_env(TF_CONFIG=json.dumps(config)), timeout=120)
    assert result.returncode != 0
    assert f"{mp.LOOPBACK}:{port}" in result.stderr and "pick a free one" in result.stderr
    assert tf.distribute.MultiWorkerMirroredStrategy  # the name exists under tf.distribute


@pytest.mark.slow
def test_torchrun_process_count_must_match_the_devices(tmp_path):
    script = mp.write_script(tmp_path, "import torchstrategy as tf\n"
                                       "tf.distribute.MirroredStrategy(['cpu:0', 'cpu:1', 'cpu:2'])\n")
    result = mp.run_torchrun(_torchrun_args(mp.free_port()), [script], timeout=180)
    assert result.returncode != 0
    assert "Mismatched world sizes" in result.stderr


@pytest.mark.slow
def test_bad_tf_config_is_reported_before_any_process_group(tmp_path):
    script = mp.write_script(tmp_path, "import torchstrategy as tf\ntf.distribute.MultiWorkerMirroredStrategy()\n")
    result = mp.run_python([script], env=mp.clean_env(TF_CONFIG="{not json"), timeout=60)
    assert result.returncode != 0 and "TF_CONFIG" in result.stderr


def test_without_a_cluster_the_resolver_names_no_task(monkeypatch):
    # TF 2.21: MultiWorkerMirroredStrategy() outside a cluster has a TFConfigClusterResolver whose
    # task_type and task_id are None and whose cluster_spec() is empty; the strategy is one local worker.
    import torchstrategy as tf

    monkeypatch.delenv("TF_CONFIG", raising=False)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    resolver = strategy.cluster_resolver
    assert isinstance(resolver, tf.distribute.cluster_resolver.TFConfigClusterResolver)
    assert resolver.task_type is None and resolver.task_id is None
    assert not resolver.cluster_spec().as_dict()
    assert strategy.num_replicas_in_sync == 1


TASK_REPLICAS = r'''
import json, os, sys
import numpy as np
import torchstrategy as tf

out, logical = sys.argv[1], int(sys.argv[2])
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * logical)
strategy = tf.distribute.MultiWorkerMirroredStrategy()
rng = np.random.default_rng(0)
x = rng.normal(size=(64, 5)).astype(np.float32)
y = (x @ np.arange(1, 6, dtype=np.float32)[:, None]).astype(np.float32)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(3, activation="relu"),
                                 tf.keras.layers.Dense(1)])
    model.set_weights([np.linspace(-0.5, 0.5, w.size).reshape(w.shape).astype(np.float32)
                       for w in model.get_weights()])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(16), epochs=2, verbose=0)
resolver = strategy.cluster_resolver
report = {"replicas": strategy.num_replicas_in_sync, "task": [resolver.task_type, resolver.task_id],
          "rank": os.environ.get("RANK"), "pid": os.getpid(), "parent": os.getppid(),
          "weights": [w.tolist() for w in model.get_weights()]}
with open(os.path.join(out, f"report_{os.getpid()}.json"), "w") as handle:
    json.dump(report, handle)
'''


@pytest.mark.slow
def test_a_tf_config_task_runs_one_replica_per_local_device(tmp_path):
    # TF's MultiWorkerMirroredStrategy runs a task's replicas on every local GPU; here each is a process
    # the task starts. Without a GPU the launch logic runs on 2 logical CPU devices.
    script = mp.write_script(tmp_path, TASK_REPLICAS)
    alone, task = tmp_path / "alone", tmp_path / "task"
    alone.mkdir(), task.mkdir()
    reference = mp.run_python([script, str(alone), "2"], timeout=120)  # no cluster: one local worker, as TF
    assert reference.returncode == 0, reference.stderr
    cluster = {"chief": [f"{mp.LOOPBACK}:{mp.free_port()}"]}
    config = json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}})
    result = mp.run_python([script, str(task), "2"], env=mp.clean_env(TF_CONFIG=config), timeout=180)
    assert result.returncode == 0, result.stderr
    [single] = [mp.read_json(p) for p in alone.iterdir()]
    reports = sorted((mp.read_json(p) for p in task.iterdir()), key=lambda r: r["rank"] or "0")
    assert single["replicas"] == 1
    assert [r["replicas"] for r in reports] == [2, 2]
    assert reports[0]["task"] == ["chief", 0] and reports[0]["rank"] is None  # the task's own process
    assert reports[1]["rank"] == "1" and reports[1]["parent"] == reports[0]["pid"]  # started by it
    for ours, expected in zip(reports[0]["weights"], single["weights"]):
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)
    assert reports[0]["weights"] == reports[1]["weights"]
