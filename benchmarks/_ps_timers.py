"""Timers for benchmarks/parameter_server.py: where one closure's time goes in torchstrategy's parameter-server
tasks, measured by wrapping the methods a closure passes through (coordinator, worker, ps), plus the table."""
from __future__ import annotations

import time
from collections import defaultdict

#: key -> [seconds, calls] in this process
_TIMERS: dict = defaultdict(lambda: [0.0, 0])
_INSTALLED: set = set()


def _add(key: str, seconds: float) -> None:
    entry = _TIMERS[key]
    entry[0] += seconds
    entry[1] += 1


def _wrap(owner: type, name: str, key: str) -> None:
    original = getattr(owner, name)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            _add(key, time.perf_counter() - start)

    setattr(owner, name, timed)


def install_timers(role: str) -> None:
    """Wraps, once per process, the methods a closure passes through on a 'coordinator', 'worker' or 'ps'."""
    if role in _INSTALLED:
        return
    _INSTALLED.add(role)
    if role == "coordinator":
        from torchstrategy.distribute.parts.closure_cluster import ClosureCluster

        _wrap(ClosureCluster, "pack", "coordinator: pickle the closure (schedule)")
        call_worker = ClosureCluster.call_worker

        def timed_call(self, name, method, *args):
            start = time.perf_counter()
            future = call_worker(self, name, method, *args)
            if method == "run":
                future.then(lambda _: _add("coordinator: closure call, sent to answered", time.perf_counter() - start))
            return future

        ClosureCluster.call_worker = timed_call
    elif role == "worker":
        from torchstrategy.distribute.parts import closures
        from torchstrategy.distribute.parts.variable_store import VariableClient

        _wrap(closures.WorkerService, "run", "worker: whole closure")
        _wrap(closures._ClosureUnpickler, "load", "worker: unpickle the closure")
        _wrap(VariableClient, "read", "worker: read the variables (RPC)")
        _wrap(VariableClient, "apply", "worker: send the gradients (RPC, ps applies)")
        _wrap(VariableClient, "add", "worker: send direct writes (RPC)")
    else:
        from torchstrategy.distribute.parts.variable_store import ParameterServerService

        _wrap(ParameterServerService, "read", "ps: serve a read")
        _wrap(ParameterServerService, "apply", "ps: apply the update (optimizer step)")


def read_timers(reset: bool) -> dict:
    """{key: [seconds, calls]} of this process (then zeroed when `reset`)."""
    values = {key: list(value) for key, value in _TIMERS.items()}
    if reset:
        _TIMERS.clear()
    return values


def breakdown_rows(reports: list) -> list:
    """Rows (part, ms per closure, share of the closure's wall time) from profiled runs' reports (each with
    'timers', 'seconds', 'steps'), medians over the runs."""
    import statistics

    def per_closure(report: dict, key: str) -> float:
        return 1000 * report["timers"].get(key, [0.0, 0])[0] / report["steps"]

    parts: dict = defaultdict(list)
    for report in reports:
        wall = 1000 * report["seconds"] / report["steps"]
        call = per_closure(report, "coordinator: closure call, sent to answered")
        run = per_closure(report, "worker: whole closure")
        read, apply = per_closure(report, "worker: read the variables (RPC)"), \
            per_closure(report, "worker: send the gradients (RPC, ps applies)")
        served, applied = per_closure(report, "ps: serve a read"), per_closure(report, "ps: apply the update (optimizer step)")
        unpickle, add = per_closure(report, "worker: unpickle the closure"), \
            per_closure(report, "worker: send direct writes (RPC)")
        rows = {
            "one closure, wall time (timed rounds: steps / seconds)": wall,
            "coordinator: pickle the closure and its arguments (on schedule, overlaps the calls)":
                per_closure(report, "coordinator: pickle the closure (schedule)"),
            "coordinator -> worker -> coordinator: the call itself (RPC, both ways)": call - run,
            "worker: unpickle the closure": unpickle,
            "worker: read the variables, ps side (copy out)": served,
            "worker: read the variables, transport (RPC minus ps side)": read - served,
            "worker: run the step (next batch, forward, backward)": run - unpickle - read - apply - add,
            "worker: update, ps side (optimizer step under its lock)": applied,
            "worker: update, transport (RPC minus ps side)": apply - applied,
            "worker: send direct writes (metric states; RPC)": add,
            "coordinator: between closures (queue, thread hand-off)": wall - call,
        }
        for name, value in rows.items():
            parts[name].append(value)
    wall = statistics.median(parts["one closure, wall time (timed rounds: steps / seconds)"])
    return [[name, f"{statistics.median(values):.2f}", f"{100 * statistics.median(values) / wall:.0f}%"]
            for name, values in parts.items()]
