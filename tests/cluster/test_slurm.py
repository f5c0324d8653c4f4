"""SlurmClusterResolver on a real-format SLURM step environment, hostlist and tasks-per-node
expansion, and the errors for missing or inconsistent SLURM variables."""
from __future__ import annotations

import pytest

from torchstrategy.cluster import ClusterSpec, ProcessSpec, SlurmClusterResolver, expand_hostlist, expand_tasks_per_node

# What `sbatch -N2 --ntasks-per-node=4` + `srun python train.py` gives task 5 (2nd task on node 2).
SLURM_2_NODES_8_TASKS = {
    "SLURM_JOB_ID": "123456", "SLURM_JOBID": "123456", "SLURM_JOB_NAME": "train",
    "SLURM_JOB_NODELIST": "gpu[07-08]", "SLURM_NODELIST": "gpu[07-08]", "SLURM_STEP_NODELIST": "gpu[07-08]",
    "SLURM_NNODES": "2", "SLURM_JOB_NUM_NODES": "2", "SLURM_STEP_NUM_NODES": "2",
    "SLURM_NTASKS": "8", "SLURM_NPROCS": "8", "SLURM_STEP_NUM_TASKS": "8", "SLURM_NTASKS_PER_NODE": "4",
    "SLURM_TASKS_PER_NODE": "4(x2)", "SLURM_STEP_TASKS_PER_NODE": "4(x2)",
    "SLURM_PROCID": "5", "SLURM_LOCALID": "1", "SLURM_NODEID": "1", "SLURM_STEPID": "0",
    "SLURM_CPUS_ON_NODE": "32", "SLURMD_NODENAME": "gpu08",
}
HOSTS = ["gpu07", "gpu08"]


@pytest.fixture()
def slurm_env(monkeypatch):
    for name, value in SLURM_2_NODES_8_TASKS.items():
        monkeypatch.setenv(name, value)
    return monkeypatch


def test_two_node_job_gives_process_spec(slurm_env):
    spec = SlurmClusterResolver(gpus_per_node=0).process_spec()
    assert spec == ProcessSpec(world_size=8, rank=5, local_rank=1, local_world_size=4, node_rank=1, num_nodes=2,
                               master_addr="gpu07", master_port=15000 + 123456 % 20000, launched=True,
                               source="slurm", task_type="worker", task_id=5)


def test_cluster_spec_gives_each_task_host_and_port_like_tf(slurm_env):
    resolver = SlurmClusterResolver(port_base=9000, gpus_per_node=0)
    expected = [f"{host}:{9000 + index}" for host in HOSTS for index in range(4)]
    assert resolver.cluster_spec() == ClusterSpec({"worker": expected})
    assert resolver.get_task_info() == ("worker", 5)
    assert resolver.master() == "grpc://" + expected[5]
    assert resolver.master("worker", 0, rpc_layer="grpc+verbs") == "grpc+verbs://" + expected[0]
    assert resolver.environment == ""


def test_jobs_split_tasks_in_sorted_job_order(slurm_env):
    resolver = SlurmClusterResolver(jobs={"worker": 7, "chief": 1}, gpus_per_node=0)
    addresses = [f"{host}:{8888 + index}" for host in HOSTS for index in range(4)]
    assert resolver.cluster_spec().as_dict() == {"chief": addresses[:1], "worker": addresses[1:]}
    spec = resolver.process_spec()
    assert (resolver.task_type, resolver.task_id, spec.task_type, spec.task_id, spec.rank) == ("worker", 4, "worker", 4, 5)


