"""TPUStrategy's fit() against a hand-written torch-xla SPMD loop on XLA:CPU devices: the seed CIFAR-10 CNN,
the same batches, steady-state step time and compile time. XLA:CPU numbers say nothing about TPU speed.

    PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 TF_CPP_MIN_LOG_LEVEL=3 .venv-tpu/bin/python benchmarks/tpu_xla.py \
        [--quick] [--rounds 7] [--steps 10] [--batch-size 128] [--profile]

One process: TPUStrategy() first (it switches torch-xla to SPMD), then the hand-written loop on the same mesh
shape. Each trainer runs one warm-up epoch (it compiles), then `rounds` interleaved timed epochs.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _results

LABELS = {"tpu_fit": "model.fit() under TPUStrategy",
          "xla_loop": "hand-written torch-xla SPMD loop (xs.mark_sharding per batch tensor, torch.optim.Adam)"}
SECTION = "tpu_xla.py: TPUStrategy fit() vs a hand-written torch-xla SPMD loop (XLA:CPU)"


def _compile_metric() -> tuple[int, float]:
    """(graphs compiled, seconds spent compiling) so far in this process, from torch-xla's CompileTime."""
    from torch_xla.debug import metrics

    data = metrics.metric_data("CompileTime")
    return (int(data[0]), data[1] / 1e9) if data else (0, 0.0)


