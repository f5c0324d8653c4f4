"""Cluster resolvers for torchrun/TorchElastic, TF_CONFIG and explicit specs, and `detect()`, the
order in which a process finds out which job it belongs to (SLURM lives in cluster/slurm.py)."""
from __future__ import annotations

import json
import math
from typing import Optional

from torchstrategy import _context
from torchstrategy.cluster.base import (ClusterResolver, env_int, env_value, format_master_url, split_address,
                                        trainer_count, trainer_process_spec)
from torchstrategy.cluster.slurm import SlurmClusterResolver, slurm_num_tasks
from torchstrategy.cluster.spec import ClusterSpec, ProcessSpec

#: Set (to 1) by torchstrategy's own launcher in the replicas it starts.
LAUNCHED_VARIABLE = "TORCHSTRATEGY_LAUNCHED"
#: The launcher's process id, set by torchstrategy's launcher next to LAUNCHED_VARIABLE.
LAUNCHER_PID_VARIABLE = "TORCHSTRATEGY_LAUNCHER_PID"
#: What torchrun sets for every worker and TorchElasticClusterResolver requires.
TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
#: Address shown in a torchrun cluster_spec() for tasks whose address torchrun does not expose.
UNKNOWN_ADDRESS = "<unknown>"
TF_CONFIG_VARIABLE = "TF_CONFIG"

_TRUE_WORDS = {"1", "true", "yes", "on"}
_TORCHRUN_HINT = (" torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT;"
                  " when setting them by hand, set all six.")


class TorchElasticClusterResolver(ClusterResolver):
    """Reads the environment torchrun (TorchElastic) gives each worker, or torchstrategy's launcher.

    Variables: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (required),
    GROUP_RANK / GROUP_WORLD_SIZE (node rank / node count; when absent they are derived as
    RANK // LOCAL_WORLD_SIZE and ceil(WORLD_SIZE / LOCAL_WORLD_SIZE), right for equal-sized
    nodes), TORCHELASTIC_RUN_ID, and TORCHSTRATEGY_LAUNCHED / TORCHSTRATEGY_LAUNCHER_PID.

    As in TF's MultiWorkerMirroredStrategy without a chief, every process is a 'worker'
    (task_id = RANK) and worker 0 acts as chief. torchrun does not tell a worker its peers'
    addresses, so `cluster_spec()` lists WORLD_SIZE workers: worker 0 at MASTER_ADDR:MASTER_PORT
    (where rank 0 serves the rendezvous store), the others as UNKNOWN_ADDRESS.
    The environment is read once, when the resolver is made; a missing or invalid variable
    raises ValueError naming it.
    """

    def __init__(self, rpc_layer: Optional[str] = None) -> None:
        super().__init__()
        self._rpc_layer = rpc_layer
        self._spec = _read_torchrun_env()
        self._task_type = self._spec.task_type
        self._task_id = self._spec.task_id
        self.run_id = env_value("TORCHELASTIC_RUN_ID")

    def cluster_spec(self) -> ClusterSpec:
        spec = self._spec
        workers = [UNKNOWN_ADDRESS] * spec.world_size
        workers[0] = f"{spec.master_addr}:{spec.master_port}"
        return ClusterSpec({"worker": workers})

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """The rendezvous address MASTER_ADDR:MASTER_PORT, or the given task's (often unknown) address."""
        if task_type is not None and task_id is not None:
            address = self.cluster_spec().task_address(task_type, task_id)
        else:
            address = f"{self._spec.master_addr}:{self._spec.master_port}"
        return format_master_url(address, rpc_layer or self._rpc_layer)

    def process_spec(self) -> ProcessSpec:
        return self._spec


#: The same resolver under the name of the command that sets its variables.
TorchrunClusterResolver = TorchElasticClusterResolver


