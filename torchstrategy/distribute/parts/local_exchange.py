"""Small gathers between the processes of one machine through a shared-memory segment: a few microseconds
where a gloo collective of a few bytes takes hundreds (each side wakes a socket thread)."""
from __future__ import annotations

import contextlib
import mmap
import os
import platform
import secrets
import threading
import time
from typing import Callable, Optional

import numpy as np
import torch

#: the bytes one process may contribute to one exchange; a larger gather takes the process group
SLOT_BYTES = 1 << 16
#: where the segment's file lives while the processes map it (it is unlinked as soon as all have)
SHM_DIR = "/dev/shm"
_HEADER_WORDS = 2  # token, world size
_SLOT_HEADER_WORDS = 2  # sequence number, payload length
#: a waiting process spins this long, then yields its core until _YIELD_S, then sleeps in short naps (a process
#: that yields stays runnable: where processes outnumber cores, long yielding would slow the ones it waits for)
_SPIN_S = 5e-5
_YIELD_S = 5e-4
_NAP_S = 5e-5
_LONG_NAP_S = 1e-3  # after _LONG_WAIT_S of waiting
_LONG_WAIT_S = 0.05
#: how often a long wait checks that the processes it waits for are still alive
_LIVENESS_S = 0.02


def _start_time(pid: int) -> Optional[int]:
    """The kernel's start time of process `pid` (ticks since boot), None when no such process runs here (or it
    has exited): it tells a live peer from a new process that reuses its pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return None
    fields = text[text.rindex(b")") + 2:].split()  # the command name may hold spaces and parentheses
    if fields[0] in (b"Z", b"X"):  # exited, not yet reaped by its parent: gone all the same
        return None
    return int(fields[19])  # field 22 of stat(5); fields[0] is field 3, the state


def supported() -> bool:
    """Whether this machine can run the exchange: x86-64 (its stores become visible in program order, which the
    sequence numbers rely on), Linux's /proc and a writable shared-memory directory."""
    return (platform.machine().lower() in ("x86_64", "amd64") and os.path.isdir("/proc/self")
            and os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK))


