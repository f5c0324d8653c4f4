"""Environment variables that say where datasets live, whether downloads may be tried, and the runtime switches.
The only place outside the cluster resolvers that reads os.environ (data locations, offline mode, kernels)."""
from __future__ import annotations

import os
from typing import Optional

#: Directory searched first by `keras.datasets.*.load_data()` (and first download target).
DATA_DIR_VARIABLE = "TORCHSTRATEGY_DATA"
#: Keras's own cache root, as Keras reads it (default ~/.keras).
KERAS_HOME_VARIABLE = "KERAS_HOME"
#: Set to 1/true/yes/on to never try a dataset download (no network probe at all).
OFFLINE_VARIABLE = "TORCHSTRATEGY_OFFLINE"
#: Set to 0/false/no/off to let glibc return freed host memory to the OS as usual (see _host_memory.py).
KEEP_HOST_MEMORY_VARIABLE = "TORCHSTRATEGY_KEEP_HOST_MEMORY"
#: Set to 0/false/no/off to never compile or use the C kernels of _cpu_kernels.py (torch's own ops instead).
CPU_KERNELS_VARIABLE = "TORCHSTRATEGY_CPU_KERNELS"
#: Where the compiled C kernels are cached (default: $XDG_CACHE_HOME/torchstrategy, else ~/.cache/torchstrategy).
CACHE_DIR_VARIABLE = "TORCHSTRATEGY_CACHE_DIR"

_TRUE_WORDS = {"1", "true", "yes", "on"}
_FALSE_WORDS = {"0", "false", "no", "off"}


def data_dir() -> Optional[str]:
    """The `TORCHSTRATEGY_DATA` directory (user-expanded, absolute), or None when unset/empty.

    Example: with `TORCHSTRATEGY_DATA=~/datasets`, this returns '/home/<user>/datasets'.
    """
    value = os.environ.get(DATA_DIR_VARIABLE, "").strip()
    if not value:
        return None
    return os.path.abspath(os.path.expanduser(value))


def keras_home() -> str:
    """Keras's cache root: `KERAS_HOME` when set, else `~/.keras` (absolute path).

    Keras keeps downloaded datasets under `<keras_home()>/datasets`.
    """
    value = os.environ.get(KERAS_HOME_VARIABLE, "").strip()
    if not value:
        value = os.path.join(os.path.expanduser("~"), ".keras")
    return os.path.abspath(os.path.expanduser(value))


def offline() -> bool:
    """True when `TORCHSTRATEGY_OFFLINE` is 1/true/yes/on: dataset loaders then never download."""
    return os.environ.get(OFFLINE_VARIABLE, "").strip().lower() in _TRUE_WORDS


def keep_host_memory() -> bool:
    """False when `TORCHSTRATEGY_KEEP_HOST_MEMORY` is 0/false/no/off; True by default."""
    return os.environ.get(KEEP_HOST_MEMORY_VARIABLE, "").strip().lower() not in _FALSE_WORDS


def cpu_kernels_enabled() -> bool:
    """False when `TORCHSTRATEGY_CPU_KERNELS` is 0/false/no/off; True by default."""
    return os.environ.get(CPU_KERNELS_VARIABLE, "").strip().lower() not in _FALSE_WORDS


def cache_dir() -> str:
    """torchstrategy's own cache root (absolute): `TORCHSTRATEGY_CACHE_DIR`, else
    `$XDG_CACHE_HOME/torchstrategy`, else `~/.cache/torchstrategy`."""
    value = os.environ.get(CACHE_DIR_VARIABLE, "").strip()
    if not value:
        base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
        value = os.path.join(base, "torchstrategy")
    return os.path.abspath(os.path.expanduser(value))


def launched_rank() -> Optional[int]:
    """This process's rank as torchrun or torchstrategy's launcher gave it (RANK), or None when unset or
    not an integer. Only a hint for process-wide messages; the cluster resolvers validate it properly."""
    try:
        return int(os.environ["RANK"])
    except (KeyError, ValueError):
        return None


