"""Notices a test that started a child process (subprocess, fork, spawned replicas, torchrun), so that
`pytest -m "not slow"` stays free of them: such tests must carry the `slow` marker."""
from __future__ import annotations

import os
import sys
import threading
from typing import Optional

# Audit events raised when Python starts another process (subprocess.Popen, os.fork/posix_spawn/system/exec*).
_EVENTS = frozenset({"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system",
                     "os.exec", "pty.spawn"})
_lock = threading.Lock()
_started: list = []
_installed = False


def _audit(event: str, args: tuple) -> None:
    if event in _EVENTS:
        with _lock:
            _started.append(f"{event} {str(args[0])[:120] if args else ''}".strip())


def install() -> None:
    """Adds the audit hook (once per process; audit hooks cannot be removed, this one only appends a line)."""
    global _installed
    if not _installed:
        sys.addaudithook(_audit)
        _installed = True


def _reaped_child_ticks() -> int:
    """cutime + cstime of this process: CPU time of children that ran and were waited for (any launcher,
    including multiprocessing's spawn, which starts its interpreter without a Popen audit event)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return int(fields[13]) + int(fields[14])  # fields 16 and 17 of proc(5), counted after the ")"
    except (OSError, IndexError, ValueError):
        return 0


def _live_children() -> set:
    """Pids of this process's children (of any of its threads) that exist now, zombies included."""
    pids = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return pids
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
                pids.update(int(pid) for pid in handle.read().split())
        except (OSError, ValueError):
            pass
    return pids


class Snapshot:
    """What was running before a test; `started()` says what process the test started since, if any."""

    def __init__(self) -> None:
        with _lock:
            self.events = len(_started)
        self.ticks = _reaped_child_ticks()
        self.children = _live_children()

    def started(self) -> Optional[str]:
        with _lock:
            new_events = _started[self.events:]
        if new_events:
            return "; ".join(new_events[:3])
        new_children = _live_children() - self.children
        if new_children:
            return f"child processes {sorted(new_children)}"
        if _reaped_child_ticks() > self.ticks:
            return "a child process that ran and exited (its CPU time was added to this process's)"
        return None
