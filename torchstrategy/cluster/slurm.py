"""TF's SlurmClusterResolver on SLURM's environment, and the parsers it needs: SLURM's compact
hostlists ('node[01-03,07],gpu5') and tasks-per-node lists ('4(x2),3')."""
from __future__ import annotations

import itertools
import re
from typing import Optional, Union

from torchstrategy.cluster.base import (TRAINER_TASK_TYPES, ClusterResolver, env_int, env_value,
                                        format_master_url, local_accelerators)
from torchstrategy.cluster.spec import ClusterSpec, ProcessSpec

#: (nodelist variable, node-count variable) pairs, step values first: the step may use fewer
#: nodes than the allocation.
_NODELIST_VARIABLES = (("SLURM_STEP_NODELIST", "SLURM_STEP_NUM_NODES"),
                       ("SLURM_JOB_NODELIST", "SLURM_JOB_NUM_NODES"),
                       ("SLURM_NODELIST", "SLURM_NNODES"))
_TASKS_PER_NODE_VARIABLES = ("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE")
_SLURM_HINT = " Is this process running inside a SLURM step (started by srun)?"
_RANGE_ITEM = re.compile(r"(\d+)(?:-(\d+))?")
_TASK_COUNT_ITEM = re.compile(r"(\d+)(?:\(x(\d+)\))?")


def expand_hostlist(hostlist: str) -> list:
    """Expands a SLURM hostlist into host names, in order, keeping zero padding and duplicates.

    >>> expand_hostlist("node[01-03,07],gpu5")
    ['node01', 'node02', 'node03', 'node07', 'gpu5']
    >>> expand_hostlist("a[1-2]-ib,b")
    ['a1-ib', 'a2-ib', 'b']
    >>> expand_hostlist("r[1-2]n[3-4]")
    ['r1n3', 'r1n4', 'r2n3', 'r2n4']
    """
    text = hostlist.strip() if isinstance(hostlist, str) else ""
    if not text:
        raise ValueError(f"Invalid SLURM hostlist {hostlist!r}: it is empty.")
    hosts = []
    for expression in _split_outside_brackets(text, hostlist):
        pieces = re.split(r"(\[[^\[\]]*\])", expression)
        choices = [_expand_ranges(piece[1:-1], hostlist) if piece.startswith("[") else [piece]
                   for piece in pieces if piece]
        hosts.extend("".join(parts) for parts in itertools.product(*choices))
    return hosts


def _split_outside_brackets(text: str, original: str) -> list:
    expressions, current, inside = [], "", False
    for char in text:
        if char == "[":
            if inside:
                raise ValueError(f"Invalid SLURM hostlist {original!r}: nested '['.")
            inside = True
        elif char == "]":
            if not inside:
                raise ValueError(f"Invalid SLURM hostlist {original!r}: ']' without '['.")
            inside = False
        elif char == "," and not inside:
            expressions.append(current)
            current = ""
            continue
        current += char
    if inside:
        raise ValueError(f"Invalid SLURM hostlist {original!r}: '[' is never closed.")
    expressions.append(current)
    if any(not expression.strip() for expression in expressions):
        raise ValueError(f"Invalid SLURM hostlist {original!r}: empty host name between commas.")
    return [expression.strip() for expression in expressions]


def _expand_ranges(ranges: str, original: str) -> list:
    values = []
    for item in ranges.split(","):
        match = _RANGE_ITEM.fullmatch(item.strip())
        if match is None:
            raise ValueError(f"Invalid SLURM hostlist {original!r}: {item!r} in [{ranges}] is not N or N-M.")
        low_text, high_text = match.group(1), match.group(2) or match.group(1)
        low, high = int(low_text), int(high_text)
        if high < low:
            raise ValueError(f"Invalid SLURM hostlist {original!r}: range {item!r} runs backwards.")
        # SLURM pads every number of a range to the width of its lower bound: [08-10] -> 08, 09, 10.
        values.extend(str(number).zfill(len(low_text)) for number in range(low, high + 1))
    return values


def expand_tasks_per_node(tasks_per_node: str) -> list:
    """Expands SLURM's tasks-per-node list, in node order.

    >>> expand_tasks_per_node("4(x2),3")
    [4, 4, 3]
    """
    counts = []
    for item in str(tasks_per_node).split(","):
        match = _TASK_COUNT_ITEM.fullmatch(item.strip())
        if match is None or int(match.group(1)) < 1 or (match.group(2) is not None and int(match.group(2)) < 1):
            raise ValueError(f"Invalid SLURM tasks-per-node list {tasks_per_node!r}: {item!r} is not "
                             "N or N(xK) with N, K >= 1 (e.g. '4(x2),3').")
        counts.extend([int(match.group(1))] * int(match.group(2) or 1))
    return counts


def slurm_num_tasks() -> Optional[int]:
    """Tasks in this SLURM step: SLURM_STEP_NUM_TASKS, else SLURM_NTASKS; None when neither is set."""
    steps = env_int("SLURM_STEP_NUM_TASKS", required=False, minimum=1)
    return steps if steps is not None else env_int("SLURM_NTASKS", required=False, minimum=1)


