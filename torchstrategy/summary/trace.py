"""tf.summary's tracing (`trace_on`, `trace_off`, `trace_export`), a best effort on torch: the profiler part
runs `tf.profiler` (a torch.profiler trace under profiler_outdir); torch programs have no graph to record."""
from __future__ import annotations

import os
import warnings
from typing import Any, Optional

from torchstrategy import _context, profiler as tf_profiler
from torchstrategy.errors import AlreadyExistsError, UnavailableError


def trace_on(graph: bool = True, profiler: bool = False, profiler_outdir: Optional[str] = None) -> None:
    """Starts a trace. `profiler=True` starts `tf.profiler` writing to `profiler_outdir` (a warning and no
    profile without one); `graph=True` is accepted, but torch runs no TF graph, so none is recorded.
    A second call while a trace is on warns and changes nothing."""
    state = _context.summary_state()
    if state.trace is not None:
        warnings.warn("tf.summary.trace_on: a trace is already on; call trace_export or trace_off first.",
                      stacklevel=2)
        return
    profiling = False
    if profiler:
        if profiler_outdir is None:
            warnings.warn("No `profiler_outdir` passed to tf.summary.trace_on(); the profiler will not run.",
                          stacklevel=2)
        else:
            tf_profiler.start(os.fspath(profiler_outdir))
            profiling = True
    state.trace = {"graph": bool(graph), "profiler": profiling}


def trace_export(name: str, step: Any = None, profiler_outdir: Optional[str] = None) -> None:
    """Ends the trace: the profiler (if `trace_on` started it) writes its trace under its profiler_outdir.
    TF would also write the traced graphs under `name` at `step`; there are none on torch, so nothing more
    is written. `profiler_outdir` here is ignored, as in TF (give it to `trace_on`)."""
    state = _context.summary_state()
    if state.trace is None:
        raise ValueError("Must enable trace before export through tf.summary.trace_on().")
    if profiler_outdir:
        warnings.warn("tf.summary.trace_export ignores profiler_outdir; pass it to trace_on().", stacklevel=2)
    trace, state.trace = state.trace, None
    if trace["profiler"]:
        tf_profiler.stop(save=True)


def trace_off() -> None:
    """Stops the trace and discards what it collected (the profile is not written)."""
    state = _context.summary_state()
    trace, state.trace = state.trace, None
    if trace is not None and trace["profiler"]:
        try:
            tf_profiler.stop(save=False)
        except (UnavailableError, AlreadyExistsError):
            pass  # the profiler was stopped elsewhere
