"""tf.experimental.dtensor on torch DTensor: Mesh and Layout (TF 2.21's text forms and checks, in-process, no
process group), and a real 2-process gloo mesh training a Dense layer with a column-sharded kernel that
matches one process (and a row-sharded DVariable's scatter_add of a tf.IndexedSlices)."""
from __future__ import annotations

import contextlib
import json
import sys

import numpy as np
import pytest

import torchstrategy as tf

from tests import _multiprocess as mp

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def _mesh(size: int = 1):
    dtensor = tf.experimental.dtensor
    return dtensor.Mesh(["x"], np.arange(size), [0], [CPU0] * 1)


def test_mesh_and_layout_text_forms_are_tfs():
    dtensor = tf.experimental.dtensor
    mesh = _mesh()
    assert mesh.to_string() == "|x=1|0|0|" + CPU0  # TF 2.21
    assert (mesh.dim_names, mesh.shape(), mesh.size, mesh.device_type(), mesh.dim_size("x")) == (
        ["x"], [1], 1, "CPU", 1)
    layout = dtensor.Layout([dtensor.UNSHARDED, "x"], mesh)
    assert layout.to_string() == "sharding_specs:unsharded,x, mesh:|x=1|0|0|" + CPU0  # TF 2.21
    batch = dtensor.Layout.batch_sharded(mesh, "x", rank=2)
    assert (batch.sharding_specs, batch.rank, batch.is_fully_replicated(), batch.num_shards(0)) == (
        ["x", "unsharded"], 2, False, 1)  # TF 2.21
    assert dtensor.Layout.replicated(mesh, 3).is_fully_replicated()
    assert dtensor.Layout.inner_sharded(mesh, "x", 2).sharding_specs == ["unsharded", "x"]
    assert (dtensor.UNSHARDED, dtensor.MATCH) == ("unsharded", "match")


def test_layout_placements_follow_the_sharded_axes():
    from torch.distributed.tensor import Replicate, Shard

    dtensor = tf.experimental.dtensor
    mesh = dtensor.Mesh(["batch", "model"], np.arange(4).reshape(2, 2), [0], [CPU0])
    layout = dtensor.Layout(["batch", dtensor.UNSHARDED, "model"], mesh)
    assert layout.placements() == [Shard(0), Shard(2)]
    assert dtensor.Layout.replicated(mesh, 2).placements() == [Replicate(), Replicate()]


def test_bad_meshes_and_layouts_are_refused():
    dtensor = tf.experimental.dtensor
    with pytest.raises(ValueError, match="dim_names"):
        dtensor.Mesh(["x", "y"], np.arange(2), [0], [CPU0])
    with pytest.raises(ValueError, match="once each"):
        dtensor.Mesh(["x"], np.array([0, 0]), [0], [CPU0])
    with pytest.raises(ValueError, match="mesh dimension"):
        dtensor.Layout(["y"], _mesh())
    with pytest.raises(ValueError, match="at most one"):
        dtensor.Layout(["x", "x"], _mesh())


