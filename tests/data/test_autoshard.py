"""AutoShardPolicy.FILE: the pipeline rewrite (files split per input worker, batches cut to the worker's
rows) and two TF_CONFIG workers training on their own files, against one process trained on the same steps."""
from __future__ import annotations

import contextlib
import json
import os
import sys

import numpy as np
import pytest

from tests import _multiprocess as mp


def _write_csv_files(directory, rows_per_file):
    """File i holds rows `id,x0,x1,x2,y` with consecutive ids; returns the paths in order."""
    paths, next_id = [], 0
    rng = np.random.default_rng(3)
    for index, rows in enumerate(rows_per_file):
        path = os.path.join(directory, f"part-{index}.csv")
        with open(path, "w") as handle:
            for _ in range(rows):
                x = rng.normal(size=3)
                handle.write(f"{next_id},{x[0]:.6f},{x[1]:.6f},{x[2]:.6f},{x.sum() * 0.5 + 1:.6f}\n")
                next_id += 1
        paths.append(path)
    return paths


def _ids(batch):
    return [int(v) for v in np.asarray(batch[0]).reshape(-1)]


def test_files_are_split_per_worker_and_batches_cut_to_its_rows(tmp_path):
    import torchstrategy as tf
    from torchstrategy.data import autoshard

    paths = _write_csv_files(str(tmp_path), [3, 3, 3, 3])
    pipeline = tf.data.Dataset.list_files(str(tmp_path / "*.csv"), shuffle=False).interleave(
        lambda name: tf.data.experimental.CsvDataset(name, [tf.float32] * 5), cycle_length=1).batch(4)
    workers = [autoshard.rebatch(autoshard.shard_by_files(pipeline, 2, w), lambda rows: rows // 2)
               for w in (0, 1)]
    seen = [[_ids(batch) for batch in worker] for worker in workers]
    assert seen[0] == [[0, 1], [2, 6], [7, 8]]  # files 0 and 2, two rows a step
    assert seen[1] == [[3, 4], [5, 9], [10, 11]]  # files 1 and 3
    assert [_ids(b) for b in pipeline][0] == [0, 1, 2, 3]  # the original pipeline is untouched

    listed = tf.data.experimental.CsvDataset(paths, [tf.float32] * 5).map(lambda *c: c).batch(6).prefetch(1)
    first = autoshard.rebatch(autoshard.shard_by_files(listed, 2, 0), lambda rows: rows // 2)
    assert [_ids(b) for b in first] == [[0, 1, 2], [6, 7, 8]]


def test_pipelines_that_cannot_be_sharded_by_files_say_why(tmp_path):
    import torchstrategy as tf
    from torchstrategy.data import autoshard

    with pytest.raises(autoshard.FileShardError, match="reads no files"):
        autoshard.shard_by_files(tf.data.Dataset.range(8).batch(2), 2, 0)
    paths = _write_csv_files(str(tmp_path), [2])
    with pytest.raises(autoshard.FileShardError, match="1 file.*2 input workers"):
        autoshard.shard_by_files(tf.data.experimental.CsvDataset(paths, [tf.float32] * 5), 2, 0)
    unbatched = tf.data.experimental.CsvDataset(paths, [tf.float32] * 5).batch(2).unbatch()
    with pytest.raises(autoshard.FileShardError, match="batch"):
        autoshard.rebatch(unbatched, lambda rows: rows)


WORKER = r'''
import json, os, sys
import numpy as np
import torchstrategy as tf

out, data, policy = sys.argv[1], sys.argv[2], sys.argv[3]
task = json.loads(os.environ["TF_CONFIG"])["task"]
name = f"{task['type']}{task['index']}"
strategy = tf.distribute.MultiWorkerMirroredStrategy()


def pipeline(pattern, shuffle, batch):
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = getattr(tf.data.experimental.AutoShardPolicy, policy)
    files = tf.data.Dataset.list_files(os.path.join(data, pattern), shuffle=shuffle)
    rows = files.interleave(lambda f: tf.data.experimental.CsvDataset(f, [tf.float32] * 5), cycle_length=1)
    return rows.map(lambda i, a, b, c, y: (tf.stack([a, b, c]), tf.reshape(y, [1]), i)).batch(batch) \
        .with_options(options)


def ids_per_step(dataset):
    return [[int(v) for v in np.asarray(ids).reshape(-1)] for _, _, ids in strategy.experimental_distribute_dataset(dataset)]


report = {"ordered": ids_per_step(pipeline("even-*.csv", False, 4)),
          "shuffled": ids_per_step(pipeline("even-*.csv", True, 4)),
          "uneven_steps": len(ids_per_step(pipeline("uneven-*.csv", False, 4)))}
options = tf.data.Options()
options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.FILE
try:
    strategy.experimental_distribute_dataset(tf.data.Dataset.range(8).batch(4).with_options(options))
    report["not_files"] = None
except ValueError as error:
    report["not_files"] = str(error)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.set_weights([np.array([[0.1], [-0.2], [0.3]], np.float32), np.array([0.05], np.float32)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
model.fit(pipeline("even-*.csv", False, 4).map(lambda x, y, i: (x, y)), epochs=2, verbose=0)
report["weights"] = [w.tolist() for w in model.get_weights()]
with open(os.path.join(out, f"{name}.json"), "w") as handle:
    json.dump(report, handle)
'''


def _run_two_workers(tmp_path, data, policy):
    script = mp.write_script(tmp_path, WORKER)
    cluster = {"chief": [f"{mp.LOOPBACK}:{mp.free_port()}"], "worker": [f"{mp.LOOPBACK}:{mp.free_port()}"]}
    with contextlib.ExitStack() as stack:
        procs = [stack.enter_context(mp.process_group(
            [sys.executable, script, str(tmp_path), data, policy],
            env=mp.clean_env(TF_CONFIG=json.dumps({"cluster": cluster, "task": task}))))
            for task in ({"type": "chief", "index": 0}, {"type": "worker", "index": 0})]
        results = [proc.communicate(timeout=240) for proc in procs]
        assert all(proc.returncode == 0 for proc in procs), results
    return [mp.read_json(tmp_path / f"{name}.json") for name in ("chief0", "worker0")]


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["FILE", "AUTO"])  # TF: AUTO shards by files where the pipeline reads files
def test_two_tf_config_workers_read_their_own_files(tmp_path, policy):
    import torchstrategy as tf

    data = tmp_path / "data"
    data.mkdir()
    even = _write_csv_files(str(data), [8, 8, 8, 8])
    for index, path in enumerate(even):
        os.rename(path, data / f"even-{index}.csv")
    for index, rows in enumerate([8, 4, 8]):
        with open(data / f"uneven-{index}.csv", "w") as handle:
            handle.writelines(f"{index * 100 + r},0,0,0,0\n" for r in range(rows))
    chief, worker = _run_two_workers(tmp_path, str(data), policy)

    # each worker reads every other file (sorted names) and takes 2 of each 4-row global batch
    assert chief["ordered"] == [[r, r + 1] for f in (0, 2) for r in range(f * 8, f * 8 + 8, 2)]
    assert worker["ordered"] == [[r, r + 1] for f in (1, 3) for r in range(f * 8, f * 8 + 8, 2)]
    # an unseeded list_files shuffle is the same on both workers, so the files are still split exactly
    assert sorted(sum(chief["shuffled"] + worker["shuffled"], [])) == list(range(32))
    # 16 rows (files 0, 2) vs 4 rows (file 1) at 2 a step: both stop after the shorter worker's 2 steps
    assert chief["uneven_steps"] == worker["uneven_steps"] == 2

    # one process trained on the same global batches: chief's 2 rows then the worker's 2 rows each step
    table = np.concatenate([np.loadtxt(data / f"even-{i}.csv", delimiter=",", ndmin=2) for i in range(4)])
    rows_of = {0: table[0:8], 2: table[16:24], 1: table[8:16], 3: table[24:32]}
    first, second = np.concatenate([rows_of[0], rows_of[2]]), np.concatenate([rows_of[1], rows_of[3]])
    steps = [np.concatenate([first[s:s + 2], second[s:s + 2]]) for s in range(0, 16, 2)]
    ordered = np.concatenate(steps).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.set_weights([np.array([[0.1], [-0.2], [0.3]], np.float32), np.array([0.05], np.float32)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    model.fit(ordered[:, 1:4], ordered[:, 4:5], batch_size=4, epochs=2, shuffle=False, verbose=0)
    for ours, expected in zip(chief["weights"], model.get_weights()):
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)
    assert chief["weights"] == worker["weights"]
    assert "reads no files" in chief["not_files"] and "AutoShardPolicy.DATA" in chief["not_files"]
