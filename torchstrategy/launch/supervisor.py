"""Rank 0's side of torchstrategy's launcher: it watches the replicas it started and makes the job
stop together (a replica's crash, Ctrl-C or rank 0's own end never leaves a process behind)."""
from __future__ import annotations

import atexit
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import List, NamedTuple, Optional

from torchstrategy.launch import exits

POLL_INTERVAL_S = 0.2
#: After SIGTERM, how long a replica gets before SIGKILL.
TERMINATE_WAIT_S = 3.0
#: When rank 0's script ends normally, how long the others get to finish the same work.
FINISH_TIMEOUT_S = 60.0
#: After one Ctrl-C, how long rank 0 gets to unwind by itself (a second Ctrl-C ends all at once).
INTERRUPT_GRACE_S = 10.0
#: When rank 0 fails, how long it waits to see which replica's death caused it (a peer's kill often
#: reaches rank 0 as "connection reset" before this thread's next poll).
DEATH_REPORT_WAIT_S = 1.0
EXIT_CODE_REPLICA_FAILED = 1
EXIT_CODE_INTERRUPTED = 128 + int(signal.SIGINT)


class Replica(NamedTuple):
    """One process started by the launcher: its replica index (its RANK) and its Popen handle."""

    index: int
    process: subprocess.Popen


