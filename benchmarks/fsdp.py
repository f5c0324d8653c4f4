"""FSDPStrategy's fit() against MirroredStrategy's fit() and a hand-written FSDP2 loop (fully_shard per
layer + root, torch.optim.Adam) on the seed CNN and a 100M-parameter MLP, 2 gloo replicas; speed and memory.

    python benchmarks/fsdp.py [--quick] [--rounds 5] [--cnn-steps 10] [--mlp-steps 4]

One 2-replica job times the three trainers in interleaved rounds (both strategies share its process
group); then one short job per (model, trainer) reads that trainer's per-rank bytes and peak RSS alone.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

TRAINERS = ("fsdp_fit", "mirrored_fit", "fsdp2_loop")
LABELS = {"fsdp_fit": "model.fit() under FSDPStrategy",
          "mirrored_fit": "model.fit() under MirroredStrategy",
          "fsdp2_loop": "hand-written FSDP2 loop (fully_shard per layer + root, torch.optim.Adam)"}
MLP_UNITS, MLP_LAYERS = 5000, 4  # 4 x (5000 x 5000 + 5000) = 100,020,000 float32 parameters
BATCH = {"cnn": 256, "mlp": 32}


# ----- the models, as Keras models and as their plain torch equivalents -------------------------------------
def _keras_model(kind: str):
    from fit_overhead import seed_cnn

    import torchstrategy as tf

    if kind == "cnn":
        model = seed_cnn()
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        return model
    layers = [tf.keras.layers.Dense(MLP_UNITS, activation="relu", input_shape=(MLP_UNITS,))]
    layers += [tf.keras.layers.Dense(MLP_UNITS, activation="relu") for _ in range(MLP_LAYERS - 2)]
    model = tf.keras.Sequential(layers + [tf.keras.layers.Dense(MLP_UNITS)])
    model.compile(optimizer="adam", loss="mse")
    return model


class _ChannelsLast(nn.Module):
    """NHWC batches (as the Keras model gets them) to the NCHW torch convolutions want."""

    def forward(self, x):
        return x.permute(0, 3, 1, 2)


def _torch_model(kind: str):
    if kind == "cnn":
        return nn.Sequential(_ChannelsLast(), nn.Conv2d(3, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3),
                             nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(64, 64, 3), nn.ReLU(),
                             # Keras flattens HWC; the order does not change the cost
                             nn.Flatten(), nn.Linear(64 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))
    body = []
    for index in range(MLP_LAYERS):
        body.append(nn.Linear(MLP_UNITS, MLP_UNITS))
        if index < MLP_LAYERS - 1:
            body.append(nn.ReLU())
    return nn.Sequential(*body)


def _data(kind: str, rows: int) -> tuple:
    import _results
    import numpy as np

    if kind == "cnn":
        return _results.synthetic_cifar(rows)
    rng = np.random.default_rng(0)
    return (rng.random((rows, MLP_UNITS)).astype(np.float32), rng.random((rows, MLP_UNITS)).astype(np.float32))


def _local_bytes(tensors) -> int:
    total = 0
    for tensor in tensors:
        local = tensor.to_local() if hasattr(tensor, "to_local") else tensor
        total += local.numel() * local.element_size()
    return total


def _peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


# ----- the trainers ------------------------------------------------------------------------------------
def _fit_trainer(kind: str, strategy, steps: int):
    """One epoch of `steps` global batches through fit(); returns (run, bytes of weights + slots)."""
    import torchstrategy as tf

    images, labels = _data(kind, BATCH[kind] * steps)
    tf.random.set_seed(0)
    with strategy.scope():
        model = _keras_model(kind)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(10000).batch(BATCH[kind]).prefetch(
        tf.data.AUTOTUNE)

    def run() -> None:
        model.fit(dataset, epochs=1, verbose=0)

    def held_bytes() -> dict:
        slots = [v for state in model.optimizer.state.values() for v in state.values() if hasattr(v, "numel")]
        return {"params": _local_bytes(model.weights), "slots": _local_bytes(slots)}

    return run, held_bytes


def _fsdp2_trainer(kind: str, steps: int):
    """The same epoch written by hand: in-memory batches (each rank its half of every global batch, the
    same shuffle on every rank), fully_shard per layer with weights + root, torch.optim.Adam."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    images, labels = _data(kind, BATCH[kind] * steps)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = _torch_model(kind)
    mesh = init_device_mesh("cpu", (world,))
    for layer in model:
        if any(True for _ in layer.parameters(recurse=False)):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    x_all = torch.from_numpy(images)
    y_all = torch.from_numpy(labels).long().squeeze(-1) if kind == "cnn" else torch.from_numpy(labels)
    batch, per_rank = BATCH[kind], BATCH[kind] // world
    generator = torch.Generator().manual_seed(0)

    def run() -> None:
        order = torch.randperm(len(x_all), generator=generator)  # same generator state on every rank
        total_loss, correct, seen = torch.zeros(()), torch.zeros((), dtype=torch.long), 0
        for start in range(0, len(x_all), batch):
            index = order[start + rank * per_rank:start + (rank + 1) * per_rank]
            xb, yb = x_all[index], y_all[index]
            outputs = model(xb)
            loss = F.cross_entropy(outputs, yb) if kind == "cnn" else F.mse_loss(outputs, yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            # the running loss (and accuracy) any real loop keeps; fit() logs them too
            total_loss += loss.detach() * len(yb)
            if kind == "cnn":
                correct += (outputs.detach().argmax(-1) == yb).sum()
            seen += len(yb)

    def held_bytes() -> dict:
        slots = [v for state in optimizer.state.values() for v in state.values() if hasattr(v, "numel")]
        return {"params": _local_bytes(model.parameters()), "slots": _local_bytes(slots)}

    return run, held_bytes


def _build(trainer: str, kind: str, steps: int, strategies: dict):
    if trainer == "fsdp2_loop":
        return _fsdp2_trainer(kind, steps)
    return _fit_trainer(kind, strategies[trainer.split("_")[0]], steps)


def _strategies(trainers) -> dict:
    import torchstrategy as tf

    devices = ["/cpu:0", "/cpu:1"]
    # FSDPStrategy also joins the process group the hand-written loop uses; Mirrored shares the same group
    made = {"fsdp": tf.distribute.experimental.FSDPStrategy(devices)}
    if "mirrored_fit" in trainers:
        made["mirrored"] = tf.distribute.MirroredStrategy(devices)
    return made


def worker(kinds: list, trainers: list, steps: dict, rounds: int, out: str) -> None:
    """Inside the 2-replica job: for each model, builds the trainers, warms each up (one epoch: fit's setup
    and sharding, allocator), then times `rounds` interleaved epochs; rank 0 writes the rates as JSON."""
    import _results
    import torch
    import torch.distributed as dist

    strategies = _strategies(trainers)
    result = {"rates": {}, "bytes": {}, "peak_rss_mib": {}, "threads": torch.get_num_threads(),
              "replicas": dist.get_world_size()}
    for kind in kinds:
        built = {name: _build(name, kind, steps[kind], strategies) for name in trainers}
        samples = BATCH[kind] * steps[kind]

        def timer(run, samples=samples):
            def timed() -> float:
                dist.barrier()
                start = time.perf_counter()
                run()
                dist.barrier()
                return samples / (time.perf_counter() - start)
            return timed

        for run, _ in built.values():
            run()  # warm-up epoch
        result["rates"][kind] = _results.interleave({name: timer(run) for name, (run, _) in built.items()}, rounds)
        result["bytes"][kind] = {name: held() for name, (_, held) in built.items()}
        result["peak_rss_mib"][kind] = _peak_rss_mib()
        del built
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, {"bytes": result["bytes"], "peak_rss_mib": result["peak_rss_mib"]})
    result["per_rank"] = gathered
    if dist.get_rank() == 0:
        with open(out, "w", encoding="utf-8") as handle:
            json.dump(result, handle)


