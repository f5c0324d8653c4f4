"""Each replica's progress beacon in the job's store (epoch, batch, what it is doing, how many collectives it
entered), and the watcher that names the replicas a waiting collective lacks, or ends a job one of whose
replicas finished its script while another waits in a collective it will never join."""
from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from typing import Any, Iterator, Optional

from torchstrategy import _context

#: How often a replica's beacon thread publishes its position (when it changed) and looks at its own wait.
TICK_S = 0.5
#: A beacon unchanged this long is published again anyway, so that its readers know the process is alive.
HEARTBEAT_S = 5.0
#: How long a replica waits in a collective before it names the replicas that have not reached it ...
REPORT_AFTER_S = 45.0
#: ... or this fraction of a shorter collective timeout, so that the report comes before the failure.
REPORT_FRACTION = 0.5
#: A replica waiting in a collective that a finished replica never entered ends the job at once if it is the
#: lowest-ranked one waiting there; the others do so after this long (in case that one cannot).
BACKUP_GRACE_S = 5.0
EXIT_CODE_ABANDONED = 1
#: Ticks in a row whose store calls fail before the thread stops (the replica hosting the store is gone).
MAX_STORE_FAILURES = 10


def report_after(timeout_s: float) -> float:
    """Seconds a replica waits in a collective before the report, for a collective timeout of `timeout_s`."""
    return min(REPORT_AFTER_S, REPORT_FRACTION * timeout_s)


class NoProgress:
    """The beacon of a process with nobody to wait for (one process, or replica threads): nothing is recorded."""

    active = False

    @property
    def activity(self) -> Any:
        """No callback is ever recorded here."""
        return None

    @activity.setter
    def activity(self, value: Any) -> None:
        pass

    def enter(self, label: str) -> None:
        """Nothing to count."""

    def leave(self) -> None:
        """Nothing to count."""

    def call(self, name: str) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def follow(self, training: Any) -> None:
        """Nobody asks where this process is."""

    def finish(self) -> None:
        """Nothing to publish."""

    def not_reached(self) -> Optional[list]:
        """Nobody to ask."""
        return None

    def stop(self) -> None:
        """Nothing runs."""


NO_PROGRESS = NoProgress()


def _no_progress() -> NoProgress:
    return NO_PROGRESS


def public_call(name: str) -> contextlib.AbstractContextManager:
    """Labels a public call that may run collectives on every replica (model.save, get_weights, ...) on the
    beacon of the job this process belongs to, so that a replica left waiting in it can name it. A no-op
    outside a multi-process job."""
    job = _context.job_strategy()
    return NO_PROGRESS.call(name) if job is None else job.progress.call(name)


@contextlib.contextmanager
def job_collective(label: str) -> Iterator[None]:
    """Counts the block as one collective `label` on the job's beacon: for collectives that run outside the
    strategy's own (a sharded weight gathered by DTensor). A no-op outside a multi-process job."""
    job = _context.job_strategy()
    progress = NO_PROGRESS if job is None else job.progress
    progress.enter(label)
    try:
        yield
    finally:
        progress.leave()