TRAIN = '''
import json, sys
import numpy as np
import torch
import torchstrategy as tf

dtensor = tf.experimental.dtensor
out = sys.argv[1]
dtensor.initialize_accelerator_system("CPU")
mesh = dtensor.create_distributed_mesh([("model", dtensor.num_clients())], device_type="CPU")
rng = np.random.default_rng(0)
x = rng.standard_normal((16, 6)).astype(np.float32)
y = rng.standard_normal((16, 4)).astype(np.float32)
w0 = rng.standard_normal((6, 4)).astype(np.float32)
sharded_cols = dtensor.Layout([dtensor.UNSHARDED, "model"], mesh)
kernel = dtensor.DVariable(dtensor.relayout(dtensor.copy_to_mesh(w0, dtensor.Layout.replicated(mesh, 2)),
                                            sharded_cols), name="kernel")
bias = dtensor.DVariable(dtensor.call_with_layout(torch.zeros, dtensor.Layout(["model"], mesh), 4), name="bias")
xs = dtensor.copy_to_mesh(x, dtensor.Layout.replicated(mesh, 2))
ys = dtensor.copy_to_mesh(y, sharded_cols)
losses = []
for step in range(5):
    with tf.GradientTape() as tape:
        pred = xs @ kernel + bias  # a Dense layer: each process computes its columns of the output
        loss = tf.reduce_mean((pred - ys) ** 2)
    grads = tape.gradient(loss, [kernel, bias])
    for var, grad in zip([kernel, bias], grads):
        var.assign_sub(0.1 * grad)
    losses.append(float(loss.detach().full_tensor()))
assert dtensor.fetch_layout(kernel) == sharded_cols and len(dtensor.unpack(kernel)) == 1
local_cols = dtensor.unpack(kernel)[0].shape[1]
full = dtensor.relayout(kernel, dtensor.Layout.replicated(mesh, 2)).to_local()
full_bias = bias.full_tensor()
assert np.array_equal(kernel.numpy(), full.detach().numpy())  # numpy(): the whole value, gathered on every client
rows = dtensor.Layout(["model", dtensor.UNSHARDED], mesh)  # an embedding-like table, rows split over clients
table = dtensor.DVariable(dtensor.relayout(dtensor.copy_to_mesh(w0, dtensor.Layout.replicated(mesh, 2)), rows),
                          name="table")
table.scatter_add(tf.IndexedSlices(tf.constant([[1.0] * 4, [2.0] * 4, [3.0] * 4]), tf.constant([5, 0, 5])))
assert dtensor.fetch_layout(table) == rows
scattered = table.numpy()
wide = dtensor.DVariable(dtensor.copy_to_mesh(w0, dtensor.Layout.replicated(mesh, 2)), dtype="float64", name="w")
assert wide.dtype == torch.float64 and wide.name == "w" and wide.trainable
dtensor.barrier(mesh)
if dtensor.client_id() == 0:
    json.dump({"kernel": full.tolist(), "bias": full_bias.tolist(), "losses": losses, "local_cols": local_cols,
               "scattered": scattered.tolist(),
               "clients": dtensor.num_clients(), "w0": w0.tolist(), "x": x.tolist(), "y": y.tolist()},
              open(out, "w"))
'''


def _numpy_reference(report: dict) -> tuple:
    """Five SGD steps of the same Dense layer and MSE loss in float64 NumPy."""
    x, y, w = (np.array(report[k], dtype=np.float64) for k in ("x", "y", "w0"))
    b = np.zeros(4)
    for _ in range(5):
        err = x @ w + b - y
        grad_w, grad_b = 2 * x.T @ err / err.size, 2 * err.sum(0) / err.size
        w, b = w - 0.1 * grad_w, b - 0.1 * grad_b
    return w, b


@pytest.mark.slow
def test_two_process_mesh_trains_a_sharded_dense_like_one_process(tmp_path):
    script = mp.write_script(tmp_path, TRAIN)
    port = mp.free_port()
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    with contextlib.ExitStack() as stack:
        single = stack.enter_context(mp.process_group([sys.executable, script, str(one)]))
        ranks = [stack.enter_context(mp.process_group(
            [sys.executable, script, str(two)],
            env=mp.clean_env(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1",
                             MASTER_ADDR=mp.LOOPBACK, MASTER_PORT=str(port)))) for rank in (0, 1)]
        results = [proc.communicate(timeout=120) for proc in [single, *ranks]]
        assert all(proc.returncode == 0 for proc in [single, *ranks]), results
    alone, sharded = mp.read_json(one), mp.read_json(two)
    assert (alone["clients"], sharded["clients"], alone["local_cols"], sharded["local_cols"]) == (1, 2, 4, 2)
    np.testing.assert_allclose(sharded["kernel"], alone["kernel"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(sharded["bias"], alone["bias"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(sharded["losses"], alone["losses"], rtol=1e-6)
    scattered = np.array(alone["w0"], dtype=np.float32)
    np.add.at(scattered, [5, 0, 5], np.array([[1.0] * 4, [2.0] * 4, [3.0] * 4], dtype=np.float32))  # TF's sum
    np.testing.assert_allclose(alone["scattered"], scattered, rtol=0, atol=1e-6)
    np.testing.assert_allclose(sharded["scattered"], scattered, rtol=0, atol=1e-6)
    w, b = _numpy_reference(alone)
    np.testing.assert_allclose(alone["kernel"], w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(alone["bias"], b, rtol=1e-5, atol=1e-5)
