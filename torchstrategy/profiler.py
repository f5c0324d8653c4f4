"""tf.profiler.experimental on torch.profiler: start/stop, Profile, Trace and ProfilerOptions, writing
Chrome-trace JSON (`*.pt.trace.json`) under `<logdir>/plugins/profile/<timestamp>/`, on the chief only."""
from __future__ import annotations

import collections
import json
import os
import socket
import sys
import time
import types
from typing import Any, Optional, Union

import torch
from torch.profiler import ProfilerActivity

from torchstrategy import _context
from torchstrategy._machinery.moved_keywords import moved_keywords
from torchstrategy.cluster.environment import PROFILE_EVERY_PROCESS_VARIABLE, is_chief_process, profile_on_every_process

__all__ = ["AlreadyExistsError", "UnavailableError", "ProfilerOptions", "start", "stop", "Profile", "Trace",
           "experimental"]

_PathLike = Union[str, "os.PathLike[str]"]


# `start` while a session runs raises AlreadyExistsError; `stop` with none running, UnavailableError (as TF)
from torchstrategy.errors import AlreadyExistsError, UnavailableError  # noqa: E402


class ProfilerOptions(collections.namedtuple(
        "ProfilerOptions", ["host_tracer_level", "python_tracer_level", "device_tracer_level", "delay_ms"])):
    """TF's profiler options, with TF's fields and defaults, mapped onto `torch.profiler.profile`.

    - `host_tracer_level`: 0 records no host (CPU) events; 1 or 2 (default) records CPU ops and
      `Trace` annotations; 3 (verbose) also records input shapes and memory use
      (`record_shapes`, `profile_memory`).
    - `python_tracer_level`: 1 records Python function calls (`with_stack=True`); 0 (default) does not.
    - `device_tracer_level`: 1 (default) records GPU kernels when CUDA is available; 0 does not.
    - `delay_ms`: accepted; as in TF it only matters for remote captures (a local `start` records at once).

    >>> ProfilerOptions(python_tracer_level=1)
    ProfilerOptions(host_tracer_level=2, python_tracer_level=1, device_tracer_level=1, delay_ms=None)
    """

    def __new__(cls, host_tracer_level: int = 2, python_tracer_level: int = 0, device_tracer_level: int = 1,
                delay_ms: Optional[int] = None) -> "ProfilerOptions":
        return super().__new__(cls, host_tracer_level, python_tracer_level, device_tracer_level, delay_ms)


def _checked_level(options: ProfilerOptions, field: str, allowed: range) -> int:
    value = getattr(options, field)
    if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
        raise ValueError(f"ProfilerOptions.{field} must be one of {list(allowed)}, got {value!r}.")
    return value


def _torch_profile(options: ProfilerOptions) -> Optional[torch.profiler.profile]:
    """The torch profiler the options ask for; None when they ask to record nothing on this machine."""
    host = _checked_level(options, "host_tracer_level", range(0, 4))
    python = _checked_level(options, "python_tracer_level", range(0, 2))
    device = _checked_level(options, "device_tracer_level", range(0, 2))
    delay = options.delay_ms
    if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int) or delay < 0):
        raise ValueError(f"ProfilerOptions.delay_ms must be None or a non-negative int, got {delay!r}.")
    activities = [ProfilerActivity.CPU] if host else []
    if device and torch.cuda.is_available() and ProfilerActivity.CUDA in torch.profiler.supported_activities():
        activities.append(ProfilerActivity.CUDA)
    if not activities:
        return None
    verbose = host >= 3
    return torch.profiler.profile(activities=activities, record_shapes=verbose, profile_memory=verbose,
                                  with_stack=bool(python))


