"""tf.distribute.coordinator: the ClusterCoordinator that queues closures for parameter-server workers
(one in flight per worker, re-run elsewhere when a worker dies), RemoteValue, and per-worker datasets."""
from __future__ import annotations

import collections
import itertools
import sys
import threading
from typing import Any, Callable, Optional, Sequence

import torch

from torchstrategy import _context
from torchstrategy.distribute.parts.closures import PerWorkerReference, WorkerService
from torchstrategy.distribute.parts.rpc_group import RpcError
from torchstrategy.errors import UnavailableError
from torchstrategy.nest import map_structure

#: Seconds between the coordinator's checks that every ps task still answers.
PS_HEARTBEAT_INTERVAL_SECONDS = 1.0
#: Seconds a ps task may take to answer a check before the job counts it as lost (a dead process fails at once).
PS_HEARTBEAT_TIMEOUT_SECONDS = 10.0


class RemoteValue:
    """The result of a scheduled closure: `fetch()` waits and returns it as NumPy values, `get()` as it came
    (tensors); both raise the closure's error when it failed."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: Any = None
        self._error: Optional[BaseException] = None

    def _set(self, value: Any) -> None:
        if not self._done.is_set():  # a closure failed by a lost ps stays failed when its worker answers late
            self._value = value
            self._done.set()

    def _fail(self, error: BaseException) -> None:
        if not self._done.is_set():
            self._error = error
            self._done.set()

    def get(self) -> Any:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def fetch(self) -> Any:
        return map_structure(lambda v: v.numpy() if isinstance(v, torch.Tensor) else v, self.get())

    def __repr__(self) -> str:
        return f"<RemoteValue {'ready' if self._done.is_set() else 'pending'}>"


class _Closure:
    def __init__(self, payload: bytes, specs: dict) -> None:
        self.payload, self.specs = payload, specs
        self.result = RemoteValue()


class PerWorkerValues(PerWorkerReference):
    """One value per worker (TF's PerWorkerValues): passed to `schedule`, each closure gets its worker's."""

    _keys = itertools.count()

    def __init__(self, coordinator: "ClusterCoordinator") -> None:
        self._coordinator = coordinator
        self._per_worker_key = f"pw{next(PerWorkerValues._keys)}"


class PerWorkerIterator(PerWorkerValues):
    """Each worker's iterator over its copy of a per-worker dataset; `next()` of it runs in a closure there."""

    def __iter__(self) -> "PerWorkerIterator":
        return self

    def __next__(self) -> Any:
        raise TypeError("A per-worker iterator gives batches on the workers: pass it to coordinator.schedule(fn, "
                        "args=(iterator,)) and call next(iterator) inside fn.")


class PerWorkerDataset(PerWorkerValues):
    """The dataset `create_per_worker_dataset` made on every worker; `iter()` gives a per-worker iterator."""

    def __iter__(self) -> PerWorkerIterator:
        iterator = PerWorkerIterator(self._coordinator)
        self._coordinator._on_each_worker("make_iterator", self._per_worker_key, iterator._per_worker_key)
        return iterator


def experimental_get_current_worker_index() -> int:
    """The index of the worker running the current closure (tf.distribute.coordinator's): 0 .. workers - 1.
    Only a function scheduled with ClusterCoordinator.schedule, running on a worker, can ask."""
    try:
        service = _context.task_service()
    except RuntimeError:
        service = None
    if not isinstance(service, WorkerService):
        raise RuntimeError("experimental_get_current_worker_index() is called inside a function scheduled with "
                           "ClusterCoordinator.schedule (it runs on a worker); this process is not running one.")
    return int(service.name.partition(":")[2])


class ClusterCoordinator:
    """tf.distribute.coordinator.ClusterCoordinator(strategy): schedules functions onto the workers of a
    ParameterServerStrategy cluster, asynchronously (one per strategy: a second call returns the first).

    `schedule(fn, args)` queues `fn` and returns a RemoteValue at once; a free worker runs it on the
    variables' current values and sends its updates to the ps tasks. `join()` waits for everything
    scheduled and raises the first error a closure raised. A closure whose worker dies is run again on
    another worker (closures may so run more than once; none is lost).
    """

    def __new__(cls, strategy: Any) -> "ClusterCoordinator":
        cluster = strategy.closure_cluster
        existing = cluster.coordinator if cluster is not None else None
        return existing if isinstance(existing, cls) else super().__new__(cls)

    def __init__(self, strategy: Any) -> None:
        if getattr(self, "_started", False):
            return
        cluster = strategy.closure_cluster
        if cluster is None:
            raise ValueError(f"ClusterCoordinator needs a tf.distribute.ParameterServerStrategy; got "
                             f"{type(strategy).__name__}. Other strategies run steps directly (strategy.run).")
        self.strategy = strategy
        self._cluster = cluster
        self._condition = threading.Condition()
        self._queue: collections.deque = collections.deque()
        self._running = 0
        self._errors: list = []
        self._fatal: Optional[BaseException] = None
        self._changed = False
        self._closed = False
        self._in_flight: set = set()
        self._stopping = threading.Event()
        self._live = list(cluster.worker_names)
        self._threads = [threading.Thread(target=self._serve, args=(name,), name=f"torchstrategy-{name}", daemon=True)
                         for name in self._live]
        self._started = True
        cluster.coordinator = self
        for thread in self._threads:
            thread.start()
        threading.Thread(target=self._watch_ps, name="torchstrategy-ps-heartbeat", daemon=True).start()

    # ----- scheduling ------------------------------------------------------------------------------
    def schedule(self, fn: Callable, args: Optional[Sequence[Any]] = None, kwargs: Optional[dict] = None) -> RemoteValue:
        """Queues `fn(*args, **kwargs)` for a worker; returns its RemoteValue without waiting.

        Arguments are captured now (pickled; variables travel as references, so the worker reads their
        values when it runs). Raises a closure error seen since the last `join()`, as TF does."""
        if not callable(fn):
            raise TypeError(f"schedule() needs a function to run on a worker; got {type(fn).__name__}: {fn!r}.")
        self._raise_errors()
        payload, specs = self._cluster.pack((fn, tuple(args or ()), dict(kwargs or {})))
        closure = _Closure(payload, specs)
        with self._condition:
            if not self._live:
                raise RuntimeError("No worker of the cluster is left to run closures (all failed).")
            self._queue.append(closure)
            self._condition.notify_all()
        return closure.result

    def join(self) -> None:
        """Waits until every scheduled closure finished; then the coordinator's variables hold the ps values.
        Raises the first error a closure raised since the last join (and forgets the others)."""
        with self._condition:
            while (self._queue or self._running) and self._fatal is None:
                self._condition.wait()
            changed, self._changed = self._changed, False
        if changed and self._fatal is None:
            self._cluster.refresh()
        self._raise_errors()

    def done(self) -> bool:
        """True when nothing scheduled is pending or running (raises a closure's error, as join does)."""
        with self._condition:
            idle = not self._queue and not self._running
        self._raise_errors()
        return idle

    def fetch(self, val: Any) -> Any:
        """RemoteValues (in any nest) replaced by their fetched values."""
        return map_structure(lambda v: v.fetch() if isinstance(v, RemoteValue) else v, val)

    def create_per_worker_dataset(self, dataset_fn: Any) -> PerWorkerDataset:
        """Makes the dataset on every worker: `dataset_fn()` runs there (typically returning
        `strategy.distribute_datasets_from_function(fn)`), or a dataset object is copied to each worker.
        `iter()` of the result gives each worker its own iterator."""
        if not callable(dataset_fn) and not hasattr(dataset_fn, "__iter__"):
            raise TypeError(f"create_per_worker_dataset needs a function returning a dataset, or a dataset; got "
                            f"{type(dataset_fn).__name__}.")
        dataset = PerWorkerDataset(self)
        payload, _ = self._cluster.pack((dataset_fn,))
        self._on_each_worker("create_per_worker", dataset._per_worker_key, payload)
        return dataset

    @property
    def num_live_workers(self) -> int:
        with self._condition:
            return len(self._live)

    # ----- internals -------------------------------------------------------------------------------
    def _raise_errors(self) -> None:
        with self._condition:
            if self._fatal is not None:
                raise self._fatal
            if self._errors:
                first, self._errors = self._errors[0], []
                raise first

    def _on_each_worker(self, method: str, *args: Any) -> None:
        with self._condition:
            live = list(self._live)
        futures = [(name, self._cluster.call_worker(name, method, *args)) for name in live]
        for name, future in futures:
            try:
                future.wait()
            except RuntimeError as error:
                self._lose_worker(name, error)

    def _lose_worker(self, name: str, error: BaseException) -> None:
        self._cluster.mark_lost(name)
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        with self._condition:
            if name not in self._live:
                return
            self._live.remove(name)
            left = len(self._live)
            if not left and self._fatal is None:
                self._fatal = RuntimeError(f"Every worker of the cluster failed (the last, "
                                           f"{self._cluster.describe(name)}: {first}); restart the job "
                                           f"(BackupAndRestore resumes it).")
                for closure in self._queue:
                    closure.result._fail(self._fatal)
                self._queue.clear()
            self._condition.notify_all()
            ending = self._closed or self._fatal is not None
        if left and not ending:
            print(f"torchstrategy: {name} failed ({first}); its closures run on the {left} other worker(s). A "
                  f"restarted worker does not rejoin this job.", file=sys.stderr, flush=True)

    def _serve(self, name: str) -> None:
        """One worker's thread: takes closures one at a time and runs them on that worker."""
        while True:
            with self._condition:
                while not self._queue and not self._closed and name in self._live:
                    self._condition.wait()
                if self._closed or name not in self._live:
                    return
                closure = self._queue.popleft()
                self._running += 1
                self._in_flight.add(closure)
            try:
                status, value = self._cluster.call_worker(name, "run", closure.payload, closure.specs).wait()
            except RuntimeError as error:  # the worker is gone: its closure goes back to the front
                with self._condition:
                    self._running -= 1
                    self._in_flight.discard(closure)
                    if self._fatal is None:
                        self._queue.appendleft(closure)
                self._lose_worker(name, error)
                return
            except BaseException as error:  # noqa: BLE001 - the answer could not be read: this closure fails
                status, value = "unreadable", error
            with self._condition:
                self._running -= 1
                self._in_flight.discard(closure)
                self._changed = True
                if status == "ok":
                    closure.result._set(value)
                elif status == "unreadable":
                    closure.result._fail(value)
                    self._errors.append(value)
                else:
                    error = value.exception()
                    closure.result._fail(error)
                    if value.failed_task is None:
                        self._errors.append(error)
                self._condition.notify_all()
            if status == "error" and value.failed_task is not None:
                self._lose_ps(value.failed_task, error)

    def _watch_ps(self) -> None:
        """The heartbeat: a ps task that stops answering fails the job within seconds, even while no closure
        touches it (a closure computing for minutes, a coordinator waiting in join())."""
        while not self._stopping.wait(PS_HEARTBEAT_INTERVAL_SECONDS):
            with self._condition:
                if self._fatal is not None:
                    return
            try:
                self._cluster.check_ps(PS_HEARTBEAT_TIMEOUT_SECONDS)
            except RpcError as error:
                if not self._stopping.is_set():
                    self._lose_ps(error.task, error)
                return

    def _lose_ps(self, task: str, cause: BaseException) -> None:
        """A ps task is gone with its variables: every pending and running closure fails, and so do join(),
        done() and schedule() from now on (TF raises UnavailableError there too)."""
        self._cluster.mark_lost(task)
        first = cause.reason if isinstance(cause, RpcError) else (str(cause).splitlines()[0] if str(cause) else
                                                                  type(cause).__name__)
        fatal = UnavailableError(
            None, None, f"Parameter server {self._cluster.describe(task)} stopped answering ({first}): the variables "
                        f"it held are lost, so training cannot go on. Restart the job; BackupAndRestore or "
                        f"CheckpointManager resume it from the last checkpoint.")
        fatal.__cause__ = cause
        with self._condition:
            if self._fatal is not None:
                return
            self._fatal = fatal
            for closure in list(self._queue) + list(self._in_flight):
                closure.result._fail(fatal)
            self._queue.clear()
            self._condition.notify_all()

    @property
    def healthy(self) -> bool:
        """No task lost: every worker alive and no parameter server failed."""
        with self._condition:
            return self._fatal is None and len(self._live) == len(self._threads)

    def close(self) -> None:
        """Stops the coordinator's worker threads and its heartbeat (the strategy's teardown calls it)."""
        self._stopping.set()
        with self._condition:
            self._closed = True
            self._condition.notify_all()
