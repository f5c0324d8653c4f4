"""Starting the other local replicas of a plain `python train.py`: the program is re-run once per
extra replica with the rank environment set, and the calling process becomes rank 0."""
from __future__ import annotations

import dataclasses
import errno
import os
import socket
import subprocess
import sys
import threading
from typing import Dict, List, Mapping, Optional

from torchstrategy import cluster
from torchstrategy.cluster import environment
from torchstrategy.cluster.resolvers import LAUNCHED_VARIABLE, LAUNCHER_PID_VARIABLE
from torchstrategy.cluster.spec import ProcessSpec
from torchstrategy.launch.supervisor import Replica, ReplicaSupervisor
from torchstrategy.launch.watchdog import start_parent_watchdog



class PortInUseError(RuntimeError):
    """The rendezvous port asked for is already taken on this machine."""


_launch_lock = threading.Lock()
_launched: Optional[ProcessSpec] = None
_supervisor: Optional[ReplicaSupervisor] = None


def launch_local_replicas(num_replicas: int, master_port: Optional[int] = None, master_addr: str = "127.0.0.1",
                          threads_per_replica: Optional[int] = 1,
                          extra_env: Optional[Mapping[str, str]] = None) -> ProcessSpec:
    """Re-runs this program for replicas 1..num_replicas-1 on this machine; the caller becomes rank 0.

    Each replica runs `sys.executable` with the same interpreter flags, the same script (or `-m module`)
    and the same `sys.argv[1:]`, with stdin from /dev/null and stdout/stderr shared with this process.
    It gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE (= num_replicas), GROUP_RANK=0,
    MASTER_ADDR, MASTER_PORT, TORCHSTRATEGY_LAUNCHED=1 and TORCHSTRATEGY_LAUNCHER_PID, plus
    OMP_NUM_THREADS=threads_per_replica unless the user set OMP_NUM_THREADS (rank 0 then also calls
    `torch.set_num_threads`; None leaves threads alone). `extra_env` is added first, so it cannot
    override those. With `master_port=None` a free port on `master_addr` is chosen. From here on a
    supervisor makes the job stop together (see `ReplicaSupervisor`).

    Called again in the same process it returns the same spec. Called inside a replica it started,
    it starts nothing: it returns that replica's spec and starts the parent watchdog.

    Example:
        spec = launch_local_replicas(2)   # in `python train.py`: rank 0 here, rank 1 re-runs train.py
        spec.rank, spec.world_size, spec.master_port   # (0, 2, <free port>)
    """
    global _launched, _supervisor
    _check_arguments(num_replicas, master_port, threads_per_replica)
    current = cluster.process_spec()
    if current.source == "torchstrategy":
        return _join_as_launched_replica(num_replicas, current)
    if current.launched:
        raise RuntimeError(f"launch_local_replicas: this process is already part of a launched job "
                           f"(found by its {current.source} environment), so no replicas are started. "
                           f"Read the process's place from the environment instead, or unset those variables "
                           f"to launch from a plain `python train.py`.")
    with _launch_lock:
        if _launched is not None:
            if _launched.world_size != num_replicas:
                raise RuntimeError(f"launch_local_replicas: {_launched.world_size} replicas are already running "
                                   f"in this job; it cannot be relaunched with {num_replicas}. Build the strategy "
                                   f"once per program.")
            return _launched
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("launch_local_replicas must be called from the main thread (the replicas are "
                               "tied to the thread that starts them); build the strategy in the main thread.")
        command = _command_to_rerun() if num_replicas > 1 else []
        port = _rendezvous_port(master_addr, master_port)
        _limit_threads_here(threads_per_replica)
        placements = [{"RANK": rank, "LOCAL_RANK": rank, "WORLD_SIZE": num_replicas, "LOCAL_WORLD_SIZE": num_replicas,
                       "GROUP_RANK": 0} for rank in range(1, num_replicas)]
        replicas = _spawn(command, placements, master_addr, port, threads_per_replica, extra_env or {})
        if replicas:
            _supervisor = ReplicaSupervisor(replicas)
            _supervisor.start()
        _launched = ProcessSpec(world_size=num_replicas, rank=0, local_rank=0, local_world_size=num_replicas,
                                master_addr=master_addr, master_port=port, launched=True, source="torchstrategy")
        return _launched


