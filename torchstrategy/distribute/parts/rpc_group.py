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
from torchstrategy.distribute.parts import rpc_startup

#: Seconds between a server's checks that its coordinator still answers.
WATCHDOG_INTERVAL_SECONDS = 2.0
#: Seconds a check may take before the coordinator counts as gone.
WATCHDOG_TIMEOUT_SECONDS = 20.0
#: Seconds a task leaving a failed job waits for the calls it is serving (torch's RPC waits for them all).
LEAVE_SECONDS = 5.0


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


class RpcError(RuntimeError):
    """A task of the cluster did not answer (its process died or its connection broke). It pickles (torch's RPC
    re-raises a remote error by unpickling it), keeping `task`, `address` and its notes."""

    def __init__(self, task: str, error: Optional[BaseException] = None, address: str = "",
                 message: Optional[str] = None) -> None:
        #: what the transport said (its first line)
        self.reason = (str(error).splitlines()[0] if str(error) else type(error).__name__) if error is not None \
            else "no answer"
        if message is None:
            advice = (" The variables it held are lost, so training cannot go on: restart the job; BackupAndRestore "
                      "or CheckpointManager resume it from the last checkpoint.") if task.startswith("ps:") else ""
            where = f"{task} at {address}" if address else task
            message = f"Task {where} of the parameter-server cluster did not answer: {self.reason}.{advice}"
        super().__init__(message)
        self.task = task
        self.address = address

    def __reduce__(self) -> tuple:
        return type(self), (self.task, None, self.address, str(self)), dict(self.__dict__)


class RpcGroup:
    """This process's membership in the cluster's RPC group (one per process, as torch.distributed.rpc allows).

    `call`/`call_async` run a module-level function on a named task. Every task but the coordinator runs
    a watchdog: when the coordinator stops answering, the task says so on stderr and exits, so that no
    server outlives its job.
    """

    def __init__(self, layout: PSClusterLayout, timeout_seconds: float = 120.0, threads: int = 16,
                 startup_timeout: Optional[float] = None) -> None:
        import torch.distributed.rpc as rpc

        from torchstrategy.cluster.environment import ps_startup_timeout

        self.layout = layout
        self._rpc = rpc
        self._closed = False
        #: tasks that failed to answer a call (the group can then no longer leave gracefully)
        self.lost: set = set()
        # Every task must be there before torch's rendezvous starts, which would wait for a missing one for half
        # an hour: ps 0's store is reached, and the tasks answer a roll call, within the start-up timeout
        startup = ps_startup_timeout() if startup_timeout is None else startup_timeout
        deadline = time.monotonic() + startup
        #: ps 0's rendezvous store (hosted here on ps 0): the roll call's, and the RPC group's own, with it
        self._store: Any = rpc_startup.open_store(layout, startup, deadline)
        # The group is fixed when the job starts (torch.distributed.rpc cannot let a new process take a dead
        # member's place: a same-name join is refused, a new name's join waits on the dead member)
        if layout.rank != 0 and self._store.check([_RUNNING_KEY]):
            raise RuntimeError(
                f"{layout.name} cannot join the parameter-server job at {layout.master_addr}:{layout.master_port}: "
                f"it is already running, and its group is fixed when the job starts (a restarted task cannot "
                f"join it; the job goes on with the other workers). Restart the whole job to use this task again; "
                f"BackupAndRestore resumes training from the last checkpoint.")
        rpc_startup.roll_call(self._store, layout, startup, deadline)
        # TCP only (libuv): TensorPipe's shared-memory transport spins while idle, about half a core per process
        options = rpc.TensorPipeRpcBackendOptions(
            init_method=f"tcp://{layout.master_addr}:{layout.master_port}", rpc_timeout=timeout_seconds,
            num_worker_threads=threads, _transports=["uv"])
        with warnings.catch_warnings():  # torch's own rendezvous uses a deprecated gloo call and says so
            warnings.simplefilter("ignore", UserWarning)
            try:
                rpc.init_rpc(layout.name, rank=layout.rank, world_size=layout.world_size,
                             rpc_backend_options=options)
            except RuntimeError as error:
                first = str(error).splitlines()[0] if str(error) else type(error).__name__
                raise RuntimeError(
                    f"{layout.describe(layout.name)} could not join the parameter-server group (rendezvous at "
                    f"{layout.describe(layout.names[0])}): {first}.") from error
        if layout.name != COORDINATOR_NAME:
            threading.Thread(target=self._watch_coordinator, name="torchstrategy-ps-watchdog", daemon=True).start()
        else:  # every task has joined: a task started now is a restart, which is turned away
            self._store.set(_RUNNING_KEY, "1")

    @property
    def name(self) -> str:
        return self.layout.name

    def call(self, task: str, fn: Callable, args: Sequence[Any] = (), timeout: Optional[float] = None) -> Any:
        """`fn(*args)` on `task`; an RpcError when the task does not answer."""
        try:
            return self._rpc.rpc_sync(task, fn, args=tuple(args), timeout=-1 if timeout is None else timeout)
        except RuntimeError as error:
            raise self._lost(task, error) from error

    def call_async(self, task: str, fn: Callable, args: Sequence[Any] = (), timeout: Optional[float] = None) -> Any:
        """A torch Future of `fn(*args)` on `task` (0 waits forever)."""
        return self._rpc.rpc_async(task, fn, args=tuple(args), timeout=-1 if timeout is None else timeout)

    def call_each(self, calls: Sequence[tuple], timeout: Optional[float] = None) -> list:
        """Runs (task, fn, args) calls concurrently, each given `timeout` seconds (None: the group's); their
        results in order (RpcError naming the first silent task)."""
        futures = []
        for task, fn, args in calls:
            try:
                futures.append((task, self.call_async(task, fn, args, timeout=timeout)))
            except RuntimeError as error:  # a task whose connection is already known to be broken
                raise self._lost(task, error) from error
        results = []
        for task, future in futures:
            try:
                results.append(future.wait())
            except RuntimeError as error:
                raise self._lost(task, error) from error
        return results

    def ping(self, names: Sequence[str], timeout: float) -> None:
        """Checks that every named task answers within `timeout` seconds (RpcError naming the first that does not)."""
        self.call_each([(name, _ping, ()) for name in names], timeout=timeout)

    def _lost(self, task: str, error: BaseException) -> RpcError:
        self.lost.add(task)
        index = self.layout.names.index(task) if task in self.layout.names else -1
        return RpcError(task, error, address=self.layout.addresses[index] if index >= 0 and self.layout.addresses
                        else "")

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

    def close(self, graceful: bool = False) -> bool:
        """Leaves the group: `graceful` with every task (all must be alive and leave too), else at once without
        waiting for tasks that died. False when a call this task is serving (a closure still running when the job
        failed) kept it from leaving within LEAVE_SECONDS: the caller should then end the process."""
        if self._closed:
            return True
        self._closed = True
        if graceful:
            return self._shutdown(True)
        leaving = threading.Thread(target=self._shutdown, args=(False,), name="torchstrategy-rpc-leave", daemon=True)
        leaving.start()
        leaving.join(LEAVE_SECONDS)
        return not leaving.is_alive()

    def _shutdown(self, graceful: bool) -> bool:
        try:
            self._rpc.shutdown(graceful=graceful)
        except Exception:  # noqa: BLE001 - leaving must not fail a job that ended
            pass
        return True

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
