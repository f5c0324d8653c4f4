"""torchstrategy fit() against TensorFlow 2.21's Keras fit() on the seed CIFAR-10 CNN (float32 / mixed_bfloat16 /
2 CPU replicas), a one-conv CNN, a 3-block BatchNorm CNN and an MLP (float32 and mixed_bfloat16): the same data,
initial weights, batch and optimizer on both sides, interleaved rounds on this machine; each row's GFLOP/s is
set against the float32 / bfloat16 matmul roofline measured in the same run.

    python benchmarks/vs_tensorflow.py [--rounds 7] [--steps 20] [--configs fp32,bf16,conv1,...]
                                       [--tf-venv DIR]

TensorFlow (tensorflow-cpu==2.21.0) lives in a venv of its own, never in the package's: --tf-venv, else
$TORCHSTRATEGY_TF_VENV, else ~/.cache/torchstrategy/tf-2.21.0 (made there on first use, about 2 minutes). Each side of a config is one long-lived worker
process (the torchstrategy MirroredStrategy side relaunches itself as 2 gloo processes); the driver hands each
worker numbered command files in its own folder ('run', 'final', 'quit') and reads back one JSON answer per
command, so neither side's import, model build or first (warm-up) fit is timed. Data and initial weights come
from the driver as .npz files: torchstrategy's get_weights() of each model, set into both sides.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TF_VERSION = "2.21.0"
DEFAULT_TF_VENV = os.path.join(os.path.expanduser("~"), ".cache", "torchstrategy", f"tf-{TF_VERSION}")
CONFIGS = ("fp32", "bf16", "mirrored", "bn_cnn", "mlp", "conv1", "conv1_bf16", "bn_cnn_bf16", "mlp_bf16")
DEFAULT_CONFIGS = CONFIGS
CONFIG_LABELS = {"fp32": "a. float32, one process",
                 "bf16": "b. mixed_bfloat16, one process",
                 "mirrored": "c. float32, MirroredStrategy, 2 CPU replicas",
                 "bn_cnn": "d. 3-block CNN with BatchNormalization, float32, one process",
                 "mlp": "e. MLP (3072-512-256-10), float32, one process",
                 "conv1": "f. one-conv CNN, float32, one process",
                 "conv1_bf16": "g. one-conv CNN, mixed_bfloat16, one process",
                 "bn_cnn_bf16": "h. 3-block CNN with BatchNormalization, mixed_bfloat16, one process",
                 "mlp_bf16": "i. MLP (3072-512-256-10), mixed_bfloat16, one process"}
#: the model each config trains: the seed CNN, or one of the others that show an optimisation slows nothing else
MODEL_OF = {"fp32": "seed", "bf16": "seed", "mirrored": "seed", "bn_cnn": "bn_cnn", "mlp": "mlp", "conv1": "conv1",
            "conv1_bf16": "conv1", "bn_cnn_bf16": "bn_cnn", "mlp_bf16": "mlp"}
BF16_CONFIGS = {"bf16", "conv1_bf16", "bn_cnn_bf16", "mlp_bf16"}
#: the square matmul whose throughput is each precision's roofline (the machine's peak for dense math)
PEAK_MATMUL_SIZE = 4096
SIDES = ("tf", "ts")
SIDE_LABELS = {"tf": "TF 2.21 Keras", "ts": "torchstrategy"}
FLAG_PREFIXES = ("avx512", "amx")
POLL_SECONDS = 0.005


# ----- the workers (each runs in its own process; the TF one imports no torch) ----------------------------
def build_model(keras, name: str):
    """One of the benchmark's models from a Keras-API module (TF's tf.keras or torchstrategy's): the same
    code builds both sides, layer for layer, so get_weights() of one fits set_weights() of the other."""
    layers = keras.layers
    if name == "seed":  # fit_overhead.seed_cnn: the CIFAR-10 tutorial CNN
        body = [layers.Conv2D(32, (3, 3), activation="relu"), layers.MaxPooling2D((2, 2)),
                layers.Conv2D(64, (3, 3), activation="relu"), layers.MaxPooling2D((2, 2)),
                layers.Conv2D(64, (3, 3), activation="relu"), layers.Flatten(),
                layers.Dense(64, activation="relu"), layers.Dense(10)]
    elif name == "conv1":  # the one-conv CNN of issue 25: Conv2D(64)-MaxPool-Dense(128)-Dense(10)
        body = [layers.Conv2D(64, (3, 3), activation="relu"), layers.MaxPooling2D((2, 2)), layers.Flatten(),
                layers.Dense(128, activation="relu"), layers.Dense(10)]
    elif name == "bn_cnn":
        body = []
        for filters in (32, 64, 128):
            body += [layers.Conv2D(filters, 3, padding="same"), layers.BatchNormalization(), layers.ReLU(),
                     layers.MaxPooling2D()]
        body += [layers.Flatten(), layers.Dense(10)]
    else:
        body = [layers.Flatten(), layers.Dense(512, activation="relu"), layers.Dense(256, activation="relu"),
                layers.Dense(10)]
    return keras.Sequential([keras.Input((32, 32, 3)), *body])


def _tf_model(config: str, threads: int, weights: list):
    """The config's model in TF Keras, with the given initial weights, compiled."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    if config == "mirrored":
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    else:
        strategy = tf.distribute.get_strategy()
    if config in BF16_CONFIGS:
        tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    with strategy.scope():
        model = build_model(tf.keras, MODEL_OF[config])
        model.set_weights(weights)
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    return tf, model, True, strategy.num_replicas_in_sync


