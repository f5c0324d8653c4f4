"""The RPC group of a parameter-server cluster: starting it on a task (TensorPipe, rendezvous at ps 0),
calling tasks, a watchdog that ends a task whose coordinator is gone, and leaving without hanging."""
from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from typing import Any, Callable, Optional, Sequence

from torchstrategy import _context
from torchstrategy.cluster.ps import COORDINATOR_NAME, PSClusterLayout

#: Seconds between a server's checks that its coordinator still answers.
WATCHDOG_INTERVAL_SECONDS = 2.0
#: Seconds a check may take before the coordinator counts as gone.
WATCHDOG_TIMEOUT_SECONDS = 20.0


def _stop_task(graceful: bool) -> bool:
    """Runs on a server when the coordinator ends the job: lets `join()` return (leaving the group together
    with the others when every task is alive, else at once)."""
    service = _context.task_service()
    service.graceful = graceful
    service.stopped.set()
    return True


def _ping() -> bool:
    return True


_RUNNING_KEY = "torchstrategy/parameter_server_job_running"


def _rendezvous_store(layout: PSClusterLayout, timeout_seconds: float) -> Any:
    """A client of the rendezvous store ps 0 serves, or None when it does not answer within the timeout."""
    from datetime import timedelta

    import torch.distributed as dist

    try:
        return dist.TCPStore(layout.master_addr, layout.master_port, is_master=False,
                             timeout=timedelta(seconds=timeout_seconds), wait_for_workers=False)
    except (RuntimeError, OSError):
        return None


def _job_running(layout: PSClusterLayout) -> bool:
    """Whether the job this task belongs to already formed its group (so this task is a restart)."""
    import socket

    try:  # a plain connect first: nothing listening yet (ps 0 starting) means a fresh job, no store retries
        socket.create_connection((layout.master_addr, layout.master_port), timeout=1.0).close()
    except OSError:
        return False
    store = _rendezvous_store(layout, timeout_seconds=5.0)
    try:
        return store is not None and store.check([_RUNNING_KEY])
    except RuntimeError:
        return False


class RpcError(RuntimeError):
    """A task of the cluster did not answer (its process died or its connection broke)."""

    def __init__(self, task: str, error: BaseException) -> None:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        advice = (" The variables it held are lost, so training cannot go on: restart the job; BackupAndRestore "
                  "or CheckpointManager resume it from the last checkpoint.") if task.startswith("ps:") else ""
        super().__init__(f"task '{task}' of the parameter-server cluster did not answer: {first}.{advice}")
        self.task = task


