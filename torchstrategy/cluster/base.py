"""The ClusterResolver interface every resolver implements (TF's, plus `process_spec()`), and the
shared pieces: reading integer environment variables, splitting 'host:port', chief/worker -> rank."""
from __future__ import annotations

import os
from typing import Optional

from torchstrategy.cluster.spec import ClusterSpec, ProcessSpec

#: Task types that train in the data-parallel process group; 'ps' and 'evaluator' do not.
TRAINER_TASK_TYPES = ("chief", "worker")
#: Task types TF clusters may contain.
KNOWN_TASK_TYPES = ("chief", "worker", "ps", "evaluator")


class ClusterResolver:
    """TF's `tf.distribute.cluster_resolver.ClusterResolver`: where the tasks of a job are.

    Subclasses provide `cluster_spec()` and `master()` as TF does, and `process_spec()`, the
    torchstrategy addition: this process's rank, world size and rendezvous address.
    `task_type`, `task_id` and `rpc_layer` can be set, as on TF's resolvers.
    """

    def __init__(self) -> None:
        self._task_type: Optional[str] = None
        self._task_id: Optional[int] = None
        self._rpc_layer: Optional[str] = None

    def cluster_spec(self) -> ClusterSpec:
        """The cluster as a ClusterSpec."""
        raise NotImplementedError

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """The address of a task ('' when not applicable), prefixed with 'rpc_layer://' when given."""
        raise NotImplementedError

    def process_spec(self) -> ProcessSpec:
        """This process's place in the data-parallel group (world size, rank, rendezvous address)."""
        raise NotImplementedError

    def num_accelerators(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                         config_proto: object = None) -> dict:
        """{'GPU': n} for the CUDA devices this process sees, or {} without CUDA (arguments unused)."""
        del task_type, task_id, config_proto
        return local_accelerators()

    @property
    def environment(self) -> str:
        """TF's environment name: '' outside Google's internal clusters."""
        return ""

    @property
    def task_type(self) -> Optional[str]:
        return self._task_type

    @task_type.setter
    def task_type(self, task_type: Optional[str]) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> Optional[int]:
        return self._task_id

    @task_id.setter
    def task_id(self, task_id: Optional[int]) -> None:
        self._task_id = task_id

    @property
    def rpc_layer(self) -> Optional[str]:
        return self._rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: Optional[str]) -> None:
        self._rpc_layer = rpc_layer


def local_accelerators() -> dict:
    """{'GPU': torch.cuda.device_count()} when CUDA is usable, else {}."""
    import torch  # deferred: reading the environment should not need torch imported

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return {"GPU": count} if count else {}


def format_master_url(address: str, rpc_layer: Optional[str] = None) -> str:
    """'grpc://host:port' when an rpc layer is given, else the address unchanged."""
    return f"{rpc_layer}://{address}" if rpc_layer else address


def env_value(name: str) -> Optional[str]:
    """The stripped value of environment variable `name`, or None when unset or blank."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def env_int(name: str, *, required: bool = True, minimum: int = 0, hint: str = "") -> Optional[int]:
    """Environment variable `name` as an int >= `minimum`; a clear ValueError when missing or bad."""
    value = env_value(name)
    if value is None:
        if required:
            raise ValueError(f"Environment variable {name} is not set.{hint}")
        return None
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"Environment variable {name}={value!r} is not an integer.{hint}") from None
    if number < minimum:
        raise ValueError(f"Environment variable {name}={value!r} must be >= {minimum}.{hint}")
    return number


def split_address(address: str, where: str) -> tuple:
    """'host:port' (or '[ipv6]:port') -> (host, port); ValueError naming `where` when malformed.

    >>> split_address("node1:2222", "TF_CONFIG")
    ('node1', 2222)
    """
    text = address.strip() if isinstance(address, str) else ""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = text.rpartition(":")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{where}: address {address!r} is not 'host:port' with a port in 1..65535 "
                         "(e.g. 'node1:2222' or '[::1]:2222').")
    return host, int(port_text)


def trainer_process_spec(cluster: ClusterSpec, task_type: Optional[str], task_id: Optional[int], *,
                         source: str, where: str) -> ProcessSpec:
    """ProcessSpec of task (task_type, task_id) in a TF-style chief/worker cluster.

    Ranks: the chief is rank 0; worker i is rank i + 1 with a chief, else rank i. Rendezvous at
    the chief's address (else worker 0's). Tasks whose address has the same host form a node:
    local_rank counts the earlier-ranked tasks on that host, nodes are numbered by first rank.
    `where` names the configuration in error messages (e.g. 'TF_CONFIG').
    """
    if task_type is None or task_id is None:
        raise ValueError(f"{where} does not say which task this process is (task type {task_type!r}, "
                         f"index {task_id!r}); give both, e.g. \"task\": {{\"type\": \"worker\", \"index\": 0}}.")
    if task_type not in cluster.jobs:
        raise ValueError(f"{where}: task type {task_type!r} is not a job of the cluster (jobs: {cluster.jobs}).")
    if task_type not in TRAINER_TASK_TYPES:
        if task_type in KNOWN_TASK_TYPES:
            raise ValueError(f"{where}: '{task_type}' tasks do not join the data-parallel group; only 'chief' "
                             "and 'worker' tasks train with MirroredStrategy/MultiWorkerMirroredStrategy "
                             "(ParameterServerStrategy runs 'ps' tasks).")
        raise ValueError(f"{where}: unknown task type {task_type!r}; use one of {list(KNOWN_TASK_TYPES)}.")
    trainers = []  # addresses in rank order
    for job in TRAINER_TASK_TYPES:
        if job not in cluster.jobs:
            continue
        indices = cluster.task_indices(job)
        if indices != list(range(len(indices))):
            raise ValueError(f"{where}: job {job!r} lists task indices {indices}; training needs every task "
                             f"0..{len(indices) - 1} listed.")
        trainers.extend(cluster.job_tasks(job))
    num_chiefs = cluster.num_tasks("chief") if "chief" in cluster.jobs else 0
    if num_chiefs > 1:
        raise ValueError(f"{where}: the cluster lists {num_chiefs} 'chief' tasks; there can be at most one.")
    if task_id not in cluster.task_indices(task_type):
        raise ValueError(f"{where}: task index {task_id} is out of range for job {task_type!r}, which has "
                         f"{cluster.num_tasks(task_type)} task(s) (valid: 0..{cluster.num_tasks(task_type) - 1}).")
    hosts = [split_address(address, f"{where}")[0] for address in trainers]
    rank = task_id + (num_chiefs if task_type == "worker" else 0)
    master_addr, master_port = split_address(trainers[0], where)
    node_order = list(dict.fromkeys(hosts))
    my_host = hosts[rank]
    return ProcessSpec(
        world_size=len(trainers), rank=rank,
        local_rank=hosts[:rank].count(my_host), local_world_size=hosts.count(my_host),
        node_rank=node_order.index(my_host), num_nodes=len(node_order),
        master_addr=master_addr, master_port=master_port, launched=True, source=source,
        task_type=task_type, task_id=task_id)


def trainer_count(cluster: ClusterSpec) -> int:
    """How many chief + worker tasks a cluster lists (the data-parallel world size it implies)."""
    return sum(cluster.num_tasks(job) for job in TRAINER_TASK_TYPES if job in cluster.jobs)
