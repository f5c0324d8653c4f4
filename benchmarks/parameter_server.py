"""ParameterServerStrategy's asynchronous training speed (1 and 2 workers, one ps task) against synchronous
MultiWorkerMirroredStrategy in 2 processes, with and without a worker slowed 2x, all on 127.0.0.1.

    python benchmarks/parameter_server.py [--steps 24] [--rounds 7]

Every cluster task is a process of its own started from TF_CONFIG (1 intra-op thread each). The three jobs
run one after the other; within a job, runs with and without the straggler alternate (interleaved rounds),
each started by a line on the job's stdin.
Only the slow task gets SLOW_FACTOR in its environment: after each step it sleeps SLOW_FACTOR times as
long as that step took, when the round asks for a straggler.
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

BATCH = 64  # per worker (async) and per replica (sync)
ROWS = 512  # synthetic CIFAR-shaped rows each task cycles through


# ----- the cluster tasks (each runs in its own process) -------------------------------------------
def _setup_model(strategy):
    import _results
    import torch
    from fit_overhead import seed_cnn

    import torchstrategy as tf

    torch.set_num_threads(1)
    tf.random.set_seed(0)
    with strategy.scope():
        model = seed_cnn()
        optimizer = tf.keras.optimizers.Adam(1e-3)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                reduction=tf.keras.losses.Reduction.NONE)

    def replica_fn(x, y):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_object(y, model(x, training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return _results.synthetic_cifar(ROWS), replica_fn


def _commands():
    """The lines the benchmark sends: 'run 0' / 'run 1' / 'run 2' (1: with the straggler, 2: empty closures
    instead of steps), then 'quit'."""
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


def ps_coordinator(steps: int) -> None:
    """The chief of a parameter-server job: per command, schedules `steps` closures, joins, reports."""
    import collections

    import torchstrategy as tf

    strategy = tf.distribute.ParameterServerStrategy(tf.distribute.cluster_resolver.TFConfigClusterResolver())
    (images, labels), replica_fn = _setup_model(strategy)

    def dataset_fn(input_context):
        batch = input_context.get_per_replica_batch_size(BATCH)
        return tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(ROWS).repeat().batch(batch)

    def per_worker_dataset_fn():
        return strategy.distribute_datasets_from_function(dataset_fn)

    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))

    def step_fn(iterator, straggle):
        # runs on a worker: only the slow one has SLOW_FACTOR, so only it sleeps
        start = time.perf_counter()
        x, y = next(iterator)
        strategy.run(replica_fn, args=(x, y))
        if straggle:
            time.sleep(float(os.environ.get("SLOW_FACTOR", "0")) * (time.perf_counter() - start))
        return os.getpid()

    for _ in range(2 * strategy.num_workers):  # warm-up: every worker reads the variables once
        coordinator.schedule(step_fn, args=(iterator, False))
    coordinator.join()
    print("READY", flush=True)
    def empty_fn():  # a closure's round trip alone: no variable read, no update
        return os.getpid()

    for mode in _commands():
        start = time.perf_counter()
        if mode == 2:
            results = [coordinator.schedule(empty_fn) for _ in range(steps)]
        else:
            results = [coordinator.schedule(step_fn, args=(iterator, mode == 1)) for _ in range(steps)]
        coordinator.join()
        seconds = time.perf_counter() - start
        by_pid = collections.Counter(int(r.fetch()) for r in results)
        _report({"seconds": seconds, "steps": steps, "samples": steps * (1 if mode == 2 else BATCH),
                 "by_pid": dict(by_pid)})


def sync_replica(steps: int) -> None:
    """One replica of a MultiWorkerMirroredStrategy job from TF_CONFIG: per command, `steps` custom-loop steps."""
    import torchstrategy as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    replicas = strategy.num_replicas_in_sync
    (images, labels), replica_fn = _setup_model(strategy)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(ROWS).repeat().batch(BATCH * replicas)
    iterator = iter(strategy.experimental_distribute_dataset(dataset))
    slow_factor = float(os.environ.get("SLOW_FACTOR", "0"))  # set for the slow replica only

    def train(count: int, straggle: bool) -> None:
        for _ in range(count):
            start = time.perf_counter()
            strategy.run(replica_fn, args=next(iterator))
            if straggle and slow_factor:
                time.sleep(slow_factor * (time.perf_counter() - start))

    train(4, False)  # warm-up
    if strategy.extended.should_checkpoint:
        print("READY", flush=True)
    for mode in _commands():
        straggle = mode == 1
        train(1, straggle)  # the first collective lines both replicas up after the command
        start = time.perf_counter()
        train(steps, straggle)
        seconds = time.perf_counter() - start
        if strategy.extended.should_checkpoint:
            _report({"seconds": seconds, "steps": steps, "samples": steps * BATCH * replicas, "replicas": replicas})


# ----- the benchmark (launches the jobs, times them in turn) --------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(config: dict, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                                                               "MASTER_PORT", "TF_CONFIG", "SLOW_FACTOR")}
    env["PYTHONPATH"] = os.path.dirname(HERE) + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env["TF_CONFIG"] = json.dumps(config)
    env.update(extra)
    return env


class _Job:
    """The processes of one cluster; `lead` is the one that reads commands and reports, `listeners` all
    that read commands."""

    def __init__(self, name: str, logs: str) -> None:
        self.name, self.logs = name, logs
        self.processes: dict[str, subprocess.Popen] = {}
        self.listeners: list[subprocess.Popen] = []
        self.lead: subprocess.Popen = None  # type: ignore[assignment]

    def start(self, task: str, role: str, config: dict, steps: int, listens: bool, leads: bool, **extra: str) -> None:
        with open(os.path.join(self.logs, f"{self.name}-{task.replace(':', '')}.log"), "w") as log:
            process = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--role", role, "--steps", str(steps)],
                env=_env(config, **extra), stdin=subprocess.PIPE if listens else subprocess.DEVNULL,
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
        for process in self.listeners:
            try:
                process.stdin.write("quit\n")
                process.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass
        deadline = time.time() + 30
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _ps_job(name: str, workers: int, steps: int, slow_factor: float, logs: str) -> _Job:
    cluster = {"chief": [f"127.0.0.1:{_free_port()}"],
               "worker": [f"127.0.0.1:{_free_port()}" for _ in range(workers)],
               "ps": [f"127.0.0.1:{_free_port()}"]}
    job = _Job(name, logs)
    tasks = [("ps", 0)] + [("worker", index) for index in range(workers)]
    for kind, index in tasks:
        # the last worker of a 2-worker job is the one that can be slowed
        extra = {"SLOW_FACTOR": str(slow_factor)} if kind == "worker" and workers > 1 and index == workers - 1 else {}
        job.start(f"{kind}:{index}", "task", {"cluster": cluster, "task": {"type": kind, "index": index},
                                              "rpc_layer": "grpc"}, steps, listens=False, leads=False, **extra)
    job.start("chief:0", "ps-chief", {"cluster": cluster, "task": {"type": "chief", "index": 0}, "rpc_layer": "grpc"},
              steps, listens=True, leads=True)
    return job


def _sync_job(name: str, steps: int, slow_factor: float, logs: str) -> _Job:
    cluster = {"chief": [f"127.0.0.1:{_free_port()}"], "worker": [f"127.0.0.1:{_free_port()}"]}
    job = _Job(name, logs)
    job.start("chief:0", "sync", {"cluster": cluster, "task": {"type": "chief", "index": 0}}, steps,
              listens=True, leads=True)
    job.start("worker:0", "sync", {"cluster": cluster, "task": {"type": "worker", "index": 0}}, steps,
              listens=True, leads=False, SLOW_FACTOR=str(slow_factor))
    return job


IDLE_SECONDS = 3.0


def _kill_all(job: _Job) -> None:
    """The watchdog's last resort: a job that hangs is killed, so the benchmark fails instead of waiting."""
    for process in job.processes.values():
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def _contestant(job: _Job, mode: int, reports: list) -> Callable[[], float]:
    """One timed run of `job` (0: steps, 1: steps with the straggler, 2: empty closures): its samples/s
    (closures/s for empty ones); the report goes to `reports`."""
    def once() -> float:
        report = job.run(mode)
        reports.append(report)
        return report["samples"] / report["seconds"]

    return once


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _machine_busy_seconds() -> float:
    """CPU time all cores of this machine spent busy so far (Linux /proc/stat, every process)."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def _cpu_model() -> str:
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return "lscpu not available"
    return next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Model name")), "?")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=24, help="steps (closures, or sync steps) per timed run")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--slow-factor", type=float, default=1.0,
                        help="the straggler sleeps this many times its step's time after each step (1.0: 2x slower)")
    parser.add_argument("--role", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "task":
        return serve_task()
    if args.role == "ps-chief":
        return ps_coordinator(args.steps)
    if args.role == "sync":
        return sync_replica(args.steps)

    import _results
    import torch

    started = time.perf_counter()
    logs = tempfile.mkdtemp(prefix="ps-bench-")
    # One job at a time: an idle task of a parameter-server job keeps a CPU busy (see idle_cpu below), so a
    # second job waiting side by side would slow the one being timed.
    plan = {"async1": (lambda: _ps_job("async1", 1, args.steps, args.slow_factor, logs),
                       {"async_1w": 0, "empty_1w": 2}),
            "async2": (lambda: _ps_job("async2", 2, args.steps, args.slow_factor, logs),
                       {"async_2w": 0, "async_2w_slow": 1}),
            "sync": (lambda: _sync_job("sync", args.steps, args.slow_factor, logs),
                     {"sync_2r": 0, "sync_2r_slow": 1})}
    reports: dict[str, list[dict]] = {}
    rates: dict[str, list[float]] = {}
    idle_cpu: dict[str, float] = {}
    pids: dict[str, dict[str, int]] = {}
    setup_seconds: dict[str, float] = {}
    background: dict[str, float] = {}
    for job_name, (make, contestants) in plan.items():
        begun = time.perf_counter()
        job = make()
        watchdog = threading.Timer(300, _kill_all, args=(job,))
        watchdog.daemon = True
        watchdog.start()
        try:
            job.wait_ready()
            setup_seconds[job_name] = time.perf_counter() - begun
            pids[job_name] = {task: process.pid for task, process in job.processes.items()}
            before = sum(_cpu_seconds(pid) for pid in pids[job_name].values())
            time.sleep(IDLE_SECONDS)
            idle_cpu[job_name] = (sum(_cpu_seconds(pid) for pid in pids[job_name].values()) - before) / IDLE_SECONDS

            runs = {name: _contestant(job, mode, reports.setdefault(name, []))
                    for name, mode in contestants.items()}
            for name, once in runs.items():  # warm-up, not counted
                once()
                reports[name].clear()
            ours = [os.getpid(), *pids[job_name].values()]
            busy, mine, begun = _machine_busy_seconds(), sum(_cpu_seconds(pid) for pid in ours), time.perf_counter()
            rates.update(_results.interleave(runs, args.rounds))
            # what other processes of the machine used meanwhile: the timings are only as good as this is small
            background[job_name] = ((_machine_busy_seconds() - busy) - (sum(_cpu_seconds(pid) for pid in ours) - mine)
                                    ) / (time.perf_counter() - begun)
        except BaseException:
            print(job.log_tails(), file=sys.stderr)
            raise
        finally:
            job.stop()
            watchdog.cancel()
    total_seconds = time.perf_counter() - started

    def per_round(top: str, bottom: str) -> float:  # same job, interleaved rounds
        return statistics.median(a / b for a, b in zip(rates[top], rates[bottom]))

    median = {name: statistics.median(values) for name, values in rates.items()}

    def across(top: str, bottom: str) -> float:  # different jobs, run one after the other
        return median[top] / median[bottom]

    def split(name: str) -> dict:
        counts = {task: 0 for task in pids["async2"] if task.startswith("worker")}
        for report in reports[name]:
            for pid, count in report["by_pid"].items():
                counts[next(t for t, p in pids["async2"].items() if p == int(pid))] += count
        return counts

    def show(counts: dict) -> str:
        total = sum(counts.values())
        return ", ".join(f"{task} {count} ({100 * count / total:.0f}%)" for task, count in counts.items())

    samples_per_step = {"async_1w": BATCH, "async_2w": BATCH, "async_2w_slow": BATCH, "sync_2r": 2 * BATCH,
                        "sync_2r_slow": 2 * BATCH}
    labels = {"async_1w": "ParameterServerStrategy, 1 worker + 1 ps (async)",
              "async_2w": "ParameterServerStrategy, 2 workers + 1 ps (async)",
              "async_2w_slow": "ParameterServerStrategy, 2 workers + 1 ps, worker:1 slowed 2x",
              "sync_2r": "MultiWorkerMirroredStrategy, 2 replicas (sync)",
              "sync_2r_slow": "MultiWorkerMirroredStrategy, 2 replicas, replica 1 slowed 2x"}
    job_of = {"async_1w": "async1", "async_2w": "async2", "async_2w_slow": "async2", "sync_2r": "sync",
              "sync_2r_slow": "sync"}
    rows = [[labels[name], str(len(pids[job_of[name]])), str(samples_per_step[name]),
             f"{median[name] / samples_per_step[name]:.2f}", f"{median[name]:,.0f}",
             f"{idle_cpu[job_of[name]]:.2f}"] for name in labels]
    scaling, async_sync = across("async_2w", "async_1w"), across("async_2w", "sync_2r")
    async_slow, sync_slow = per_round("async_2w_slow", "async_2w"), per_round("sync_2r_slow", "sync_2r")
    slow_vs = across("async_2w_slow", "sync_2r_slow")
    ratios = [["async scaling: 2 workers / 1 worker (separate jobs)", f"{scaling:.2f}"],
              ["async 2 workers / sync 2 replicas, no straggler (separate jobs)", f"{async_sync:.2f}"],
              ["async: with straggler / without (same job, per round)", f"{async_slow:.2f}"],
              ["sync: with straggler / without (same job, per round)", f"{sync_slow:.2f}"],
              ["async / sync, both with the straggler (separate jobs)", f"{slow_vs:.2f}"]]
    fast_share = split("async_2w_slow")
    fast_fraction = fast_share["worker:0"] / max(1, sum(fast_share.values()))
    idle_ps = max(idle_cpu["async1"], idle_cpu["async2"])
    reading = (
        "Reading: this machine has 2 cores, and the async jobs run 3 or 4 processes on them (coordinator, ps task, "
        + (f"workers), so a second worker cannot double the rate: 2 workers give {scaling:.2f}x one worker's "
           f"samples/s. " if scaling < 1.9 else
           f"workers), yet 2 workers give {scaling:.2f}x one worker's samples/s: the lone worker likely waits for "
           f"each round trip (variables from the ps task, the update applied there, the next closure from the "
           f"coordinator), and a second worker fills those gaps. ")
        + f"Idle, a parameter-server job uses {idle_ps:.2f} cores (its tasks talk over TCP only: TensorPipe's "
        f"shared-memory transport, which spins while it waits, is off) and the sync job's gloo processes "
        f"{idle_cpu['sync']:.2f}. "
        f"Synchronous MultiWorkerMirroredStrategy in 2 processes needs no ps task or coordinator and moves "
        f"{1 / async_sync:.2f}x the samples of the 2-worker async job without a straggler. With one task slowed "
        f"2x, sync falls to {sync_slow:.2f}x its rate (every step waits for the slow replica), async to "
        f"{async_slow:.2f}x, and the fast worker ran {100 * fast_fraction:.0f}% of the closures: the coordinator "
        f"keeps it busy instead of waiting. With whole cores per task the best each could keep is "
        f"{(1 + 1 / (1 + args.slow_factor)) / 2:.2f}x (async: the slow worker does half as much) and "
        f"{1 / (1 + args.slow_factor):.2f}x (sync). The straggler's sleep also frees a core for the others here, which "
        f"flatters both straggler rows compared with a cluster where every task has a machine of its own; these "
        f"2-core numbers say little about scaling on such a cluster.")
    machine = _results.machine().split(", torch")[0]
    body = (
        f"Seed CIFAR-10 CNN (benchmarks/fit_overhead.py `seed_cnn`), Keras Adam, batch {BATCH} per worker (async) "
        f"or per replica (sync, global batch {2 * BATCH}), synthetic CIFAR-shaped data. Every cluster task is a "
        f"process of its own started from TF_CONFIG on 127.0.0.1 with 1 intra-op thread. The three jobs run one "
        f"after the other (so that no job's processes share the cores with the timed one); in each, "
        f"{args.rounds} rounds of {args.steps} steps per contestant after a warm-up, the straggler and no-straggler "
        f"runs of a job interleaved. Async: the coordinator schedules {args.steps} closures (each a `strategy.run` "
        f"step over a per-worker dataset iterator, returning `os.getpid()`) and joins; sync: a custom loop of "
        f"`strategy.run` steps. The straggler sleeps {args.slow_factor:g}x its own step time after each step "
        f"(SLOW_FACTOR is in its environment only). samples/s are medians over rounds; ratios within a job are "
        f"medians of per-round ratios, across jobs ratios of medians. 'idle cores' is the CPU the job's processes "
        f"used, all together, in {IDLE_SECONDS:g} s with nothing scheduled. Machine: {machine} ({_cpu_model()}), "
        f"torch {torch.__version__}: **2 cores shared by up to 4 processes**.\n\n"
        + _results.table(["job", "processes", "samples/step", "steps/s", "samples/s", "idle cores"], rows)
        + "\n\n" + _results.table(["ratio (samples/s)", "value"], ratios)
        + f"\n\nClosures per worker over the timed rounds: without straggler {show(split('async_2w'))}; with worker:1 "
        f"slowed {show(fast_share)}.\n\n"
        f"Round trip of an empty closure (returns `os.getpid()`, touches no variable) on the 1-worker job: "
        f"{median['empty_1w']:.0f} closures/s, {1000 / median['empty_1w']:.1f} ms each, against "
        f"{1000 / (median['async_1w'] / BATCH):.1f} ms per training closure.\n\n" + reading + "\n\n"
        f"Per-round samples/s: {({name: [round(v) for v in values] for name, values in rates.items()})}. Setup "
        f"(starting a job's processes, first steps): "
        f"{', '.join(f'{name} {seconds:.0f} s' for name, seconds in setup_seconds.items())}; other processes "
        f"of the machine used {', '.join(f'{name} {cores:.2f}' for name, cores in background.items())} cores "
        f"during the timed rounds; "
        f"whole benchmark {total_seconds:.0f} s.")
    print(body)
    _results.write_section("parameter_server.py: async ParameterServerStrategy vs sync MultiWorkerMirroredStrategy",
                           body)


if __name__ == "__main__":
    main()
