"""The GPU check for the few minutes a GPU machine is lent: the CUDA-marked tests, the strategies' fit() against
hand-written NCCL loops (DDP, FSDP2), and mixed precision on the GPU, printed as one table.

    bash benchmarks/gpu_check.sh [--steps 30] [--rounds 5] [--tf-python PATH]
    python benchmarks/gpu_check.py --cpu-dry-run      # the same code paths on 2 gloo CPU processes, tiny sizes

Installs nothing: it runs with the Python it is started with (the GPU machine's python3 holds torch) and the
repository on PYTHONPATH. Without CUDA every row says "no CUDA: skipped" and the exit status is 0. With CUDA
the table also goes into benchmarks/RESULTS.md. One torchrun job (one process per GPU) times every trainer in
interleaved rounds: MultiWorkerMirroredStrategy fit against a DDP loop, FSDPStrategy fit against an FSDP2 loop
(fully_shard per layer and root), and fit under mixed_bfloat16 / mixed_float16 against float32 fit.
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
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

TRAINERS = ("ddp_loop", "mirrored_fit", "fsdp2_loop", "fsdp_fit", "bf16_fit", "fp16_fit")
LABELS = {
    "ddp_loop": "hand-written DDP loop (torch.optim.Adam)",
    "mirrored_fit": "model.fit() under MultiWorkerMirroredStrategy",
    "fsdp2_loop": "hand-written FSDP2 loop (fully_shard per layer + root)",
    "fsdp_fit": "model.fit() under FSDPStrategy",
    "bf16_fit": "fit() under mixed_bfloat16 (MultiWorkerMirrored)",
    "fp16_fit": "fit() under mixed_float16 (MultiWorkerMirrored, loss scaling)",
}
BASELINE = {"mirrored_fit": "ddp_loop", "fsdp_fit": "fsdp2_loop", "bf16_fit": "mirrored_fit",
            "fp16_fit": "mirrored_fit"}
SKIPPED = "no CUDA: skipped"


# ----- the worker: one process per GPU (or per CPU replica in the dry run), started by torchrun -----------
def _trainers(device, batch: int, steps: int) -> dict:
    """Every trainer as a function that runs one epoch of `steps` global batches and returns its last loss."""
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    import _results
    import torchstrategy as tf
    from fit_overhead import seed_cnn

    mirrored = tf.distribute.MultiWorkerMirroredStrategy()  # joins torchrun's process group
    sharded = tf.distribute.experimental.FSDPStrategy()
    rank, world = dist.get_rank(), dist.get_world_size()
    images, labels = _results.synthetic_cifar(batch * steps)
    x_all = torch.from_numpy(images).to(device)
    y_all = torch.from_numpy(labels).long().squeeze(-1).to(device)
    per_rank = batch // world
    generator = torch.Generator().manual_seed(0)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(4096, seed=0).batch(batch)

    def keras_model(strategy, policy: str = "float32"):
        tf.keras.mixed_precision.set_global_policy(policy)
        try:
            tf.random.set_seed(0)
            with strategy.scope():
                model = seed_cnn()
                model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        finally:
            tf.keras.mixed_precision.set_global_policy("float32")

        def run() -> float:
            return float(model.fit(dataset, epochs=1, verbose=0).history["loss"][-1])
        return run

    def hand_loop(wrap):
        tf.random.set_seed(0)
        module = seed_cnn()
        module(np.zeros((1, 32, 32, 3), np.float32))  # builds the Keras layers (a plain nn.Module from here)
        module = wrap(module.to(device))
        optimizer = torch.optim.Adam(module.parameters(), lr=1e-3, eps=1e-7)

        def run() -> float:
            order = torch.randperm(len(x_all), generator=generator).to(device)  # the same order on every rank
            total = torch.zeros((), device=device)
            for start in range(0, len(x_all), batch):
                index = order[start + rank * per_rank:start + (rank + 1) * per_rank]
                loss = F.cross_entropy(module(x_all[index], training=True), y_all[index])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                total = loss.detach()
            return float(total)
        return run

    def ddp(module):
        return torch.nn.parallel.DistributedDataParallel(
            module, device_ids=[device.index] if device.type == "cuda" else None)

    def fsdp2(module):
        mesh = init_device_mesh(device.type, (world,))
        for layer in module.layers:
            if any(True for _ in layer.parameters(recurse=False)):
                fully_shard(layer, mesh=mesh)
        return fully_shard(module, mesh=mesh)

    return {"ddp_loop": hand_loop(ddp), "mirrored_fit": keras_model(mirrored), "fsdp2_loop": hand_loop(fsdp2),
            "fsdp_fit": keras_model(sharded), "bf16_fit": keras_model(mirrored, "mixed_bfloat16"),
            "fp16_fit": keras_model(mirrored, "mixed_float16")}


def worker(out: str, batch: int, steps: int, rounds: int) -> None:
    import torch
    import torch.distributed as dist

    import _results

    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if torch.cuda.is_available() \
        else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    trainers = _trainers(device, batch, steps)
    losses: dict = {}

    def timer(name: str):
        def timed() -> float:
            dist.barrier()
            start = time.perf_counter()
            losses[name] = trainers[name]()
            if device.type == "cuda":
                torch.cuda.synchronize()
            dist.barrier()
            return batch * steps / (time.perf_counter() - start)
        return timed

    for name in trainers:
        timer(name)()  # warm-up epoch (cuDNN autotuning, first-use allocations, the strategies' setup)
    rates = _results.interleave({name: timer(name) for name in trainers}, rounds)
    peak = torch.cuda.max_memory_allocated(device) / 2 ** 20 if device.type == "cuda" else 0.0
    if dist.get_rank() == 0:
        with open(out, "w", encoding="utf-8") as handle:
            json.dump({"rates": rates, "losses": losses, "world": dist.get_world_size(), "device": str(device),
                       "backend": dist.get_backend(), "peak_mib": peak}, handle)
    dist.barrier()


# ----- the driver ---------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(threads: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                                                               "MASTER_PORT", "TF_CONFIG")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = threads
    return env


def _cuda_tests(timeout: int) -> tuple:
    """The CUDA-marked tests: (result, detail)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "cuda", "tests"]
    try:
        run = subprocess.run(command, cwd=ROOT, env=_env("4"), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timed out", f"pytest -m cuda ran past {timeout} s"
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    summary = lines[-1].strip("= ") if lines else "(no output)"
    return ("passed" if run.returncode == 0 else f"FAILED (exit {run.returncode})"), summary


def _trainer_job(processes: int, batch: int, steps: int, rounds: int, threads: str, timeout: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "result.json")
        command = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={processes}",
                   "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{_free_port()}", "--local-addr=127.0.0.1",
                   os.path.abspath(__file__), "--worker", out, "--batch", str(batch), "--steps", str(steps),
                   "--rounds", str(rounds)]
        run = subprocess.run(command, cwd=ROOT, env=_env(threads), capture_output=True, text=True, timeout=timeout)
        if run.returncode != 0:
            raise RuntimeError(f"the trainer job failed (exit {run.returncode}):\n{run.stdout[-3000:]}\n"
                               f"{run.stderr[-6000:]}")
        with open(out, encoding="utf-8") as handle:
            return json.load(handle)