def end_job(code: int) -> None:
    """Ends this process now with exit code `code`, also from a thread other than the main one (which may be
    blocked inside a collective, where no exception reaches it); replicas this process launched are stopped
    first, and a replica's own end reaches the launcher that watches it (rank 0's supervisor, torchrun)."""
    supervisor = _supervisor
    if supervisor is not None:
        supervisor.end_job(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(code)


def _check_arguments(num_replicas: int, master_port: Optional[int], threads_per_replica: Optional[int]) -> None:
    if not isinstance(num_replicas, int) or isinstance(num_replicas, bool) or num_replicas < 1:
        raise ValueError(f"num_replicas must be a positive int; got {num_replicas!r}.")
    if master_port is not None and (not isinstance(master_port, int) or not 1 <= master_port <= 65535):
        raise ValueError(f"master_port must be a TCP port number in 1..65535, or None to pick a free one; "
                         f"got {master_port!r}.")
    if threads_per_replica is not None and (not isinstance(threads_per_replica, int) or threads_per_replica < 1):
        raise ValueError(f"threads_per_replica must be a positive int, or None to leave thread counts alone; "
                         f"got {threads_per_replica!r}.")


def _join_as_launched_replica(num_replicas: int, spec: ProcessSpec) -> ProcessSpec:
    """Inside a replica this launcher started: its spec (from the environment); starts the watchdog."""
    if spec.world_size != num_replicas:
        raise RuntimeError(f"this replica was launched as one of {spec.world_size} replicas, but the program now "
                           f"asks for {num_replicas}; the number of replicas must not depend on the rank.")
    if spec.launcher_pid is not None:
        start_parent_watchdog(spec.launcher_pid)
    return spec


def _command_to_rerun() -> List[str]:
    """The argv that runs this program again: `python [flags] script.py args` or `python [flags] -m mod args`."""
    main = sys.modules.get("__main__")
    module_spec = getattr(main, "__spec__", None)
    main_file = getattr(main, "__file__", None)
    flags = _interpreter_flags()
    if module_spec is not None and module_spec.name not in ("__main__", None):
        module = module_spec.name
        if module.endswith(".__main__"):  # `python -m package` runs package.__main__
            module = module[: -len(".__main__")]
        return [sys.executable, *flags, "-m", module, *sys.argv[1:]]
    if main_file and sys.argv and sys.argv[0] not in ("", "-", "-c"):
        # A script's __file__ is absolute (3.9+); a directory or zip app is re-run by its argv[0].
        target = main_file if module_spec is None else sys.argv[0]
        target = os.path.abspath(target)
        if os.path.exists(target):
            return [sys.executable, *flags, target, *sys.argv[1:]]
    raise RuntimeError("torchstrategy cannot start the other replicas: this Python session was not started from "
                       "a script file (it runs `python -c`, code from stdin, or an interactive session), so there "
                       "is nothing to re-run. Put the code in a script and run `python train.py`, or start one "
                       "process per replica with `torchrun --nproc_per_node=N train.py`.")


def _interpreter_flags() -> List[str]:
    # The same -O/-W/-X/-u/... options the user gave this interpreter (what multiprocessing passes on too).
    flags_of = getattr(subprocess, "_args_from_interpreter_flags", None)
    return list(flags_of()) if flags_of is not None else []


def _rendezvous_port(master_addr: str, master_port: Optional[int]) -> int:
    """`master_port` if it can be bound on `master_addr` now, else a clear error; None: a free port."""
    family = socket.AF_INET6 if ":" in master_addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # SO_REUSEADDR like the rendezvous store: a port in TIME_WAIT is usable, a listening one is not.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((master_addr, master_port or 0))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise PortInUseError(f"master_port {master_port} on {master_addr} is already in use by another "
                                     f"process. Choose a free port, or leave master_port unset so torchstrategy "
                                     f"picks one.") from None
            raise RuntimeError(f"cannot use {master_addr}:{master_port or 0} for the replicas' rendezvous "
                               f"({error.strerror}); master_addr must be an address of this machine, such as "
                               f"127.0.0.1.") from error
        return probe.getsockname()[1]


