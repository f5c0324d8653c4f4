"""Several replicas in one process, one thread each, sharing the module's parameters: the
collectives between those threads (rendezvous on a barrier) and the running of a step on each."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import torch

from torchstrategy import _context
from torchstrategy.distribute.parts.collectives import LoneProcess
from torchstrategy.distribute.values import ReduceOp
from torchstrategy.nest import flatten, pack_sequence_as


class _ThreadSum(torch.autograd.Function):
    """Differentiable sum over the replica threads (synchronized BatchNorm statistics)."""

    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor, threads: "ReplicaThreads") -> torch.Tensor:  # type: ignore[override]
        ctx.threads = threads
        return threads._sum_leaf(tensor.detach())

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple:  # type: ignore[override]
        return ctx.threads._sum_leaf(grad.detach()), None


class ReplicaThreads(LoneProcess):
    """`num_replicas` replicas in this process; `run_replicas` runs a step on each in its own thread.

    Cross-replica calls made inside a step meet on a barrier: every replica deposits its value,
    all read the deposits in replica order (so every replica computes the same result), and a
    second wait keeps the slots until everyone has read. A replica that raises breaks the
    barrier, so the others stop too instead of waiting forever.
    """

    process_rank = 0

    def __init__(self, num_replicas: int, timeout_seconds: float = 300.0) -> None:
        if num_replicas < 1:
            raise ValueError(f"ReplicaThreads needs at least one replica; got {num_replicas}.")
        self.num_replicas = self.num_local_replicas = int(num_replicas)
        self._barrier = threading.Barrier(self.num_replicas, timeout=timeout_seconds)
        self._slots: list = [None] * self.num_replicas
        self._pool = ThreadPoolExecutor(self.num_replicas, thread_name_prefix="torchstrategy-replica")
        self._current = threading.local()

    def local_replica_ids(self) -> tuple:
        return tuple(range(self.num_replicas))

    # ----- running a step on every replica -------------------------------------------------
    def run_replicas(self, fn: Callable[..., Any], per_replica_args: list) -> list:
        futures = [self._pool.submit(self._run_one, fn, replica, args) for replica, args in enumerate(per_replica_args)]
        results, errors = [], []
        for future in futures:
            try:
                results.append(future.result())
            except BaseException as error:  # noqa: BLE001 - the first real error is raised below
                errors.append(error)
        self._barrier.reset()
        if errors:
            real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
            raise (real or errors)[0]
        return results

    def _run_one(self, fn: Callable[..., Any], replica: int, args: tuple) -> Any:
        self._current.replica = replica
        try:
            # the replicas run at once: a kernel on this one takes its share of the cores (_context.thread_budget)
            with _context.share_threads(self.num_replicas):
                return fn(replica, *args)
        except BaseException:
            self._barrier.abort()  # wake the replicas waiting for this one
            raise
        finally:
            self._current.replica = None

    def _replica(self) -> Any:
        """This thread's replica id; None in cross-replica context (then a call sees only its own value)."""
        return getattr(self._current, "replica", None)

    def _exchange(self, value: Any) -> list:
        replica = self._replica()
        if replica is None:
            return [value]
        self._slots[replica] = value
        self._barrier.wait()
        values = list(self._slots)
        self._barrier.wait()
        return values

    def _sum_leaf(self, tensor: torch.Tensor) -> torch.Tensor:
        values = self._exchange(tensor)
        total = values[0].clone()
        for other in values[1:]:
            total = total + other.to(total.device)
        return total

    # ----- per replica ---------------------------------------------------------------------
    def all_reduce(self, op: ReduceOp, value: Any) -> Any:
        leaves = flatten(value)
        reduced = []
        for leaf in leaves:
            tensor = torch.as_tensor(leaf)
            out = _ThreadSum.apply(tensor, self) if tensor.requires_grad else self._sum_leaf(tensor)
            reduced.append(out / self.num_replicas if op is ReduceOp.MEAN else out)
        return pack_sequence_as(value, reduced)

    def all_gather(self, value: torch.Tensor, axis: int = 0) -> torch.Tensor:
        return torch.cat([v.to(value.device) for v in self._exchange(value.detach())], dim=axis)

    def cross_replica_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        return _ThreadSum.apply(tensor, self)

    def reduce_gradients(self, grads: list) -> list:
        every = self._exchange([None if g is None else g.detach() for g in grads])
        out = []
        for position, grad in enumerate(grads):
            if grad is None:
                out.append(None)
                continue
            total = every[0][position].clone()
            for other in every[1:]:
                total = total + other[position]
            out.append(total)
        return out

    def once_per_process(self, fn: Callable[[], Any]) -> Any:
        replica = self._replica()
        if replica is None:
            return fn()
        self._barrier.wait()  # every replica has finished what came before (e.g. its backward)
        outcome: tuple = (None, None)
        if replica == 0:
            try:
                outcome = (fn(), None)
            except BaseException as error:  # noqa: BLE001 - handed to every replica
                outcome = (None, error)
        result, error = self._exchange(outcome if replica == 0 else None)[0]
        if error is not None:
            raise error
        return result

    # per process (one process: its values already cover every replica): LoneProcess's identities;
    # a stuck replica thread surfaces as a broken barrier, with its own error raised first
    def teardown(self) -> None:
        self._pool.shutdown(wait=False)
