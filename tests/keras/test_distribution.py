"""tf.keras.distribution: mesh/layout/LayoutMap semantics in one process, and ModelParallel /
DataParallel training on 2 real gloo processes compared with a 1-process run and MirroredStrategy."""
from __future__ import annotations


import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests import _multiprocess as mp

dist = tf.keras.distribution


@pytest.fixture(autouse=True)
def _no_global_distribution():
    yield
    dist.set_distribution(None)


# ----- single-process semantics -------------------------------------------------------------------
def test_list_devices_and_device_mesh():
    assert dist.list_devices("cpu") == ["cpu:0"]  # a lone process is one CPU device
    mesh = dist.DeviceMesh((1, 2), ["batch", "model"], ["cpu:0", "cpu:1"])
    assert mesh.shape == (1, 2) and mesh.axis_names == ["batch", "model"]
    assert mesh.devices.shape == (1, 2) and mesh.devices[0, 1] == "cpu:1"
    assert dist.DeviceMesh((1,), ["batch"]).devices.tolist() == ["cpu:0"]  # devices default to list_devices()


def test_mesh_shape_must_multiply_to_device_count():
    with pytest.raises(ValueError, match=r"shape \(2, 2\) holds 4 devices, but 2 device\(s\)"):
        dist.DeviceMesh((2, 2), ["batch", "model"], ["cpu:0", "cpu:1"])
    with pytest.raises(ValueError, match="same length"):
        dist.DeviceMesh((2,), ["batch", "model"], ["cpu:0", "cpu:1"])
    with pytest.raises(ValueError, match="Unknown device"):
        dist.DeviceMesh((1,), ["batch"], ["tpu:0"])


def test_tensor_layout_axis_must_be_in_the_mesh():
    mesh = dist.DeviceMesh((1, 2), ["batch", "model"], ["cpu:0", "cpu:1"])
    assert dist.TensorLayout((None, "model"), mesh).axes == (None, "model")
    with pytest.raises(ValueError, match=r"name \['modle'\], which the mesh does not have"):
        dist.TensorLayout((None, "modle"), mesh)
    layout_map = dist.LayoutMap(mesh)
    with pytest.raises(ValueError, match="modle"):
        layout_map["dense.*kernel"] = (None, "modle")  # a tuple gets the map's mesh, and is checked


def test_layout_map_matches_paths_by_regex():
    mesh = dist.DeviceMesh((1, 2), ["batch", "model"], ["cpu:0", "cpu:1"])
    layout_map = dist.LayoutMap(mesh)
    layout_map["dense.*kernel"] = (None, "model")
    layout_map["dense.*bias"] = dist.TensorLayout(("model",))
    assert layout_map["dense_1/kernel"].axes == (None, "model")
    assert layout_map["dense/bias"].device_mesh is mesh
    assert layout_map["conv2d/kernel"] is None and len(layout_map) == 2 and list(layout_map) == ["dense.*kernel",
                                                                                                 "dense.*bias"]
    layout_map["dense_1.*"] = (None, None)
    with pytest.raises(ValueError, match="matches several layout keys"):
        layout_map["dense_1/kernel"]
    with pytest.raises(ValueError, match="already in the LayoutMap"):
        layout_map["dense.*bias"] = ("model",)
    with pytest.raises(ValueError, match="TensorLayout or a tuple"):
        layout_map["x"] = "model"


def test_model_parallel_arguments_and_distribute_tensor_on_one_device():
    mesh = dist.DeviceMesh((1, 1), ["batch", "model"], ["cpu:0"])
    layout_map = dist.LayoutMap(mesh)
    layout_map["d/kernel"] = (None, "model")
    assert dist.ModelParallel(layout_map=layout_map).batch_dim_name == "batch"
    keyed = dist.ModelParallel(device_mesh=mesh, layout_map=layout_map, batch_dim_name="model")
    assert keyed.batch_dim_name == "model" and keyed.layout_map is layout_map and keyed.auto_shard_dataset
    with pytest.raises(TypeError, match="positional"):  # Keras 3.15 refuses Keras 3.0's positional form too
        dist.ModelParallel(mesh, layout_map, "model")
    with pytest.raises(ValueError, match="needs layout_map"):
        dist.ModelParallel()
    tensor = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(dist.distribute_tensor(tensor, dist.TensorLayout((None, "model"), mesh)), tensor)
    with pytest.raises(ValueError, match="has 1 entries but the tensor has 2"):
        dist.distribute_tensor(tensor, dist.TensorLayout(("model",), mesh))
    two = dist.DeviceMesh((1, 2), ["batch", "model"], ["cpu:0", "cpu:1"])
    with pytest.raises(ValueError, match="set_distribution"):
        dist.distribute_tensor(tensor, dist.TensorLayout((None, "model"), two))