def _limit_threads_here(threads_per_replica: Optional[int]) -> None:
    if threads_per_replica is None or environment.threads_set_by_user():
        return
    import torch  # lazily: the launcher itself does not need torch

    torch.set_num_threads(threads_per_replica)


def _replica_environment(placement: Mapping[str, int], master_addr: str, master_port: int,
                         threads_per_replica: Optional[int], extra_env: Mapping[str, str]) -> Dict[str, str]:
    """`placement`: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK (and GROUP_WORLD_SIZE)."""
    env = environment.snapshot()
    env.update({str(key): str(value) for key, value in extra_env.items()})
    if threads_per_replica is not None and not environment.threads_set_by_user():
        env["OMP_NUM_THREADS"] = str(threads_per_replica)
    env.update({key: str(value) for key, value in placement.items()})
    env.update({"MASTER_ADDR": master_addr, "MASTER_PORT": str(master_port), LAUNCHED_VARIABLE: "1",
                LAUNCHER_PID_VARIABLE: str(os.getpid())})
    return env


def _spawn(command: List[str], placements: List[Mapping[str, int]], master_addr: str, master_port: int,
           threads_per_replica: Optional[int], extra_env: Mapping[str, str]) -> List[Replica]:
    replicas: List[Replica] = []
    try:
        for placement in placements:
            env = _replica_environment(placement, master_addr, master_port, threads_per_replica, extra_env)
            # Same process group as rank 0, so a terminal's Ctrl-C reaches every replica.
            process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)
            replicas.append(Replica(placement["RANK"], process))
    except BaseException:
        for replica in replicas:
            replica.process.kill()
            replica.process.wait()
        raise
    return replicas


def task_replica_placements(spec: ProcessSpec, per_task: int) -> List[Dict[str, int]]:
    """The environment placements of a TF task's replicas 1..per_task-1 when every task of the job runs
    `per_task` replicas: task t's replicas are ranks t * per_task + i of world_size * per_task."""
    return [{"RANK": spec.rank * per_task + local, "LOCAL_RANK": local, "WORLD_SIZE": spec.world_size * per_task,
             "LOCAL_WORLD_SIZE": per_task, "GROUP_RANK": spec.rank, "GROUP_WORLD_SIZE": spec.world_size}
            for local in range(1, per_task)]


def launch_task_replicas(spec: ProcessSpec, per_task: int, threads_per_replica: Optional[int] = None) -> ProcessSpec:
    """Runs the TF task this process is (`spec`, one process of a TF_CONFIG cluster) as `per_task` replica
    processes, one per local device, as TF's MultiWorkerMirroredStrategy uses every local GPU of a task.

    Every task must do the same with the same `per_task` (as torchrun's --nproc_per_node): task t's
    replicas become ranks t * per_task .. t * per_task + per_task - 1, rendezvous unchanged (the chief's
    address). This process stays its task's first replica; the others re-run the program with the rank
    environment set (see `launch_local_replicas`), and a supervisor makes the task's processes stop together.
    Returns this process's new spec.
    """
    global _launched, _supervisor
    _check_arguments(per_task, None, threads_per_replica)
    with _launch_lock:
        if _launched is not None:
            if _launched.task_processes != per_task:
                raise RuntimeError(f"this task already runs {_launched.task_processes} replicas; it cannot be "
                                   f"relaunched with {per_task}. Build the strategy once per program.")
            return _launched
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("the task's replicas must be started from the main thread; build the strategy there.")
        placements = task_replica_placements(spec, per_task)
        _limit_threads_here(threads_per_replica)
        replicas = _spawn(_command_to_rerun(), placements, spec.master_addr, int(spec.master_port or 0),
                          threads_per_replica, {})
        _supervisor = ReplicaSupervisor(replicas)
        _supervisor.start()
        _launched = dataclasses.replace(
            spec, world_size=spec.world_size * per_task, rank=spec.rank * per_task, local_rank=0,
            local_world_size=per_task, node_rank=spec.rank, num_nodes=spec.world_size, task_processes=per_task)
        return _launched