def _read_torchrun_env() -> ProcessSpec:
    world_size = env_int("WORLD_SIZE", minimum=1, hint=_TORCHRUN_HINT)
    rank = env_int("RANK", hint=_TORCHRUN_HINT)
    local_world_size = env_int("LOCAL_WORLD_SIZE", minimum=1, hint=_TORCHRUN_HINT)
    local_rank = env_int("LOCAL_RANK", hint=_TORCHRUN_HINT)
    master_addr = env_value("MASTER_ADDR")
    if master_addr is None:
        raise ValueError("Environment variable MASTER_ADDR is not set." + _TORCHRUN_HINT)
    master_port = env_int("MASTER_PORT", minimum=1, hint=_TORCHRUN_HINT)
    if master_port > 65535:
        raise ValueError(f"Environment variable MASTER_PORT={master_port} is not a port (1..65535).")
    if rank >= world_size:
        raise ValueError(f"RANK={rank} must be below WORLD_SIZE={world_size} (mismatched world sizes).")
    if local_rank >= local_world_size:
        raise ValueError(f"LOCAL_RANK={local_rank} must be below LOCAL_WORLD_SIZE={local_world_size}.")
    if local_world_size > world_size:
        raise ValueError(f"LOCAL_WORLD_SIZE={local_world_size} is larger than WORLD_SIZE={world_size} "
                         "(mismatched world sizes).")
    num_nodes = env_int("GROUP_WORLD_SIZE", required=False, minimum=1)
    if num_nodes is None:
        num_nodes = math.ceil(world_size / local_world_size)
    node_rank = env_int("GROUP_RANK", required=False)
    if node_rank is None:
        node_rank = min(rank // local_world_size, num_nodes - 1)
    if node_rank >= num_nodes:
        raise ValueError(f"GROUP_RANK={node_rank} must be below the node count {num_nodes} "
                         "(GROUP_WORLD_SIZE, or WORLD_SIZE / LOCAL_WORLD_SIZE).")
    launched_here = (env_value(LAUNCHED_VARIABLE) or "").lower() in _TRUE_WORDS
    launcher_pid = env_int(LAUNCHER_PID_VARIABLE, required=False, minimum=1)
    restart_count = env_int("TORCHELASTIC_RESTART_COUNT", required=False) or 0
    return ProcessSpec(
        world_size=world_size, rank=rank, local_rank=local_rank, local_world_size=local_world_size,
        node_rank=node_rank, num_nodes=num_nodes, master_addr=master_addr, master_port=master_port,
        launched=True, source="torchstrategy" if launched_here else "torchrun",
        task_type="worker", task_id=rank, launcher_pid=launcher_pid, restart_count=restart_count)


class TFConfigClusterResolver(ClusterResolver):
    """TF's resolver for the TF_CONFIG environment variable (JSON), read on every call as TF does.

    >>> # TF_CONFIG='{"cluster": {"chief": ["h0:2222"], "worker": ["h1:2222", "h2:2222"]},
    >>> #             "task": {"type": "worker", "index": 1}}'
    >>> # TFConfigClusterResolver().process_spec() -> rank 2 of world_size 3, rendezvous h0:2222

    Only 'chief' and 'worker' tasks train: the chief is rank 0 and worker i is rank i + 1 (rank
    i when there is no chief). Constructor arguments override what TF_CONFIG says. Without
    TF_CONFIG, `cluster_spec()` is empty and `task_type`/`task_id` are None, as in TF.
    """

    def __init__(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                 rpc_layer: Optional[str] = None, environment: Optional[str] = None) -> None:
        super().__init__()
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment

    @property
    def task_type(self) -> Optional[str]:
        if self._task_type is not None:
            return str(self._task_type)
        task = _tf_config_task(_load_tf_config())
        return str(task["type"]) if "type" in task else None

    @task_type.setter
    def task_type(self, task_type: Optional[str]) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> Optional[int]:
        if self._task_id is not None:
            return int(self._task_id)
        task = _tf_config_task(_load_tf_config())
        if "index" not in task:
            return None
        index = task["index"]
        if isinstance(index, bool) or not isinstance(index, (int, str)) or not str(index).strip().isdigit():
            raise ValueError(f"TF_CONFIG: task index {index!r} is not a non-negative integer.")
        return int(index)

    @task_id.setter
    def task_id(self, task_id: Optional[int]) -> None:
        self._task_id = task_id

    @property
    def environment(self) -> Optional[str]:
        return self._environment

    @property
    def rpc_layer(self) -> Optional[str]:
        if self._rpc_layer is not None:
            return self._rpc_layer
        return _load_tf_config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: Optional[str]) -> None:
        self._rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        config = _load_tf_config()
        try:
            return ClusterSpec(config.get("cluster", {}))
        except (TypeError, ValueError) as error:
            raise ValueError(f"TF_CONFIG: bad \"cluster\": {error}") from None

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """TF's rule: TF_CONFIG's 'session_master' if set; '' for a one-task cluster; else the task's address."""
        config = _load_tf_config()
        if config.get("session_master") is not None:
            return config["session_master"]
        cluster = self.cluster_spec()
        if not cluster.jobs or (len(cluster.jobs) == 1 and cluster.num_tasks(cluster.jobs[0]) == 1):
            return ""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        rpc_layer = self.rpc_layer if rpc_layer is None else rpc_layer
        return format_master_url(cluster.task_address(task_type, task_id), rpc_layer)

    def process_spec(self) -> ProcessSpec:
        config = _load_tf_config()
        for key in ("cluster", "task"):
            if key not in config:
                raise ValueError(f"TF_CONFIG has no {key!r} entry; it needs both, e.g. "
                                 "{\"cluster\": {\"worker\": [\"host0:2222\", \"host1:2222\"]}, "
                                 "\"task\": {\"type\": \"worker\", \"index\": 0}}.")
        return trainer_process_spec(self.cluster_spec(), self.task_type, self.task_id,
                                    source="tf_config", where="TF_CONFIG")