def _checked_logdir(logdir: Any) -> str:
    if not isinstance(logdir, (str, os.PathLike)):
        raise TypeError(f"The profiler logdir must be a directory path (str or os.PathLike), got "
                        f"{type(logdir).__name__}: {logdir!r}.")
    path = os.fspath(logdir)
    if not path:
        return path  # allowed for a session that is stopped with save=False (Keras's warm-up)
    existing = os.path.abspath(path)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise NotADirectoryError(f"The profiler logdir {path!r} cannot be created: {existing!r} is a file, not "
                                 "a directory. Pass a directory path (it is created if missing).")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"The profiler logdir {path!r} cannot be written: {existing!r} is not writable. "
                              "Pass a directory you can write to.")
    return path


class _Session:
    """One profiling session: a running torch profiler, or nothing on a process that does not record."""

    def __init__(self, logdir: str, profile: Optional[torch.profiler.profile], recording: bool) -> None:
        self.logdir = logdir
        self.recording = recording
        self._profile = profile if recording else None
        if self._profile is not None:
            self._profile.start()

    def finish(self, save: bool) -> Optional[str]:
        """Stops recording; with `save`, writes the trace and returns its path."""
        if self._profile is not None:
            self._profile.stop()
        if not save or not self.recording:
            return None
        if not self.logdir:
            raise ValueError("The profiler was started with logdir='', so there is nowhere to save the trace. "
                             "Pass a directory to start(), or call stop(save=False).")
        run_dir = os.path.join(self.logdir, "plugins", "profile", time.strftime("%Y_%m_%d_%H_%M_%S"))
        os.makedirs(run_dir, exist_ok=True)
        # torch's own naming (worker.milliseconds), which torch-tb-profiler splits into worker and span
        worker = f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(run_dir, f"{worker}.{int(time.time() * 1000)}.pt.trace.json")
        if self._profile is not None:
            self._profile.export_chrome_trace(path)
        else:  # the options asked to record nothing here: still a valid, empty trace
            with open(path, "w", encoding="utf-8") as handle:
                json.dump({"traceEvents": [], "displayTimeUnit": "ms"}, handle)
        return path


_EVERY_PROCESS = (f"set {PROFILE_EVERY_PROCESS_VARIABLE}=1 in the environment of the job's processes (read when a "
                  f"session starts) to record on every process, as TF does.")


@moved_keywords(all_replicas=_EVERY_PROCESS)
def start(logdir: _PathLike, options: Optional[ProfilerOptions] = None) -> None:
    """Starts profiling; `stop()` writes the trace under `logdir/plugins/profile/<timestamp>/`.

    The trace is a Chrome trace (`<host>_<pid>.<ms>.pt.trace.json`) that TensorBoard's PyTorch
    profiler plugin (torch-tb-profiler, `tensorboard --logdir=logdir`), Perfetto or chrome://tracing
    open. In a multi-process job only the chief (rank 0) records, unless the environment sets
    TORCHSTRATEGY_PROFILE_EVERY_PROCESS=1 (then every process does, as in TF); the others keep an idle
    session so that `stop()` works the same everywhere.

    Raises AlreadyExistsError if a session (or another torch.profiler) is running, TypeError or
    NotADirectoryError for a logdir that is not a usable directory path.

    >>> import torchstrategy as tf
    >>> tf.profiler.experimental.start("logs")  # doctest: +SKIP
    >>> model.fit(dataset, epochs=1)  # doctest: +SKIP
    >>> tf.profiler.experimental.stop()  # doctest: +SKIP
    """
    start_session(logdir, options, every_process=profile_on_every_process())


def start_session(logdir: _PathLike, options: Optional[ProfilerOptions] = None, every_process: bool = False) -> None:
    """torchstrategy's (not in tf.profiler): `start` with the recording processes chosen by the caller, every
    process or the chief only (the TensorBoard callback, which already runs where it should record)."""
    path = _checked_logdir(logdir)
    if options is None:
        options = ProfilerOptions()
    if not isinstance(options, ProfilerOptions):
        raise TypeError("options must be a tf.profiler.experimental.ProfilerOptions (or None), got "
                        f"{type(options).__name__}: {options!r}.")
    profile = _torch_profile(options)
    recording = every_process or is_chief_process()
    with _context.profiler_lock():
        if _context.profiler_session() is not None:
            raise AlreadyExistsError(None, None, "Another profiler is running. Call tf.profiler.experimental.stop() before "
                                     "starting a new one.")
        if recording and torch.autograd._profiler_enabled():
            raise AlreadyExistsError(None, None, "Another profiler is running: a torch.profiler session started outside "
                                     "tf.profiler. Stop it before calling tf.profiler.experimental.start().")
        _context.set_profiler_session(_Session(path, profile, recording))


