"""torchrun, TF_CONFIG and Simple resolvers and detect(): parsing real-format environments, rank
mapping, the detection order and every malformed-input error."""
from __future__ import annotations

import json

import pytest
import torch

from torchstrategy import cluster
from torchstrategy.cluster import (ClusterSpec, ProcessSpec, SimpleClusterResolver, SlurmClusterResolver,
                                   TFConfigClusterResolver, TorchElasticClusterResolver, TorchrunClusterResolver)

# What `torchrun --nnodes=2 --nproc-per-node=4 --rdzv-backend=c10d ...` gives the 2nd worker of node 1.
TORCHRUN_ENV = {"RANK": "6", "WORLD_SIZE": "8", "LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "4", "GROUP_RANK": "1",
                "GROUP_WORLD_SIZE": "2", "ROLE_RANK": "6", "ROLE_WORLD_SIZE": "8", "MASTER_ADDR": "node0.example.com",
                "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "job42", "TORCHELASTIC_RESTART_COUNT": "0"}

# The format TF documents for MultiWorkerMirroredStrategy with a chief, and without one.
TF_CONFIG_WITH_CHIEF = {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
                                    "ps": ["host3:2222"], "evaluator": ["host4:2222"]},
                        "task": {"type": "worker", "index": 1}}
TF_CONFIG_WORKERS_ONLY = {"cluster": {"worker": ["localhost:12345", "localhost:23456"]},
                          "task": {"type": "worker", "index": 1}}


def _set_env(monkeypatch, variables):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


def _set_tf_config(monkeypatch, config):
    monkeypatch.setenv("TF_CONFIG", config if isinstance(config, str) else json.dumps(config))


# ----- torchrun ------------------------------------------------------------------------------
def test_torchrun_environment_gives_process_spec(monkeypatch):
    _set_env(monkeypatch, TORCHRUN_ENV)
    resolver = TorchrunClusterResolver()
    assert TorchrunClusterResolver is TorchElasticClusterResolver
    assert resolver.process_spec() == ProcessSpec(
        world_size=8, rank=6, local_rank=2, local_world_size=4, node_rank=1, num_nodes=2,
        master_addr="node0.example.com", master_port=29500, launched=True, source="torchrun",
        task_type="worker", task_id=6, launcher_pid=None)
    assert (resolver.task_type, resolver.task_id, resolver.run_id) == ("worker", 6, "job42")
    assert resolver.master() == "node0.example.com:29500"
    assert resolver.master(rpc_layer="grpc") == "grpc://node0.example.com:29500"
    assert resolver.environment == ""


def test_torchrun_cluster_spec_lists_world_size_workers_with_rendezvous_first(monkeypatch):
    _set_env(monkeypatch, TORCHRUN_ENV)
    spec = TorchElasticClusterResolver().cluster_spec()
    assert spec.num_tasks("worker") == 8
    assert spec.task_address("worker", 0) == "node0.example.com:29500"
    assert set(spec.job_tasks("worker")[1:]) == {cluster.resolvers.UNKNOWN_ADDRESS}


