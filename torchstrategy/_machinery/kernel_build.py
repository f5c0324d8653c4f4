"""Getting the C kernels of cpu_kernels.c (with cpu_kernels_bf16.c and cpu_kernels_conv_grad.c) as one loaded
library: compiled once per machine into the cache directory (one build per job: a file lock), then loaded by ctypes."""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Optional

_log = logging.getLogger("torchstrategy._machinery.cpu_kernels")
SOURCE = Path(__file__).with_name("cpu_kernels.c")
#: every C file the library is built from (one key over all of them)
SOURCES = (SOURCE, SOURCE.with_name("cpu_kernels_bf16.c"), SOURCE.with_name("cpu_kernels_conv_grad.c"))
#: -march=native builds for the machine at hand (the cache key holds its CPU flags); -fopenmp links libgomp,
#: which the loader resolves to the copy torch already has loaded. Tried in order: a compiler without
#: -march=native or OpenMP support still gives a (slower, then single-threaded) library.
_FLAG_SETS = (["-O3", "-march=native", "-fopenmp"], ["-O3", "-fopenmp"], ["-O3"])

#: What a machine without a C compiler gives up (measured on the CIFAR CNN's first layers, batch 256).
NO_COMPILER_MESSAGE = (
    "torchstrategy: no C compiler (cc, gcc or clang) on PATH, so the CPU kernels cannot be built; using "
    "torch's own ops instead (same numbers, slower: max pooling ~4.7x, e.g. 9.4 ms instead of 2.0 ms, and "
    "the fused first convolution + ReLU + pooling ~2.6x, ~17 ms instead of ~6.5 ms). Install a C compiler, "
    "or set TORCHSTRATEGY_CPU_KERNELS=0 to choose torch's ops and silence this warning.")

_library: Optional[ctypes.CDLL] = None
_load_tried = False
_load_lock = threading.Lock()  # replicas that are threads (CentralStorageStrategy) may ask at once


def library() -> Optional[ctypes.CDLL]:
    """The compiled kernels (built into the cache on first use), or None when they cannot be had."""
    global _library, _load_tried
    if _load_tried:
        return _library
    with _load_lock:
        if not _load_tried:
            _library = _load()
            _load_tried = True
    return _library


def _cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    return platform.processor()


@functools.lru_cache(maxsize=1)
def cpu_has_amx() -> bool:
    """Whether this CPU has AMX tiles for bfloat16 (Intel Sapphire Rapids and later): oneDNN's bfloat16
    convolutions run on them near the matmul roofline, which CPUs with only AVX512-BF16 do not reach."""
    return "amx_bf16" in _cpu_flags().split()


def _compiler() -> Optional[str]:
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def _warn_no_compiler() -> None:
    """Once per process (library() loads once), and only on the job's rank 0: every rank lacks the same."""
    from torchstrategy.cluster import environment

    if environment.is_chief_process():
        warnings.warn(NO_COMPILER_MESSAGE, RuntimeWarning, stacklevel=4)


def _record_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _fingerprint(path: str) -> str:
    """'<size> <sha256>' of a file: what a library must still be when it is loaded."""
    data = Path(path).read_bytes()
    return f"{len(data)} {hashlib.sha256(data).hexdigest()}"


def _intact(target: Path) -> bool:
    """Whether `target` is the library its build recorded (a truncated or overwritten .so would crash the
    process with SIGBUS when loaded); False for a missing library or record."""
    try:
        return _record_path(target).read_text().strip() == _fingerprint(str(target))
    except OSError:
        return False


def _build(compiler: str, target: Path) -> bool:
    """Compiles the kernels to `target` (a temp file, then a rename: a reader never sees half a library), after
    recording its size and checksum beside it. False if no flag set compiles."""
    _log.info("cpu kernels: building %s with %s", target, compiler)
    for flags in _FLAG_SETS:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".build-", suffix=".so")
        os.close(fd)
        try:
            done = subprocess.run([compiler, *flags, "-shared", "-fPIC", "-o", temp, *map(str, SOURCES)],
                                  capture_output=True, text=True, timeout=120)
            if done.returncode == 0:
                record = f"{temp}.sha256"
                Path(record).write_text(_fingerprint(temp) + "\n")
                os.replace(record, _record_path(target))
                os.replace(temp, target)
                return True
            _log.debug("cpu kernels: %s %s failed: %s", compiler, " ".join(flags), done.stderr[-2000:])
        except (OSError, subprocess.SubprocessError) as error:
            _log.debug("cpu kernels: %s failed: %s", compiler, error)
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
    return False


