"""ParameterServerStrategy side by side with TensorFlow 2.21's (1 and 2 workers, one ps task, a straggler), where
the time of one closure goes, and synchronous MultiWorkerMirroredStrategy for reference; all on 127.0.0.1.

    python benchmarks/parameter_server.py [--steps 24] [--rounds 7] [--tf-venv DIR] [--no-sync] [--no-write]

Every cluster task is a process of its own started from TF_CONFIG (1 intra-op thread each). For each worker count,
torchstrategy's job and TF's job (TF in its own venv: --tf-venv, else $TORCHSTRATEGY_TF_VENV, as
benchmarks/vs_tensorflow.py finds it) are both started, then timed in interleaved rounds, each run started by a
line on the chief's stdin. The straggler is made the same way on both sides: the benchmark stops worker:1 with
SIGSTOP for a share of every 30 ms (SIGCONT for the rest), so it gets 1 / (1 + slow factor) of the time.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _ps_timers import install_timers, read_timers  # noqa: E402  (imports no torch itself)

BATCH = 64  # per worker (async) and per replica (sync)
ROWS = 512  # synthetic CIFAR-shaped rows each task cycles through
THROTTLE_PERIOD = 0.03  # seconds: the straggler is stopped for a share of each period


# ----- the cluster tasks (each runs in its own process) -------------------------------------------
def _setup_model(strategy, data: str):
    import numpy as np
    import torch
    from vs_tensorflow import build_model

    import torchstrategy as tf

    torch.set_num_threads(1)
    saved, arrays = np.load(os.path.join(data, "weights_seed.npz")), np.load(os.path.join(data, "data.npz"))
    with strategy.scope():
        model = build_model(tf.keras, "seed")
        model.set_weights([saved[f"w{index}"] for index in range(len(saved.files))])
        optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                reduction=tf.keras.losses.Reduction.NONE)

    def replica_fn(x, y):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_object(y, model(x, training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return (arrays["images"], arrays["labels"]), replica_fn


def _commands():
    """The modes the benchmark sends ('run 0': steps, 'run 2': empty closures, 3/4: the same, timed inside),
    until 'quit'."""
    for line in sys.stdin:
        if line.strip() == "quit":
            return
        yield int(line.split()[1])


def _report(value: dict) -> None:
    print("RESULT " + json.dumps(value), flush=True)


def serve_task() -> None:
    """A worker or ps task named by TF_CONFIG: serves until the coordinator ends the job."""
    import torch

    import torchstrategy as tf

    torch.set_num_threads(1)
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type, task_index=resolver.task_id,
                                  protocol=resolver.rpc_layer or "grpc", start=True)
    server.join()


def _timers_on_worker(reset: bool) -> dict:
    """Runs on a worker (a closure): installs the timers there once, returns them (and resets them)."""
    main = sys.modules["__main__"]
    main.install_timers("worker")
    return main.read_timers(reset)


def ps_coordinator(steps: int, data: str) -> None:
    """The chief of a parameter-server job: per command, schedules `steps` closures, joins, reports."""
    import collections

    import torchstrategy as tf

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    (images, labels), replica_fn = _setup_model(strategy, data)

    def dataset_fn(input_context):
        batch = input_context.get_per_replica_batch_size(BATCH)
        return tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(ROWS).repeat().batch(batch)

    def per_worker_dataset_fn():
        return strategy.distribute_datasets_from_function(dataset_fn)

    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))

    def step_fn(iterator):
        x, y = next(iterator)
        strategy.run(replica_fn, args=(x, y))
        return os.getpid()

    def empty_fn():  # a closure's round trip alone: no variable read, no update
        return os.getpid()

    for _ in range(2 * strategy.num_workers):  # warm-up: every worker reads the variables once
        coordinator.schedule(step_fn, args=(iterator,))
        coordinator.schedule(empty_fn)
    coordinator.join()
    print("READY", flush=True)
    transport = strategy.closure_cluster.transport
    for mode in _commands():
        profiled = mode in (3, 4)
        if profiled:  # timers everywhere, reset: the worker's (a closure), the ps task's, the coordinator's last
            coordinator.schedule(_timers_on_worker, args=(True,)).fetch()
            transport.call("ps:0", _timers_on_ps, (True,))
            install_timers("coordinator")
            read_timers(True)
        empty = mode in (2, 4)
        start = time.perf_counter()
        if empty:
            results = [coordinator.schedule(empty_fn) for _ in range(steps)]
        else:
            results = [coordinator.schedule(step_fn, args=(iterator,)) for _ in range(steps)]
        coordinator.join()
        seconds = time.perf_counter() - start
        by_pid = collections.Counter(int(r.fetch()) for r in results)
        report = {"seconds": seconds, "steps": steps, "samples": steps * (1 if empty else BATCH),
                  "by_pid": dict(by_pid)}
        if profiled:
            report["timers"] = {**read_timers(False), **coordinator.schedule(_timers_on_worker, args=(False,)).fetch(),
                                **transport.call("ps:0", _timers_on_ps, (False,))}
        _report(report)


def _timers_on_ps(reset: bool) -> dict:
    """Runs on the ps task (an RPC by name: every task runs this script): installs its timers, returns them."""
    install_timers("ps")
    return read_timers(reset)


def sync_replica(steps: int, data: str) -> None:
    """One replica of a MultiWorkerMirroredStrategy job from TF_CONFIG: per command, `steps` custom-loop steps."""
    import torchstrategy as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    replicas = strategy.num_replicas_in_sync
    (images, labels), replica_fn = _setup_model(strategy, data)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(ROWS).repeat().batch(BATCH * replicas)
    iterator = iter(strategy.experimental_distribute_dataset(dataset))

    def train(count: int) -> None:
        for _ in range(count):
            strategy.run(replica_fn, args=next(iterator))

    train(4)  # warm-up
    if strategy.extended.should_checkpoint:
        print("READY", flush=True)
    for _ in _commands():
        train(1)  # the first collective lines both replicas up after the command
        start = time.perf_counter()
        train(steps)
        seconds = time.perf_counter() - start
        if strategy.extended.should_checkpoint:
            _report({"seconds": seconds, "steps": steps, "samples": steps * BATCH * replicas, "replicas": replicas})


# ----- the benchmark (launches the jobs, times them) ----------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(config: dict, side: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                                                               "MASTER_PORT", "TF_CONFIG", "PYTHONPATH")}
    env["PYTHONPATH"] = HERE if side == "tf" else os.path.dirname(HERE) + os.pathsep + HERE
    env["OMP_NUM_THREADS"] = "1"
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env["PYTHONUNBUFFERED"] = "1"
    env["TF_CONFIG"] = json.dumps(config)
    return env


class _Job:
    """The processes of one cluster; `lead` reads commands and reports, `listeners` all that read commands."""

    def __init__(self, name: str, logs: str, python: str, script: str, servers_leave: bool = True) -> None:
        self.name, self.logs, self.python, self.script = name, logs, python, script
        self.servers_leave = servers_leave
        self.processes: dict[str, subprocess.Popen] = {}
        self.listeners: list[subprocess.Popen] = []
        self.lead: subprocess.Popen = None  # type: ignore[assignment]

    def start(self, task: str, args: list, config: dict, side: str, listens: bool, leads: bool) -> None:
        with open(os.path.join(self.logs, f"{self.name}-{task.replace(':', '')}.log"), "w") as log:
            process = subprocess.Popen(
                [self.python, self.script, *args], env=_env(config, side),
                stdin=subprocess.PIPE if listens else subprocess.DEVNULL,
                stdout=subprocess.PIPE if leads else subprocess.DEVNULL, stderr=log, text=True, start_new_session=True)
        self.processes[task] = process
        if listens:
            self.listeners.append(process)
        if leads:
            self.lead = process

    def _line(self, prefix: str) -> str:
        for line in self.lead.stdout:
            if line.startswith(prefix):
                return line[len(prefix):]
        raise RuntimeError(f"job {self.name} stopped before printing {prefix.strip()!r}:\n{self.log_tails()}")

    def wait_ready(self) -> None:
        self._line("READY")

    def run(self, mode: int) -> dict:
        for process in self.listeners:
            process.stdin.write(f"run {mode}\n")
            process.stdin.flush()
        return json.loads(self._line("RESULT "))

    def log_tails(self) -> str:
        text = ""
        for task in self.processes:
            with open(os.path.join(self.logs, f"{self.name}-{task.replace(':', '')}.log")) as handle:
                text += f"--- {self.name} {task}\n{handle.read()[-2500:]}\n"
        return text

    def stop(self) -> None:
        """Ends the job: 'quit' to the listeners; torchstrategy's tasks then leave by themselves, TF's servers
        (whose join() never returns) are killed once their chief is done."""
        for process in self.listeners:
            try:
                process.stdin.write("quit\n")
                process.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass
        deadline = time.time() + 30
        for process in [self.lead] + [p for p in self.processes.values() if p is not self.lead]:
            try:
                process.wait(timeout=max(0.1, deadline - time.time()) if self.servers_leave or process is self.lead
                             else 0.1)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _ps_job(side: str, name: str, workers: int, steps: int, logs: str, python: str, data: str) -> _Job:
    cluster = {"chief": [f"127.0.0.1:{_free_port()}"],
               "worker": [f"127.0.0.1:{_free_port()}" for _ in range(workers)],
               "ps": [f"127.0.0.1:{_free_port()}"]}
    script = __file__ if side == "ts" else os.path.join(HERE, "_tf_parameter_server.py")
    job = _Job(name, logs, python, os.path.abspath(script), servers_leave=side == "ts")
    for kind, index in [("ps", 0)] + [("worker", index) for index in range(workers)]:
        job.start(f"{kind}:{index}", ["--role", "task"], {"cluster": cluster, "task": {"type": kind, "index": index},
                                                          "rpc_layer": "grpc"}, side, listens=False, leads=False)
    job.start("chief:0", ["--role", "ps-chief" if side == "ts" else "chief", "--steps", str(steps), "--data", data],
              {"cluster": cluster, "task": {"type": "chief", "index": 0}, "rpc_layer": "grpc"}, side,
              listens=True, leads=True)
    return job


def _sync_job(steps: int, logs: str, data: str) -> _Job:
    cluster = {"chief": [f"127.0.0.1:{_free_port()}"], "worker": [f"127.0.0.1:{_free_port()}"]}
    job = _Job("sync", logs, sys.executable, os.path.abspath(__file__))
    for kind in ("chief", "worker"):
        job.start(f"{kind}:0", ["--role", "sync", "--steps", str(steps), "--data", data],
                  {"cluster": cluster, "task": {"type": kind, "index": 0}}, "ts", listens=True, leads=kind == "chief")
    return job


class _Throttle:
    """While active, the process `pid` runs only 1 / (1 + slow_factor) of every THROTTLE_PERIOD (SIGSTOP for
    the rest): a task on a machine that slow, whatever it does (compute, sending, waiting)."""

    def __init__(self, pid: int, slow_factor: float) -> None:
        self.pid, self.stopped = pid, THROTTLE_PERIOD * slow_factor / (1 + slow_factor)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._done.is_set():
            os.kill(self.pid, signal.SIGSTOP)
            time.sleep(self.stopped)
            os.kill(self.pid, signal.SIGCONT)
            self._done.wait(THROTTLE_PERIOD - self.stopped)

    def __enter__(self) -> "_Throttle":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        os.kill(self.pid, signal.SIGCONT)


def _kill_all(jobs: list) -> None:
    """The watchdog's last resort: jobs that hang are killed, so the benchmark fails instead of waiting."""
    for job in jobs:
        for process in job.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)