class ProgressBeacon:
    """This replica's position, published in the job's store by a daemon thread (never by the step itself):

    - the main thread only sets attributes: `enter(label)` / `leave()` around each collective (counted, so
      every replica counts the same collectives in the same order), `call(name)` around public calls that run
      collectives, `activity` (the callback being called, set by CallbackList) and `follow(progress)` (fit's
      TrainingProgress, read for epoch and batch);
    - every TICK_S the thread publishes what changed under `rank_<r>`; if this replica has waited in one
      collective for `report_after(timeout)`, it reads every beacon and (the lowest-ranked replica waiting
      there) names the replicas that have not reached it and where each replica is;
    - `finish()` (the process group's teardown at a normal exit) publishes "finished" at once; a replica
      waiting in a collective that the finished one never entered can never go on: it prints which call must
      run on every replica and ends the job (`launch.end_job`: its main thread is stuck in the collective).
    """

    active = True

    def __init__(self, store: Any, rank: int, world_size: int, timeout_s: float) -> None:
        self._store, self._rank, self._world_size = store, rank, world_size
        self._timeout_s = float(timeout_s)
        self._report_after = report_after(self._timeout_s)
        self._count = 0
        self._open: list = []  # (number, label, wall time) of the collectives entered and not left
        self._left: Optional[tuple] = None  # the last one left
        self._calls: list = []  # the public calls this replica is inside, outermost first
        self._training: Any = None  # fit's TrainingProgress (epoch, step)
        self.activity: Any = None  # (hook, callback) while CallbackList calls a callback
        self._finished = False
        self._publish_lock = threading.Lock()
        self._published: Optional[str] = None
        self._published_at = 0.0
        self._moved: Optional[tuple] = None  # the position last seen by the thread, and since when
        self._moved_at = time.time()
        self._reported: set = set()
        self._stopped = threading.Event()
        self._host = socket.gethostname()
        self._publish()
        self._thread = threading.Thread(target=self._run, name="torchstrategy-progress", daemon=True)
        self._thread.start()

    def __deepcopy__(self, memo: dict) -> "ProgressBeacon":
        return self  # one per process group

    def __reduce__(self) -> tuple:
        return (_no_progress, ())  # a copy sent to another process does not speak for this replica

    # ----- the main thread's side (attribute updates only) -------------------------------------------
    def enter(self, label: str) -> None:
        """Entering collective `label` (this replica's next collective: every replica must enter it)."""
        self._count += 1
        self._open.append((self._count, label, time.time()))

    def leave(self) -> None:
        """The innermost collective entered has returned (or raised)."""
        self._left = self._open.pop()

    def not_reached(self) -> Optional[list]:
        """After a collective failed (timed out): the replicas whose beacons show they never entered it, by
        rank; None when that cannot be told (nothing was left yet, or the store does not answer)."""
        if self._left is None:
            return None
        try:
            positions = self._read()
        except Exception:  # noqa: BLE001 - the store is gone with the replica that hosted it
            return None
        number = self._left[0]
        return [rank for rank, position in positions.items()
                if rank != self._rank and (position is None or position["count"] < number)]

    @contextlib.contextmanager
    def call(self, name: str) -> Iterator[None]:
        """Labels the block as public call `name` (model.fit, model.save, ...); a progress followed inside it
        (`follow`) is let go at its end."""
        followed = self._training
        self._calls.append(name)
        try:
            yield
        finally:
            self._calls.pop()
            self._training = followed

    def follow(self, training: Any) -> None:
        """Reads epoch and batch from `training` (fit's TrainingProgress) until the enclosing call ends."""
        self._training = training

    def finish(self) -> None:
        """This replica's script ended normally: published at once (its peers may be waiting for it)."""
        self._finished = True
        self._publish(force=True)

    def stop(self) -> None:
        """Stops the thread (the process group is gone)."""
        self._stopped.set()

    # ----- the thread --------------------------------------------------------------------------------
    def _run(self) -> None:
        failures = 0
        while not self._stopped.wait(TICK_S):
            try:
                self._publish()
                self._watch()
                failures = 0
            except Exception:  # noqa: BLE001 - the store did not answer: try again, unless it is gone for good
                failures += 1
                if failures >= MAX_STORE_FAILURES:
                    return

    def _position(self) -> dict:
        training = self._training
        activity = self.activity
        open_ = list(self._open)
        position = {
            "pid": os.getpid(), "host": self._host, "count": self._count, "finished": self._finished,
            "waiting": list(open_[-1]) if open_ else None, "calls": list(self._calls),
            "epoch": None if training is None else training.epoch, "step": None if training is None else training.step,
            "activity": None if activity is None else f"callback {type(activity[1]).__name__}.{activity[0]}",
        }
        key = (position["count"], len(open_), id(activity), position["epoch"], position["step"], len(self._calls),
               self._finished)
        if key != self._moved:
            self._moved, self._moved_at = key, time.time()
        position["since"] = self._moved_at
        return position

    def _publish(self, force: bool = False) -> None:
        with self._publish_lock:
            position = self._position()
            text = json.dumps(position, sort_keys=True)
            now = time.time()
            if not force and text == self._published and now - self._published_at < HEARTBEAT_S:
                return
            position["published"] = now
            self._store.set(f"rank_{self._rank}", json.dumps(position))
            self._published, self._published_at = text, now

    def _read(self) -> dict:
        """Every replica's last published position (None for one not heard from yet), by rank."""
        positions: dict = {}
        for rank in range(self._world_size):
            key = f"rank_{rank}"
            positions[rank] = json.loads(self._store.get(key)) if self._store.check([key]) else None
        return positions

    def _watch(self) -> None:
        open_ = list(self._open)
        if not open_ or self._finished:
            return
        number, label, entered = open_[-1]
        waited = time.time() - entered
        if waited < 2 * TICK_S:
            return
        positions = self._read()
        gone = [rank for rank, position in positions.items()
                if position is not None and position["finished"] and position["count"] < number]
        waiting_here = [rank for rank, position in positions.items()
                        if position is not None and position["waiting"] and position["waiting"][0] == number]
        first = min(waiting_here + [self._rank]) == self._rank
        if gone and (first or waited >= BACKUP_GRACE_S):
            self._end_abandoned_job(gone, label, positions)
        if waited >= self._report_after and number not in self._reported:
            self._reported.add(number)
            behind = [rank for rank, position in positions.items()
                      if rank != self._rank and (position is None or position["count"] < number)]
            if behind and first:
                _say(self._hang_report(behind, label, waited, positions))

    # ----- what it says ------------------------------------------------------------------------------
    def _call_name(self, label: str) -> str:
        calls = list(self._calls)
        return calls[-1] if calls else label

    def _hang_report(self, behind: list, label: str, waited: float, positions: dict) -> str:
        names = ", ".join(map(str, behind))
        call = self._call_name(label)
        where = label if call == label else f"{label}, in {call}"
        left = max(0.0, self._timeout_s - waited)
        lines = [f"torchstrategy: replica {self._rank} has waited {waited:.0f} s in a collective ({where}) that "
                 f"replica{'s' if len(behind) > 1 else ''} {names} {'have' if len(behind) > 1 else 'has'} not "
                 f"reached. Where every replica is:"]
        now = time.time()
        lines += [f"  {describe(rank, positions.get(rank), now)}" for rank in range(self._world_size)]
        lines.append(f"Unless replica{'s' if len(behind) > 1 else ''} {names} reach{'' if len(behind) > 1 else 'es'} "
                     f"it, the job will fail when the collective times out ({self._timeout_s:.0f} s after it began, "
                     f"in about {left:.0f} s). A replica blocked in user code (a callback, its input pipeline) "
                     f"holds up every other; if it is only slow, raise the limit with a CommunicationOptions("
                     f"timeout_seconds=...): MultiWorkerMirroredStrategy(communication_options=...), MirroredStrategy("
                     f"cross_device_ops=tf.distribute.experimental.CollectiveAllReduce(...)).")
        return "\n".join(lines)

    def _end_abandoned_job(self, gone: list, label: str, positions: dict) -> None:
        from torchstrategy.launch import end_job

        names = ", ".join(map(str, gone))
        call = self._call_name(label)
        plural = len(gone) > 1
        writes = "; the chief alone writes the file" if "save" in call or "checkpoint" in call.lower() else ""
        detail = "" if call == label else f" (here: {label})"
        now = time.time()
        lines = [f"torchstrategy: replica{'s' if plural else ''} {names} finished {'their' if plural else 'its'} "
                 f"script while replica {self._rank} waits in {call}, which runs collectives that every replica must "
                 f"join{detail}: replica {self._rank} would wait for {'them' if plural else 'it'} until the "
                 f"collective timeout ({self._timeout_s:.0f} s). {call} must be called on every replica, not only on "
                 f"the chief (not under `if strategy.is_chief:`){writes}. Where every replica is:"]
        lines += [f"  {describe(rank, positions.get(rank), now)}" for rank in range(self._world_size)]
        lines.append("Ending the job.")
        _say("\n".join(lines))
        end_job(EXIT_CODE_ABANDONED)


