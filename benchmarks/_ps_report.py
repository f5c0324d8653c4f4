"""The RESULTS.md section of benchmarks/parameter_server.py: torchstrategy's and TF's ParameterServerStrategy per
row with their ratio, the straggler, where one closure's time goes, and the synchronous reference."""
from __future__ import annotations

import statistics

import _results
from _ps_timers import breakdown_rows

SIDES = {"ts": "torchstrategy", "tf": "TF 2.21"}
ROWS = [("empty", 1, "an empty closure, 1 worker", "closures/s"),
        ("empty", 2, "an empty closure, 2 workers", "closures/s"),
        ("step", 1, "seed CNN step, 1 worker", "samples/s"),
        ("step", 2, "seed CNN step, 2 workers", "samples/s"),
        ("slow", 2, "seed CNN step, 2 workers, worker:1 at half speed", "samples/s")]


def _median(values: list) -> float:
    return statistics.median(values)


def _split(out: dict, side: str, name: str) -> dict:
    """Closures per worker task over the timed runs of `name` (a 2-worker contestant)."""
    counts = {"worker:0": 0, "worker:1": 0}
    pids = {pid: task for task, pid in out["pids"].get(f"{side}2", {}).items()}
    for report in out["reports"][name]:
        for key, count in (report.get("by_pid") or report.get("by_task") or {}).items():
            task = pids.get(int(key), key) if side == "ts" else key
            counts[task] = counts.get(task, 0) + count
    return counts


def _show(counts: dict) -> str:
    total = max(1, sum(counts.values()))
    return " / ".join(f"{count} ({100 * count / total:.0f}%)" for count in counts.values())


