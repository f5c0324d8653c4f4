"""Shared helpers for tests that run real processes: free loopback ports, and running Python
scripts (or torchrun) as subprocesses with one intra-op thread each and the repo importable, and
watching the processes they start (waiting for files, checking that no process is left)."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from typing import Callable, Iterable, Optional, Sequence, Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOOPBACK = "127.0.0.1"

#: Script text for resume tests (needs np, torch, tf and N defined): N samples whose labels carry their id
#: (id * 10 + class), a loss that decodes the class, and a metric counting how often each sample trained.
SAMPLE_COUNTING_SCRIPT = '''rng = np.random.default_rng(0)
x = rng.random((N, 6)).astype(np.float32)
y = (np.arange(N) * 10 + rng.integers(0, 3, N)).astype(np.int64).reshape(-1, 1)  # sample id * 10 + label


class DecodedLoss(tf.keras.losses.Loss):
    def call(self, y_true, y_pred):
        labels = torch.as_tensor(y_true).long() % 10
        return tf.keras.losses.sparse_categorical_crossentropy(labels, y_pred, from_logits=True)


class Visits(tf.keras.metrics.Metric):
    # how often each sample was trained in this epoch (max and min over samples)
    def __init__(self, name, pick):
        super().__init__(name=name)
        self.pick = pick
        self.counts = self.add_weight(name="counts", shape=(N,))

    def update_state(self, y_true, y_pred, sample_weight=None):
        ids = torch.as_tensor(y_true).long().reshape(-1) // 10
        self.counts.index_add_(0, ids, torch.ones(len(ids)))

    def result(self):
        return self.counts.max() if self.pick == "max" else self.counts.min()
'''


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def clean_env(**extra: str) -> dict:
    """The test's environment minus any cluster variables, one thread per process, repo on the path."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                          "GROUP_RANK", "TF_CONFIG", "TORCHELASTIC_RUN_ID", "TORCHSTRATEGY_LAUNCHED",
                          "TORCHSTRATEGY_LAUNCHER_PID"}
           and not key.startswith("SLURM_")}
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def write_script(directory: str, source: str, name: str = "train.py") -> str:
    """Writes a dedented Python script into `directory` and returns its path."""
    path = os.path.join(str(directory), name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(source))
    return path


def run_python(args: Sequence[str], env: Optional[dict] = None, timeout: float = 120,
               cwd: Optional[str] = None) -> subprocess.CompletedProcess:
    """`python ARGS...` in a fresh process group; output captured as text. On timeout the whole group
    (replicas, torchrun's workers) is killed before TimeoutExpired is raised, so nothing outlives the test."""
    process = subprocess.Popen([sys.executable, *args], env=env or clean_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=cwd, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def run_torchrun(torchrun_args: Sequence[str], script_args: Sequence[str], env: Optional[dict] = None,
                 timeout: float = 180, cwd: Optional[str] = None) -> subprocess.CompletedProcess:
    """`python -m torch.distributed.run TORCHRUN_ARGS... SCRIPT_ARGS...` (the torchrun entry point)."""
    return run_python(["-m", "torch.distributed.run", *torchrun_args, *script_args], env=env, timeout=timeout, cwd=cwd)


def read_json_lines(path: str) -> list:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_json(path) -> object:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def start_python(args: Sequence[str], env: Optional[dict] = None, cwd: Optional[str] = None) -> subprocess.Popen:
    """`python ARGS...` started in its own session (so it and its children form one process group whose
    id is the Popen's pid, like a terminal's foreground job); stdout/stderr are text pipes. SIGINT gets
    its default action back, as in a terminal (a shell's background job would pass on "ignored")."""
    return subprocess.Popen([sys.executable, *args], env=env or clean_env(), cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_default_sigint)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def kill_process_group(process: subprocess.Popen) -> None:
    """SIGKILL to everything left in the group that `start_python` made (test cleanup); reaps the leader."""
    try:
        os.killpg(process.pid, 9)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.communicate(timeout=10)
    except (subprocess.TimeoutExpired, ValueError):
        pass


def process_alive(pid: int) -> bool:
    """True while `pid` is a running process; a zombie (exited, not yet reaped) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_until(condition: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Polls `condition` until it is true (returns True) or `timeout` seconds pass (returns False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


def wait_for_files(paths: Iterable[str], timeout: float) -> bool:
    paths = list(paths)
    return wait_until(lambda: all(os.path.exists(path) for path in paths), timeout)



@contextlib.contextmanager
def process_group(command: Sequence[str], env: Optional[dict] = None) -> Iterator[subprocess.Popen]:
    """Starts `command` in its own process group (text pipes); whatever is left of the group when the
    block ends (a timeout, a failed assertion) is killed, so no test leaves processes behind."""
    process = subprocess.Popen(list(command), env=env or clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        yield process
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()


def run_replica_reports(tmp_path, source: str, replicas: int, report: str = "report_{rank}.json",
                        timeout: float = 240) -> list:
    """Runs `source` as `python SCRIPT OUT_DIR REPLICAS` (a script that starts its own replicas) and returns
    each rank's JSON report, read from OUT_DIR/`report` with {rank} filled in; the job must succeed."""
    out = os.path.join(str(tmp_path), f"replicas_{replicas}")
    os.makedirs(out)
    script = write_script(tmp_path, source, name=f"job_{replicas}.py")
    result = run_python([script, out, str(replicas)], timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    return [read_json(os.path.join(out, report.format(rank=rank))) for rank in range(replicas)]