def _job(kinds: list, trainers: list, steps: dict, rounds: int) -> dict:
    import tempfile

    import _results

    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "result.json")
        command = [sys.executable, os.path.abspath(__file__), "--worker", out, "--kinds", ",".join(kinds),
                   "--trainers", ",".join(trainers), "--cnn-steps", str(steps["cnn"]), "--mlp-steps",
                   str(steps["mlp"]), "--rounds", str(rounds)]
        run = subprocess.run(command, check=False, env=_results.child_env(), capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"benchmark job {kinds} {trainers} failed:\n{run.stdout}\n{run.stderr}")
        with open(out, encoding="utf-8") as handle:
            return json.load(handle)


def _rate(samples_per_s: float) -> str:
    return f"{samples_per_s:,.0f}" if samples_per_s >= 100 else f"{samples_per_s:.2f}"


def _mib(value: float) -> str:
    mib = value / 2 ** 20
    return f"{mib:,.0f}" if mib >= 100 else f"{mib:.3g}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a short run (2 rounds, few steps); no RESULTS.md")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cnn-steps", type=int, default=10, help="global batches of 256 per timed CNN epoch")
    parser.add_argument("--mlp-steps", type=int, default=4, help="global batches of 32 per timed MLP epoch")
    parser.add_argument("--kinds", default="cnn,mlp", help=argparse.SUPPRESS)
    parser.add_argument("--trainers", default=",".join(TRAINERS), help=argparse.SUPPRESS)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.cnn_steps, args.mlp_steps = 2, 4, 2
    steps = {"cnn": args.cnn_steps, "mlp": args.mlp_steps}
    if args.worker:
        return worker(args.kinds.split(","), args.trainers.split(","), steps, args.rounds, args.worker)

    import _results
    from mixed_precision import cpu_flags

    kinds = args.kinds.split(",")
    started = time.perf_counter()
    speed = _job(kinds, list(TRAINERS), steps, args.rounds)
    # memory: each trainer alone in its own job (its warm-up epoch only), so the peak RSS is its own
    alone = {(kind, trainer): _job([kind], [trainer], steps, 0) for kind in kinds for trainer in TRAINERS}
    sections = []
    for kind in kinds:
        rates = speed["rates"][kind]
        median = {name: statistics.median(values) for name, values in rates.items()}
        spread = {name: f"{_rate(min(values))}-{_rate(max(values))}" for name, values in rates.items()}
        paired = {name: statistics.median(a / b for a, b in zip(rates["fsdp_fit"], rates[name])) for name in rates}
        rows = []
        for name in ("fsdp2_loop", "fsdp_fit", "mirrored_fit"):
            ranks = alone[(kind, name)]["per_rank"]
            held = " / ".join(_mib(r["bytes"][kind][name]["params"] + r["bytes"][kind][name]["slots"])
                              for r in ranks)
            rss = " / ".join(f"{r['peak_rss_mib'][kind]:,.0f}" for r in ranks)
            rows.append([LABELS[name], f"{_rate(median[name])} ({spread[name]})",
                         "1.000" if name == "fsdp_fit" else f"{paired[name]:.3f}", held, rss])
        model = ("seed CIFAR-10 CNN (122,570 params)" if kind == "cnn" else
                 f"MLP {MLP_LAYERS} x Dense({MLP_UNITS}) (100,020,000 params, MSE)")
        sections.append(
            f"**{model}**, global batch {BATCH[kind]}, {steps[kind]} steps per timed epoch:\n\n"
            + _results.table(["trainer", "samples/s median (min-max)", "FSDPStrategy fit / this",
                              "params + Adam slots per rank, MiB (rank 0 / 1)", "peak RSS per rank, MiB"], rows)
            + f"\n\nFSDPStrategy fit = {paired['fsdp2_loop']:.3f}x the hand-written FSDP2 loop, "
            f"{paired['mirrored_fit']:.3f}x MirroredStrategy fit. Per-round samples/s: "
            + "; ".join(f"{name} [{', '.join(_rate(r) for r in rates[name])}]" for name in rates))
    body = (f"{speed['replicas']} gloo replicas on CPU, {speed['threads']} intra-op thread per replica, one job; "
            f"each trainer warmed up by one epoch (fit's setup shards the model there), then {args.rounds} "
            f"interleaved rounds of one timed epoch each (barriers around it). samples/s are global samples, "
            f"medians over rounds (min-max); ratios are medians of per-round ratios. fit() gets "
            f"`from_tensor_slices -> shuffle -> batch -> prefetch` and 'adam'; the hand-written loop indexes "
            f"in-memory tensors (each rank its half of each global batch) and keeps a running loss. Bytes "
            f"(local shards of weights + Adam slots) and peak RSS (ru_maxrss) come from one more job per "
            f"trainer with that trainer alone (its warm-up epoch). "
            f"CPU: {cpu_flags()}. Machine: {_results.machine().split(', torch')[0]}, "
            f"torch {torch.__version__}. Total benchmark time {time.perf_counter() - started:.0f} s.\n\n"
            + "\n\n".join(sections))
    print(body)
    if not args.quick:
        _results.write_section("fsdp.py: FSDPStrategy fit() vs a hand-written FSDP2 loop vs MirroredStrategy (gloo)",
                               body)


if __name__ == "__main__":
    main()