class RpcGroup:
    """This process's membership in the cluster's RPC group (one per process, as torch.distributed.rpc allows).

    `call`/`call_async` run a module-level function on a named task. Every task but the coordinator runs
    a watchdog: when the coordinator stops answering, the task says so on stderr and exits, so that no
    server outlives its job.
    """

    def __init__(self, layout: PSClusterLayout, timeout_seconds: float = 120.0, threads: int = 16) -> None:
        import torch.distributed.rpc as rpc

        self.layout = layout
        self._rpc = rpc
        self._closed = False
        #: tasks that failed to answer a call (the group can then no longer leave gracefully)
        self.lost: set = set()
        # TCP only (libuv): TensorPipe's shared-memory transport spins while idle, about half a core per process
        options = rpc.TensorPipeRpcBackendOptions(
            init_method=f"tcp://{layout.master_addr}:{layout.master_port}", rpc_timeout=timeout_seconds,
            num_worker_threads=threads, _transports=["uv"])
        # The group is fixed when the job starts (torch.distributed.rpc cannot let a new process take a dead
        # member's place: a same-name join is refused, a new name's join waits on the dead member)
        if layout.rank != 0 and _job_running(layout):
            raise RuntimeError(
                f"{layout.name} cannot join the parameter-server job at {layout.master_addr}:{layout.master_port}: "
                f"it is already running, and its group is fixed when the job starts (a restarted task cannot "
                f"join it; the job goes on with the other workers). Restart the whole job to use this task again; "
                f"BackupAndRestore resumes training from the last checkpoint.")
        with warnings.catch_warnings():  # torch's own rendezvous uses a deprecated gloo call and says so
            warnings.simplefilter("ignore", UserWarning)
            try:
                rpc.init_rpc(layout.name, rank=layout.rank, world_size=layout.world_size,
                             rpc_backend_options=options)
            except RuntimeError as error:
                first = str(error).splitlines()[0] if str(error) else type(error).__name__
                raise RuntimeError(
                    f"{layout.name} could not join the parameter-server group (rendezvous at ps 0, "
                    f"{layout.master_addr}:{layout.master_port}): {first}. If the job is already running, a "
                    f"restarted task cannot join it: the group is fixed when the job starts, and the job goes on "
                    f"with the other workers. Restart the whole job to use it again; BackupAndRestore resumes "
                    f"training from the last checkpoint.") from error
        self._store: Any = None
        if layout.name != COORDINATOR_NAME:
            threading.Thread(target=self._watch_coordinator, name="torchstrategy-ps-watchdog", daemon=True).start()
        else:  # every task has joined: a task started now is a restart, which _job_running turns away
            self._store = _rendezvous_store(layout, timeout_seconds=30.0)
            if self._store is not None:
                self._store.set(_RUNNING_KEY, "1")

    @property
    def name(self) -> str:
        return self.layout.name

    def call(self, task: str, fn: Callable, args: Sequence[Any] = (), timeout: Optional[float] = None) -> Any:
        """`fn(*args)` on `task`; an RpcError when the task does not answer."""
        try:
            return self._rpc.rpc_sync(task, fn, args=tuple(args), timeout=-1 if timeout is None else timeout)
        except RuntimeError as error:
            self.lost.add(task)
            raise RpcError(task, error) from error

    def call_async(self, task: str, fn: Callable, args: Sequence[Any] = (), timeout: Optional[float] = None) -> Any:
        """A torch Future of `fn(*args)` on `task` (0 waits forever)."""
        return self._rpc.rpc_async(task, fn, args=tuple(args), timeout=-1 if timeout is None else timeout)

    def call_each(self, calls: Sequence[tuple]) -> list:
        """Runs (task, fn, args) calls concurrently; their results in order (RpcError naming the first silent task)."""
        futures = [(task, self.call_async(task, fn, args)) for task, fn, args in calls]
        results = []
        for task, future in futures:
            try:
                results.append(future.wait())
            except RuntimeError as error:
                self.lost.add(task)
                raise RpcError(task, error) from error
        return results

    def stop_servers(self, names: Sequence[str], graceful: bool) -> None:
        """Tells every named server its job is over (servers that died are skipped). `graceful` (every task
        alive): all leave the group together, so no connection is cut while a message is on its way."""
        futures = []
        for name in names:
            try:
                futures.append(self.call_async(name, _stop_task, (graceful,), timeout=10))
            except RuntimeError:
                continue
        for future in futures:
            try:
                future.wait()
            except RuntimeError:
                pass

    def close(self, graceful: bool = False) -> None:
        """Leaves the group: `graceful` with every task (all must be alive and leave too), else at once
        without waiting for tasks that died."""
        if self._closed:
            return
        self._closed = True
        try:
            self._rpc.shutdown(graceful=graceful)
        except Exception:  # noqa: BLE001 - leaving must not fail a job that ended
            pass

    def _watch_coordinator(self) -> None:
        while not self._closed:
            time.sleep(WATCHDOG_INTERVAL_SECONDS)
            if self._closed:
                return
            try:
                self._rpc.rpc_sync(COORDINATOR_NAME, _ping, timeout=WATCHDOG_TIMEOUT_SECONDS)
            except Exception as error:  # noqa: BLE001 - any failure means the coordinator is gone
                if self._closed:
                    return
                first = str(error).splitlines()[0] if str(error) else type(error).__name__
                print(f"torchstrategy: {self.layout.name} lost the coordinator ({first}); this task stops. "
                      f"Restart the job; BackupAndRestore/CheckpointManager resume it from the last checkpoint.",
                      file=sys.stderr, flush=True)
                os._exit(1)