def test_torchrun_without_group_variables_derives_nodes(monkeypatch):
    _set_env(monkeypatch, {k: v for k, v in TORCHRUN_ENV.items() if not k.startswith("GROUP_")})
    spec = TorchElasticClusterResolver().process_spec()
    assert (spec.node_rank, spec.num_nodes) == (6 // 4, 8 // 4)


def test_torchstrategy_launcher_marks_source_and_pid(monkeypatch):
    _set_env(monkeypatch, {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
                           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "40001",
                           "TORCHSTRATEGY_LAUNCHED": "1", "TORCHSTRATEGY_LAUNCHER_PID": "4321"})
    spec = TorchElasticClusterResolver().process_spec()
    assert (spec.source, spec.launcher_pid, spec.rank, spec.num_nodes) == ("torchstrategy", 4321, 1, 1)


def test_task_type_and_id_can_be_set_like_tf(monkeypatch):
    _set_env(monkeypatch, TORCHRUN_ENV)
    resolver = TorchElasticClusterResolver()
    resolver.task_type, resolver.task_id = "chief", 0
    assert (resolver.task_type, resolver.task_id) == ("chief", 0)


@pytest.mark.parametrize("change, match", [
    ({"RANK": None}, r"RANK is not set\. torchrun sets"),
    ({"MASTER_ADDR": None}, r"MASTER_ADDR is not set"),
    ({"LOCAL_WORLD_SIZE": None}, r"LOCAL_WORLD_SIZE is not set"),
    ({"WORLD_SIZE": "eight"}, r"WORLD_SIZE='eight' is not an integer"),
    ({"RANK": "-1"}, r"RANK='-1' must be >= 0"),
    ({"RANK": "8"}, r"RANK=8 must be below WORLD_SIZE=8 \(mismatched world sizes\)"),
    ({"LOCAL_RANK": "4"}, r"LOCAL_RANK=4 must be below LOCAL_WORLD_SIZE=4"),
    ({"LOCAL_WORLD_SIZE": "16"}, r"LOCAL_WORLD_SIZE=16 is larger than WORLD_SIZE=8"),
    ({"MASTER_PORT": "70000"}, r"MASTER_PORT=70000 is not a port"),
    ({"GROUP_RANK": "2"}, r"GROUP_RANK=2 must be below the node count 2"),
    ({"TORCHSTRATEGY_LAUNCHER_PID": "abc"}, r"TORCHSTRATEGY_LAUNCHER_PID='abc' is not an integer"),
])
def test_bad_torchrun_environment_names_the_variable(monkeypatch, change, match):
    _set_env(monkeypatch, TORCHRUN_ENV)
    for name, value in change.items():
        if value is None:
            monkeypatch.delenv(name)
        else:
            monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=match):
        TorchElasticClusterResolver()


# ----- TF_CONFIG -----------------------------------------------------------------------------
def test_tf_config_with_chief_maps_worker_after_chief(monkeypatch):
    _set_tf_config(monkeypatch, TF_CONFIG_WITH_CHIEF)
    resolver = TFConfigClusterResolver()
    assert resolver.cluster_spec() == ClusterSpec(TF_CONFIG_WITH_CHIEF["cluster"])
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    spec = resolver.process_spec()
    # chief -> rank 0, worker i -> i + 1; ps/evaluator are outside the group.
    assert (spec.world_size, spec.rank, spec.task_type, spec.task_id) == (3, 2, "worker", 1)
    assert (spec.master_addr, spec.master_port, spec.source, spec.launched) == ("host0", 2222, "tf_config", True)
    assert (spec.local_rank, spec.local_world_size, spec.node_rank, spec.num_nodes) == (0, 1, 2, 3)
    assert resolver.master() == "host2:2222"


def test_tf_config_chief_is_rank_zero(monkeypatch):
    _set_tf_config(monkeypatch, {**TF_CONFIG_WITH_CHIEF, "task": {"type": "chief", "index": 0}})
    spec = TFConfigClusterResolver().process_spec()
    assert (spec.rank, spec.task_type, spec.is_chief) == (0, "chief", True)


def test_tf_config_workers_only_on_one_host(monkeypatch):
    _set_tf_config(monkeypatch, TF_CONFIG_WORKERS_ONLY)
    spec = TFConfigClusterResolver().process_spec()
    assert (spec.world_size, spec.rank, spec.master_addr, spec.master_port) == (2, 1, "localhost", 12345)
    # Both tasks share host 'localhost': one node with two local ranks.
    assert (spec.local_rank, spec.local_world_size, spec.node_rank, spec.num_nodes) == (1, 2, 0, 1)


def test_tf_config_constructor_overrides_and_rpc_layer(monkeypatch):
    _set_tf_config(monkeypatch, {**TF_CONFIG_WORKERS_ONLY, "rpc_layer": "grpc"})
    resolver = TFConfigClusterResolver(task_id=0)
    assert resolver.rpc_layer == "grpc"
    assert resolver.process_spec().rank == 0
    assert resolver.master() == "grpc://localhost:12345"
    resolver.task_id = 1
    assert resolver.master(rpc_layer="") == "localhost:23456"