class SlurmClusterResolver(ClusterResolver):
    """TF's resolver for jobs started by SLURM's `srun`, one process per task.

    Reads SLURM_PROCID (rank), SLURM_STEP_NUM_TASKS or SLURM_NTASKS (world size), SLURM_LOCALID
    and SLURM_NODEID (derived from the block layout when absent), the node list
    (SLURM_STEP_NODELIST, SLURM_JOB_NODELIST or SLURM_NODELIST) and tasks per node
    (SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE or SLURM_NTASKS_PER_NODE). The rendezvous
    is MASTER_ADDR (default: the first node) and MASTER_PORT (default: 15000 + SLURM_JOB_ID % 20000,
    the same in every task).

    As in TF, `cluster_spec()` gives each task 'host:port_base+i' (i: its index on the node) and
    splits the tasks among `jobs` (default {'worker': number of tasks}) in sorted job-name
    order. Unlike TF, hosts keep SLURM's node order (TF sorts them by name, which puts 'n10'
    before 'n9'), so task r's address is on node r's host under SLURM's default block layout.
    `auto_set_gpu` is accepted but does not touch CUDA_VISIBLE_DEVICES: torchstrategy gives
    each process the GPU of its local rank instead.
    """

    def __init__(self, jobs: Optional[dict] = None, port_base: int = 8888, gpus_per_node: Optional[int] = None,
                 gpus_per_task: Optional[int] = None, tasks_per_node: Union[int, dict, None] = None,
                 auto_set_gpu: bool = True, rpc_layer: Optional[str] = "grpc") -> None:
        super().__init__()
        self._rank = env_int("SLURM_PROCID", hint=_SLURM_HINT)
        num_tasks = slurm_num_tasks()
        if num_tasks is None:
            raise ValueError("Neither SLURM_STEP_NUM_TASKS nor SLURM_NTASKS is set." + _SLURM_HINT)
        self._hosts, self._tasks_per_host = _resolve_layout(tasks_per_node)
        if sum(self._tasks_per_host) != num_tasks:
            raise ValueError(f"Mismatched world sizes: the tasks per node {self._tasks_per_host} add up to "
                             f"{sum(self._tasks_per_host)}, but SLURM says the step has {num_tasks} tasks.")
        if self._rank >= num_tasks:
            raise ValueError(f"SLURM_PROCID={self._rank} must be below the number of tasks {num_tasks}.")
        self._jobs = _checked_jobs({"worker": num_tasks} if jobs is None else jobs, num_tasks)
        self._port_base = int(port_base)
        most_tasks = max(self._tasks_per_host)
        self._gpus_per_node = local_accelerators().get("GPU", 0) if gpus_per_node is None else int(gpus_per_node)
        self._gpus_per_task = self._gpus_per_node // most_tasks if gpus_per_task is None else int(gpus_per_task)
        if most_tasks * self._gpus_per_task > self._gpus_per_node:
            raise RuntimeError(f"Requested {self._gpus_per_task} GPU(s) per task for {most_tasks} tasks on a node, "
                               f"but a node has {self._gpus_per_node} GPU(s).")
        self._auto_set_gpu = auto_set_gpu
        self._rpc_layer = rpc_layer
        self._own_task = self._task_of_rank(self._rank)
        self._task_type, self._task_id = self._own_task

    def _task_of_rank(self, rank: int) -> tuple:
        start = 0
        for job, count in sorted(self._jobs.items()):
            if start <= rank < start + count:
                return job, rank - start
            start += count
        raise AssertionError("jobs were checked to cover every task")

    def cluster_spec(self) -> ClusterSpec:
        addresses = [f"{host}:{self._port_base + index}"
                     for host, count in zip(self._hosts, self._tasks_per_host) for index in range(count)]
        cluster, start = {}, 0
        for job, count in sorted(self._jobs.items()):
            cluster[job] = addresses[start:start + count]
            start += count
        return ClusterSpec(cluster)

    def get_task_info(self) -> tuple:
        """(task_type, task_id) of this process, as TF's SlurmClusterResolver returns it."""
        return self.task_type, self.task_id

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """The address of the given task (default: this one), prefixed with the rpc layer."""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            return ""
        return format_master_url(self.cluster_spec().task_address(task_type, task_id), rpc_layer or self._rpc_layer)

    def num_accelerators(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                         config_proto: object = None) -> dict:
        """{'GPU': gpus_per_task}, or {} when tasks get no GPU."""
        del task_type, task_id, config_proto
        return {"GPU": self._gpus_per_task} if self._gpus_per_task else {}

    def process_spec(self) -> ProcessSpec:
        others = sorted(set(self._jobs) - set(TRAINER_TASK_TYPES))
        if others:
            raise ValueError(f"SlurmClusterResolver: jobs {others} do not join the data-parallel group; only "
                             "'chief' and 'worker' jobs can be used for MirroredStrategy/MultiWorkerMirroredStrategy.")
        if self._jobs.get("chief", 0) > 1:
            raise ValueError(f"SlurmClusterResolver: jobs ask for {self._jobs['chief']} 'chief' tasks; at most one.")
        node_rank, local_rank = self._node_and_local_rank()
        master_addr = env_value("MASTER_ADDR") or self._hosts[0]
        task_type, task_id = self._own_task
        return ProcessSpec(
            world_size=sum(self._tasks_per_host), rank=self._rank, local_rank=local_rank,
            local_world_size=self._tasks_per_host[node_rank], node_rank=node_rank, num_nodes=len(self._hosts),
            master_addr=master_addr, master_port=_master_port(), launched=True, source="slurm",
            task_type=task_type, task_id=task_id)

    def _node_and_local_rank(self) -> tuple:
        node_rank = env_int("SLURM_NODEID", required=False)
        local_rank = env_int("SLURM_LOCALID", required=False)
        if node_rank is None or local_rank is None:  # SLURM's default block layout: nodes fill in order
            start = 0
            for node, count in enumerate(self._tasks_per_host):
                if self._rank < start + count:
                    node_rank = node if node_rank is None else node_rank
                    local_rank = self._rank - start if local_rank is None else local_rank
                    break
                start += count
        if node_rank >= len(self._hosts):
            raise ValueError(f"SLURM_NODEID={node_rank} must be below the number of nodes {len(self._hosts)}.")
        if local_rank >= self._tasks_per_host[node_rank]:
            raise ValueError(f"SLURM_LOCALID={local_rank} must be below the {self._tasks_per_host[node_rank]} "
                             f"task(s) of node {node_rank} ({self._hosts[node_rank]}).")
        return node_rank, local_rank


