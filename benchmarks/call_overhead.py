"""The fixed cost of one Keras call (fit/evaluate/predict, *_on_batch) on a tiny model, and fit's cost per
step against a bare torch step; on 1 process and on 2 replicas (MirroredStrategy), interleaved rounds.

    python benchmarks/call_overhead.py [--rounds 9] [--calls 20] [--quick] [--results PATH]

Fixed cost = (time of the call) - (its steps x the time of one bare torch step doing the same work:
forward, loss, backward, torch.optim.Adam and running loss/MAE sums for training; forward and loss for evaluation; forward for
prediction). On 2 replicas the bare step is a DistributedDataParallel step and times are rank 0's.
Per step = the slope of fit()'s time over the number of batches (the fixed cost drops out), against
the slope of a hand-written torch loop that indexes the same in-memory data.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

FEATURES, UNITS, BATCH = 32, 10, 32  # per replica: each replica's step sees BATCH rows, as the bare step does
TARGETS = {1: 3.0, 2: 5.0}  # ms of fixed cost per call (issue 25)
STEP_TARGET = 1.1
#: what a per-step cell says when the longer fit did not take longer (noise above the extra batches' time)
NOISE = "n/a (noise: more batches or an idle machine)"
FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
CALLS = (("fit", "NumPy", "train"), ("fit", "Dataset", "train"), ("evaluate", "NumPy", "test"),
         ("evaluate", "Dataset", "test"), ("predict", "NumPy", "predict"), ("predict", "Dataset", "predict"),
         ("train_on_batch", "NumPy", "train"), ("test_on_batch", "NumPy", "test"),
         ("predict_on_batch", "NumPy", "predict"))


def _strategy(replicas: int):
    import torchstrategy as tf

    if replicas == 1:
        return tf.distribute.get_strategy()
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])


def worker(replicas: int, rounds: int, calls: int, short: int, long: int) -> dict:
    """Times every call and the bare steps in this process (one of a job of `replicas`); returns the times."""
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    import _results
    import torchstrategy as tf

    torch.set_num_threads(1)
    strategy = _strategy(replicas)
    multi = replicas > 1
    sync = dist.barrier if multi else (lambda: None)
    global_batch = BATCH * replicas
    rng = np.random.default_rng(0)
    x = rng.random((global_batch, FEATURES)).astype(np.float32)
    y = rng.random((global_batch, UNITS)).astype(np.float32)
    x_long = rng.random((global_batch * long, FEATURES)).astype(np.float32)
    y_long = rng.random((global_batch * long, UNITS)).astype(np.float32)

    tf.random.set_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(UNITS, input_shape=(FEATURES,))])
        model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch)
    long_sets = {n: tf.data.Dataset.from_tensor_slices((x_long[:n * global_batch], y_long[:n * global_batch]))
                 .batch(global_batch) for n in (short, long)}

    # the bare torch side: the same layer shape, torch.optim.Adam, each replica its own BATCH rows
    torch.manual_seed(0)
    linear = torch.nn.Linear(FEATURES, UNITS)
    net = torch.nn.parallel.DistributedDataParallel(linear) if multi else linear
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-7)
    rank = dist.get_rank() if multi else 0
    mine = slice(rank * BATCH, (rank + 1) * BATCH)
    xb, yb = torch.from_numpy(x[mine]), torch.from_numpy(y[mine])
    xs, ys = torch.from_numpy(x_long), torch.from_numpy(y_long)

    totals = torch.zeros(3)  # the running loss and MAE sums, and rows seen, that fit() logs too

    def bare_train(xi: torch.Tensor, yi: torch.Tensor) -> None:
        out = net(xi)
        loss = F.mse_loss(out, yi)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            totals.add_(torch.stack([loss.detach() * len(yi), F.l1_loss(out, yi) * len(yi),
                                     torch.tensor(float(len(yi)))]))

    def bare_test() -> None:
        with torch.no_grad():
            F.mse_loss(linear(xb), yb)

    def bare_predict() -> None:
        with torch.no_grad():
            linear(xb)

    def bare_loop(steps: int) -> None:  # a hand-written epoch over in-memory data: shuffled indices, one step each
        order = torch.randperm(steps * global_batch)
        for step in range(steps):
            index = order[step * global_batch:(step + 1) * global_batch][mine]
            bare_train(xs[index], ys[index])

    flag = torch.zeros(4)
    fns = {
        "bare train": lambda: bare_train(xb, yb), "bare test": bare_test, "bare predict": bare_predict,
        # what one wait for every process costs here (on one process: nothing to wait for)
        "all_reduce": (lambda: dist.all_reduce(flag)) if multi else (lambda: None),
        "fit NumPy": lambda: model.fit(x, y, batch_size=global_batch, epochs=1, verbose=0),
        "fit Dataset": lambda: model.fit(dataset, epochs=1, verbose=0),
        "evaluate NumPy": lambda: model.evaluate(x, y, batch_size=global_batch, verbose=0),
        "evaluate Dataset": lambda: model.evaluate(dataset, verbose=0),
        "predict NumPy": lambda: model.predict(x, batch_size=global_batch, verbose=0),
        "predict Dataset": lambda: model.predict(dataset, verbose=0),
        "train_on_batch NumPy": lambda: model.train_on_batch(x, y),
        "test_on_batch NumPy": lambda: model.test_on_batch(x, y),
        "predict_on_batch NumPy": lambda: model.predict_on_batch(x),
    }
    loops = {}
    for n in (short, long):
        loops[f"fit NumPy x{n}"] = (lambda n=n: model.fit(x_long[:n * global_batch], y_long[:n * global_batch],
                                                            batch_size=global_batch, epochs=1, verbose=0))
        loops[f"fit Dataset x{n}"] = lambda n=n: model.fit(long_sets[n], epochs=1, verbose=0)
        loops[f"bare loop x{n}"] = lambda n=n: bare_loop(n)

    def per_call(fn, count: int):
        def run() -> float:
            sync()  # every replica starts together; rank 0's clock
            start = time.perf_counter()
            for _ in range(count):
                fn()
            return (time.perf_counter() - start) / count * 1e3
        return run

    contestants = {name: per_call(fn, calls) for name, fn in fns.items()}
    contestants.update({name: per_call(fn, 1) for name, fn in loops.items()})
    for run in contestants.values():
        run()  # warm-up: first-call costs (building, the runtime, allocator)
    return {"replicas": replicas, "rank": rank, "times": _results.interleave(contestants, rounds)}


def _measure(replicas: int, args: argparse.Namespace) -> dict:
    import _results

    if replicas == 1:  # here (saves starting a process); one intra-op thread, as each replica has
        return worker(1, args.rounds, args.calls, args.short, args.long)
    command = [sys.executable, os.path.abspath(__file__), "--worker", str(replicas), "--rounds", str(args.rounds),
               "--calls", str(args.calls), "--short", str(args.short), "--long", str(args.long)]
    return _results.worker_result(command, _results.child_env(), args.timeout, f"the {replicas}-replica measurement")


def _summary(result: dict, short: int, long: int) -> dict:
    """Medians (ms) per call, fixed costs per call, and the per-step slopes and ratios."""
    times = result["times"]
    med = {name: statistics.median(values) for name, values in times.items()}
    slope = {what: (med[f"{what} x{long}"] - med[f"{what} x{short}"]) / (long - short)
             for what in ("fit NumPy", "fit Dataset", "bare loop")}
    # each round's runs are neighbours in time: the ratio of their slopes cancels most of the machine's drift
    paired = {what: statistics.median(
        ((times[f"{what} x{long}"][i] - times[f"{what} x{short}"][i])
         / (times[f"bare loop x{long}"][i] - times[f"bare loop x{short}"][i])) for i in range(len(times["bare train"])))
        for what in ("fit NumPy", "fit Dataset")}
    # the per-step table shows a slope only when neither it nor its ratio drowned in noise
    shown = {what: slope[what] > 0 and slope["bare loop"] > 0 and paired[what] > 0 for what in paired}
    # a training call's own step is fit's per-step slope (on 2 replicas its gradient average does not take the
    # bare step's gloo all-reduce); the bare step stands in where the table shows no slope
    step = {"train": lambda data: slope[f"fit {data}"] if shown[f"fit {data}"] else med["bare train"],
            "test": lambda data: med["bare test"], "predict": lambda data: med["bare predict"]}
    fixed = {f"{call} {data}": med[f"{call} {data}"] - step[kind](data) for call, data, kind in CALLS}
    return {"median": med, "fixed": fixed, "slope": slope, "paired": paired, "shown": shown}


def _mark(value: float, target: float) -> str:
    return f"{value:.2f}" + ("" if value <= target else " (over)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=20, help="calls per timed run (their mean is one sample)")
    parser.add_argument("--short", type=int, default=20, help="batches of the shorter long fit (per-step slope)")
    parser.add_argument("--long", type=int, default=120, help="batches of the longer long fit")
    parser.add_argument("--replicas", default="1,2", help="comma-separated replica counts to measure")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2 rounds of 3 calls, short fits")
    parser.add_argument("--results", default=None, help="the RESULTS.md to write (default benchmarks/RESULTS.md)")
    parser.add_argument("--timeout", type=float, default=1200)
    parser.add_argument("--worker", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.calls, args.short, args.long = 2, 3, 2, 12
    import _results

    if args.worker:
        result = worker(args.worker, args.rounds, args.calls, args.short, args.long)
        if result["rank"] == 0:
            _results.print_result(result)
        return
    model, flags = _results.lscpu()
    cpu = f"{model}; " + ", ".join(f"{flag} {'yes' if flag in flags else 'no'}" for flag in FLAGS)
    print(f"CPU: {cpu}", flush=True)
    counts = [int(n) for n in args.replicas.split(",")]
    load_before = os.getloadavg()[0]
    summaries = {n: _summary(_measure(n, args), args.short, args.long) for n in counts}
    load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    headers = ["call", "input"]
    for n in counts:
        label = "1 process" if n == 1 else f"{n} replicas"
        headers += [f"{label}: ms/call", f"{label}: fixed ms (target <= {TARGETS.get(n, 5.0):g})"]
    rows = []
    for call, data, kind in CALLS:
        row = [f"`{call}`", data]
        for n in counts:
            s = summaries[n]
            row += [f"{s['median'][f'{call} {data}']:.2f}", _mark(s["fixed"][f"{call} {data}"], TARGETS.get(n, 5.0))]
        rows.append(row)
    for kind, what in (("train", "forward, MSE, backward, torch.optim.Adam, running loss/MAE"), ("test", "forward, MSE"),
                       ("predict", "forward")):
        row = [f"bare torch {kind} step", what]
        for n in counts:
            row += [f"{summaries[n]['median'][f'bare {kind}']:.3f}", ""]
        rows.append(row)
    row = ["one all_reduce of 4 floats", "what each collective costs here"]
    for n in counts:
        row += [f"{summaries[n]['median']['all_reduce']:.3f}" if n > 1 else "-", ""]
    rows.append(row)
    step_rows = []
    for what in ("fit NumPy", "fit Dataset"):
        row = [f"`{what.split()[0]}` per step", what.split()[1]]
        for n in counts:
            s = summaries[n]
            if s["shown"][what]:
                row += [f"{s['slope'][what]:.3f} ms", _mark(s["paired"][what], STEP_TARGET) + "x bare"]
            else:  # the machine's noise exceeded the extra batches' time: no slope to report
                row += [NOISE, NOISE]
        step_rows.append(row)
    row = ["bare torch loop per step", "in-memory tensors, randperm"]
    for n in counts:
        bare_slope = summaries[n]["slope"]["bare loop"]
        row += [f"{bare_slope:.3f} ms", "1.00x"] if bare_slope > 0 else [NOISE, NOISE]
    step_rows.append(row)
    step_headers = ["per step", "input"]
    for n in counts:
        label = "1 process" if n == 1 else f"{n} replicas"
        step_headers += [f"{label}: ms/step", f"{label}: ratio (target <= {STEP_TARGET:g})"]
    body = (f"A tiny model (Dense({UNITS}) on {FEATURES} features, MSE, metrics=['mae'], 'adam'), {BATCH} rows per "
            f"replica per step, 1 intra-op thread per process; {args.rounds} interleaved rounds of {args.calls} calls, "
            f"times are medians (rank 0's clock on 2 replicas: MirroredStrategy over 2 CPU processes, gloo). "
            "Fixed cost = ms/call - steps x one step (1 step for every call here): for fit and train_on_batch "
            "fit's own per-step time (the second table), for evaluate and predict the bare torch step. "
            "The bare step on 2 replicas is a DistributedDataParallel step, whose gradient all-reduce takes gloo; "
            "fit's takes the shared-memory exchange (both processes are on this machine), hence fit's "
            "per-step ratio below 1 there. On 2 replicas each call waits for the "
            "other process in a few small collectives besides the step's own: fit and evaluate 2 on arrays (their "
            "fingerprints and the pipeline's state in one gather; the metric sums, which in fit also agree on "
            "stop_training) and 3 on a Dataset (rank 0's pipeline state, the first-batch check, the sums); predict "
            "3 on arrays (the gather; the outputs' row counts, the rows) and 4 on a Dataset; the *_on_batch calls "
            "none. Per step: the slope of fit()'s time "
            f"between {args.short} and {args.long} batches in one epoch, against a hand-written torch loop's slope "
            "(the ratio is the median of per-round ratios). Machine: "
            f"{_results.machine().split(', torch')[0]}; CPU {cpu}; {load} (every wait for another "
            "process, a collective above all, grows with the machine's load).\n\n"
            + _results.table(headers, rows) + "\n\n" + _results.table(step_headers, step_rows))
    print(body)
    _results.write_section("call_overhead.py: the fixed cost of a Keras call, and fit's cost per step", body,
                           path=args.results)


if __name__ == "__main__":
    main()
