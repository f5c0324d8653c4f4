"""Shared by the benchmark scripts: interleaved timing rounds, a printed table, and one
section per benchmark in benchmarks/RESULTS.md (rewritten in place, atomically)."""
from __future__ import annotations

import os
import platform
import statistics
import tempfile
import time
from typing import Callable

import torch

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")


def machine() -> str:
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, {gpu}, "
            f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads")


def lscpu() -> tuple:
    """(CPU model name, set of CPU flags) from `lscpu`; ('lscpu not available', empty set) without it."""
    import subprocess

    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return "lscpu not available", set()
    model = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Model name")), "?")
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("Flags")), [])
    return model, set(flags)


def synthetic_cifar(rows: int) -> tuple:
    """CIFAR-shaped float images in [0, 1] and uint8 labels (N, 1), the same for every benchmark."""
    import numpy as np

    rng = np.random.default_rng(0)
    images = (rng.integers(0, 256, (rows, 32, 32, 3), dtype=np.uint8) / 255.0).astype(np.float32)
    return images, rng.integers(0, 10, (rows, 1)).astype(np.uint8)


def interleave(runs: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Calls each contestant once per round, rotating who goes first; returns their rates."""
    rates: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for index in range(rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            rates[name].append(runs[name]())
    return rates


def timed(fn: Callable[[], int]) -> float:
    """Runs fn (which returns how many items it processed) and returns items per second."""
    start = time.perf_counter()
    count = fn()
    return count / (time.perf_counter() - start)


def seconds_from_clean_disk(fn: Callable[[], object]) -> float:
    """Seconds `fn` takes, started after an untimed os.sync(): file benchmarks then begin each contestant with
    no dirty pages left behind by the one before."""
    os.sync()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median(values: list[float]) -> float:
    return statistics.median(values)


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_section(name: str, body: str, path: "str | None" = None) -> None:
    """Replaces the section `## name` of RESULTS.md (or of the file at `path`) with `body` (other sections stay)."""
    results = path or RESULTS
    sections: dict[str, str] = {}
    order: list[str] = []
    if os.path.exists(results):
        current = None
        with open(results, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("## "):
                    current = line[3:].strip()
                    order.append(current)
                    sections[current] = ""
                elif current is not None:
                    sections[current] += line
    if name not in sections:
        order.append(name)
    sections[name] = "\n" + body.strip() + "\n\n"
    text = "# Benchmark results\n\nWritten by the scripts in benchmarks/; each section by one script.\n\n"
    text += "".join(f"## {key}\n{sections[key]}" for key in order)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(results)), suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, results)


def print_result(value: object) -> None:
    """In a benchmark's worker process: hands `value` to `worker_result` in the parent (one JSON line)."""
    import json

    print("RESULT " + json.dumps(value), flush=True)


def worker_result(command: list, env: dict, timeout: float, what: str) -> object:
    """Runs a benchmark's worker process and returns what it passed to `print_result`; a worker that fails
    stops the benchmark with its output and `what` it was measuring."""
    import json
    import subprocess

    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise SystemExit(f"{what} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    line = next(line for line in run.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def child_env(threads: "str | None" = "1") -> dict:
    """This process's environment for a benchmark's child processes: without the launcher variables (rank,
    world size, master address and port, TF_CONFIG) that would join them to a job of ours, the repository
    first on PYTHONPATH, and OMP_NUM_THREADS=`threads` (None: the user's setting, else 1)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                                                               "MASTER_PORT", "TF_CONFIG")}
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.pathsep + env.get(
        "PYTHONPATH", "")
    if threads is None:
        env.setdefault("OMP_NUM_THREADS", "1")
    else:
        env["OMP_NUM_THREADS"] = threads
    return env