class _ChannelsLast(nn.Module):
    """NHWC batches (as the Keras model gets them) to the NCHW torch convolutions want."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(0, 3, 1, 2)


def _torch_cnn() -> nn.Sequential:
    # the seed CNN as plain torch layers (Keras flattens HWC, torch CHW: same cost)
    return nn.Sequential(_ChannelsLast(), nn.Conv2d(3, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(64, 64, 3), nn.ReLU(),
                         nn.Flatten(), nn.Linear(64 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))


def _fit_trainer(strategy, images, labels, batch: int):
    """One epoch of fit() over the in-memory arrays, in order (shuffle=False: the loop sees the same batches)."""
    from fit_overhead import seed_cnn

    import torchstrategy as tf

    tf.random.set_seed(0)
    with strategy.scope():
        model = seed_cnn()
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])

    def run() -> int:
        model.fit(images, labels, batch_size=batch, epochs=1, verbose=0, shuffle=False)
        return len(images)

    return run


def _xla_loop_trainer(num_devices: int, images, labels, batch: int):
    """The same epoch written against torch-xla directly: model on the XLA device (weights replicated,
    SPMD's default), each batch tensor moved there and sharded on 'data', Adam, one sync per step."""
    import numpy as np
    import torch_xla
    import torch_xla.distributed.spmd as xs

    device = torch_xla.device()
    mesh = xs.Mesh(np.arange(num_devices), (num_devices,), ("data",))
    torch.manual_seed(0)
    model = _torch_cnn().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    x_all = torch.from_numpy(images)
    y_all = torch.from_numpy(labels).long().squeeze(-1)

    def run() -> int:
        # the running loss and accuracy any real loop keeps (fit() logs both), read once at the epoch's end
        # made on the host and marked replicated, as the step's outputs are: otherwise each later epoch's first
        # step (Adam's slots made by then) is a graph the warm-up never compiled
        total_loss = torch.zeros(1).to(device)
        correct = torch.zeros(1, dtype=torch.long).to(device)
        xs.mark_sharding(total_loss, mesh, (None,))
        xs.mark_sharding(correct, mesh, (None,))
        seen = 0
        for start in range(0, len(x_all), batch):
            xb = x_all[start:start + batch].to(device)
            yb = y_all[start:start + batch].to(device)
            xs.mark_sharding(xb, mesh, ("data", None, None, None))
            xs.mark_sharding(yb, mesh, ("data",))
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total_loss += loss.detach() * len(yb)
            correct += (logits.detach().argmax(-1) == yb).sum()
            seen += len(yb)
            torch_xla.sync()
        (total_loss / seen).item(), correct.item()  # the epoch's logs reach the host, as fit's do
        return seen

    return run


def _warm_up(run) -> dict:
    """The first epoch (it compiles): wall seconds and the graphs/compile seconds it added."""
    count0, seconds0 = _compile_metric()
    start = time.perf_counter()
    run()
    wall = time.perf_counter() - start
    count1, seconds1 = _compile_metric()
    return {"wall": wall, "graphs": count1 - count0, "compile_s": seconds1 - seconds0}


def _epoch_timer(run, compiled: list, host_cpu: list):
    """Times one epoch; also records the graphs it compiled and the CPU seconds of this (the Python) thread:
    the host work of tracing and feeding, apart from XLA's own threads and from waiting on them."""
    def timed() -> float:
        count = _compile_metric()[0]
        cpu = time.thread_time()
        start = time.perf_counter()
        run()
        elapsed = time.perf_counter() - start  # seconds per epoch (turned into rates below)
        host_cpu.append(time.thread_time() - cpu)
        compiled.append(_compile_metric()[0] - count)
        return elapsed
    return timed


def _profile(run, top: int) -> str:
    """cProfile of one steady fit epoch: where the host time goes (cumulative, top entries)."""
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a short run (2 rounds, 3 steps); no RESULTS.md")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=10, help="global batches per timed epoch")
    parser.add_argument("--batch-size", type=int, default=128, help="global batch (split over the devices)")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of one steady fit epoch")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.steps = 2, 3

    import torch_xla.runtime as xr
    from mixed_precision import cpu_flags

    import torchstrategy as tf

    started = time.perf_counter()
    strategy = tf.distribute.TPUStrategy()  # first: it switches SPMD on before any XLA tensor exists
    devices = xr.global_runtime_device_count()
    batch, steps = args.batch_size, args.steps
    if batch % devices:
        raise SystemExit(f"--batch-size {batch} does not split over {devices} XLA devices; use a multiple of "
                         f"{devices} (e.g. {batch - batch % devices or devices}).")
    images, labels = _results.synthetic_cifar(batch * steps)
    runs = {"tpu_fit": _fit_trainer(strategy, images, labels, batch),
            "xla_loop": _xla_loop_trainer(devices, images, labels, batch)}
    warm = {name: _warm_up(run) for name, run in runs.items()}
    steady_graphs: dict = {name: [] for name in runs}
    host_cpu: dict = {name: [] for name in runs}
    seconds = _results.interleave({name: _epoch_timer(run, steady_graphs[name], host_cpu[name])
                                   for name, run in runs.items()}, args.rounds)

    samples = batch * steps
    rates = {name: [samples / s for s in values] for name, values in seconds.items()}
    step_ms = {name: [1000 * s / steps for s in values] for name, values in seconds.items()}
    paired = statistics.median(a / b for a, b in zip(rates["tpu_fit"], rates["xla_loop"]))
    rows = []
    for name in ("xla_loop", "tpu_fit"):
        ms, rate = step_ms[name], rates[name]
        median_epoch = statistics.median(seconds[name])
        host_ms = [1000 * s / steps for s in host_cpu[name]]
        rows.append([LABELS[name], f"{statistics.median(ms):.1f} ({min(ms):.1f}-{max(ms):.1f})",
                     f"{statistics.median(host_ms):.1f} ({min(host_ms):.1f}-{max(host_ms):.1f})",
                     f"{statistics.median(rate):,.0f} ({min(rate):,.0f}-{max(rate):,.0f})",
                     "1.000" if name == "xla_loop" else f"{paired:.3f}",
                     f"{warm[name]['wall']:.2f} / {warm[name]['wall'] - median_epoch:.2f}",
                     f"{warm[name]['graphs']} ({warm[name]['compile_s']:.2f} s)"])
    verdict = "meets" if paired >= 0.95 else "misses"
    body = (
        f"**XLA:CPU numbers say nothing about TPU speed.** They measure host-side overhead (Python, lazy tracing, "
        f"graph cache look-ups, transfers) around one XLA:CPU program per step, on a 2-core machine that runs "
        f"all {devices} emulated devices; a TPU's compute, HBM, interconnect and compiler are all different.\n\n"
        f"Seed CIFAR-10 CNN (122,570 params), Adam, SparseCategoricalCrossentropy(from_logits=True), synthetic "
        f"CIFAR-shaped data, global batch {batch} sharded over {devices} XLA:CPU devices "
        f"(`PJRT_DEVICE=CPU CPU_NUM_DEVICES={devices}`, one SPMD process), {steps} steps per epoch. Both trainers "
        f"see the same batches in the same order (fit gets the in-memory arrays with shuffle=False; the loop "
        f"slices the same tensors, moves each to the device and marks it sharded on 'data'), sync once per "
        f"step, and bring the epoch's loss/accuracy to the host once. Each ran one warm-up epoch (it compiles), "
        f"then {args.rounds} interleaved rounds of one timed epoch each. Step time = epoch time / steps; "
        f"medians over rounds (min-max); the ratio is the median of per-round samples/s ratios. Python-thread CPU time (time.thread_time of the main thread, per step) is the host work of tracing, Adam and feeding batches, apart from XLA's threads; it is less disturbed by other load than wall time. Compile time = "
        f"first epoch minus the median steady epoch, next to torch-xla's CompileTime metric (graphs compiled in "
        f"the first epoch and the seconds it reports). Graphs compiled during the timed rounds: "
        + ", ".join(f"{name} {sum(counts)}" for name, counts in steady_graphs.items()) + ".\n\n"
        + _results.table(["trainer", "steady step ms median (min-max)", "Python-thread CPU ms per step",
                          "samples/s median (min-max)", "TPUStrategy fit / this (samples/s)", "first epoch s / minus steady epoch s",
                          "graphs compiled in first epoch (CompileTime s)"], rows)
        + f"\n\nTPUStrategy fit runs at {paired:.3f}x the hand-written loop's samples/s ({verdict} the 0.95x goal). "
        f"Per-round samples/s: "
        + "; ".join(f"{name} [{', '.join(f'{r:,.0f}' for r in rates[name])}]" for name in rates)
        + f".\n\nCPU: {cpu_flags()}. Machine: {_results.machine().split(', torch')[0]}, torch {torch.__version__}, "
        f"torch-xla {__import__('torch_xla').__version__}. Load average at the end (1/5/15 min): "
        f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())} (a shared machine: other jobs ran alongside, so "
        f"rounds vary; the interleaving pairs each fit epoch with a loop epoch run under similar load). "
        f"Total benchmark time "
        f"{time.perf_counter() - started:.0f} s.")
    print(body)
    if args.profile:
        print("\ncProfile of one steady TPUStrategy fit epoch:\n" + _profile(runs["tpu_fit"], 40))
        print("\ncProfile of one steady hand-written loop epoch:\n" + _profile(runs["xla_loop"], 25))
    if not args.quick:
        _results.write_section(SECTION, body)


if __name__ == "__main__":
    main()
