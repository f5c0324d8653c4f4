"""Processes for the tasks of a parameter-server cluster that one script starts itself (TF's in-process
cluster): each runs a tf.distribute.Server in a fresh interpreter and ends when its parent does."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Optional

from torchstrategy.cluster import environment

_ENTRY = "from torchstrategy.launch.task_process import _main; _main()"


def start_task_process(cluster: dict, job_name: str, task_index: int, threads: Optional[int] = 1) -> subprocess.Popen:
    """Starts a process serving task (job_name, task_index) of `cluster` (a ClusterSpec dict).

    It sees this process's sys.path (so closures can import the modules this script imports), does not
    inherit TF_CONFIG (its task is given here), and uses `threads` torch threads unless OMP_NUM_THREADS is set.
    """
    env = environment.snapshot()
    env.pop("TF_CONFIG", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    # TensorPipe logs a warning for every connection a leaving task closes; the job's own end is not news
    env.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    if threads is not None and not environment.threads_set_by_user():
        env["OMP_NUM_THREADS"] = str(threads)
    spec = json.dumps({"cluster": cluster, "job": job_name, "index": task_index, "parent": os.getpid()})
    return subprocess.Popen([sys.executable, "-c", _ENTRY, spec], env=env, stdin=subprocess.DEVNULL)


def _main() -> None:
    from torchstrategy.distribute.server import Server
    from torchstrategy.launch.watchdog import start_parent_watchdog

    spec = json.loads(sys.argv[1])
    start_parent_watchdog(int(spec["parent"]))
    server = Server(spec["cluster"], job_name=spec["job"], task_index=int(spec["index"]), serve_here=True)
    server.join()