def _load_tf_config() -> dict:
    text = env_value(TF_CONFIG_VARIABLE)
    if text is None:
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"TF_CONFIG is not valid JSON ({error}): {text!r}") from None
    if not isinstance(config, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object with \"cluster\" and \"task\"; got {text!r}.")
    return config


def _tf_config_task(config: dict) -> dict:
    task = config.get("task", {})
    if not isinstance(task, dict):
        raise ValueError(f"TF_CONFIG: \"task\" must be an object like {{\"type\": \"worker\", \"index\": 0}}; "
                         f"got {task!r}.")
    return task


class SimpleClusterResolver(ClusterResolver):
    """TF's resolver that returns what it was given; `process_spec()` maps chief/worker like TF_CONFIG.

    >>> spec = ClusterSpec({"worker": ["h0:2222", "h1:2222"]})
    >>> SimpleClusterResolver(spec, task_type="worker", task_id=1).process_spec().rank
    1
    """

    def __init__(self, cluster_spec: ClusterSpec, master: str = "", task_type: Optional[str] = None,
                 task_id: Optional[int] = None, environment: str = "", num_accelerators: Optional[dict] = None,
                 rpc_layer: Optional[str] = None) -> None:
        super().__init__()
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError(f"cluster_spec must be a tf.train.ClusterSpec; got {type(cluster_spec).__name__}. "
                            "Wrap a dict as ClusterSpec({...}).")
        if not isinstance(master, str):
            raise TypeError(f"master must be a string; got {master!r}.")
        self._cluster_spec = cluster_spec
        self._master = master
        self._task_type = task_type
        self._task_id = task_id
        self._environment = environment
        self._num_accelerators = num_accelerators
        self._rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """The given task's address when both are given, else the `master` passed in."""
        if task_type is not None and task_id is not None:
            address = self._cluster_spec.task_address(task_type, task_id)
        else:
            address = self._master
        return format_master_url(address, rpc_layer or self._rpc_layer)

    @property
    def environment(self) -> str:
        return self._environment

    def num_accelerators(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                         config_proto: object = None) -> dict:
        """The `num_accelerators` given to the constructor, or {}."""
        del task_type, task_id, config_proto
        return dict(self._num_accelerators or {})

    def process_spec(self) -> ProcessSpec:
        task_id = None if self._task_id is None else int(self._task_id)
        return trainer_process_spec(self._cluster_spec, self._task_type, task_id,
                                    source="simple", where="SimpleClusterResolver")


