"""Where each task of a parameter-server cluster sits in the RPC group: the frozen PSClusterLayout
(task names, ranks, the rendezvous address) made from a TF ClusterSpec of chief, worker and ps tasks."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from torchstrategy.cluster.base import split_address
from torchstrategy.cluster.spec import ClusterSpec

#: The RPC name of the coordinator (TF's 'chief', also when the cluster lists no chief task).
COORDINATOR_NAME = "chief"


def task_name(task_type: str, task_id: int) -> str:
    """The RPC name of a task: 'worker:1', 'ps:0' (the coordinator is 'chief')."""
    return COORDINATOR_NAME if task_type == "chief" else f"{task_type}:{task_id}"


@dataclass(frozen=True)
class PSClusterLayout:
    """One cluster's RPC group, as every task computes it from the same ClusterSpec.

    Ranks: ps 0..P-1, then workers, then the coordinator. ps 0 hosts the rendezvous store at its
    address from the spec, so that a coordinator absent from the spec (TF's in-process cluster) still
    finds the group. `rank` is this process's rank.

    >>> spec = ClusterSpec({"worker": ["127.0.0.1:1", "127.0.0.1:2"], "ps": ["127.0.0.1:3"]})
    >>> layout = ps_layout(spec, "chief", 0, where="test")
    >>> layout.names, layout.rank, layout.master_port
    (('ps:0', 'worker:0', 'worker:1', 'chief'), 3, 3)
    """

    names: tuple
    rank: int
    master_addr: str
    master_port: int
    num_workers: int
    num_ps: int
    #: each task's 'host:port' from the spec, in the order of `names` ('' for a coordinator the spec omits)
    addresses: tuple = ()

    @property
    def world_size(self) -> int:
        return len(self.names)

    @property
    def name(self) -> str:
        return self.names[self.rank]

    def describe(self, name: str) -> str:
        """`name` and where the spec puts it, as errors say it: 'ps:0 at 127.0.0.1:2222'."""
        address = self.addresses[self.names.index(name)] if name in self.names and self.addresses else ""
        return f"{name} at {address}" if address else f"{name} (no address in the cluster spec)"

    @property
    def worker_names(self) -> tuple:
        return tuple(f"worker:{i}" for i in range(self.num_workers))

    @property
    def ps_names(self) -> tuple:
        return tuple(f"ps:{i}" for i in range(self.num_ps))


def ps_layout(cluster: ClusterSpec, task_type: Optional[str], task_id: Optional[int], *, where: str) -> PSClusterLayout:
    """The layout of a parameter-server cluster seen from task (task_type, task_id); task_type None or
    'chief' is the coordinator. Clear ValueErrors for clusters ParameterServerStrategy cannot run."""
    if not isinstance(cluster, ClusterSpec):
        raise TypeError(f"{where}: expected a tf.train.ClusterSpec; got {type(cluster).__name__}.")
    jobs = cluster.jobs
    example = ('{"worker": ["host1:2222", "host2:2222"], "ps": ["host3:2222"]} (plus "chief": ["host0:2222"] '
               'for a separate coordinator)')
    for job in ("ps", "worker"):
        if job not in jobs or cluster.num_tasks(job) == 0:
            raise ValueError(f"{where}: ParameterServerStrategy needs '{job}' tasks, but the cluster has "
                             f"{'none' if job not in jobs else 'an empty list'} (jobs: {list(jobs)}). "
                             f"Give a cluster like {example}.")
        indices = cluster.task_indices(job)
        if indices != list(range(len(indices))):
            raise ValueError(f"{where}: job '{job}' lists task indices {indices}; list every task 0..{len(indices) - 1}.")
    unknown = [job for job in jobs if job not in ("chief", "worker", "ps", "evaluator")]
    if unknown:
        raise ValueError(f"{where}: unknown job(s) {unknown}; a parameter-server cluster has chief, worker, ps "
                         f"and evaluator jobs.")
    if "chief" in jobs and cluster.num_tasks("chief") > 1:
        raise ValueError(f"{where}: the cluster lists {cluster.num_tasks('chief')} 'chief' tasks; the coordinator "
                         f"is one task.")
    num_workers, num_ps = cluster.num_tasks("worker"), cluster.num_tasks("ps")
    names = tuple(f"ps:{i}" for i in range(num_ps)) + tuple(f"worker:{i}" for i in range(num_workers)) \
        + (COORDINATOR_NAME,)
    kind = "chief" if task_type in (None, "chief") else task_type
    if kind == "evaluator":
        raise ValueError(f"{where}: an 'evaluator' task is not part of the parameter-server group; run "
                         f"tf.keras.utils.SidecarEvaluator there instead of ParameterServerStrategy.")
    if kind not in ("chief", "worker", "ps"):
        raise ValueError(f"{where}: unknown task type {task_type!r}; use 'chief', 'worker' or 'ps'.")
    index = 0 if kind == "chief" else task_id
    if kind != "chief" and (index is None or not 0 <= int(index) < cluster.num_tasks(kind)):
        raise ValueError(f"{where}: task index {index!r} is out of range for job '{kind}', which has "
                         f"{cluster.num_tasks(kind)} task(s).")
    host, port = split_address(cluster.task_address("ps", 0), f"{where} (ps 0, which hosts the rendezvous)")
    addresses = tuple(cluster.task_address("ps", i) for i in range(num_ps)) \
        + tuple(cluster.task_address("worker", i) for i in range(num_workers)) \
        + ((cluster.task_address("chief", 0),) if "chief" in jobs and cluster.num_tasks("chief") else ("",))
    return PSClusterLayout(names=names, rank=names.index(task_name(kind, int(index))), master_addr=host,
                           master_port=port, num_workers=num_workers, num_ps=num_ps, addresses=addresses)