def _build_once(compiler: str, target: Path) -> bool:
    """Builds `target` unless it exists, holding an exclusive lock on a file beside it, so the processes of
    a job that start on a cold cache build once: the others wait, then find the library built.

    The lock file is removed before the lock is let go. A process that still opens the old file afterwards
    (or creates a new one) only takes the lock once the library is in place, and then does not build."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path = target.with_name(target.name + ".lock")
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if _intact(target):
                return True
            if target.exists() and not _record_path(target).exists():  # built before checksums were recorded
                _log.info("cpu kernels: %s has no checksum record; building it again", target)
            elif target.exists():
                _log.warning("cpu kernels: %s is damaged (its size or checksum is not what its build recorded); "
                             "building it again", target)
                warnings.warn(f"torchstrategy: the CPU kernel library {target} was damaged (cut short or "
                              "overwritten); building it again.", RuntimeWarning, stacklevel=5)
                for stale in (target, _record_path(target)):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(stale)
            return _build(compiler, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock_path)
            fcntl.flock(lock, fcntl.LOCK_UN)


def _load() -> Optional[ctypes.CDLL]:
    from torchstrategy.cluster import environment

    if not environment.cpu_kernels_enabled():
        return None
    compiler = _compiler()
    if compiler is None:
        _warn_no_compiler()
        return None
    key = hashlib.sha256(b"\0".join([*(source.read_bytes() for source in SOURCES), compiler.encode(), repr(_FLAG_SETS).encode(),
                                     platform.machine().encode(), _cpu_flags().encode()])).hexdigest()[:16]
    target = Path(environment.cache_dir()) / "kernels" / f"cpu_kernels-{key}.so"
    try:
        if not _intact(target) and not _build_once(compiler, target):
            _log.warning("cpu kernels: %s could not compile %s; using torch's own ops", compiler,
                         " ".join(map(str, SOURCES)))
            return None
        lib = ctypes.CDLL(str(target))
    except OSError as error:
        _log.warning("cpu kernels: could not load %s (%s); using torch's own ops", target, error)
        return None
    long_, int_, ptr = ctypes.c_long, ctypes.c_int, ctypes.c_void_p
    for name in ("ts_max_pool_forward_f32", "ts_max_pool_forward_bf16"):
        getattr(lib, name).argtypes = [ptr, ptr, ptr] + [long_] * 6 + [int_, int_]
    for name in ("ts_max_pool_backward_32", "ts_max_pool_backward_16"):
        getattr(lib, name).argtypes = [ptr, ptr, ptr] + [long_] * 6 + [int_]
    lib.ts_conv_pool_forward.argtypes = [ptr] * 5 + [long_] * 7 + [int_]
    lib.ts_conv_pool_backward.argtypes = [ptr] * 5 + [long_] * 7 + [int_]
    lib.ts_conv_pool_backward.restype = int_
    lib.ts_conv_pool_forward_bf16.argtypes = [ptr] * 5 + [long_] * 7 + [int_]
    lib.ts_conv_pool_forward_bf16.restype = int_
    lib.ts_conv_pool_backward_bf16.argtypes = [ptr] * 5 + [long_] * 7 + [int_]
    lib.ts_conv_pool_backward_bf16.restype = int_
    lib.ts_conv_pool_bf16_supported.restype = int_
    lib.ts_conv_grad_picked_image.argtypes = [ptr] * 4 + [long_] * 7 + [ptr, ptr]
    lib.ts_conv_grad_picked_image.restype = int_
    lib.ts_conv_grad_scratch_floats.argtypes = [long_] * 3
    lib.ts_conv_grad_scratch_floats.restype = long_
    lib.ts_crc32c_extend.argtypes = [ctypes.c_uint32, ptr, ctypes.c_size_t]
    lib.ts_crc32c_extend.restype = ctypes.c_uint32
    lib.ts_crc32c_hardware.restype = int_
    return lib