def _ts_model(config: str, threads: int, weights: list):
    """torchstrategy's model of the config, with the same initial weights, compiled as fit_overhead.py does."""
    import torch

    import torchstrategy as tf

    if config == "mirrored":  # relaunches this worker as 2 gloo processes, 1 intra-op thread each
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    else:
        torch.set_num_threads(threads)
        strategy = tf.distribute.get_strategy()
    if config in BF16_CONFIGS:
        tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    with strategy.scope():
        model = build_model(tf.keras, MODEL_OF[config])
        model.set_weights(weights)
        model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
    return tf, model, bool(strategy.extended.should_checkpoint), strategy.num_replicas_in_sync


def _write_json(path: str, value: dict) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(value, handle)
    os.replace(path + ".tmp", path)  # the driver never sees half a file


def _await_file(path: str) -> str:
    while not os.path.exists(path):
        time.sleep(POLL_SECONDS)
    with open(path, encoding="utf-8") as handle:
        return handle.read().strip()


def worker(side: str, config: str, threads: int, folder: str, batch: int) -> None:
    """Builds one side's model, warms it up with one fit, then answers numbered command files in `folder`."""
    import numpy as np

    data = np.load(os.path.join(os.path.dirname(folder), "data.npz"))
    saved = np.load(os.path.join(os.path.dirname(folder), f"weights_{MODEL_OF[config]}.npz"))
    weights = [saved[f"w{index}"] for index in range(len(saved.files))]
    images, labels = data["images"], data["labels"]
    tf, model, reports, replicas = (_tf_model if side == "tf" else _ts_model)(config, threads, weights)

    def batches(rows):  # no shuffle: both sides see the same batches in the same order
        return tf.data.Dataset.from_tensor_slices((images[:rows], labels[:rows])).batch(batch).prefetch(
            tf.data.AUTOTUNE)

    train = batches(len(images))
    before = model.evaluate(batches(batch), verbose=0, return_dict=True)  # same weights: should agree
    model.fit(train, epochs=1, verbose=0)  # warm-up: tracing, allocator, first-call costs
    if reports:
        _write_json(os.path.join(folder, "ready.json"), {"loss_before": float(before["loss"]),
                                                         "replicas": int(replicas)})
    number = 0
    while True:
        command = _await_file(os.path.join(folder, f"cmd_{number}"))
        if command == "quit":
            return
        if command == "run":
            start = time.perf_counter()
            history = model.fit(train, epochs=1, verbose=0)
            seconds = time.perf_counter() - start
            answer = {"seconds": seconds, "samples": len(images),
                      "loss": float(history.history["loss"][-1]), "accuracy": float(history.history["accuracy"][-1])}
        else:  # "final": the trained model on all the training data
            logs = model.evaluate(train, verbose=0, return_dict=True)
            answer = {"loss": float(logs["loss"]), "accuracy": float(logs["accuracy"])}
        if reports:
            _write_json(os.path.join(folder, f"out_{number}.json"), answer)
        number += 1


