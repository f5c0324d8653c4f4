"""The TF TPU set-up calls on torch-xla's XLA:CPU devices (run in .venv-tpu with PJRT_DEVICE=CPU
CPU_NUM_DEVICES=4): the resolver, initialize_tpu_system, listed devices, and OneDeviceStrategy('/tpu:0')."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

pytestmark = pytest.mark.tpu


@pytest.fixture()
def device_count() -> int:
    import torch_xla.runtime as xr

    count = int(xr.global_runtime_device_count())
    assert count > 1, "run with PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 (scripts/test_tpu.sh does)"
    return count


@pytest.fixture()
def fresh_tpu_system():
    # initialize_tpu_system records the system process-wide; start and end every test without it.
    tf.tpu.experimental.shutdown_tpu_system()
    yield
    tf.tpu.experimental.shutdown_tpu_system()


def test_resolver_sees_every_xla_device_of_this_host(device_count):
    import torch_xla.runtime as xr

    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")
    assert resolver.num_accelerators() == {"TPU": device_count}
    assert resolver.master() == "" and resolver.get_master() == ""
    assert resolver.cluster_spec().as_dict() == {}
    assert (resolver.task_type, resolver.task_id, resolver.get_job_name()) == ("worker", 0, "worker")
    metadata = resolver.get_tpu_system_metadata()
    assert (metadata.num_cores, metadata.num_hosts, metadata.num_of_cores_per_host) == (device_count, 1, device_count)
    assert metadata.devices == tuple(f"/job:worker/replica:0/task:0/device:TPU:{i}" for i in range(device_count))
    assert metadata.topology.device_kind == xr.device_type()  # "CPU" for XLA:CPU, "TPU" on a TPU VM


def test_tf_tpu_snippet_initializes_once_and_a_second_call_is_an_error(device_count, fresh_tpu_system):
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="")
    tf.config.experimental_connect_to_cluster(resolver)
    topology = tf.tpu.experimental.initialize_tpu_system(resolver)
    assert (topology.num_tasks, topology.num_tpus_per_task, topology.num_devices) == (1, device_count, device_count)
    with pytest.raises(RuntimeError, match="'local' is already initialized.*shutdown_tpu_system"):
        tf.tpu.experimental.initialize_tpu_system(tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local"))
    tf.tpu.experimental.shutdown_tpu_system(resolver)
    assert tf.tpu.experimental.initialize_tpu_system().num_tpus_per_task == device_count


def test_initialize_tpu_system_refuses_a_resolver_of_another_kind(fresh_tpu_system):
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.distribute.cluster_resolver.ClusterSpec({"worker": ["h0:2222"]}))
    with pytest.raises(TypeError, match="needs a tf.distribute.cluster_resolver.TPUClusterResolver"):
        tf.tpu.experimental.initialize_tpu_system(resolver)


def test_tpu_devices_are_listed_with_tf_names(device_count):
    logical = tf.config.list_logical_devices("TPU")
    physical = tf.config.list_physical_devices("TPU")
    assert [device.name for device in logical] == [f"/device:TPU:{i}" for i in range(device_count)]
    assert [device.name for device in physical] == [f"/physical_device:TPU:{i}" for i in range(device_count)]
    assert {device.device_type for device in logical + physical} == {"TPU"}
    assert [d.device_type for d in tf.config.list_physical_devices()].count("TPU") == device_count


def test_one_device_strategy_refuses_a_tpu_index_that_is_not_there(device_count):
    import torch_xla.runtime as xr

    # Once a TPUStrategy switched the process to SPMD, one virtual device stands for all of them.
    placeable = 1 if xr.is_spmd() else device_count
    with pytest.raises(ValueError, match=f"asks for XLA device {placeable}.*below {placeable}"):
        tf.distribute.OneDeviceStrategy(f"/tpu:{placeable}")
    last = f"/device:TPU:{placeable - 1}"
    assert tf.distribute.OneDeviceStrategy(last).device == torch.device("xla", placeable - 1)


def _fit_small_cnn(device: str, initial_weights, x, y, epochs: int):
    import torch_xla.debug.metrics as metrics

    strategy = tf.distribute.OneDeviceStrategy(device)
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.Input((8, 8, 3)), tf.keras.layers.Conv2D(4, 3, activation="relu"),
            tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    if initial_weights is not None:
        model.set_weights(initial_weights)
    start_weights = model.get_weights()
    compiles, losses = [], []
    for _ in range(epochs):
        history = model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
        losses += history.history["loss"]
        data = metrics.metric_data("CompileTime")
        compiles.append(data[0] if data else 0)
    devices = {weight.device.type for weight in model.trainable_weights}
    return start_weights, model.get_weights(), losses, compiles, devices


def test_one_device_tpu_fit_equals_the_cpu_run_and_stops_compiling():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8, 8, 3)).astype("float32")
    y = rng.integers(0, 10, 64)
    start, cpu_weights, cpu_losses, _, cpu_devices = _fit_small_cnn("/cpu:0", None, x, y, epochs=3)
    _, xla_weights, xla_losses, compiles, xla_devices = _fit_small_cnn("/tpu:0", start, x, y, epochs=3)
    assert cpu_devices == {"cpu"} and xla_devices == {"xla"}
    assert cpu_losses[-1] < cpu_losses[0]  # it learns
    np.testing.assert_allclose(xla_losses, cpu_losses, rtol=1e-5, atol=1e-6)
    for xla_weight, cpu_weight, first in zip(xla_weights, cpu_weights, start):
        assert not np.allclose(cpu_weight, first)
        np.testing.assert_allclose(xla_weight, cpu_weight, atol=1e-5)
    # One step graph per shape: a sync per optimizer step keeps later epochs off the compiler.
    assert compiles[1] == compiles[2], f"XLA compilations per epoch kept growing: {compiles}"


_AFTER_A_CPU_BACKWARD = """
import sys
import numpy as np
import torch
import torchstrategy as tf
from torchstrategy import keras
if sys.argv[1] == "backward first":
    weight = torch.ones(3, requires_grad=True)
    (weight * 2).sum().backward()  # any CPU training before the XLA runtime starts
strategy = tf.distribute.TPUStrategy() if sys.argv[2] == "tpu" else tf.distribute.OneDeviceStrategy("/tpu:0")
print("strategy created", flush=True)
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    model.compile("sgd", "mse")
history = model.fit(np.ones((16, 4), "float32"), np.ones((16, 2), "float32"), batch_size=8, verbose=0)
print("trained", history.history["loss"], flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["tpu", "one_device"])
def test_a_strategy_created_after_a_cpu_backward_is_refused_at_creation_with_what_to_do(kind):
    import subprocess
    import sys

    def run(order: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", _AFTER_A_CPU_BACKWARD, order, kind], capture_output=True,
                              text=True, timeout=240)

    control = run("strategy first")
    assert control.returncode == 0 and "trained" in control.stdout, control.stderr[-2000:]
    refused = run("backward first")
    assert refused.returncode != 0
    assert "strategy created" not in refused.stdout  # refused when the strategy is made, not mid-fit
    assert "a backward pass already ran in this process before torch-xla started" in refused.stderr
    assert "Create the strategy" in refused.stderr and "INTERNAL ASSERT" not in refused.stderr