def snapshot() -> dict[str, str]:
    """A copy of the whole environment (the launcher hands it, amended, to the replicas it starts)."""
    return dict(os.environ)


def threads_set_by_user() -> bool:
    """Whether OMP_NUM_THREADS is set: then the user, not the launcher, chose the thread count."""
    return "OMP_NUM_THREADS" in os.environ


def is_chief_process() -> bool:
    """Whether this process is rank 0 of its job: the entered strategy's `is_chief`, else the torch process
    group's rank, else the rank a launcher put in the environment (RANK); True for a lone process."""
    from torchstrategy import _context

    if _context.has_strategy():
        return bool(_context.get_strategy().is_chief)
    import torch.distributed as distributed

    if distributed.is_available() and distributed.is_initialized():
        return distributed.get_rank() == 0
    return launched_rank() in (None, 0)


SUMMARIES_EVERY_PROCESS_VARIABLE = "TORCHSTRATEGY_SUMMARIES_EVERY_PROCESS"  # tf.summary writers on every rank


def summaries_on_every_process() -> bool:
    """True when `TORCHSTRATEGY_SUMMARIES_EVERY_PROCESS` is 1/true/yes/on: tf.summary file writers then write on
    every process of a job (as in TF), not only on the chief."""
    return os.environ.get(SUMMARIES_EVERY_PROCESS_VARIABLE, "").strip().lower() in _TRUE_WORDS


PROFILE_EVERY_PROCESS_VARIABLE = "TORCHSTRATEGY_PROFILE_EVERY_PROCESS"  # tf.profiler traces on every rank


def profile_on_every_process() -> bool:
    """True when `TORCHSTRATEGY_PROFILE_EVERY_PROCESS` is 1/true/yes/on: tf.profiler.experimental.start / Profile
    then record on every process of a job (as in TF), not only on the chief."""
    return os.environ.get(PROFILE_EVERY_PROCESS_VARIABLE, "").strip().lower() in _TRUE_WORDS


#: Seconds every task of a parameter-server job waits for the others to start (see ps_startup_timeout).
PS_STARTUP_TIMEOUT_VARIABLE = "TORCHSTRATEGY_PS_STARTUP_TIMEOUT"
#: The wait when the variable is unset: long enough for tasks that import torch at the same time on a busy host.
DEFAULT_PS_STARTUP_TIMEOUT = 60.0


def ps_startup_timeout() -> float:
    """How long (seconds) a parameter-server task waits for every task of its cluster to be there before it
    gives up naming the missing ones: `TORCHSTRATEGY_PS_STARTUP_TIMEOUT`, else 60. A bad value is an error."""
    value = os.environ.get(PS_STARTUP_TIMEOUT_VARIABLE, "").strip()
    if not value:
        return DEFAULT_PS_STARTUP_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(f"{PS_STARTUP_TIMEOUT_VARIABLE}={value!r}: give a positive number of seconds (default "
                         f"{DEFAULT_PS_STARTUP_TIMEOUT:g}).")
    return seconds


#: keras.distribution.initialize's settings, when its arguments leave them out (Keras 3 reads the same names).
KERAS_DISTRIBUTION_VARIABLES = ("KERAS_DISTRIBUTION_JOB_ADDRESSES", "KERAS_DISTRIBUTION_NUM_PROCESSES",
                                "KERAS_DISTRIBUTION_PROCESS_ID")


def keras_distribution_settings() -> tuple[Optional[str], Optional[int], Optional[int]]:
    """(job addresses, number of processes, process id) from the KERAS_DISTRIBUTION_* variables (None when unset);
    a count or id that is not an integer is an error naming the variable."""
    addresses = os.environ.get(KERAS_DISTRIBUTION_VARIABLES[0], "").strip() or None
    numbers = []
    for name in KERAS_DISTRIBUTION_VARIABLES[1:]:
        text = os.environ.get(name, "").strip()
        try:
            numbers.append(int(text) if text else None)
        except ValueError:
            raise ValueError(f"{name}={text!r} is not an integer; set it to a whole number or unset it.") from None
    return addresses, numbers[0], numbers[1]