# ----- the driver -------------------------------------------------------------------------------------------
def tf_python(venv: str) -> str:
    """The python of `venv`, a venv with tensorflow-cpu==2.21.0 (made there if missing)."""
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and _tf_version(python) == TF_VERSION:
        return python
    found = _tf_version(python) if os.path.exists(python) else ""
    if found:  # another version: replacing it is the owner's call, not this script's
        raise SystemExit(f"{venv} has tensorflow-cpu {found}, this benchmark needs {TF_VERSION}: run "
                         f"`{venv}/bin/pip install tensorflow-cpu=={TF_VERSION}` or pass another --tf-venv.")
    if not os.path.exists(python):
        print(f"making {venv} with tensorflow-cpu=={TF_VERSION} (about 2 minutes)...", flush=True)
        os.makedirs(os.path.dirname(venv) or ".", exist_ok=True)
        subprocess.run([shutil.which("python3") or "python3", "-m", "venv", venv], check=True)
    else:  # a venv left half-made (an interrupted install, say): finish it
        print(f"installing tensorflow-cpu=={TF_VERSION} into {venv} (about 2 minutes)...", flush=True)
    pip = subprocess.run([python, "-m", "pip", "install", "-q", f"tensorflow-cpu=={TF_VERSION}"], check=False)
    if pip.returncode or _tf_version(python) != TF_VERSION:
        raise SystemExit(f"could not install tensorflow-cpu=={TF_VERSION} into {venv} (pip exit {pip.returncode}); "
                         f"install it there by hand or pass --tf-venv with a venv that has it.")
    return python


def _tf_version(python: str) -> str:
    code = "import importlib.metadata as m\ntry: print(m.version('tensorflow-cpu'))\nexcept Exception: print('')"
    result = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    return result.stdout.strip()


def matmul_peak(dtype_name: str, threads: int, repeats: int = 5) -> float:
    """GFLOP/s of a PEAK_MATMUL_SIZE square torch.mm in `dtype_name` ('float32' or 'bfloat16') on `threads`
    threads: the median of `repeats` timed products after one warm-up (this machine's roofline for that dtype)."""
    import torch

    torch.set_num_threads(threads)
    dtype = getattr(torch, dtype_name)
    n = PEAK_MATMUL_SIZE
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=generator).to(dtype)
    b = torch.randn(n, n, generator=generator).to(dtype)
    torch.mm(a, b)
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        seconds.append(time.perf_counter() - start)
    return 2.0 * n ** 3 / statistics.median(seconds) / 1e9