def _resolve_layout(tasks_per_node: Union[int, dict, None]) -> tuple:
    """(hosts, tasks on each host) from the argument, else SLURM's variables."""
    if isinstance(tasks_per_node, dict):
        return list(tasks_per_node), [int(count) for count in tasks_per_node.values()]
    hosts = _resolve_hosts()
    if tasks_per_node is not None:
        return hosts, [int(tasks_per_node)] * len(hosts)
    for name in _TASKS_PER_NODE_VARIABLES:
        text = env_value(name)
        if text is not None:
            counts = expand_tasks_per_node(text)
            if len(counts) != len(hosts):
                raise ValueError(f"{name}={text!r} describes {len(counts)} node(s) but the node list has "
                                 f"{len(hosts)}: {hosts}.")
            return hosts, counts
    per_node = env_int("SLURM_NTASKS_PER_NODE", required=False, minimum=1)
    if per_node is None:
        raise ValueError("None of SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE or SLURM_NTASKS_PER_NODE "
                         "is set; pass tasks_per_node=." + _SLURM_HINT)
    return hosts, [per_node] * len(hosts)


def _resolve_hosts() -> list:
    for list_name, count_name in _NODELIST_VARIABLES:
        text = env_value(list_name)
        if text is None:
            continue
        hosts = expand_hostlist(text)
        count = env_int(count_name, required=False, minimum=1)
        if count is None and count_name == "SLURM_JOB_NUM_NODES":
            count = env_int("SLURM_NNODES", required=False, minimum=1)
        if count is not None and count != len(hosts):
            raise ValueError(f"{list_name}={text!r} names {len(hosts)} node(s) but {count_name} says {count}.")
        return hosts
    raise ValueError("No SLURM node list: none of SLURM_STEP_NODELIST, SLURM_JOB_NODELIST or SLURM_NODELIST "
                     "is set." + _SLURM_HINT)


def _checked_jobs(jobs: dict, num_tasks: int) -> dict:
    if not isinstance(jobs, dict) or not jobs:
        raise TypeError(f"jobs must be a dict {{job name: number of tasks}}, e.g. {{'worker': 8}}; got {jobs!r}.")
    for name, count in jobs.items():
        if not isinstance(name, str) or isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise TypeError(f"jobs must map job names to task counts >= 0; got {name!r}: {count!r}.")
    if sum(jobs.values()) != num_tasks:
        raise ValueError(f"Mismatched world sizes: jobs {jobs} ask for {sum(jobs.values())} tasks but the "
                         f"SLURM step has {num_tasks}.")
    return dict(jobs)


def _master_port() -> int:
    port = env_int("MASTER_PORT", required=False, minimum=1)
    if port is not None:
        if port > 65535:
            raise ValueError(f"Environment variable MASTER_PORT={port} is not a port (1..65535).")
        return port
    job_id = env_int("SLURM_JOB_ID", required=False)
    if job_id is None:
        job_id = env_int("SLURM_JOBID", required=False)
    if job_id is None:
        raise ValueError("Cannot choose a rendezvous port: neither MASTER_PORT nor SLURM_JOB_ID is set. "
                         "Export MASTER_PORT (the same in every task).")
    # Derived from the job id so every task computes the same port without talking to the others.
    return 15000 + job_id % 20000