def test_tf_config_master_is_empty_for_one_task_and_honours_session_master(monkeypatch):
    _set_tf_config(monkeypatch, {"cluster": {"worker": ["h:1"]}, "task": {"type": "worker", "index": 0}})
    assert TFConfigClusterResolver().master() == ""
    _set_tf_config(monkeypatch, {**TF_CONFIG_WORKERS_ONLY, "session_master": "grpc://elsewhere:9"})
    assert TFConfigClusterResolver().master() == "grpc://elsewhere:9"


def test_without_tf_config_spec_is_empty_like_tf():
    resolver = TFConfigClusterResolver()
    assert not resolver.cluster_spec()
    assert (resolver.task_type, resolver.task_id, resolver.rpc_layer, resolver.master()) == (None, None, None, "")


def test_tf_config_num_accelerators_counts_cuda_devices(monkeypatch):
    _set_tf_config(monkeypatch, TF_CONFIG_WORKERS_ONLY)
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    assert TFConfigClusterResolver().num_accelerators() == ({"GPU": count} if count else {})


@pytest.mark.parametrize("config, match", [
    ("{'cluster': {}}", r"TF_CONFIG is not valid JSON \(Expecting property name"),
    ("[1, 2]", r"TF_CONFIG must be a JSON object"),
    ({"task": {"type": "worker", "index": 0}}, r"TF_CONFIG has no 'cluster' entry"),
    ({"cluster": {"worker": ["h:1"]}}, r"TF_CONFIG has no 'task' entry"),
    ({"cluster": {"worker": ["h:1"]}, "task": {"type": "worker"}}, r"does not say which task.*index None"),
    ({"cluster": {"worker": ["h:1"]}, "task": "worker"}, r"\"task\" must be an object"),
    ({"cluster": {"worker": ["h:1"]}, "task": {"type": "chief", "index": 0}},
     r"task type 'chief' is not a job of the cluster \(jobs: \['worker'\]\)"),
    ({"cluster": {"worker": ["h:1", "h:2"]}, "task": {"type": "worker", "index": 2}},
     r"task index 2 is out of range for job 'worker', which has 2 task\(s\) \(valid: 0..1\)"),
    ({"cluster": {"worker": ["h:1"]}, "task": {"type": "worker", "index": "first"}},
     r"task index 'first' is not a non-negative integer"),
    ({"cluster": {"chief": ["c:1", "c:2"], "worker": ["h:1"]}, "task": {"type": "worker", "index": 0}},
     r"lists 2 'chief' tasks; there can be at most one"),
    ({"cluster": {"worker": ["h:1", "hostonly"]}, "task": {"type": "worker", "index": 0}},
     r"address 'hostonly' is not 'host:port'"),
    ({"cluster": {"worker": ["h:1", "h:port"]}, "task": {"type": "worker", "index": 0}},
     r"address 'h:port' is not 'host:port'"),
    ({"cluster": {"worker": {"1": "h:1"}}, "task": {"type": "worker", "index": 1}},
     r"job 'worker' lists task indices \[1\]; training needs every task"),
    ({"cluster": {"worker": "h:1"}, "task": {"type": "worker", "index": 0}}, r"TF_CONFIG: bad \"cluster\""),
])
def test_bad_tf_config_raises_clear_error(monkeypatch, config, match):
    _set_tf_config(monkeypatch, config)
    with pytest.raises(ValueError, match=match):
        TFConfigClusterResolver().process_spec()


@pytest.mark.parametrize("task_type", ["ps", "evaluator"])
def test_ps_and_evaluator_tasks_do_not_join_the_group(monkeypatch, task_type):
    _set_tf_config(monkeypatch, {**TF_CONFIG_WITH_CHIEF, "task": {"type": task_type, "index": 0}})
    with pytest.raises(ValueError, match=f"'{task_type}' tasks do not join the data-parallel group"):
        TFConfigClusterResolver().process_spec()


def test_unknown_task_type_is_rejected(monkeypatch):
    _set_tf_config(monkeypatch, {"cluster": {"master": ["m:1"]}, "task": {"type": "master", "index": 0}})
    with pytest.raises(ValueError, match=r"unknown task type 'master'"):
        TFConfigClusterResolver().process_spec()


