"""Where a process sits in a job: the frozen ProcessSpec every strategy starts from (rank, world
size, rendezvous address), and tf.train.ClusterSpec, TF's map of job names to task addresses."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class ProcessSpec:
    """This process's place in the job, as the process group needs it.

    `launched` is True when every process of the job already exists (torchrun, TF_CONFIG, SLURM,
    or torchstrategy's own launcher); False for a plain `python train.py` that may spawn replicas.
    """

    world_size: int = 1
    rank: int = 0
    local_rank: int = 0
    local_world_size: int = 1
    node_rank: int = 0
    num_nodes: int = 1
    master_addr: str = "127.0.0.1"
    master_port: Optional[int] = None
    launched: bool = False
    source: str = "local"  # 'torchrun', 'torchstrategy', 'tf_config', 'slurm', 'simple', 'local'
    task_type: str = "worker"  # TF's name for the role ('chief' or 'worker')
    task_id: int = 0
    launcher_pid: Optional[int] = None  # set in replicas that torchstrategy's launcher started
    restart_count: int = 0  # torchrun's TORCHELASTIC_RESTART_COUNT: which attempt of an elastic job this is
    #: processes that together make up this process's TF task (its 'worker', which reads one input pipeline):
    #: 1 for a torchrun / TF_CONFIG / SLURM process, every local replica for torchstrategy's launcher, and the
    #: task's replicas when a TF_CONFIG task runs one replica per local GPU. None: derived from `source`.
    task_processes: Optional[int] = None

    def __post_init__(self) -> None:
        if self.world_size < 1:
            raise ValueError(f"world_size must be >= 1; got {self.world_size}.")
        if not 0 <= self.rank < self.world_size:
            raise ValueError(f"rank {self.rank} is outside the world of {self.world_size} processes "
                             f"(valid ranks: 0..{self.world_size - 1}).")
        if not 0 <= self.local_rank < self.local_world_size:
            raise ValueError(f"local_rank {self.local_rank} is outside local_world_size {self.local_world_size}.")
        if self.task_processes is None:
            object.__setattr__(self, "task_processes", self.local_world_size if self.source == "torchstrategy" else 1)
        if self.task_processes < 1 or self.world_size % self.task_processes:
            raise ValueError(f"task_processes {self.task_processes} must divide world_size {self.world_size} "
                             f"(every task runs the same number of replicas).")

    @property
    def num_tasks(self) -> int:
        """How many TF tasks (input workers) the job's processes form."""
        return self.world_size // int(self.task_processes)  # type: ignore[arg-type]

    @property
    def task_rank(self) -> int:
        """This process's task among them (its ranks are contiguous: task_rank * task_processes + i)."""
        return self.rank // int(self.task_processes)  # type: ignore[arg-type]

    @property
    def is_chief(self) -> bool:
        return self.rank == 0


class ClusterSpec:
    """TF's `tf.train.ClusterSpec`: job names mapped to the network addresses of their tasks.

    Each job is a list of addresses (task i at position i) or, for a sparse job, a dict
    {task_index: address}. The spec copies its input and never changes afterwards.

    >>> spec = ClusterSpec({"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"]})
    >>> spec.num_tasks("worker"), spec.task_address("worker", 1)
    (2, 'host2:2222')
    >>> ClusterSpec({"worker": {1: "host1:2222"}}).as_dict()
    {'worker': {1: 'host1:2222'}}

    Like TF, addresses are not checked for a port here (a spec may name tasks whose address is
    not known yet); resolvers check the addresses they actually connect to.
    """

    __slots__ = ("_jobs",)

    def __init__(self, cluster: Any) -> None:
        if isinstance(cluster, ClusterSpec):
            jobs = {name: dict(tasks) for name, tasks in cluster._jobs.items()}
        elif isinstance(cluster, dict):
            jobs = {_checked_job_name(name): _checked_tasks(name, tasks) for name, tasks in cluster.items()}
        else:
            raise TypeError("ClusterSpec needs a dict mapping job names to lists of 'host:port' addresses "
                            "(e.g. {'worker': ['host0:2222', 'host1:2222']}) or another ClusterSpec; "
                            f"got {type(cluster).__name__}: {cluster!r}.")
        object.__setattr__(self, "_jobs", jobs)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ClusterSpec is immutable; build a new one from as_dict() instead.")

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, dict):
            try:
                other = ClusterSpec(other)
            except (TypeError, ValueError):
                return False
        if not isinstance(other, ClusterSpec):
            return NotImplemented
        return self._jobs == other._jobs

    def __hash__(self) -> int:
        return hash(tuple(sorted((name, tuple(sorted(tasks.items()))) for name, tasks in self._jobs.items())))

    def __repr__(self) -> str:
        as_dict = self.as_dict()
        items = ", ".join(f"{name!r}: {as_dict[name]!r}" for name in sorted(as_dict))
        return f"ClusterSpec({{{items}}})"

    @property
    def jobs(self) -> list:
        """Job names, in the order they were given."""
        return list(self._jobs)

    def as_dict(self) -> dict:
        """{job: [addresses]} for dense jobs (indices 0..n-1), {job: {index: address}} for sparse ones."""
        result: dict = {}
        for name, tasks in self._jobs.items():
            indices = sorted(tasks)
            if indices and indices[-1] + 1 != len(indices):
                result[name] = {index: tasks[index] for index in indices}
            elif indices:
                result[name] = [tasks[index] for index in indices]
            else:
                result[name] = {}
        return result

    def num_tasks(self, job_name: str) -> int:
        """How many tasks `job_name` has (for a sparse job: how many are listed)."""
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list:
        """The task indices of `job_name`, ascending."""
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        """The address of task `task_index` of `job_name`; ValueError when there is no such task."""
        tasks = self._job(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r} "
                             f"(its task indices are {sorted(tasks)}).")
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list:
        """Addresses of `job_name` as a list indexed by task index; None fills the gaps of a sparse job."""
        tasks = self._job(job_name)
        addresses: list = [None] * (max(tasks) + 1 if tasks else 0)
        for index, address in tasks.items():
            addresses[index] = address
        return addresses

    def _job(self, job_name: str) -> dict:
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r} (jobs: {self.jobs}).")
        return self._jobs[job_name]


