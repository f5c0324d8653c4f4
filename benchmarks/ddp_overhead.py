"""MirroredStrategy's fit() against a hand-written DDP loop (DistributedSampler + DataLoader) in the
same 2-replica job, interleaved; and the launch cost of `python train.py` against torchrun.

    python benchmarks/ddp_overhead.py [--steps 10] [--rounds 12]

On CPU the replicas are 2 gloo processes with 1 thread each; with 2+ CUDA GPUs, every GPU (NCCL).
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _strategy():
    import torch

    import torchstrategy as tf

    if torch.cuda.is_available() and torch.cuda.device_count() >= 2:
        return tf.distribute.MirroredStrategy()
    return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def worker(steps: int, rounds: int) -> None:
    """Runs inside the 2-replica job: both trainers, alternating; rank 0 prints the rates as JSON."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    import _results
    import torchstrategy as tf
    from fit_overhead import seed_cnn

    strategy = _strategy()
    device = strategy.device
    replicas = strategy.num_replicas_in_sync
    batch = 256
    images, labels = _results.synthetic_cifar(batch * steps)

    tf.random.set_seed(0)
    with strategy.scope():
        keras_model = seed_cnn()
        keras_model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                            metrics=["accuracy"])
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(10000).batch(batch).prefetch(
        tf.data.AUTOTUNE)

    tf.random.set_seed(0)
    torch_model = seed_cnn().to(device)  # the same module class; trained by plain DDP code
    ddp = torch.nn.parallel.DistributedDataParallel(
        torch_model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.Adam(ddp.parameters(), lr=1e-3, eps=1e-7)
    tensors = torch.utils.data.TensorDataset(torch.from_numpy(images), torch.from_numpy(labels).long().squeeze(-1))
    sampler = torch.utils.data.distributed.DistributedSampler(tensors, shuffle=True)
    loader = torch.utils.data.DataLoader(tensors, batch_size=batch // replicas, sampler=sampler)
    epoch = [0]

    def run_fit() -> None:
        keras_model.fit(dataset, epochs=1, verbose=0)

    def run_ddp() -> None:
        sampler.set_epoch(epoch[0])
        epoch[0] += 1
        for xb, yb in loader:
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            logits = ddp(xb, training=True)
            loss = F.cross_entropy(logits, yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

    def timed(fn) -> float:
        dist.barrier()
        start = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        dist.barrier()
        return batch * steps / (time.perf_counter() - start)

    contestants = {"fit": run_fit, "ddp": run_ddp}
    for fn in contestants.values():
        timed(fn)  # warm-up
    rates: dict[str, list[float]] = {name: [] for name in contestants}
    names = list(contestants)
    for index in range(rounds):
        for name in names if index % 2 == 0 else names[::-1]:
            rates[name].append(timed(contestants[name]))
    if strategy.extended.should_checkpoint:
        print("RATES " + json.dumps({"rates": rates, "replicas": replicas, "device": str(device),
                                     "threads": torch.get_num_threads(),
                                     "backend": "nccl" if device.type == "cuda" else "gloo"}), flush=True)


def launch_probe(marker: str) -> None:
    """Builds the strategy and a model, then notes the wall-clock time of the first training step."""
    import numpy as np

    import torchstrategy as tf
    from fit_overhead import seed_cnn

    strategy = _strategy()
    with strategy.scope():
        model = seed_cnn()
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.zeros((512, 32, 32, 3), np.float32)
    y = np.zeros((512, 1), np.uint8)

    class FirstStep(tf.keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            if batch == 0 and strategy.extended.should_checkpoint:
                with open(marker, "w") as handle:
                    handle.write(repr(time.time()))

    model.fit(x, y, batch_size=256, epochs=1, verbose=0, callbacks=[FirstStep()])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _launch_seconds(torchrun: bool) -> float:
    import _results

    marker = tempfile.mktemp(suffix=".first-step")
    command = [sys.executable, os.path.abspath(__file__), "--launch-probe", marker]
    if torchrun:
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--rdzv-backend=c10d",
                   f"--rdzv-endpoint=127.0.0.1:{_free_port()}", "--local-addr=127.0.0.1", *command[1:]]
    start = time.time()
    subprocess.run(command, env=_results.child_env(None), check=True, stdout=subprocess.DEVNULL)
    with open(marker) as handle:
        first_step = float(handle.read())
    os.unlink(marker)
    return first_step - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40,
                        help="global batches of 256 per timed run (one fit() epoch: fit pays a fixed cost a call "
                             "that the bare loop does not, a few small collectives; call_overhead.py measures it)")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--launch-probe", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.steps, args.rounds)
    if args.launch_probe:
        return launch_probe(args.launch_probe)

    import _results

    run = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", "--steps", str(args.steps),
                          "--rounds", str(args.rounds)], env=_results.child_env(None), capture_output=True,
                         text=True, check=True)
    line = next(line for line in run.stdout.splitlines() if line.startswith("RATES "))
    result = json.loads(line[len("RATES "):])
    rates = result["rates"]
    paired = statistics.median(f / d for f, d in zip(rates["fit"], rates["ddp"]))
    launches = {"python train.py": [], "torchrun": []}
    for index in range(3):
        for torchrun in (False, True) if index % 2 == 0 else (True, False):
            launches["torchrun" if torchrun else "python train.py"].append(_launch_seconds(torchrun))
    plain, torchrun = statistics.median(launches["python train.py"]), statistics.median(launches["torchrun"])
    rows = [["hand-written DDP loop (DistributedSampler, DataLoader, torch.optim.Adam)",
             f"{statistics.median(rates['ddp']):,.0f}", "1.000"],
            ["model.fit() under MirroredStrategy", f"{statistics.median(rates['fit']):,.0f}", f"{paired:.3f}"]]
    body = (f"Seed CIFAR-10 CNN, global batch 256, {result['replicas']} replicas ({result['backend']}, "
            f"{result['device']}, {result['threads']} intra-op thread(s) per replica), {args.steps} steps per run, {args.rounds} interleaved rounds in one job; samples/s "
            f"are medians over rounds (global samples), the ratio the median of per-round ratios. "
            f"Machine: {_results.machine().split(', torch')[0]}.\n\n"
            + _results.table(["trainer", "samples/s", "ratio vs DDP loop"], rows)
            + "\n\nLaunch cost, from starting the command to the first training step on rank 0 (median of 3, "
            f"interleaved): `python train.py` (MirroredStrategy starts the second replica) {plain:.2f} s, "
            f"`torchrun --nproc_per_node=2` {torchrun:.2f} s (ratio {plain / torchrun:.2f}).\n\n"
            f"Per-round samples/s: fit {[round(r) for r in rates['fit']]}, ddp {[round(r) for r in rates['ddp']]}; "
            f"launch seconds: {({k: [round(v, 2) for v in vals] for k, vals in launches.items()})}.")
    print(body)
    _results.write_section(f"ddp_overhead.py: MirroredStrategy fit() vs a DDP loop ({result['backend']})", body)


if __name__ == "__main__":
    main()