def detect() -> Optional[ClusterResolver]:
    """The resolver for the job this process was started in, or None for a plain local process.

    Order (first match wins):
      0. the job `keras.distribution.initialize` declared (`declare_job`).
      1. torchrun / torchstrategy's launcher: RANK and WORLD_SIZE are set. If TF_CONFIG is set
         too, its chief + worker count must equal WORLD_SIZE (else ValueError).
      2. TF_CONFIG is set and not blank.
      3. SLURM: SLURM_PROCID is set and the step has more than one task (SLURM_STEP_NUM_TASKS,
         else SLURM_NTASKS). A one-task step or an `salloc` shell is a local run. Note: inside an
         sbatch script but outside `srun`, SLURM sets these for the batch step too; start
         training with `srun` (or unset SLURM_PROCID) there.
    """
    declared = _context.declared_cluster_resolver()
    if declared is not None:  # keras.distribution.initialize's job wins: the process group was made for it
        return declared
    if env_value("RANK") is not None and env_value("WORLD_SIZE") is not None:
        resolver = TorchElasticClusterResolver()
        _check_tf_config_agrees(resolver.process_spec())
        return resolver
    if env_value(TF_CONFIG_VARIABLE) is not None:
        return TFConfigClusterResolver()
    if env_value("SLURM_PROCID") is not None and slurm_num_tasks() > 1:
        return SlurmClusterResolver()
    return None


def process_spec() -> ProcessSpec:
    """`detect().process_spec()`, or the local default `ProcessSpec()` when no job is detected."""
    resolver = detect()
    return resolver.process_spec() if resolver is not None else ProcessSpec()


def _check_tf_config_agrees(spec: ProcessSpec) -> None:
    if env_value(TF_CONFIG_VARIABLE) is None:
        return
    tf_config = TFConfigClusterResolver()
    trainers = trainer_count(tf_config.cluster_spec())
    if spec.source == "torchstrategy" and trainers * spec.local_world_size == spec.world_size:
        return  # a TF_CONFIG task's replicas (one per local device), started by torchstrategy's launcher
    if trainers and trainers != spec.world_size:
        raise ValueError(f"Mismatched world sizes: WORLD_SIZE={spec.world_size} (torchrun environment) but "
                         f"TF_CONFIG lists {trainers} chief/worker task(s). Unset TF_CONFIG when launching "
                         "with torchrun, or make the two agree.")


def declare_job(job_addresses: Optional[str], num_processes: Optional[int], process_id: Optional[int]) -> ClusterResolver:
    """Declares this process's job as `keras.distribution.initialize` describes it ('host:port' addresses, comma
    separated, the first the coordinator; the number of processes; this one's id) and returns its resolver, which
    `detect()` gives from now on. One address for several processes means they share its host."""
    addresses = [a.strip() for a in str(job_addresses or "").split(",") if a.strip()]
    if not addresses:
        raise ValueError("keras.distribution.initialize needs job_addresses ('host:port' of process 0, or of every "
                         "process, comma separated) or KERAS_DISTRIBUTION_JOB_ADDRESSES.")
    count = len(addresses) if num_processes is None else int(num_processes)
    if count < 1 or len(addresses) not in (1, count):
        raise ValueError(f"keras.distribution.initialize: {len(addresses)} job addresses for num_processes={count}; "
                         "give the coordinator's address alone, or one address per process.")
    if process_id is None and count > 1:
        raise ValueError(f"keras.distribution.initialize: process_id is needed for a job of {count} processes "
                         "(0 for the coordinator); pass it or set KERAS_DISTRIBUTION_PROCESS_ID.")
    rank = int(process_id or 0)
    if not 0 <= rank < count:
        raise ValueError(f"keras.distribution.initialize: process_id={rank} is outside 0..{count - 1}.")
    for address in addresses:
        split_address(address, "keras.distribution.initialize job_addresses")
    workers = addresses if len(addresses) == count else [addresses[0]] * count
    resolver = SimpleClusterResolver(ClusterSpec({"worker": workers}), task_type="worker", task_id=rank)
    resolver.process_spec()  # checks the addresses now, before any process waits on them
    _context.declare_cluster_resolver(resolver)
    return resolver