def _checked_job_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"ClusterSpec job names must be non-empty strings such as 'worker'; got {name!r}.")
    return name


def _checked_tasks(job_name: str, tasks: Any) -> dict:
    if isinstance(tasks, (list, tuple)):
        pairs = list(enumerate(tasks))
    elif isinstance(tasks, dict):
        pairs = [(_checked_index(job_name, index), address) for index, address in tasks.items()]
    else:
        raise TypeError(f"The tasks of job {job_name!r} must be a list of addresses or a dict "
                        f"{{task_index: address}}; got {type(tasks).__name__}: {tasks!r}.")
    checked = {}
    for index, address in pairs:
        if isinstance(address, bytes):
            address = address.decode("utf-8")
        if not isinstance(address, str):
            raise TypeError(f"Task {index} of job {job_name!r} has address {address!r}; addresses must be "
                            "strings such as 'host:2222'.")
        checked[index] = address
    return checked


def _checked_index(job_name: str, index: Any) -> int:
    # JSON object keys are strings, so TF_CONFIG gives {"1": "host:port"}; accept "1" like TF does.
    if isinstance(index, bool) or not isinstance(index, (int, str)):
        raise TypeError(f"Task indices of job {job_name!r} must be integers; got {index!r}.")
    try:
        value = int(index)
    except ValueError:
        raise TypeError(f"Task indices of job {job_name!r} must be integers; got {index!r}.") from None
    if value < 0:
        raise ValueError(f"Task indices of job {job_name!r} must be >= 0; got {value}.")
    return value