def _dense_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,), name="d")])
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_set_distribution_owns_new_models_and_warns_on_unmatched_keys():
    mesh = dist.DeviceMesh((1, 1), ["batch", "model"], ["cpu:0"])
    layout_map = dist.LayoutMap(mesh)
    layout_map["d/kernel"] = (None, "model")
    layout_map["conv.*kernel"] = (None, None, None, "model")
    distribution = dist.ModelParallel(layout_map=layout_map, batch_dim_name="batch")
    dist.set_distribution(distribution)
    assert dist.distribution() is distribution
    assert tf.distribute.get_strategy() is distribution.strategy
    model = _dense_model()
    assert model.distribute_strategy is distribution.strategy
    with pytest.warns(UserWarning, match=r"layout key 'conv\.\*kernel' matches no variable"):
        model.fit(np.ones((4, 3), np.float32), np.ones((4, 4), np.float32), batch_size=2, verbose=0)
    dist.set_distribution(None)
    assert dist.distribution() is None and not tf.distribute.has_strategy()


def test_layout_with_wrong_rank_fails_at_setup():
    mesh = dist.DeviceMesh((1, 1), ["batch", "model"], ["cpu:0"])
    layout_map = dist.LayoutMap(mesh)
    layout_map["d/bias"] = (None, "model")  # a bias has one dimension
    dist.set_distribution(dist.ModelParallel(layout_map=layout_map))
    model = _dense_model()
    with pytest.raises(ValueError, match="layout .* for 'd/bias' has 2 entries, but the tensor has 1"):
        model.fit(np.ones((4, 3), np.float32), np.ones((4, 4), np.float32), batch_size=2, verbose=0)


# ----- two real processes -----------------------------------------------------------------------
TRAIN = r'''
import json, os, sys
import numpy as np
import torchstrategy as tf

mode, out = sys.argv[1], sys.argv[2]
dist = tf.keras.distribution
devices = ["cpu:0", "cpu:1"]
strategy = None
if mode == "model_parallel":
    layout_map = dist.LayoutMap(dist.DeviceMesh((1, 2), ["batch", "model"], devices))
    layout_map["dense.*kernel"] = (None, "model")
    layout_map["dense.*bias"] = ("model",)
    dist.set_distribution(dist.ModelParallel(layout_map=layout_map, batch_dim_name="batch"))
elif mode == "data_parallel":
    dist.set_distribution(dist.DataParallel(devices=devices))
elif mode == "mirrored":
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
rng = np.random.default_rng(0)
x = rng.normal(size=(96, 6)).astype(np.float32)
y = rng.integers(0, 3, (96,)).astype(np.int64)
tf.random.set_seed(0)

def build():
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
                                 tf.keras.layers.Dense(6, activation="tanh"), tf.keras.layers.Dense(3)])
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-2),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model

if strategy is not None:
    with strategy.scope():
        model = build()
else:
    model = build()
history = model.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False)
weights = model.get_weights()  # laid-out kernels gathered into whole arrays
local = [tuple((v.to_local() if hasattr(v, "to_local") else v).shape) for v in model.trainable_variables]
owner = model.distribute_strategy
rank = owner.process_rank
evaluated = model.evaluate(x, y, batch_size=32, verbose=0)
predicted = model.predict(x[:12], batch_size=4, verbose=0).tolist()
model.save(os.path.join(out, "model.keras"))  # every rank gathers; the chief writes
reloaded = tf.keras.models.load_model(os.path.join(out, "model.keras"))
same_after_reload = all(np.array_equal(a, b) for a, b in zip(reloaded.get_weights(), weights))
with open(os.path.join(out, f"rank_{rank}.json"), "w") as f:
    json.dump({"history": history.history, "local_shapes": local, "type": type(owner).__name__,
               "replicas": owner.num_replicas_in_sync, "processes": owner.num_processes,
               "evaluate": evaluated, "predict": predicted, "same_after_reload": same_after_reload}, f)
np.savez(os.path.join(out, f"weights_{rank}.npz"), *weights)
'''


