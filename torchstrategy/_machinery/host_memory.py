"""Host memory reuse: glibc's malloc keeps freed activation buffers (up to 32 MiB each) for the next step
instead of returning them to the OS, so a CPU training step stops paying a page fault per 4 KiB it touches.

Applied when CPU training starts (a Keras model's fit/evaluate/predict set-up, a launcher starting CPU replicas),
never at import: importing torchstrategy leaves the process's malloc settings alone."""
from __future__ import annotations

import ctypes
import ctypes.util
from typing import Optional

#: mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: the largest mmap threshold glibc accepts on 64-bit systems: below it, big blocks come from the heap
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
#: freed heap memory kept before any is returned to the OS
TRIM_THRESHOLD_BYTES = 1 << 30

_applied: Optional[bool] = None  # None: not asked yet in this process


def is_applied() -> Optional[bool]:
    """Whether `keep_freed_memory` changed this process's malloc settings: None if it was never called,
    else what it returned."""
    return _applied


def _libc() -> ctypes.CDLL:
    """glibc by its soname (no ldconfig subprocess, as ctypes.util.find_library would start), else found."""
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")


def keep_freed_memory() -> bool:
    """Tells glibc to serve blocks up to 32 MiB from its heap and to keep up to 1 GiB freed there
    (`mallopt`), once per process; True if it now does. No-op (False) off glibc, or when
    TORCHSTRATEGY_KEEP_HOST_MEMORY=0.

    Why: torch's CPU tensors come from malloc. By default glibc maps each large block fresh and unmaps it
    when freed (or trims the heap), so every training step refaults its activations page by page: the
    seed CIFAR CNN at batch 256 took ~10,000 minor faults a step, about a fifth of its time. The cost is
    that the process keeps its high-water mark of freed memory (up to 1 GiB) instead of giving it back.
    """
    global _applied
    if _applied is not None:
        return _applied
    from torchstrategy.cluster import environment

    _applied = False
    if not environment.keep_host_memory():
        return False
    try:
        libc = _libc()
        libc.gnu_get_libc_version  # noqa: B018  (glibc only: musl and others have no such mallopt)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # Setting either parameter turns off glibc's own dynamic adjustment of both, so set both.
    _applied = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
    return _applied