def _contestant(job: _Job, mode: int, reports: list, slow: Callable[[], object] = None) -> Callable[[], float]:
    """One timed run of `job` (mode 0: steps, 2: empty closures), under `slow()` (a throttle) when given: its
    samples/s (closures/s for empty ones); the report goes to `reports`."""
    def once() -> float:
        before = {task: _cpu_seconds(process.pid) for task, process in job.processes.items()}
        if slow is None:
            report = job.run(mode)
        else:
            with slow():
                report = job.run(mode)
        report["cpu"] = {task: _cpu_seconds(process.pid) - before[task] for task, process in job.processes.items()}
        reports.append(report)
        return report["samples"] / report["seconds"]

    return once


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _idle_cores(job: _Job, seconds: float) -> float:
    pids = [process.pid for process in job.processes.values()]
    before = sum(_cpu_seconds(pid) for pid in pids)
    time.sleep(seconds)
    return (sum(_cpu_seconds(pid) for pid in pids) - before) / seconds


def _machine_busy_seconds() -> float:
    """CPU time all cores of this machine spent busy so far (Linux /proc/stat, every process)."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def _write_inputs(data: str) -> None:
    """The data and the seed CNN's initial weights both sides load (torchstrategy's get_weights())."""
    import _results
    import numpy as np
    from vs_tensorflow import build_model

    import torchstrategy as tf

    images, labels = _results.synthetic_cifar(ROWS)
    np.savez(os.path.join(data, "data.npz"), images=images, labels=labels)
    tf.random.set_seed(0)
    weights = build_model(tf.keras, "seed").get_weights()
    np.savez(os.path.join(data, "weights_seed.npz"), **{f"w{index}": w for index, w in enumerate(weights)})


def run_pair(workers: int, args: argparse.Namespace, pythons: dict, logs: str, data: str, out: dict) -> None:
    """torchstrategy's and TF's job with `workers` workers, alive together, timed in interleaved rounds."""
    import _results

    jobs = {side: _ps_job(side, f"{side}{workers}", workers, args.steps, logs, pythons[side], data)
            for side in ("ts", "tf")}
    watchdog = threading.Timer(args.timeout, _kill_all, args=(list(jobs.values()),))
    watchdog.daemon = True
    watchdog.start()
    try:
        begun = time.perf_counter()
        for job in jobs.values():
            job.wait_ready()
        out["setup"][workers] = time.perf_counter() - begun
        out["pids"].update({f"{side}{workers}": {task: process.pid for task, process in job.processes.items()}
                            for side, job in jobs.items()})
        out["idle"].update({f"{side}{workers}": _idle_cores(job, 3.0) for side, job in jobs.items()})
        runs = {}
        for side, job in jobs.items():
            runs[f"{side}_empty_{workers}w"] = _contestant(job, 2, out["reports"].setdefault(f"{side}_empty_{workers}w", []))
            runs[f"{side}_step_{workers}w"] = _contestant(job, 0, out["reports"].setdefault(f"{side}_step_{workers}w", []))
            if workers == 2:
                pid = job.processes["worker:1"].pid
                runs[f"{side}_slow_2w"] = _contestant(job, 0, out["reports"].setdefault(f"{side}_slow_2w", []),
                                                      lambda pid=pid: _Throttle(pid, args.slow_factor))
        for name, once in runs.items():  # warm-up, not counted
            once()
            out["reports"][name].clear()
        busy, begun = _machine_busy_seconds(), time.perf_counter()
        ours = [os.getpid()] + [p.pid for job in jobs.values() for p in job.processes.values()]
        mine = sum(_cpu_seconds(pid) for pid in ours)
        out["rates"].update(_results.interleave(runs, args.rounds))
        out["background"][workers] = ((_machine_busy_seconds() - busy) - (sum(_cpu_seconds(pid) for pid in ours) - mine)
                                      ) / (time.perf_counter() - begun)
        if workers == 1:  # where one closure's time goes: timers in every torchstrategy task, after the timed rounds
            out["profile"] = {"step": [jobs["ts"].run(3) for _ in range(3)], "empty": [jobs["ts"].run(4) for _ in range(3)]}
    except BaseException:
        for job in jobs.values():
            print(job.log_tails(), file=sys.stderr)
        raise
    finally:
        for job in jobs.values():
            job.stop()
        watchdog.cancel()


def run_sync(args: argparse.Namespace, logs: str, data: str, out: dict) -> None:
    import _results

    job = _sync_job(args.steps, logs, data)
    watchdog = threading.Timer(args.timeout, _kill_all, args=([job],))
    watchdog.daemon = True
    watchdog.start()
    try:
        job.wait_ready()
        pid = job.processes["worker:0"].pid
        runs = {"sync_2r": _contestant(job, 0, out["reports"].setdefault("sync_2r", [])),
                "sync_2r_slow": _contestant(job, 0, out["reports"].setdefault("sync_2r_slow", []),
                                            lambda: _Throttle(pid, args.slow_factor))}
        for name, once in runs.items():
            once()
            out["reports"][name].clear()
        out["rates"].update(_results.interleave(runs, args.rounds))
    except BaseException:
        print(job.log_tails(), file=sys.stderr)
        raise
    finally:
        job.stop()
        watchdog.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=24, help="closures (or sync steps) per timed run")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--slow-factor", type=float, default=1.0,
                        help="the straggler is stopped this many times as long as it runs (1.0: half speed)")
    parser.add_argument("--tf-venv", default=None, help="venv with tensorflow-cpu==2.21.0 (default: "
                        "$TORCHSTRATEGY_TF_VENV, else vs_tensorflow.py's default)")
    parser.add_argument("--no-sync", action="store_true", help="skip the MultiWorkerMirroredStrategy reference")
    parser.add_argument("--no-write", action="store_true", help="print the section only; leave RESULTS.md alone")
    parser.add_argument("--timeout", type=float, default=900, help="seconds one pair of jobs may take in all")
    parser.add_argument("--role", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--data", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "task":
        return serve_task()
    if args.role == "ps-chief":
        return ps_coordinator(args.steps, args.data)
    if args.role == "sync":
        return sync_replica(args.steps, args.data)
    if min(args.steps, args.rounds) < 1 or args.slow_factor <= 0:
        parser.error("--steps and --rounds must be at least 1 and --slow-factor above 0")

    import vs_tensorflow
    from _ps_report import write_report

    started = time.perf_counter()
    venv = args.tf_venv or os.environ.get("TORCHSTRATEGY_TF_VENV") or vs_tensorflow.DEFAULT_TF_VENV
    pythons = {"ts": sys.executable, "tf": vs_tensorflow.tf_python(venv)}
    out: dict = {"rates": {}, "reports": {}, "idle": {}, "setup": {}, "background": {}, "pids": {}}
    with tempfile.TemporaryDirectory(prefix="ps-bench-") as logs:
        _write_inputs(logs)
        for workers in (1, 2):
            print(f"{workers} worker(s): torchstrategy and TF jobs...", flush=True)
            run_pair(workers, args, pythons, logs, logs, out)
        if not args.no_sync:
            print("MultiWorkerMirroredStrategy reference...", flush=True)
            run_sync(args, logs, logs, out)
    write_report(out, args, vs_tensorflow.cpu_flags(), time.perf_counter() - started, BATCH, not args.no_write)


if __name__ == "__main__":
    main()