def _run(tmp_path, mode, ranks):
    out = tmp_path / mode
    out.mkdir()
    script = mp.write_script(tmp_path, TRAIN)
    result = mp.run_python([script, mode, str(out)], timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    reports = [mp.read_json(out / f"rank_{r}.json") for r in range(ranks)]
    weights = [np.load(out / f"weights_{r}.npz") for r in range(ranks)]
    return reports, [[w[f"arr_{i}"] for i in range(len(w.files))] for w in weights]


@pytest.mark.slow
def test_model_parallel_holds_half_of_each_kernel_and_trains_as_one_process(tmp_path):
    (reference,), (ref_weights,) = _run(tmp_path, "one", 1)
    reports, weights = _run(tmp_path, "model_parallel", 2)
    # kernels (6, 8), (8, 6), (6, 3) and their biases: each rank holds half of the output units
    assert reports[0]["local_shapes"] == [[6, 4], [4], [8, 3], [3], [6, 2], [2]]
    assert reports[1]["local_shapes"] == [[6, 4], [4], [8, 3], [3], [6, 1], [1]]  # 3 units: 2 + 1
    assert reference["local_shapes"] == [[6, 8], [8], [8, 6], [6], [6, 3], [3]]
    assert [r["type"] for r in reports] == ["TensorParallelStrategy"] * 2 and reports[0]["processes"] == 2
    for rank in (0, 1):
        for ours, expected in zip(weights[rank], ref_weights):
            np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
        for key in ("loss", "accuracy"):
            np.testing.assert_allclose(reports[rank]["history"][key], reference["history"][key], rtol=1e-5)
        np.testing.assert_allclose(reports[rank]["evaluate"], reference["evaluate"], rtol=1e-5)
        np.testing.assert_allclose(reports[rank]["predict"], reference["predict"], rtol=1e-5, atol=1e-6)
        assert reports[rank]["same_after_reload"]
    assert not np.allclose(ref_weights[0], weights[0][0] * 0)  # trained weights, not zeros


@pytest.mark.slow
def test_data_parallel_equals_mirrored(tmp_path):
    mirrored, mirrored_weights = _run(tmp_path, "mirrored", 2)
    reports, weights = _run(tmp_path, "data_parallel", 2)
    assert reports[0]["replicas"] == 2 and reports[0]["local_shapes"] == mirrored[0]["local_shapes"]
    for rank in (0, 1):
        for ours, expected in zip(weights[rank], mirrored_weights[0]):
            np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-6)
        assert reports[rank]["history"] == mirrored[0]["history"]


LATE = r'''
import numpy as np
import torchstrategy as tf

dist = tf.keras.distribution
model = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(4)])
model.compile(optimizer="adam", loss="mse")
model.fit(np.ones((8, 6), np.float32), np.ones((8, 4), np.float32), epochs=1, verbose=0)  # set up on one device
layout_map = dist.LayoutMap(dist.DeviceMesh((1, 2), ["batch", "model"], ["cpu:0", "cpu:1"]))
layout_map["dense.*kernel"] = (None, "model")
dist.set_distribution(dist.ModelParallel(layout_map=layout_map, batch_dim_name="batch"))
model.fit(np.ones((8, 6), np.float32), np.ones((8, 4), np.float32), epochs=1, verbose=0)
print("trained", flush=True)
'''


@pytest.mark.slow
def test_a_distribution_set_after_the_model_was_trained_is_refused_saying_to_set_it_first(tmp_path):
    script = mp.write_script(tmp_path, LATE, name="late.py")
    result = mp.run_python([script], timeout=120)
    assert result.returncode != 0 and "trained" not in result.stdout
    assert "was already set up (trained, or its optimizer built) under DefaultStrategy and is now used under " \
           "TensorParallelStrategy (2 processes)" in result.stderr, result.stderr[-3000:]
    assert "Call `keras.distribution.set_distribution(...)`" in result.stderr