def write_report(out: dict, args, flags: str, seconds: float, batch: int, write: bool) -> str:
    """Prints the section (and writes it into RESULTS.md when `write`); returns it."""
    rates = out["rates"]
    rows, paired = [], {}
    for kind, workers, label, unit in ROWS:
        ours, theirs = rates[f"ts_{kind}_{workers}w"], rates[f"tf_{kind}_{workers}w"]
        paired[(kind, workers)] = _median([a / b for a, b in zip(ours, theirs)])
        rows.append([label, unit, f"{_median(ours):,.0f} ({min(ours):,.0f}-{max(ours):,.0f})",
                     f"{_median(theirs):,.0f} ({min(theirs):,.0f}-{max(theirs):,.0f})", f"**{paired[(kind, workers)]:.2f}**"])
    scaling = {side: _median(rates[f"{side}_step_2w"]) / _median(rates[f"{side}_step_1w"]) for side in SIDES}
    straggled = {side: _median([a / b for a, b in zip(rates[f"{side}_slow_2w"], rates[f"{side}_step_2w"])])
                 for side in SIDES}
    splits = {side: _split(out, side, f"{side}_slow_2w") for side in SIDES}
    even = {side: _split(out, side, f"{side}_step_2w") for side in SIDES}
    derived = [["seed CNN: 2 workers / 1 worker (samples/s)", f"{scaling['ts']:.2f}", f"{scaling['tf']:.2f}"],
               ["seed CNN, 2 workers: with worker:1 at half speed / without (per round)", f"{straggled['ts']:.2f}",
                f"{straggled['tf']:.2f}"],
               ["closures run by worker:0 / worker:1, no straggler", _show(even["ts"]), _show(even["tf"])],
               ["closures run by worker:0 / worker:1, worker:1 at half speed", _show(splits["ts"]), _show(splits["tf"])],
               ["idle cores of the job (1 worker / 2 workers; nothing scheduled, 3 s)",
                f"{out['idle']['ts1']:.2f} / {out['idle']['ts2']:.2f}", f"{out['idle']['tf1']:.2f} / {out['idle']['tf2']:.2f}"]]
    cpu_rows = []
    for kind, workers, label, _ in ROWS[:4]:
        cells = []
        for side in SIDES:
            runs = out["reports"][f"{side}_{kind}_{workers}w"]
            per = {task: _median([1000 * r["cpu"][task] / r["steps"] for r in runs]) for task in runs[0]["cpu"]}
            workers_ms = sum(v for t, v in per.items() if t.startswith("worker"))
            cells.append(f"{sum(per.values()):.1f} = {per['chief:0']:.1f} + {per['ps:0']:.1f} + {workers_ms:.1f}")
        cpu_rows.append([label, *cells])
    profile = out["profile"]
    step_rows, empty_rows = breakdown_rows(profile["step"]), breakdown_rows(profile["empty"])
    breakdown = [[a[0], f"{a[1]} ({a[2]})", f"{b[1]} ({b[2]})"] for a, b in zip(step_rows, empty_rows)]
    sync = ""
    if "sync_2r" in rates:
        sync_slow = _median([a / b for a, b in zip(rates["sync_2r_slow"], rates["sync_2r"])])
        sync = (f"\n\nFor reference, synchronous MultiWorkerMirroredStrategy (2 processes, global batch {2 * batch}, "
                f"no ps task or coordinator, run after the pairs): {_median(rates['sync_2r']):,.0f} samples/s, "
                f"{_median(rates['sync_2r_slow']):,.0f} with replica 1 at half speed ({sync_slow:.2f}x: every step "
                f"waits for it).")
    reading = (
        f"Reading: ours/TF is the median of per-round ratios (both jobs alive together, rounds interleaved). On the "
        f"seed CNN torchstrategy moves {paired[('step', 1)]:.2f}x TF's samples with 1 worker and "
        f"{paired[('step', 2)]:.2f}x with 2; an empty closure's round trip is {paired[('empty', 1)]:.2f}x TF's rate. "
        f"This machine has 2 cores: a 2-worker job runs 4 task processes on them (coordinator, ps, 2 workers, and "
        f"the other side's idle job beside it), so the workers never have a core each and 2 workers give "
        f"{scaling['ts']:.2f}x one worker here (TF {scaling['tf']:.2f}x); the >=1.8x of a core per worker cannot be "
        f"shown on it. The straggler gets half of every {1000 * 0.03:.0f} ms (SIGSTOP/SIGCONT, the same on both "
        f"sides), which also frees CPU for the others on 2 cores: both straggler rows look better than on a cluster "
        f"with a machine per task.")
    body = (
        f"The seed CIFAR-10 CNN (vs_tensorflow.py `build_model(keras, 'seed')`, the same initial weights on both "
        f"sides), Keras Adam(1e-3), batch {batch} per worker, synthetic CIFAR-shaped data ({512} rows, shuffled, "
        f"repeated) from a per-worker dataset (`distribute_datasets_from_function`). Each side is a TF_CONFIG job of "
        f"chief + workers + 1 ps, every task a process on 127.0.0.1 with 1 intra-op thread (TF: intra-op 1 and 2 "
        f"inter-op threads, the fewest its job runs with: with 1 it hangs), TF 2.21.0 in its own venv. A step "
        f"closure is TF's tutorial step (`next(iterator)`, "
        f"`strategy.run` of a GradientTape step that applies the gradients) scheduled with "
        f"`coordinator.schedule(step_fn, args=(iterator,))`; an empty closure returns at once (no variable). Per "
        f"worker count both jobs run side by side: {args.rounds} interleaved rounds of {args.steps} closures per "
        f"contestant after a warm-up, each `schedule` x {args.steps} then `join()`. Medians (min-max) over rounds. "
        f"CPU: {flags}. Machine: {_results.machine().split(', torch')[0]}. Setup (both jobs of a pair ready): "
        f"{', '.join(f'{w} worker(s) {s:.0f} s' for w, s in out['setup'].items())}; other processes of the machine "
        f"used {', '.join(f'{c:.2f}' for c in out['background'].values())} cores during the timed rounds of the "
        f"pairs; whole benchmark {seconds:.0f} s.\n\n"
        + _results.table(["closure", "unit", SIDES["ts"], SIDES["tf"], "ours / TF"], rows)
        + "\n\n" + _results.table(["", SIDES["ts"], SIDES["tf"]], derived)
        + "\n\nCPU time per closure (ms, all tasks = chief + ps + workers; /proc of each task process over the "
          "timed runs, medians): less sensitive than rates to what else runs on the machine.\n\n"
        + _results.table(["closure", SIDES["ts"], SIDES["tf"]], cpu_rows)
        + "\n\nWhere one closure's time goes in torchstrategy (1 worker; ms per closure and share of its wall time; "
          "timers wrapped around the methods a closure passes through in the coordinator, worker and ps processes, "
          "3 runs after the timed rounds, medians; 'transport' is an RPC's time at the caller minus the callee's):\n\n"
        + _results.table(["part", "seed CNN step", "empty closure"], breakdown)
        + sync + "\n\n" + reading + "\n\nPer-round rates: "
        + "; ".join(f"{name} {[round(v) for v in values]}" for name, values in rates.items()) + ".")
    print(body)
    if write:
        _results.write_section("parameter_server.py: ParameterServerStrategy vs TF 2.21's, and where a closure's "
                               "time goes", body)
    return body
