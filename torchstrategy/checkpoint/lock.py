"""A lock file that gives one job a directory (e.g. BackupAndRestore's backup_dir): created with
O_CREAT|O_EXCL, names its holder, and is taken over with a warning when its holder is dead."""
from __future__ import annotations

import json
import os
import socket
import time
import uuid
import warnings
from typing import Any, Optional

LOCK_NAME = ".torchstrategy.lock"


def _process_start(pid: int) -> Optional[str]:
    """The kernel's start time of `pid` (Linux), so a recycled pid is not taken for the holder."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return None if fields[0] in ("Z", "X") else fields[19]
    except (OSError, IndexError):
        return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


class DirectoryLockedError(RuntimeError):
    """Another live job holds the directory's lock."""


class DirectoryLock:
    """Exclusive use of `directory` by one job, through the lock file `directory/.torchstrategy.lock`.

    The file records pid, hostname, start time, purpose and a random job token. `acquire()` refuses,
    naming the holder, while that holder is alive (or on another host, where it cannot be checked);
    a holder that died on this host (or an unreleased lock of this same process) is taken over with
    a warning. In a multi-replica job only the chief locks: the other ranks of the same job share the
    directory without touching the lock.

    >>> with DirectoryLock("/tmp/backup", purpose="BackupAndRestore"):  # doctest: +SKIP
    ...     train()
    """

    def __init__(self, directory: str, purpose: str = "", lock_name: str = LOCK_NAME) -> None:
        self.directory = os.fspath(directory)
        self.purpose = purpose
        self.path = os.path.join(self.directory, lock_name)
        self.token: Optional[str] = None

    @property
    def held(self) -> bool:
        """True between a successful `acquire()` and `release()`."""
        return self.token is not None

    def _describe(self, info: dict) -> str:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.get("started", 0)))
        purpose = f" for {info['purpose']}" if info.get("purpose") else ""
        return f"pid {info.get('pid')} on host '{info.get('hostname')}'{purpose}, since {started}"

    def _read(self) -> Optional[dict]:
        try:
            with open(self.path, encoding="utf-8") as handle:
                return json.load(handle)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {}  # half-written by a holder killed while creating it

    def _is_stale(self, info: dict) -> bool:
        if not info:
            created = os.path.getmtime(self.path) if os.path.exists(self.path) else 0
            return time.time() - created > 10.0  # unreadable for long: its writer died mid-write
        if info.get("hostname") != socket.gethostname():
            return False  # cannot see processes of another host: assume alive
        pid = int(info.get("pid", -1))
        if pid == os.getpid():
            return True  # an earlier lock of this very process that was never released
        if not _pid_alive(pid):
            return True
        start = info.get("process_start")
        return start is not None and _process_start(pid) not in (None, start)  # pid recycled

    def live_holder(self) -> Optional[dict]:
        """What the lock file says about its holder when that is another job that may still be running
        (alive on this host, or on another host where it cannot be checked); None when the lock is free,
        stale, or this process's own. An empty dict is a lock file still being written."""
        info = self._read()
        if info is None or self._is_stale(info):
            return None
        return info

    def acquire(self) -> "DirectoryLock":
        """Takes the lock or raises DirectoryLockedError naming the live holder."""
        if self.held:
            return self
        os.makedirs(self.directory, exist_ok=True)
        token = uuid.uuid4().hex
        for _ in range(5):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                info = self._read()
                if info is None:
                    continue  # released meanwhile: try again
                if not self._is_stale(info):
                    raise DirectoryLockedError(
                        f"'{self.directory}' is in use by another job ({self._describe(info)}): its lock file "
                        f"'{self.path}' says so. Two jobs must not share this directory; give this job another "
                        f"one, or stop that job. If that job is gone, delete the lock file.") from None
                self._take_over(info)
                continue
            record = {"pid": os.getpid(), "hostname": socket.gethostname(), "started": time.time(),
                      "purpose": self.purpose, "token": token, "process_start": _process_start(os.getpid())}
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(record, handle)
                handle.flush()
                os.fsync(handle.fileno())
            self.token = token
            return self
        raise DirectoryLockedError(f"Could not take the lock '{self.path}': other processes keep replacing it.")

    def _take_over(self, info: dict) -> None:
        """Removes a stale lock, making sure it is still the one judged stale (not a fresh winner's)."""
        aside = f"{self.path}.stale-{uuid.uuid4().hex}"
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return
        try:
            with open(aside, encoding="utf-8") as handle:
                moved = json.load(handle)
        except (OSError, ValueError):
            moved = {}
        if info and moved.get("token") != info.get("token"):
            try:  # we moved someone's fresh lock: put it back unless a third process locked meanwhile
                os.link(aside, self.path)
            except OSError:
                pass
            os.unlink(aside)
            return
        os.unlink(aside)
        what = self._describe(info) if info else "an unreadable lock"
        why = "never released by this process" if info and info.get("pid") == os.getpid() else "no longer running"
        warnings.warn(f"Taking over the stale lock '{self.path}' ({what}, {why}).", stacklevel=3)

    def release(self) -> None:
        """Removes the lock file if this object holds it (a lock taken over by another job is left alone)."""
        if not self.held:
            return
        info = self._read()
        if info and info.get("token") == self.token:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
        self.token = None

    def __enter__(self) -> "DirectoryLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"DirectoryLock({self.directory!r}, purpose={self.purpose!r}, held={self.held})"
