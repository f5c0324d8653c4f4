"""Processes for the tasks of a parameter-server cluster that one script starts itself (TF's in-process
cluster): each runs the given entry (a tf.distribute.Server) in a fresh interpreter, ended with its parent."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Optional

from torchstrategy.cluster import environment

def start_task_process(entry: str, cluster: dict, job_name: str, task_index: int,
                       threads: Optional[int] = 1) -> subprocess.Popen:
    """Starts a process serving task (job_name, task_index) of `cluster` (a ClusterSpec dict): it runs the
    Python statement `entry`, which reads the task from `task_from_argv()`.

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
    return subprocess.Popen([sys.executable, "-c", entry, spec], env=env, stdin=subprocess.DEVNULL)


def task_from_argv() -> tuple:
    """In a task process: (cluster dict, job name, task index) as start_task_process passed them; the process
    now exits when its parent does."""
    from torchstrategy.launch.watchdog import start_parent_watchdog

    spec = json.loads(sys.argv[1])
    start_parent_watchdog(int(spec["parent"]))
    return spec["cluster"], spec["job"], int(spec["index"])
