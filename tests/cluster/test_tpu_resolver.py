"""TPUClusterResolver's name rules and TF-shaped answers that need no device, and the errors every TPU
entry point gives where torch-xla is not installed (the main .venv has none)."""
from __future__ import annotations

import socket

import pytest

import torchstrategy as tf
from torchstrategy.cluster import tpu as cluster_tpu

needs_no_torch_xla = pytest.mark.skipif(cluster_tpu.torch_xla_installed(),
                                        reason="checks the errors raised where torch-xla is not installed")
_PIP_HINT = r"pip install 'torchstrategy\[tpu\]'"


@pytest.mark.parametrize("name", ["my-tpu", "grpc://10.0.0.2:8470", "node-7"])
def test_a_tpu_that_cannot_be_reached_is_named_and_local_is_suggested(name, monkeypatch):
    monkeypatch.delenv("TPU_NAME", raising=False)
    with pytest.raises(ValueError) as caught:
        tf.distribute.cluster_resolver.TPUClusterResolver(tpu=name)
    message = str(caught.value)
    assert repr(name) in message
    assert "tpu='local'" in message and "PJRT_DEVICE=CPU" in message


def test_a_tpu_name_that_is_not_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="tpu must be a TPU name string"):
        tf.distribute.cluster_resolver.TPUClusterResolver(tpu=["a", "b"])


@needs_no_torch_xla
@pytest.mark.parametrize("name", [None, "", "local", " local "])
def test_local_names_pass_the_name_check_and_then_ask_for_torch_xla(name):
    with pytest.raises(ImportError, match=_PIP_HINT) as caught:
        tf.distribute.cluster_resolver.TPUClusterResolver(tpu=name)
    assert "torch 2.9.1" in str(caught.value)


@needs_no_torch_xla
def test_tpu_name_and_this_hosts_name_count_as_local(monkeypatch):
    monkeypatch.setenv("TPU_NAME", "my-tpu-vm")
    for name in ("my-tpu-vm", socket.gethostname()):
        with pytest.raises(ImportError, match=_PIP_HINT):  # past the name check: it is this host
            tf.distribute.cluster_resolver.TPUClusterResolver(tpu=name)
    monkeypatch.delenv("TPU_NAME")
    with pytest.raises(ValueError, match="'my-tpu-vm' cannot be reached"):
        tf.distribute.cluster_resolver.TPUClusterResolver(tpu="my-tpu-vm")


@needs_no_torch_xla
@pytest.mark.parametrize("spec", ["/tpu:0", "/device:TPU:0", "/job:worker/replica:0/task:0/device:TPU:1", "xla:0"])
def test_one_device_strategy_on_a_tpu_without_torch_xla_says_what_to_install(spec):
    with pytest.raises(ImportError, match=_PIP_HINT) as caught:
        tf.distribute.OneDeviceStrategy(spec)
    assert repr(spec) in str(caught.value) and "torch 2.9.1" in str(caught.value)


@needs_no_torch_xla
def test_tpu_strategy_without_torch_xla_says_what_to_install():
    with pytest.raises(ImportError, match=_PIP_HINT) as caught:
        tf.distribute.TPUStrategy()
    assert "torch 2.9.1" in str(caught.value)


@needs_no_torch_xla
@pytest.mark.parametrize("call", [
    lambda: tf.tpu.experimental.initialize_tpu_system(),
    lambda: tf.tpu.experimental.shutdown_tpu_system(),
    lambda: tf.config.experimental_connect_to_cluster(None),
    lambda: tf.distribute.cluster_resolver.TPUClusterResolver.connect(),
], ids=["initialize_tpu_system", "shutdown_tpu_system", "experimental_connect_to_cluster", "connect"])
def test_tpu_system_calls_without_torch_xla_say_what_to_install(call):
    with pytest.raises(ImportError, match=_PIP_HINT):
        call()


@needs_no_torch_xla
def test_without_torch_xla_no_tpu_is_listed_and_other_devices_still_are():
    assert tf.config.list_physical_devices("TPU") == []
    assert tf.config.list_logical_devices("TPU") == []
    assert [device.device_type for device in tf.config.list_physical_devices("CPU")] == ["CPU"]
    assert "TPU" not in {device.device_type for device in tf.config.list_physical_devices()}


def test_connect_to_cluster_refuses_a_resolver_that_is_not_a_tpu_one():
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.distribute.cluster_resolver.ClusterSpec({"worker": ["h0:2222"]}))
    with pytest.raises(TypeError, match=r"TPUClusterResolver.*MultiWorkerMirroredStrategy\(cluster_resolver"):
        tf.config.experimental_connect_to_cluster(resolver)


def test_tpu_namespace_has_tfs_system_calls():
    experimental = tf.tpu.experimental
    assert experimental.initialize_tpu_system is cluster_tpu.initialize_tpu_system
    assert experimental.shutdown_tpu_system is cluster_tpu.shutdown_tpu_system
    metadata = experimental.TPUSystemMetadata(8, 1, 8, None, ())
    assert (metadata.num_cores, metadata.num_hosts, metadata.num_of_cores_per_host) == (8, 1, 8)
    topology = experimental.Topology(mesh_shape=[2, 1, 1, 4], device_coordinates=[
        [[0, 0, 0, core] for core in range(4)], [[1, 0, 0, core] for core in range(4)]])
    assert (topology.num_tasks, topology.num_tpus_per_task, topology.num_devices) == (2, 4, 8)


def test_xla_options_and_device_order_mode_have_tfs_fields_and_values():
    # TF 2.21: tf.tpu.XLAOptions is a namedtuple with these defaults; DeviceOrderMode AUTO=0, RING=1, MESH=2
    options = tf.tpu.XLAOptions()
    assert options == (True, True, False)
    assert options._replace(use_shardy_partitioner=True).use_shardy_partitioner is True
    mode = tf.tpu.experimental.DeviceOrderMode
    assert [(m.name, int(m)) for m in mode] == [("AUTO", 0), ("RING", 1), ("MESH", 2)]
    assert tf.tpu.experimental.initialize_tpu_system is cluster_tpu.initialize_tpu_system