def _trainer_rows(job: dict) -> list:
    rates = {name: statistics.median(values) for name, values in job["rates"].items()}
    rows = []
    for name in TRAINERS:
        base = BASELINE.get(name)
        ratio = f"{rates[name] / rates[base]:.3f} vs {base}" if base else "1.000 (reference)"
        rows.append([LABELS[name], f"{rates[name]:,.0f} samples/s", ratio,
                     f"last loss {job['losses'][name]:.4f}"])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30, help="global batches per timed epoch")
    parser.add_argument("--batch", type=int, default=512, help="global batch size")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tf-python", default=None, help="a TF venv's python for the TF-GPU rows (if there is one)")
    parser.add_argument("--cpu-dry-run", action="store_true",
                        help="run the trainer job on 2 gloo CPU processes with tiny sizes (checks the script)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.batch, args.steps, args.rounds)
        return 0

    import torch

    import _results

    started = time.monotonic()
    cuda = torch.cuda.is_available()
    rows = []
    if cuda:
        rows.append(["CUDA-marked tests", *_cuda_tests(timeout=240), ""])
    else:
        rows.append(["CUDA-marked tests", SKIPPED, "", ""])
    if cuda or args.cpu_dry_run:
        processes = torch.cuda.device_count() if cuda else 2
        batch, steps, rounds = (args.batch, args.steps, args.rounds) if cuda else (32, 2, 1)
        try:
            job = _trainer_job(processes, batch, steps, rounds, "4" if cuda else "1", timeout=360)
            rows += _trainer_rows(job)
            setting = (f"{job['world']} process(es) on {job['device'].split(':')[0]} ({job['backend']}), global "
                       f"batch {batch}, {steps} steps per epoch, {rounds} interleaved rounds; peak GPU memory "
                       f"{job['peak_mib']:,.0f} MiB on rank 0")
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            rows.append(["trainer job", "FAILED", str(error)[-500:].replace("\n", " "), ""])
            setting = "the trainer job failed"
    else:
        rows += [[LABELS[name], SKIPPED, "", ""] for name in TRAINERS]
        setting = "no CUDA device: nothing was timed"
    if args.tf_python and os.path.exists(args.tf_python) and cuda:
        rows.append(["TF-GPU side by side", "not run", "vs_tensorflow.py runs TF on CPU only today", ""])
    else:
        rows.append(["TF-GPU side by side", "skipped", "no TF venv given (--tf-python)" if not args.tf_python
                     else "no CUDA" if not cuda else f"{args.tf_python} not found", ""])
    machine = _results.machine()
    body = (f"Machine: {machine}. {setting}. Whole check: {time.monotonic() - started:.0f} s.\n\n"
            + _results.table(["check", "result", "ratio / detail", "numbers"], rows))
    print(body)
    if cuda:
        _results.write_section("gpu_check.sh: the GPU check (CUDA tests, NCCL strategies, mixed precision)", body)
    return 0 if all("FAILED" not in row[1] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