def test_gpus_per_task_defaults_to_an_even_split(slurm_env):
    resolver = SlurmClusterResolver(gpus_per_node=8)
    assert resolver.num_accelerators() == {"GPU": 8 // 4}
    assert SlurmClusterResolver(gpus_per_node=0).num_accelerators() == {}
    with pytest.raises(RuntimeError, match=r"Requested 3 GPU\(s\) per task for 4 tasks on a node, but a node has 8"):
        SlurmClusterResolver(gpus_per_node=8, gpus_per_task=3)


def test_master_variables_override_the_derived_rendezvous(slurm_env):
    slurm_env.setenv("MASTER_ADDR", "10.0.0.1")
    slurm_env.setenv("MASTER_PORT", "29400")
    spec = SlurmClusterResolver(gpus_per_node=0).process_spec()
    assert (spec.master_addr, spec.master_port) == ("10.0.0.1", 29400)


def test_heterogeneous_nodes_and_block_layout_without_local_ids(monkeypatch):
    for name, value in {"SLURM_PROCID": "7", "SLURM_NTASKS": "8", "SLURM_JOB_NODELIST": "a[1-2]-ib,b",
                        "SLURM_TASKS_PER_NODE": "3(x2),2", "SLURM_JOB_ID": "9"}.items():
        monkeypatch.setenv(name, value)
    resolver = SlurmClusterResolver(gpus_per_node=0)
    spec = resolver.process_spec()
    # Ranks 0-2 on a1-ib, 3-5 on a2-ib, 6-7 on b: rank 7 is b's 2nd task.
    assert (spec.node_rank, spec.local_rank, spec.local_world_size, spec.num_nodes) == (2, 1, 2, 3)
    assert spec.master_addr == "a1-ib"
    assert resolver.cluster_spec().task_address("worker", 7) == "b:8889"


def test_tasks_per_node_argument_overrides_the_environment(monkeypatch):
    for name, value in {"SLURM_PROCID": "2", "SLURM_NTASKS": "4", "SLURM_JOB_ID": "1"}.items():
        monkeypatch.setenv(name, value)
    resolver = SlurmClusterResolver(tasks_per_node={"x": 2, "y": 2}, gpus_per_node=0)
    assert resolver.cluster_spec().job_tasks("worker") == ["x:8888", "x:8889", "y:8888", "y:8889"]
    assert resolver.process_spec().node_rank == 1


@pytest.mark.parametrize("hostlist, hosts", [
    ("node1", ["node1"]),
    ("node[1-3]", ["node1", "node2", "node3"]),
    ("node[01-03,07],gpu5", ["node01", "node02", "node03", "node07", "gpu5"]),
    ("n[8-11]", ["n8", "n9", "n10", "n11"]),
    ("n[008-010]", ["n008", "n009", "n010"]),
    ("a[1-2]-ib,b", ["a1-ib", "a2-ib", "b"]),
    ("r[1-2]n[3-4]", ["r1n3", "r1n4", "r2n3", "r2n4"]),
    ("n[1-2],m5,o[3-4,6,7-9]", ["n1", "n2", "m5", "o3", "o4", "o6", "o7", "o8", "o9"]),
    ("x[2,1],x1", ["x2", "x1", "x1"]),
    ("[1-2]", ["1", "2"]),
])
def test_expand_hostlist(hostlist, hosts):
    assert expand_hostlist(hostlist) == hosts


@pytest.mark.parametrize("hostlist, match", [
    ("", "it is empty"),
    ("n[1-2", r"'\[' is never closed"),
    ("n1-2]", r"'\]' without '\['"),
    ("n[1[2]]", r"nested '\['"),
    ("n1,,n2", "empty host name between commas"),
    ("n[3-1]", r"range '3-1' runs backwards"),
    ("n[a-c]", r"'a-c' in \[a-c\] is not N or N-M"),
    ("n[]", r"'' in \[\] is not N or N-M"),
])
def test_bad_hostlist_raises(hostlist, match):
    with pytest.raises(ValueError, match=r"Invalid SLURM hostlist .*" + match):
        expand_hostlist(hostlist)


@pytest.mark.parametrize("text, counts", [("4", [4]), ("4(x2),3", [4, 4, 3]), ("2,1(x3)", [2, 1, 1, 1])])
def test_expand_tasks_per_node(text, counts):
    assert expand_tasks_per_node(text) == counts


@pytest.mark.parametrize("text", ["", "4(x)", "x2", "0", "2(x0)", "4(2)"])
def test_bad_tasks_per_node_raises(text):
    with pytest.raises(ValueError, match="Invalid SLURM tasks-per-node list"):
        expand_tasks_per_node(text)


@pytest.mark.parametrize("change, match", [
    ({"SLURM_PROCID": None}, r"SLURM_PROCID is not set\. Is this process running inside a SLURM step"),
    ({"SLURM_PROCID": "x"}, r"SLURM_PROCID='x' is not an integer"),
    ({"SLURM_PROCID": "8"}, r"SLURM_PROCID=8 must be below the number of tasks 8"),
    ({"SLURM_NTASKS": None, "SLURM_STEP_NUM_TASKS": None}, r"Neither SLURM_STEP_NUM_TASKS nor SLURM_NTASKS"),
    ({"SLURM_STEP_NUM_TASKS": "6"}, r"Mismatched world sizes: .* add up to 8, but SLURM says the step has 6"),
    ({"SLURM_STEP_TASKS_PER_NODE": "4(x3)"}, r"SLURM_STEP_TASKS_PER_NODE='4\(x3\)' describes 3 node\(s\)"),
    ({"SLURM_STEP_NUM_NODES": "3"}, r"SLURM_STEP_NODELIST='gpu\[07-08\]' names 2 node\(s\) but SLURM_STEP_NUM_NODES"),
    ({"SLURM_STEP_NODELIST": "gpu[07-08"}, r"Invalid SLURM hostlist"),
    ({"SLURM_STEP_NODELIST": None, "SLURM_JOB_NODELIST": None, "SLURM_NODELIST": None}, r"No SLURM node list"),
    ({"SLURM_STEP_TASKS_PER_NODE": None, "SLURM_TASKS_PER_NODE": None, "SLURM_NTASKS_PER_NODE": None},
     r"None of SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE or SLURM_NTASKS_PER_NODE"),
])
def test_bad_slurm_environment_raises_at_construction(slurm_env, change, match):
    for name, value in change.items():
        if value is None:
            slurm_env.delenv(name)
        else:
            slurm_env.setenv(name, value)
    with pytest.raises(ValueError, match=match):
        SlurmClusterResolver(gpus_per_node=0)


@pytest.mark.parametrize("change, match", [
    ({"SLURM_LOCALID": "4"}, r"SLURM_LOCALID=4 must be below the 4 task\(s\) of node 1 \(gpu08\)"),
    ({"SLURM_NODEID": "2"}, r"SLURM_NODEID=2 must be below the number of nodes 2"),
    ({"SLURM_JOB_ID": None, "SLURM_JOBID": None}, r"neither MASTER_PORT nor SLURM_JOB_ID is set"),
    ({"MASTER_PORT": "0"}, r"MASTER_PORT='0' must be >= 1"),
])
def test_bad_slurm_environment_raises_in_process_spec(slurm_env, change, match):
    for name, value in change.items():
        if value is None:
            slurm_env.delenv(name)
        else:
            slurm_env.setenv(name, value)
    with pytest.raises(ValueError, match=match):
        SlurmClusterResolver(gpus_per_node=0).process_spec()


def test_bad_jobs_argument(slurm_env):
    with pytest.raises(ValueError, match=r"Mismatched world sizes: jobs \{'worker': 4\} ask for 4 tasks"):
        SlurmClusterResolver(jobs={"worker": 4}, gpus_per_node=0)
    with pytest.raises(TypeError, match="jobs must map job names to task counts"):
        SlurmClusterResolver(jobs={"worker": "8"}, gpus_per_node=0)
    with pytest.raises(ValueError, match=r"jobs \['ps'\] do not join the data-parallel group"):
        SlurmClusterResolver(jobs={"ps": 2, "worker": 6}, gpus_per_node=0).process_spec()
    with pytest.raises(ValueError, match=r"2 'chief' tasks; at most one"):
        SlurmClusterResolver(jobs={"chief": 2, "worker": 6}, gpus_per_node=0).process_spec()