class SharedMemoryExchange:
    """All-gathers of at most SLOT_BYTES per process, every process on this machine writing its bytes to its own
    slot and reading the others'. Each process holds two slots used in turn (by the exchange number's parity): a
    process can be at most one exchange ahead of the slowest reader, so it never overwrites unread bytes.

    A wait that outlasts `timeout_s` raises a RuntimeError that says it timed out; a process waited for that has
    exited raises one at once. Made by `open_exchange`, on every process of the group together."""

    def __init__(self, memory: mmap.mmap, rank: int, world_size: int, peers: list, timeout_s: float) -> None:
        self._memory = memory
        self._bytes = np.frombuffer(memory, dtype=np.uint8)
        self._words = np.frombuffer(memory, dtype=np.int64)
        self._rank, self._world = rank, world_size
        self._peers = peers  # (pid, start time) per rank
        self._timeout_s = timeout_s
        self._count = 0
        self._lock = threading.Lock()

    @staticmethod
    def size(world_size: int) -> int:
        """The segment's bytes for `world_size` processes."""
        return 8 * _HEADER_WORDS + world_size * 2 * (8 * _SLOT_HEADER_WORDS + SLOT_BYTES)

    def _slot(self, rank: int, parity: int) -> int:
        """Byte offset of the slot header of `rank`'s slot `parity`."""
        return 8 * _HEADER_WORDS + (2 * rank + parity) * (8 * _SLOT_HEADER_WORDS + SLOT_BYTES)

    def fits(self, nbytes: int) -> bool:
        """Whether one process's `nbytes` fit in a slot (else the gather must take the process group)."""
        return nbytes <= SLOT_BYTES

    def gather(self, local: torch.Tensor) -> torch.Tensor:
        """Every process's `local` (the same shape and dtype everywhere, at most SLOT_BYTES), stacked in rank
        order, as (world_size,) + local.shape."""
        mine = local.detach().reshape(-1).contiguous().cpu()
        raw = mine.view(torch.uint8).numpy() if mine.numel() else np.empty(0, np.uint8)
        nbytes = raw.size
        if nbytes > SLOT_BYTES:
            raise ValueError(f"A shared-memory exchange carries at most {SLOT_BYTES} bytes, got {nbytes}.")
        out = torch.empty((self._world * nbytes,), dtype=torch.uint8)
        rows = out.numpy().reshape(self._world, nbytes)
        with self._lock:
            self._count += 1
            number, parity = self._count, self._count & 1
            start = self._slot(self._rank, parity)
            self._bytes[start + 8 * _SLOT_HEADER_WORDS:start + 8 * _SLOT_HEADER_WORDS + nbytes] = raw
            self._words[start // 8 + 1] = nbytes
            self._words[start // 8] = number  # last: a reader that sees the number sees the bytes
            self._wait(number, parity)
            for rank in range(self._world):
                at = self._slot(rank, parity)
                if int(self._words[at // 8 + 1]) != nbytes:
                    raise RuntimeError(
                        f"Process rank {rank} gave {int(self._words[at // 8 + 1])} bytes to shared-memory exchange "
                        f"#{number} where this one (rank {self._rank}) gave {nbytes}: the processes are calling "
                        f"different collectives. Every process must make the same calls in the same order.")
                rows[rank] = self._bytes[at + 8 * _SLOT_HEADER_WORDS:at + 8 * _SLOT_HEADER_WORDS + nbytes]
        return out.view(local.dtype).reshape((self._world,) + tuple(local.shape))

    def _wait(self, number: int, parity: int) -> None:
        """Until every process has written exchange `number`."""
        words, pending = self._words, [r for r in range(self._world) if r != self._rank]
        heads = {rank: self._slot(rank, parity) // 8 for rank in pending}
        began = time.perf_counter()
        checked = began
        while True:
            pending = [rank for rank in pending if words[heads[rank]] != number]
            if not pending:
                return
            now = time.perf_counter()
            waited = now - began
            if waited < _SPIN_S:
                continue
            if waited < _YIELD_S:
                os.sched_yield()
                continue
            time.sleep(_NAP_S if waited < _LONG_WAIT_S else _LONG_NAP_S)
            if now - checked >= _LIVENESS_S:
                checked = now
                self._check_alive(pending, number)
                if waited > self._timeout_s:
                    raise RuntimeError(  # worded as gloo's timeouts are
                        f"Timed out waiting {self._timeout_s * 1000:.0f}ms for process rank(s) "
                        f"{', '.join(map(str, pending))} in a shared-memory exchange (#{number}) on rank {self._rank}.")

    def _check_alive(self, pending: list, number: int) -> None:
        for rank in pending:
            pid, started = self._peers[rank]
            if _start_time(pid) != started:
                raise RuntimeError(
                    f"Process rank {rank} (pid {pid}) exited while process rank {self._rank} waited for it in a "
                    f"shared-memory exchange (#{number}); its own error says why. The job cannot go on without it.")

    def close(self) -> None:
        """Unmaps the segment (its file was unlinked when every process had mapped it)."""
        self._bytes = self._words = None  # type: ignore[assignment]
        try:
            self._memory.close()
        except BufferError:  # a gathered view still refers to it: the mapping goes with the process
            pass


def open_exchange(rank: int, world_size: int, timeout_s: float,
                  share: Callable[[object], list]) -> Optional[SharedMemoryExchange]:
    """A SharedMemoryExchange when every process of the group runs on this machine (rank 0's segment is
    visible to all, with its token, and every process sees every other's pid as the same live process), else
    None on every process. `share(value)` gathers one picklable value from every process (a process-group
    collective); it is called three times, on every process, whatever the outcome."""
    path, memory, token = None, None, secrets.randbits(63)
    try:
        if rank == 0 and supported():
            path = os.path.join(SHM_DIR, f"torchstrategy-{os.getpid()}-{secrets.token_hex(8)}")
            memory = _mapped(path, SharedMemoryExchange.size(world_size), create=True)
            if memory is not None:
                np.frombuffer(memory, dtype=np.int64, count=2)[:] = (token, world_size)
        offer = share((os.path.basename(path), token) if memory is not None else None)[0]
        if offer is not None and rank != 0 and supported():  # the same name in this machine's directory
            memory = _mapped(os.path.join(SHM_DIR, offer[0]), SharedMemoryExchange.size(world_size), create=False)
            if memory is not None and np.frombuffer(memory, dtype=np.int64, count=2).tolist() != [offer[1], world_size]:
                memory.close()
                memory = None
        identity = (os.getpid(), _start_time(os.getpid())) if memory is not None else None
        everyone = share(identity)
    finally:
        if path is not None:  # every process that could map it has (share() returned), or the setup failed
            with contextlib.suppress(FileNotFoundError):  # never made: raising here would leave the others waiting
                os.unlink(path)
    sees_all = all(entry is not None and entry[1] is not None and _start_time(entry[0]) == entry[1]
                   for entry in everyone)
    if not all(share(sees_all)):  # one verdict for all: a process alone on the other path would hang the job
        if memory is not None:
            memory.close()
        return None
    return SharedMemoryExchange(memory, rank, world_size, list(everyone), timeout_s)


def _mapped(path: str, size: int, create: bool) -> Optional[mmap.mmap]:
    """`path` mapped shared and writable (made first when `create`, its pages reserved so that a full shared-memory
    directory fails here and not with SIGBUS at a later write); None if that cannot be done."""
    try:
        fd = os.open(path, os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0), 0o600)
    except OSError:
        return None
    try:
        if create:
            os.posix_fallocate(fd, 0, size)
        elif os.fstat(fd).st_size != size:
            return None
        return mmap.mmap(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)
