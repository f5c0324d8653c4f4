"""The parameter-server cluster layout every task computes from one ClusterSpec: names, ranks, the
rendezvous at ps 0, and clear errors for clusters ParameterServerStrategy cannot run."""
from __future__ import annotations

import json

import pytest

import torchstrategy as tf
from torchstrategy.cluster.ps import ps_layout

SPEC = tf.train.ClusterSpec({"chief": ["127.0.0.1:1000"], "worker": ["127.0.0.1:1001", "127.0.0.1:1002"],
                             "ps": ["127.0.0.1:1003", "127.0.0.1:1004"]})


def test_every_task_sees_the_same_names_and_its_own_rank():
    names = ("ps:0", "ps:1", "worker:0", "worker:1", "chief")
    for task_type, task_id, rank in (("ps", 0, 0), ("ps", 1, 1), ("worker", 0, 2), ("worker", 1, 3),
                                     ("chief", 0, 4), (None, None, 4)):
        layout = ps_layout(SPEC, task_type, task_id, where="test")
        assert layout.names == names and layout.rank == rank and layout.world_size == 5
        assert (layout.master_addr, layout.master_port) == ("127.0.0.1", 1003)  # ps 0 hosts the rendezvous
    assert layout.worker_names == ("worker:0", "worker:1") and layout.ps_names == ("ps:0", "ps:1")


def test_errors_name_a_task_with_its_address_from_the_spec():
    layout = ps_layout(SPEC, "worker", 1, where="test")
    assert layout.describe("ps:1") == "ps:1 at 127.0.0.1:1004"
    assert layout.describe("worker:0") == "worker:0 at 127.0.0.1:1001"
    assert layout.describe("chief") == "chief at 127.0.0.1:1000"
    in_process = ps_layout(tf.train.ClusterSpec({"worker": ["127.0.0.1:1001"], "ps": ["127.0.0.1:1003"]}), None, None,
                           where="test")  # TF's in-process cluster: the coordinator is not in the spec
    assert in_process.describe("chief") == "chief (no address in the cluster spec)"


@pytest.mark.parametrize("cluster, task, message", [
    ({"worker": ["h:1"]}, ("chief", 0), "needs 'ps' tasks"),
    ({"ps": ["h:1"]}, ("chief", 0), "needs 'worker' tasks"),
    ({"worker": ["h:1"], "ps": []}, ("chief", 0), "an empty list"),
    ({"worker": ["h:1"], "ps": ["h:2"], "chief": ["h:0", "h:3"]}, ("chief", 0), "2 'chief' tasks"),
    ({"worker": ["h:1"], "ps": ["h:2"], "trainer": ["h:3"]}, ("chief", 0), "unknown job"),
    ({"worker": ["h:1"], "ps": ["h:2"]}, ("worker", 3), "out of range"),
    ({"worker": ["h:1"], "ps": ["h:2"]}, ("evaluator", 0), "SidecarEvaluator"),
    ({"worker": ["h:1"], "ps": ["nohost"]}, ("chief", 0), "host:port"),
])
def test_clusters_that_cannot_run_are_refused_clearly(cluster, task, message):
    with pytest.raises(ValueError, match=message):
        ps_layout(tf.train.ClusterSpec(cluster), *task, where="test")


def test_tf_config_without_ps_tasks_is_refused_before_connecting(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]},
                                                "task": {"type": "chief", "index": 0}}))
    with pytest.raises(ValueError, match="ParameterServerStrategy needs 'ps' tasks"):
        tf.distribute.ParameterServerStrategy(tf.distribute.cluster_resolver.TFConfigClusterResolver())


def test_parameter_server_strategy_is_made_on_the_coordinator_only():
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(SPEC, task_type="worker", task_id=1)
    with pytest.raises(ValueError, match="runs on the coordinator"):
        tf.distribute.ParameterServerStrategy(resolver)
    with pytest.raises(TypeError, match="variable_partitioner"):
        tf.distribute.ParameterServerStrategy(tf.distribute.cluster_resolver.SimpleClusterResolver(SPEC),
                                              variable_partitioner=3)


def test_server_arguments_are_checked():
    with pytest.raises(ValueError, match="creates tf.distribute.ParameterServerStrategy"):
        tf.distribute.Server(SPEC, job_name="chief", task_index=0, start=False)
    with pytest.raises(ValueError, match="needs task_index"):
        tf.distribute.Server(SPEC, job_name="worker", start=False)
    with pytest.raises(ValueError, match="only 'grpc'"):
        tf.distribute.Server(SPEC, job_name="ps", task_index=0, protocol="mpi", start=False)
    server = tf.distribute.Server(SPEC, job_name="ps", task_index=1, start=False)
    assert server.target == "grpc://127.0.0.1:1004"
    with pytest.raises(RuntimeError, match="join\\(\\) before start"):
        server.join()


def test_cluster_coordinator_needs_a_parameter_server_strategy():
    with pytest.raises(ValueError, match="needs a tf.distribute.ParameterServerStrategy"):
        tf.distribute.coordinator.ClusterCoordinator(tf.distribute.OneDeviceStrategy("/cpu:0"))