def test_get_device_count_counts_what_list_devices_lists():
    """keras.distribution.get_device_count (Keras 3.15): one device type, never a mix."""
    from torchstrategy.keras import distribution

    assert distribution.get_device_count("cpu") == len(distribution.list_devices("cpu")) >= 1
    assert distribution.get_device_count("gpu") == torch.cuda.device_count()
    assert distribution.get_device_count() == len(distribution.list_devices())
    with pytest.raises(ValueError, match="device_type"):
        distribution.get_device_count("tpu")


# ----- keras.distribution.initialize ---------------------------------------------------------------
INITIALIZE = r'''
import json, sys
import torch
import torch.distributed as torch_dist
import torchstrategy as tf

rank, port, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if rank == 0:  # process 0 by arguments, process 1 by KERAS_DISTRIBUTION_* variables (Keras 3 reads both)
    tf.keras.distribution.initialize(job_addresses=f"127.0.0.1:{port}", num_processes=2, process_id=0)
else:
    tf.keras.distribution.initialize()
total = torch.tensor([float(rank + 1)])
torch_dist.all_reduce(total)
strategy = tf.distribute.MultiWorkerMirroredStrategy()  # finds the group initialize made
summed = strategy.reduce("SUM", strategy.run(lambda: torch.tensor(float(rank) + 0.5)), axis=None)
json.dump({"world": torch_dist.get_world_size(), "rank": torch_dist.get_rank(), "all_reduce": float(total),
           "replicas": strategy.num_replicas_in_sync, "strategy_sum": float(summed),
           "devices": tf.keras.distribution.list_devices("cpu")}, open(out, "w"))
'''


@pytest.mark.slow
def test_initialize_joins_two_processes_by_arguments_or_keras_variables(tmp_path):
    script = mp.write_script(tmp_path, INITIALIZE)
    port = mp.free_port()
    variables = {"KERAS_DISTRIBUTION_JOB_ADDRESSES": f"127.0.0.1:{port}", "KERAS_DISTRIBUTION_NUM_PROCESSES": "2",
                 "KERAS_DISTRIBUTION_PROCESS_ID": "1"}
    processes = [mp.start_python([script, str(rank), str(port), str(tmp_path / f"r{rank}.json")],
                                 env=mp.clean_env(**(variables if rank else {}))) for rank in (0, 1)]
    try:
        for process in processes:
            _, stderr = process.communicate(timeout=120)
            assert process.returncode == 0, stderr[-3000:]
    finally:
        for process in processes:
            if process.poll() is None:
                mp.kill_process_group(process)
    reports = [mp.read_json(tmp_path / f"r{rank}.json") for rank in (0, 1)]
    reference = sum(float(rank + 1) for rank in (0, 1))  # what one process adding both ranks' values gets
    for rank, report in enumerate(reports):
        assert (report["world"], report["rank"], report["replicas"]) == (2, rank, 2)
        assert report["all_reduce"] == reference and report["strategy_sum"] == 0.5 + 1.5
        assert report["devices"] == ["cpu:0", "cpu:1"]


def test_initialize_alone_does_nothing_and_bad_arguments_are_named():
    import torch.distributed as torch_dist

    dist.initialize()  # a lone process (clean test environment): no group to join
    assert not torch_dist.is_initialized()
    with pytest.raises(ValueError, match="process_id is needed"):
        dist.initialize(job_addresses="127.0.0.1:1234", num_processes=2)
    with pytest.raises(ValueError, match="3 job addresses for num_processes=2"):
        dist.initialize(job_addresses="a:1,b:2,c:3", num_processes=2, process_id=0)
    with pytest.raises(ValueError, match="process_id=2 is outside 0..1"):
        dist.initialize(job_addresses="127.0.0.1:1234", num_processes=2, process_id=2)
    with pytest.raises(ValueError, match="not 'host:port'"):
        dist.initialize(job_addresses="127.0.0.1", num_processes=2, process_id=0)
    from torchstrategy import cluster

    assert cluster.detect() is None  # a refused call declares no job