# ----- SimpleClusterResolver -----------------------------------------------------------------
def test_simple_resolver_returns_what_it_was_given():
    spec = ClusterSpec({"chief": ["[::1]:3000"], "worker": ["[::1]:3001", "[::1]:3002"]})
    resolver = SimpleClusterResolver(spec, master="x:1", task_type="worker", task_id=0,
                                     num_accelerators={"GPU": 8}, rpc_layer="grpc")
    assert resolver.cluster_spec() is spec
    assert resolver.master() == "grpc://x:1"
    assert resolver.master("chief", 0) == "grpc://[::1]:3000"
    assert resolver.num_accelerators() == {"GPU": 8}
    process = resolver.process_spec()
    assert (process.rank, process.world_size, process.master_addr, process.master_port) == (1, 3, "::1", 3000)
    assert process.source == "simple"


def test_simple_resolver_errors():
    with pytest.raises(TypeError, match=r"cluster_spec must be a tf.train.ClusterSpec; got dict"):
        SimpleClusterResolver({"worker": ["h:1"]})
    with pytest.raises(TypeError, match="master must be a string"):
        SimpleClusterResolver(ClusterSpec({}), master=None)
    with pytest.raises(ValueError, match="does not say which task"):
        SimpleClusterResolver(ClusterSpec({"worker": ["h:1"]})).process_spec()
    assert SimpleClusterResolver(ClusterSpec({})).num_accelerators() == {}


# ----- detect() ------------------------------------------------------------------------------
SLURM_TWO_TASKS = {"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_JOB_NODELIST": "n[1-2]",
                   "SLURM_TASKS_PER_NODE": "1(x2)", "SLURM_JOB_ID": "77"}


def test_detect_prefers_torchrun_over_tf_config_and_slurm(monkeypatch):
    _set_env(monkeypatch, {**TORCHRUN_ENV, **SLURM_TWO_TASKS, "WORLD_SIZE": "3", "RANK": "2",
                           "LOCAL_WORLD_SIZE": "1", "LOCAL_RANK": "0", "GROUP_WORLD_SIZE": "3",
                           "GROUP_RANK": "2"})
    _set_tf_config(monkeypatch, TF_CONFIG_WITH_CHIEF)  # 3 trainers: agrees with WORLD_SIZE
    assert isinstance(cluster.detect(), TorchElasticClusterResolver)
    assert cluster.process_spec().source == "torchrun"


def test_detect_reports_mismatched_world_sizes(monkeypatch):
    _set_env(monkeypatch, TORCHRUN_ENV)
    _set_tf_config(monkeypatch, TF_CONFIG_WITH_CHIEF)
    with pytest.raises(ValueError, match=r"Mismatched world sizes: WORLD_SIZE=8 .* TF_CONFIG lists 3"):
        cluster.detect()


def test_detect_prefers_tf_config_over_slurm(monkeypatch):
    _set_env(monkeypatch, SLURM_TWO_TASKS)
    _set_tf_config(monkeypatch, TF_CONFIG_WORKERS_ONLY)
    assert isinstance(cluster.detect(), TFConfigClusterResolver)
    monkeypatch.setenv("TF_CONFIG", "  ")  # blank TF_CONFIG counts as unset
    resolver = cluster.detect()
    assert isinstance(resolver, SlurmClusterResolver)
    assert cluster.process_spec().source == "slurm"


@pytest.mark.parametrize("variables", [
    {},
    {"SLURM_PROCID": "0", "SLURM_NTASKS": "1"},  # one-task allocation
    {"SLURM_NTASKS": "4", "SLURM_JOB_ID": "5"},  # salloc shell: no SLURM_PROCID
    {"SLURM_PROCID": "0", "SLURM_NTASKS": "8", "SLURM_STEP_NUM_TASKS": "1"},  # srun -n1 inside 8 tasks
    {"RANK": "0"},  # RANK alone is not a torchrun job
])
def test_detect_finds_a_local_process(monkeypatch, variables):
    _set_env(monkeypatch, variables)
    assert cluster.detect() is None
    assert cluster.process_spec() == ProcessSpec()