def model_flops(model_name: str) -> float:
    """FLOPs of one training sample through `model_name`: forward and backward (weight and input gradients
    as autograd runs them), counted by torch's FlopCounterMode on torch's own ops. The optimizer's
    elementwise update is not counted; neither side's roofline figure includes it."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    import torchstrategy as tf
    from torchstrategy._machinery.cpu_kernels import torch_ops_only

    rows = 8
    model = build_model(tf.keras, model_name)
    images = torch.zeros(rows, 32, 32, 3)
    with torch_ops_only(), FlopCounterMode(display=False) as counter:
        model(images).sum().backward()
    return counter.get_total_flops() / rows


def cpu_flags() -> str:
    """The avx512* and amx* flags `lscpu` reports for this CPU."""
    sys.path.insert(0, HERE)
    import _results

    model, flags = _results.lscpu()
    found = sorted(flag for flag in flags if flag.startswith(FLAG_PREFIXES))
    return f"{model}; avx512*/amx* flags: {', '.join(found) or 'none'}"


def _worker_env(config: str, threads: int, side: str) -> dict:
    env = {key: value for key, value in os.environ.items()
           if key not in {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                          "GROUP_RANK", "TF_CONFIG", "TORCHELASTIC_RUN_ID", "TORCHSTRATEGY_LAUNCHED",
                          "TORCHSTRATEGY_LAUNCHER_PID", "PYTHONPATH"}}
    env["PYTHONPATH"] = HERE if side == "tf" else ROOT + os.pathsep + HERE
    env["OMP_NUM_THREADS"] = "1" if (config == "mirrored" and side == "ts") else str(threads)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env["PYTHONUNBUFFERED"] = "1"
    return env


class _Worker:
    """One side of one config: its process (group), its command folder, and a numbered command channel."""

    def __init__(self, side: str, config: str, python: str, threads: int, job: str, batch: int) -> None:
        self.side, self.folder, self.number = side, os.path.join(job, f"{side}-{config}"), 0
        os.makedirs(self.folder)
        self.log_path = os.path.join(job, f"{side}-{config}.log")
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [python, os.path.abspath(__file__), "--role", side, "--config", config, "--threads", str(threads),
                 "--folder", self.folder, "--batch-size", str(batch)],
                env=_worker_env(config, threads, side), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)

    def _await(self, name: str, timeout: float) -> dict:
        path, deadline = os.path.join(self.folder, name), time.monotonic() + timeout
        while not os.path.exists(path):
            if self.process.poll() is not None:
                raise RuntimeError(f"the {SIDE_LABELS[self.side]} worker exited with {self.process.returncode} "
                                   f"before writing {name}; its log ends:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {SIDE_LABELS[self.side]} worker wrote no {name} in {timeout:.0f} s; "
                                   f"its log ends:\n{self.log_tail()}")
            time.sleep(POLL_SECONDS)
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)

    def ready(self, timeout: float) -> dict:
        return self._await("ready.json", timeout)

    def command(self, what: str, timeout: float) -> dict:
        with open(os.path.join(self.folder, f"cmd_{self.number}.tmp"), "w") as handle:
            handle.write(what)
        os.replace(os.path.join(self.folder, f"cmd_{self.number}.tmp"), os.path.join(self.folder, f"cmd_{self.number}"))
        self.number += 1
        return {} if what == "quit" else self._await(f"out_{self.number - 1}.json", timeout)

    def log_tail(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-25:])

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.command("quit", 0)
                self.process.wait(timeout=60)
            except (subprocess.TimeoutExpired, OSError):
                os.killpg(self.process.pid, 9)
                self.process.wait()


def run_config(config: str, pythons: dict, args: argparse.Namespace, job: str) -> dict:
    """Starts both sides of one config, times `rounds` interleaved runs each, then asks for the final scores."""
    workers = {side: _Worker(side, config, pythons[side], args.threads, job, args.batch_size) for side in SIDES}
    try:
        ready = {side: w.ready(args.timeout) for side, w in workers.items()}
        runs: dict[str, list[dict]] = {side: [] for side in SIDES}

        def contestant(side: str):
            def run() -> float:
                answer = workers[side].command("run", args.timeout)
                runs[side].append(answer)
                return answer["samples"] / answer["seconds"]
            return run

        import _results

        rates = _results.interleave({side: contestant(side) for side in SIDES}, args.rounds)
        final = {side: w.command("final", args.timeout) for side, w in workers.items()}
    finally:
        for w in workers.values():
            w.close()
    return {"rates": rates, "ready": ready, "final": final, "runs": runs}


def _fmt_rate(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def roofline(config: str, rate: float, flops: dict, peaks: dict) -> tuple[float, float]:
    """(achieved GFLOP/s, fraction of the config's precision's matmul peak) at `rate` samples/s."""
    achieved = flops[MODEL_OF[config]] * rate / 1e9
    peak = statistics.median(peaks["bfloat16" if config in BF16_CONFIGS else "float32"])
    return achieved, achieved / peak


def report(results: dict, args: argparse.Namespace, flags: str, seconds: float, flops: dict, peaks: dict) -> str:
    """The RESULTS.md section: one row per (config, side), each with its GFLOP/s against the roofline."""
    import _results

    tf_fp32 = statistics.median(results["fp32"]["rates"]["tf"]) if "fp32" in results else None
    rows, ratios = [], {}
    for config, result in results.items():
        rates = result["rates"]
        paired = statistics.median([ts / tf for ts, tf in zip(rates["ts"], rates["tf"])])
        ratios[config] = paired
        for side in SIDES:
            median = statistics.median(rates[side])
            achieved, fraction = roofline(config, median, flops, peaks)
            rows.append([CONFIG_LABELS[config], SIDE_LABELS[side], _fmt_rate(rates[side]),
                         f"{achieved:.0f}", f"{100 * fraction:.0f}%",
                         f"{median / tf_fp32:.2f}" if tf_fp32 and MODEL_OF[config] == "seed" else "-",
                         "1.00" if side == "tf" else f"**{paired:.2f}**",
                         f"{result['ready'][side]['loss_before']:.5f}",
                         f"{result['final'][side]['loss']:.4f}", f"{result['final'][side]['accuracy']:.4f}"])
    trained = (1 + args.rounds) * args.steps
    body = (f"Seed CIFAR-10 CNN (benchmarks/fit_overhead.py `seed_cnn`) in configs a-c; d and h are three blocks "
            f"of Conv2D(same) -> BatchNormalization -> ReLU -> MaxPooling2D (32/64/128 filters) and a Dense(10), e "
            f"and i a Flatten -> Dense(512, relu) -> Dense(256, relu) -> Dense(10) MLP, f and g the one-conv CNN "
            f"Conv2D(64, 3, relu) -> MaxPooling2D -> Flatten -> Dense(128, relu) -> Dense(10): each built by one "
            f"function from "
            f"TF's tf.keras and from torchstrategy's (layer for layer the same), both "
            f"starting from torchstrategy's initial weights (get_weights() -> set_weights()), 'adam', "
            f"SparseCategoricalCrossentropy(from_logits=True), global batch {args.batch_size}, the same "
            f"synthetic CIFAR-shaped data (benchmarks/_results.py synthetic_cifar, {args.batch_size * args.steps} "
            f"rows) fed as `from_tensor_slices -> batch -> prefetch` without shuffling, so both sides see the same "
            f"batches in the same order. Each side is one long-lived worker per config; after one warm-up epoch, "
            f"{args.rounds} interleaved rounds of one timed fit() epoch of {args.steps} steps each (who goes first "
            f"alternates). One process: {args.threads} intra-op (and TF inter-op) threads each; 2 replicas: "
            f"torchstrategy MirroredStrategy([\"/cpu:0\", \"/cpu:1\"]) = 2 gloo processes x 1 thread, TF "
            f"MirroredStrategy over 2 logical CPUs (set_logical_device_configuration) in one process with "
            f"{args.threads} threads. samples/s are medians over rounds (min-max); 'vs TF fp32' is a ratio of medians, "
            f"'vs same-config TF' the median of per-round ratios. 'loss before' is evaluate() on the first batch "
            f"before training (equal weights give equal losses); final loss/accuracy are evaluate() over the "
            f"training data after the warm-up and timed epochs ({trained} steps on each side). TF "
            f"{TF_VERSION} (tensorflow-cpu, Keras 3, its own venv). CPU: {flags}. Machine: {_results.machine()}. "
            f"Total benchmark time {seconds:.0f} s.\n\n"
            + f"Roofline: a {PEAK_MATMUL_SIZE}x{PEAK_MATMUL_SIZE} torch.mm on {args.threads} threads, measured before "
              f"and after the configs in this run: "
            + ", ".join(f"{dtype} {statistics.median(values):.0f} GFLOP/s ({' / '.join(f'{v:.0f}' for v in values)})"
                        for dtype, values in peaks.items())
            + ". FLOPs per training sample (forward + backward, torch's FlopCounterMode on the torch-ops model): "
            + ", ".join(f"{name} {value / 1e6:.1f} MFLOP" for name, value in flops.items())
            + "; GFLOP/s = that x samples/s, and 'of roofline' divides it by the matmul peak of the config's "
              "precision (bfloat16 for mixed_bfloat16).\n\n"
            + _results.table(["config", "trainer", "samples/s median (min-max)", "GFLOP/s", "of roofline",
                              "vs TF fp32", "vs same-config TF",
                              "loss before", "final loss", "final accuracy"], rows)
            + "\n\ntorchstrategy / TF (same config): "
            + ", ".join(f"{config} {ratio:.2f}x" for config, ratio in ratios.items())
            + ". Per-round samples/s: "
            + "; ".join(f"{config} {side} {[round(r) for r in result['rates'][side]]}"
                        for config, result in results.items() for side in SIDES))
    return body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved timed runs per side and config")
    parser.add_argument("--steps", type=int, default=20, help="training steps (batches) per timed fit() epoch")
    parser.add_argument("--batch-size", type=int, default=256, help="global batch size")
    parser.add_argument("--threads", type=int, default=2, help="intra-op threads of each one-process worker")
    parser.add_argument("--configs", default=",".join(DEFAULT_CONFIGS), help=f"comma-separated subset of {','.join(CONFIGS)}")
    parser.add_argument("--tf-venv", default=os.environ.get("TORCHSTRATEGY_TF_VENV") or DEFAULT_TF_VENV,
                        help=f"venv with tensorflow-cpu=={TF_VERSION}, made if missing (default: "
                             f"$TORCHSTRATEGY_TF_VENV, else {DEFAULT_TF_VENV})")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a worker may take for one answer")
    parser.add_argument("--no-write", action="store_true", help="print the table only; leave RESULTS.md alone")
    parser.add_argument("--role", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--config", choices=CONFIGS, help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role:
        worker(args.role, args.config, args.threads, args.folder, args.batch_size)
        return
    configs = [name.strip() for name in args.configs.split(",") if name.strip()]
    unknown = [name for name in configs if name not in CONFIGS]
    if unknown or not configs:
        parser.error(f"--configs takes a comma-separated subset of {','.join(CONFIGS)}; got {args.configs!r}")
    if min(args.rounds, args.steps, args.batch_size, args.threads) < 1:
        parser.error("--rounds, --steps, --batch-size and --threads must all be at least 1")
    if "mirrored" in configs and args.batch_size % 2:
        parser.error(f"--batch-size {args.batch_size} does not split over 2 replicas: pass an even one")

    start = time.perf_counter()
    flags = cpu_flags()
    print("CPU:", flags, flush=True)
    pythons = {"tf": tf_python(args.tf_venv), "ts": sys.executable}
    sys.path.insert(0, HERE)
    import _results
    import numpy as np
    import torchstrategy as tf

    job = tempfile.mkdtemp(prefix="vs_tensorflow-")
    images, labels = _results.synthetic_cifar(args.batch_size * args.steps)
    np.savez(os.path.join(job, "data.npz"), images=images, labels=labels)
    for model_name in sorted({MODEL_OF[config] for config in configs}):
        tf.random.set_seed(0)
        weights = build_model(tf.keras, model_name).get_weights()
        np.savez(os.path.join(job, f"weights_{model_name}.npz"), **{f"w{index}": w for index, w in enumerate(weights)})
    flops = {name: model_flops(name) for name in sorted({MODEL_OF[config] for config in configs})}
    peaks = {dtype: [matmul_peak(dtype, args.threads)] for dtype in ("float32", "bfloat16")}
    print("matmul roofline (GFLOP/s): " + ", ".join(f"{d} {v[0]:.0f}" for d, v in peaks.items()), flush=True)
    results = {}
    try:
        for config in configs:
            print(f"{CONFIG_LABELS[config]}: starting both sides...", flush=True)
            results[config] = run_config(config, pythons, args, job)
            rates = results[config]["rates"]
            print("  " + ", ".join(f"{SIDE_LABELS[s]} {_fmt_rate(rates[s])} samples/s" for s in SIDES), flush=True)
    except RuntimeError as error:
        raise SystemExit(f"{error}\n(worker logs are in {job})") from None
    shutil.rmtree(job, ignore_errors=True)
    for dtype in peaks:  # again after the configs: the roofline is the median of the two readings
        peaks[dtype].append(matmul_peak(dtype, args.threads))
    body = report(results, args, flags, time.perf_counter() - start, flops, peaks)
    print(body)
    if not args.no_write:
        _results.write_section("vs_tensorflow.py: torchstrategy fit() vs TensorFlow 2.21 Keras fit(), CPU", body)


if __name__ == "__main__":
    main()
