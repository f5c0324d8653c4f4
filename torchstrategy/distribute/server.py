"""tf.distribute.Server: a worker or ps task of a parameter-server cluster, served in this process (the
task TF_CONFIG names) or in a process of its own (TF's in-process cluster, started from one script)."""
from __future__ import annotations

import os
import sys
import threading
from typing import Any, Optional

from torchstrategy import _context
from torchstrategy.cluster.ps import ps_layout
from torchstrategy.cluster.spec import ClusterSpec


def _cluster_spec(value: Any) -> ClusterSpec:
    if isinstance(value, ClusterSpec):
        return value
    if isinstance(value, dict):
        return ClusterSpec(value)
    as_spec = getattr(value, "cluster_spec", None)
    if callable(as_spec):  # a cluster resolver
        return as_spec()
    raise TypeError(f"tf.distribute.Server needs a tf.train.ClusterSpec (or a dict of job -> addresses); got "
                    f"{type(value).__name__}.")


def _named_by_tf_config(job_name: str, task_index: int) -> bool:
    from torchstrategy.cluster.resolvers import TFConfigClusterResolver

    resolver = TFConfigClusterResolver()
    return resolver.task_type == job_name and resolver.task_id == task_index


#: what a task process started by `Server(..., start=True)` runs (see `serve_task`)
_TASK_ENTRY = "from torchstrategy.distribute.server import serve_task; serve_task()"


def serve_task() -> None:
    """The body of a task process: serves the task it was started for until the job ends."""
    from torchstrategy.launch.task_process import task_from_argv

    cluster, job, index = task_from_argv()
    Server(cluster, job_name=job, task_index=index, _serve_here=True).join()


class Server:
    """tf.distribute.Server(cluster_spec, job_name, task_index, protocol="grpc", start=True).

    A 'worker' task runs the closures a ClusterCoordinator sends; a 'ps' task keeps variables and applies
    updates. When this process is that task (TF_CONFIG names it), the task is served here and `join()`
    blocks until the coordinator ends the job. Otherwise (a script building TF's in-process cluster) the
    task runs in a child process of its own, ended with this one (a task process started for it passes the private `_serve_here=True`).

    >>> # server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
    >>> #                               task_index=resolver.task_id, protocol="grpc", start=True)
    >>> # server.join()
    """

    def __init__(self, server_or_cluster_def: Any, job_name: Optional[str] = None, task_index: Optional[int] = None,
                 protocol: Optional[str] = None, config: Any = None, start: bool = True,
                 _serve_here: Optional[bool] = None) -> None:
        del config  # TF's session config: nothing here reads it
        cluster = _cluster_spec(server_or_cluster_def)
        if job_name is None:
            raise ValueError(f"tf.distribute.Server needs job_name ('worker' or 'ps'); the cluster has jobs {cluster.jobs}.")
        if job_name not in ("worker", "ps"):
            raise ValueError(f"tf.distribute.Server serves 'worker' and 'ps' tasks; got job_name={job_name!r}. The "
                             f"chief (coordinator) creates tf.distribute.ParameterServerStrategy instead.")
        if task_index is None:
            if job_name in cluster.jobs and cluster.num_tasks(job_name) == 1:
                task_index = 0
            else:
                raise ValueError(f"tf.distribute.Server needs task_index for job '{job_name}', which has several tasks.")
        if protocol is not None and not str(protocol).startswith("grpc"):
            raise ValueError(f"protocol={protocol!r}: only 'grpc' (TF's default) is accepted; tasks talk over "
                             f"torch.distributed.rpc whatever it says.")
        self._layout = ps_layout(cluster, job_name, int(task_index), where="tf.distribute.Server")
        self._cluster = cluster
        self._job, self._index = job_name, int(task_index)
        self._serve_here = _named_by_tf_config(job_name, self._index) if _serve_here is None else bool(_serve_here)
        self._process: Any = None
        self._thread: Optional[threading.Thread] = None
        self._error: Optional[BaseException] = None
        if start:
            self.start()

    @property
    def target(self) -> str:
        """TF's target string of this task: 'grpc://host:port' from the cluster spec."""
        return f"grpc://{self._cluster.task_address(self._job, self._index)}"

    @property
    def server_def(self) -> dict:
        return {"cluster": self._cluster.as_dict(), "job_name": self._job, "task_index": self._index}

    def start(self) -> None:
        """Starts serving (once): in a thread of this process, or as a child process."""
        if self._process is not None or self._thread is not None:
            return
        if self._serve_here:
            self._thread = threading.Thread(target=self._serve, name=f"torchstrategy-{self._layout.name}", daemon=True)
            self._thread.start()
        else:
            from torchstrategy.launch.task_process import start_task_process

            self._process = start_task_process(_TASK_ENTRY, self._cluster.as_dict(), self._job, self._index)

    def join(self) -> None:
        """Blocks until the coordinator ends the job (or the task's process exits)."""
        if self._process is not None:
            code = self._process.wait()
            if code != 0:
                raise RuntimeError(f"task {self._layout.name} exited with code {code}.")
            return
        if self._thread is None:
            raise RuntimeError("join() before start(): call start() (or create the Server with start=True).")
        while self._thread.is_alive():
            self._thread.join(timeout=0.5)
        if self._error is not None:
            raise self._error

    def _serve(self) -> None:
        from torchstrategy.distribute.parameter_server import WorkerStrategy
        from torchstrategy.distribute.parts.closures import WorkerService
        from torchstrategy.distribute.parts.rpc_group import RpcGroup
        from torchstrategy.distribute.parts.variable_store import ParameterServerService, VariableClient

        try:
            client = VariableClient(None)
            if self._job == "ps":
                service: Any = ParameterServerService()
            else:
                strategy = WorkerStrategy()
                service = WorkerService(strategy, client, self._layout.name)
                strategy.attach(service)
            _context.set_task_service(service)
            group = RpcGroup(self._layout)
            client.attach(group)
            service.stopped.wait()
            if not group.close(graceful=getattr(service, "graceful", False)):
                print(f"torchstrategy: {self._layout.name}: the job ended while a closure was still running here; "
                      f"this task stops without waiting for it.", file=sys.stderr, flush=True)
                os._exit(1)
        except BaseException as error:  # noqa: BLE001 - reported by join()
            self._error = error