def stop(save: bool = True) -> None:
    """Stops the running session; with `save` (default) writes its trace (on the processes that record).

    Raises UnavailableError when no session is running.
    """
    with _context.profiler_lock():
        session = _context.profiler_session()
        if session is None:
            raise UnavailableError(None, None, "Cannot export profiling results. No profiler is running: call "
                                   "tf.profiler.experimental.start(logdir) first.")
        _context.set_profiler_session(None)
        session.finish(save)


class Profile:
    """Context manager that profiles its block: `start(logdir, options)` on entry, `stop()` on exit.

    >>> import torchstrategy as tf
    >>> with tf.profiler.experimental.Profile("logs"):  # doctest: +SKIP
    ...     model.fit(dataset, epochs=1)
    """

    @moved_keywords(all_replicas=_EVERY_PROCESS)
    def __init__(self, logdir: _PathLike, options: Optional[ProfilerOptions] = None) -> None:
        self._logdir = logdir
        self._options = options

    def __enter__(self) -> None:
        start(self._logdir, self._options)

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        stop()


def _event_name(name: str, metadata: dict) -> str:
    # TF's TraceMe encoding, "name#key=value,...#", which TF's trace viewer also reads
    if not metadata:
        return name
    return name + "#" + ",".join(f"{key}={value}" for key, value in metadata.items()) + "#"


class Trace:
    """Context manager that marks a named event in the trace (a `torch.profiler.record_function`).

    Keyword arguments become the event's metadata, encoded in its name as TF does
    (`train#step_num=3,_r=1#`). `step_num=N` also marks a training step: the event sits inside a
    `ProfilerStep#N` event, the step marker torch-tb-profiler and torch's own `profiler.step()` use.
    When no profiler is recording, entering and leaving cost almost nothing.

    >>> import torchstrategy as tf
    >>> for step in range(3):  # doctest: +SKIP
    ...     with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
    ...         train_step()
    """

    def __init__(self, name: str, **kwargs: Any) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"Trace needs a non-empty str name, got {name!r}.")
        self._name = name
        self._metadata = dict(kwargs)
        self._open: list = []

    def __enter__(self) -> "Trace":
        if torch.autograd._profiler_enabled():
            step = self._metadata.get("step_num")
            if step is not None:
                self._enter_event(f"ProfilerStep#{step}")
            self._enter_event(_event_name(self._name, self._metadata))
        return self

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        while self._open:
            self._open.pop().__exit__(None, None, None)

    def set_metadata(self, **kwargs: Any) -> None:
        """Adds metadata learned inside the block: recorded as an instant `name#key=value#` event there
        (torch events cannot be renamed once open)."""
        self._metadata.update(kwargs)
        if self._open and kwargs:
            with torch.profiler.record_function(_event_name(self._name, kwargs)):
                pass

    def _enter_event(self, name: str) -> None:
        event = torch.profiler.record_function(name)
        event.__enter__()
        self._open.append(event)


# `tf.profiler.experimental` is a module object, so `from torchstrategy.profiler.experimental import start` works.
experimental = types.ModuleType(__name__ + ".experimental",
                                "tf.profiler.experimental: start, stop, Profile, Trace, ProfilerOptions.")
for _public in (start, stop, Profile, Trace, ProfilerOptions):
    setattr(experimental, _public.__name__, _public)
sys.modules[experimental.__name__] = experimental