class ReplicaSupervisor:
    """Watches the replicas from rank 0; `start()` must run in the main thread that spawned them.

    - A replica that dies (non-zero code or a signal): one line on stderr names it, the others get
      SIGTERM (SIGKILL after TERMINATE_WAIT_S) and rank 0 ends with `os._exit(1)` (it may be stuck in
      a collective, where no Python exception can reach it). A replica that exits 0 early is fine.
    - Rank 0's script ends (atexit): after an uncaught exception or `sys.exit(n)` with n != 0 the
      replicas are stopped at once, and a replica that had died first is named (its signal or code);
      otherwise they get FINISH_TIMEOUT_S to finish, then are stopped.
    - Ctrl-C: the replicas die of it quietly (see `start_parent_watchdog`); rank 0 gets
      INTERRUPT_GRACE_S to unwind; a second Ctrl-C (or the grace running out) stops all at once.
    - SIGTERM (or SIGKILL) to rank 0 alone kills it outright; the replicas' parent-death signal and
      watchdog then end them.
    """

    def __init__(self, replicas: List[Replica]) -> None:
        self._replicas = list(replicas)
        self._lock = threading.Lock()
        self._stopping = False  # set once replica exits are expected (we are ending the job)
        self._interrupts = 0
        self._interrupt_deadline: Optional[float] = None
        self._all_exited = threading.Event()
        self._signal_fd: Optional[int] = None

    def start(self) -> None:
        self._signal_fd = _watch_signals_through_pipe()
        exits.note_exit_codes()
        atexit.register(self._at_exit)
        threading.Thread(target=self._run, name="torchstrategy-replica-supervisor", daemon=True).start()

    # -- the supervising thread -------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            self._wait_for_signal_or_tick()
            running = []
            for replica in self._replicas:
                code = replica.process.poll()
                if code is None:
                    running.append(replica)
                elif code != 0:
                    self._on_replica_died(replica, code)
            if self._interrupt_deadline is not None and time.monotonic() >= self._interrupt_deadline:
                _say(f"torchstrategy: rank 0 did not stop within {INTERRUPT_GRACE_S:g} s of the interrupt; "
                     f"stopping all replicas")
                self._stop_replicas()
                _hard_exit(EXIT_CODE_INTERRUPTED)
            if not running:
                self._all_exited.set()
                if self._interrupt_deadline is None:
                    return

    def _wait_for_signal_or_tick(self) -> None:
        if self._signal_fd is None:
            time.sleep(POLL_INTERVAL_S)
            return
        readable, _, _ = select.select([self._signal_fd], [], [], POLL_INTERVAL_S)
        if not readable:
            return
        try:
            received = os.read(self._signal_fd, 64)
        except BlockingIOError:
            return
        for signal_number in received:
            if signal_number == signal.SIGINT:
                self._on_interrupt()

    def _on_interrupt(self) -> None:
        with self._lock:
            self._interrupts += 1
            self._stopping = True  # replicas dying of the same Ctrl-C are expected
            if self._interrupts == 1:
                self._interrupt_deadline = time.monotonic() + INTERRUPT_GRACE_S
                return
        _say("torchstrategy: interrupted again; stopping all replicas now")
        self._stop_replicas()
        _hard_exit(EXIT_CODE_INTERRUPTED)

    def _on_replica_died(self, replica: Replica, code: int) -> None:
        killed_by = _signal_name(code)
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
        if killed_by == "SIGINT":  # Ctrl-C: rank 0 got it too and reports it; give it time to unwind
            self._interrupt_deadline = time.monotonic() + INTERRUPT_GRACE_S
            return
        _say(f"torchstrategy: replica {replica.index} (pid {replica.process.pid}) {_how_it_ended(code)}; "
             f"stopping the other replicas")
        self._stop_replicas()
        # the replica's own code when it chose one (e.g. 42 after a preemption save), else a plain failure
        _hard_exit(code if code > 0 else EXIT_CODE_REPLICA_FAILED)

    # -- rank 0's end -------------------------------------------------------------------------------
    def _at_exit(self) -> None:
        # An uncaught exception leaves sys.last_value (3.12+: sys.last_exc) set before atexit runs.
        crashed = getattr(sys, "last_exc", None) is not None or getattr(sys, "last_value", None) is not None
        if crashed or exits.requested_exit_code() not in (None, 0):
            with self._lock:
                reported = self._stopping
                self._stopping = True
            first_dead_code = self._name_dead_replicas() if not reported else None
            self._stop_replicas()
            if first_dead_code is not None and first_dead_code > 0:
                _hard_exit(first_dead_code)  # the job ends with the replica's own code (e.g. 42 after a preemption save)
            return
        if self._all_exited.wait(FINISH_TIMEOUT_S):
            return
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
        late = [str(replica.index) for replica in self._replicas if replica.process.poll() is None]
        _say(f"torchstrategy: replica(s) {', '.join(late)} still running {FINISH_TIMEOUT_S:g} s after rank 0 "
             f"finished; stopping them")
        self._stop_replicas()

    def end_job(self, code: int) -> None:
        """SIGTERM to every replica and rank 0 ended with `code` at once, from any thread (the main one may be
        blocked in a collective, which would raise a peer's disconnection if rank 0 waited for them); a replica
        that outlives the signal sees its launcher gone and exits (start_parent_watchdog)."""
        with self._lock:
            self._stopping = True
        for replica in self._replicas:
            if replica.process.poll() is None:
                _send(replica.process, signal.SIGTERM)
        _hard_exit(code)

    def _name_dead_replicas(self) -> Optional[int]:
        """One line per replica that died before rank 0 failed (rank 0's error then is only a symptom);
        returns the first such replica's exit code (negative: its signal), None if none had died."""
        deadline = time.monotonic() + DEATH_REPORT_WAIT_S
        while True:
            dead = [(replica, replica.process.poll()) for replica in self._replicas]
            dead = [(replica, code) for replica, code in dead if code not in (None, 0)]
            if dead or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        for replica, code in dead:
            _say(f"torchstrategy: replica {replica.index} (pid {replica.process.pid}) {_how_it_ended(code)} "
                 f"before rank 0 failed: "
                 f"rank 0's error above is its consequence (the replica's own output, if it printed any, is above "
                 f"it); stopping the other replicas")
        return dead[0][1] if dead else None

    def _stop_replicas(self) -> None:
        """SIGTERM to every live replica, SIGKILL to those still there after TERMINATE_WAIT_S; reaps all."""
        for replica in self._replicas:
            if replica.process.poll() is None:
                _send(replica.process, signal.SIGTERM)
        deadline = time.monotonic() + TERMINATE_WAIT_S
        for replica in self._replicas:
            try:
                replica.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _send(replica.process, signal.SIGKILL)
                replica.process.wait()


def _watch_signals_through_pipe() -> Optional[int]:
    """Has Python's C-level signal handler also write each signal number into a pipe we can select on.

    Python-level handlers (KeyboardInterrupt) only run when the main thread returns to bytecode, which
    never happens while it is blocked inside a C++ collective; the pipe lets this thread see Ctrl-C
    anyway. Skipped outside the main thread or when someone (asyncio) already uses the wakeup fd.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    os.set_blocking(write_fd, False)
    previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    if previous != -1:
        signal.set_wakeup_fd(previous)
        os.close(read_fd)
        os.close(write_fd)
        return None
    return read_fd


def _signal_name(code: int) -> Optional[str]:
    if code >= 0:
        return None
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _how_it_ended(code: int) -> str:
    killed_by = _signal_name(code)
    return f"was killed by {killed_by}" if killed_by else f"exited with code {code}"


def _send(process: subprocess.Popen, signal_number: int) -> None:
    try:
        process.send_signal(signal_number)
    except ProcessLookupError:
        pass


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        try:
            os.write(2, (line + "\n").encode())
        except OSError:
            pass


def _hard_exit(code: int) -> None:
    """Flushes stdio and ends rank 0 now, even if its main thread is stuck in native code."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(code)