def describe(rank: int, position: Optional[dict], now: float) -> str:
    """One line saying where replica `rank` is, from its published `position` (None: never heard from)."""
    if position is None:
        return f"replica {rank}: has not published its progress yet (still starting, or stuck before it joined)"
    head = f"replica {rank} (pid {position['pid']} on {position['host']})"
    step = position["step"]
    where = f"epoch {position['epoch'] + 1}, {step} batch{'' if step == 1 else 'es'} done: " \
        if position["epoch"] is not None else ""
    calls = position["calls"]
    inside = f", in {' > '.join(calls)}" if calls else ""
    if position["finished"]:
        doing = "finished its script"
    elif position["waiting"]:
        number, label, entered = position["waiting"]
        doing = f"waiting in collective #{number} ({label}{inside}) for {now - entered:.0f} s"
    elif position["activity"]:
        doing = f"in {position['activity']} ({inside[2:]}) for {now - position['since']:.0f} s" if calls else \
            f"in {position['activity']} for {now - position['since']:.0f} s"
    elif calls:
        doing = f"in {calls[-1]}, outside its callbacks and collectives, for {now - position['since']:.0f} s"
    else:
        doing = f"in the script, outside fit/evaluate/predict, for {now - position['since']:.0f} s"
    silent = now - position["published"]
    stale = f" (no news for {silent:.0f} s: the process may be stuck in native code)" \
        if silent > 3 * HEARTBEAT_S and not position["finished"] else ""
    return f"{head}: {where}{doing}; {position['count']} collectives entered{stale}"


def _say(text: str) -> None:
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        try:
            os.write(2, (text + "\n").encode())
        except OSError:
            pass
