"""The replica side of a launcher: a watchdog that ends a replica soon after the process that launched
it (our rank 0, or torchrun's agent) is gone, so no replica outlives its job."""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from typing import Optional

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_EXIT_CODE_LAUNCHER_GONE = 1

_started_for: Optional[int] = None
_start_lock = threading.Lock()


def start_parent_watchdog(launcher_pid: int, poll_interval: float = 0.5,
                          terminate_grace: Optional[float] = None) -> None:
    """Ends this process (exit code 1) within about `poll_interval` seconds of the launcher dying.

    Call it in a replica that torchstrategy's launcher started (`ProcessSpec.launcher_pid`). A daemon
    thread checks whether the launcher is still alive and still this process's parent; it uses
    `os._exit` because the main thread may be blocked inside a collective. On Linux the kernel is also
    asked to send SIGTERM when the parent dies (PR_SET_PDEATHSIG). Called from the main thread, it also
    gives SIGINT (unless the user set a handler) its default action here: Ctrl-C ends the replica at
    once, even inside a collective, and quietly (rank 0 shows the one KeyboardInterrupt and stops the
    job). Calling it again is a no-op.

    With `terminate_grace` (seconds), a launcher's death first sends this process SIGTERM, so that a
    preemption handler (a BackupAndRestore with save_before_preemption set) can save a backup with the other
    replicas, which are orphaned too; the process is ended anyway once the grace has passed.

    Example (spec: this process's ProcessSpec, read from the environment):
        if spec.launcher_pid is not None:   # TORCHSTRATEGY_LAUNCHER_PID was set
            start_parent_watchdog(spec.launcher_pid)
    """
    global _started_for
    if not isinstance(launcher_pid, int) or isinstance(launcher_pid, bool) or launcher_pid <= 1:
        raise ValueError(f"launcher_pid must be the process id of the launching process (an int > 1); "
                         f"got {launcher_pid!r}.")
    if poll_interval <= 0:
        raise ValueError(f"poll_interval must be a positive number of seconds; got {poll_interval!r}.")
    with _start_lock:
        if _started_for is not None:
            if _started_for != launcher_pid:
                raise RuntimeError(f"a parent watchdog already watches process {_started_for}; "
                                   f"it cannot also watch {launcher_pid}.")
            return
        _started_for = launcher_pid
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a user's own SIGINT handler is kept
    parent_at_start = os.getppid()
    if parent_at_start == launcher_pid and terminate_grace is None:
        _ask_kernel_for_parent_death_signal()
    if not _launcher_alive(launcher_pid, parent_at_start):
        _exit_because_launcher_gone(launcher_pid)
    thread = threading.Thread(target=_watch, args=(launcher_pid, parent_at_start, poll_interval, terminate_grace),
                              name="torchstrategy-parent-watchdog", daemon=True)
    thread.start()


def _watch(launcher_pid: int, parent_at_start: int, poll_interval: float, terminate_grace: Optional[float]) -> None:
    # An Event that is never set gives an interruptible sleep without a busy loop.
    never = threading.Event()
    while _launcher_alive(launcher_pid, parent_at_start):
        never.wait(poll_interval)
    if terminate_grace is not None:
        _say(f"torchstrategy: the launching process (pid {launcher_pid}) is gone; stopping replica pid "
             f"{os.getpid()} (SIGTERM: a BackupAndRestore with save_before_preemption saves first).\n")
        os.kill(os.getpid(), signal.SIGTERM)
        never.wait(terminate_grace)
        _exit_because_launcher_gone(launcher_pid, who="the launcher")
    _exit_because_launcher_gone(launcher_pid)


def _say(message: str) -> None:
    try:
        os.write(2, message.encode())
    except OSError:
        pass


def _launcher_alive(launcher_pid: int, parent_at_start: int) -> bool:
    # A changed parent means ours died and we were re-parented (its pid may even linger as a zombie).
    if os.getppid() != parent_at_start:
        return False
    try:
        os.kill(launcher_pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # the pid now belongs to another user's process: ours is gone
        return False
    return True


def _exit_because_launcher_gone(launcher_pid: int, who: str = "rank 0") -> None:
    message = (f"torchstrategy: the launching process ({who}, pid {launcher_pid}) is gone; "
               f"replica pid {os.getpid()} is exiting too.\n")
    try:
        os.write(2, message.encode())
    except OSError:
        pass
    os._exit(_EXIT_CODE_LAUNCHER_GONE)


def _ask_kernel_for_parent_death_signal() -> None:
    """Linux only: SIGTERM this process when its parent thread exits (no effect elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):  # no prctl (unusual libc): the polling thread still covers it
        pass
