"""Collectives for one replica per process: identities for a lone process, and torch.distributed
(joining the process group, all-reduce/gather/broadcast, clean teardown) for a job of processes."""
from __future__ import annotations

import atexit
import contextlib
import functools
import os
import pickle
import re
import sys
from datetime import timedelta
from typing import Any, Callable, ContextManager, Optional

import torch
import torch.distributed as dist
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

from torchstrategy.cluster.spec import ProcessSpec
from torchstrategy.launch import exits
from torchstrategy.distribute.parts import local_exchange
from torchstrategy.distribute.parts.progress import NO_PROGRESS, ProgressBeacon
from torchstrategy.distribute.values import ReduceOp
from torchstrategy.nest import map_structure

#: a pickled value up to this many bytes travels in one collective (a header and the bytes, in a buffer of
#: fixed size); a larger one makes every process take a second, sized round (torch's object collectives)
_SMALL_OBJECT_BYTES = 4088
#: a sum over processes of at most this many bytes per process travels as one gather and is added up by every
#: process in rank order (the same result everywhere): on gloo a small all_reduce takes several times as long
#: as a gather of the same bytes (benchmarks/call_overhead.py prints both), and fit ends each call with one
_SMALL_SUM_BYTES = 1 << 16
#: the dtypes a gathered sum adds up exactly as an all_reduce(SUM) would (bool and complex take the all_reduce)
_GATHER_SUMMABLE = frozenset({torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64,
                              torch.int32, torch.int16, torch.int8, torch.uint8})
_TEARDOWN_TIMEOUT = timedelta(seconds=30)
_PROBE_TIMEOUT = timedelta(seconds=3)  # after a timed-out collective: who still answers
_failed = False  # set by the excepthook below: a failing process must not wait for its peers at exit


def _note_failure(previous: Callable) -> Callable:
    def hook(kind: type, value: BaseException, traceback: Any) -> None:
        global _failed
        _failed = True
        previous(kind, value, traceback)

    return hook


def counted(label: str) -> Callable[[Callable], Callable]:
    """Decorates a method of a process group's collectives that runs one collective every process must join:
    while it runs, this replica's progress beacon (`self.progress`) counts it as waiting in `label`."""

    def decorate(method: Callable) -> Callable:
        @functools.wraps(method)
        def run_counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            progress = self.progress
            progress.enter(label)
            try:
                return method(self, *args, **kwargs)
            finally:
                progress.leave()

        return run_counted

    return decorate


def _num_step_replicas(collectives: Any) -> int:
    """Replica steps that each compute a share of one global batch (each divides its loss by this): every
    replica, unless one program computes the whole batch (an SPMD mesh overrides it with 1)."""
    return collectives.num_replicas


def _plain_execution(collectives: Any) -> ContextManager[None]:
    """Entered around an execution's steps: nothing to do unless they run as one compiled graph."""
    return contextlib.nullcontext()


class LoneProcess:
    """The per-process half of the collectives for a job of one process: there is nobody to combine
    with, so each process-level value is already the job's (shared by SingleReplicaCollectives and
    ReplicaThreads, which differ only in how many replicas the process holds)."""

    num_processes = 1
    #: where this replica is, for its peers (a job of processes publishes it; see parts/progress.py)
    progress: Any = NO_PROGRESS
    #: what a replica's loss is multiplied by before backward so that gradients add up over replicas
    loss_multiplier = 1.0
    #: the TF tasks ('workers') the processes form, each reading one input pipeline, and this one's index
    num_input_workers = 1
    input_worker_index = 0

    def sum_tensors(self, tensors: list) -> list:
        return tensors

    def any(self, flag: bool) -> bool:
        return bool(flag)

    def gather_objects(self, value: Any) -> list:
        return [value]

    def gather_batches(self, chunks: list) -> torch.Tensor:
        return torch.cat(chunks)

    def broadcast(self, value: Any, src: int = 0) -> Any:
        return value

    def broadcast_initial(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor  # one copy of each variable in the process

    def barrier(self) -> None:
        """Nothing to wait for."""

    def unanswered_replicas(self, error: BaseException) -> Optional[list]:
        """None unless `error` is a collective timeout; then the ranks that stopped answering ([] if unknown)."""
        return None

    num_step_replicas = property(_num_step_replicas)
    execution = _plain_execution


class OneReplicaPerProcess:
    """The per-replica half for one replica per process: a step runs once, in this thread, and with no
    other replica here a replica-level combination is the value itself (process groups override them)."""

    num_local_replicas = 1
    progress: Any = NO_PROGRESS

    def __init__(self, process_rank: int = 0) -> None:
        self.process_rank = process_rank

    def local_replica_ids(self) -> tuple:
        return (self.process_rank,)

    def run_replicas(self, fn: Callable[..., Any], per_replica_args: list) -> list:
        return [fn(self.local_replica_ids()[0], *per_replica_args[0])]

    def all_reduce(self, op: ReduceOp, value: Any) -> Any:
        return value

    def all_gather(self, value: torch.Tensor, axis: int = 0) -> torch.Tensor:
        return value

    def cross_replica_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    def reduce_gradients(self, grads: list) -> list:
        return grads

    def once_per_process(self, fn: Callable[[], Any]) -> Any:
        return fn()

    def teardown(self) -> None:
        """Nothing to release."""

    num_step_replicas = property(_num_step_replicas)
    execution = _plain_execution


class SingleReplicaCollectives(OneReplicaPerProcess, LoneProcess):
    """One replica in one process: every combination is the value itself."""

    num_replicas = 1


class _AllReduceSum(torch.autograd.Function):
    """Differentiable cross-process sum: each input's gradient is the sum of every replica's output
    gradient (every replica's loss depends on every replica's input)."""

    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        out = tensor.detach().clone()
        dist.all_reduce(out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        out = grad.detach().clone()
        dist.all_reduce(out)
        return out


def _packed(value: Any, device: torch.device) -> torch.Tensor:
    """A fixed-size uint8 buffer: the pickled size (int64), then the pickle when it fits (else nothing)."""
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    buffer = torch.zeros(8 + _SMALL_OBJECT_BYTES, dtype=torch.uint8)
    buffer[:8].view(torch.int64)[0] = len(payload)
    if len(payload) <= _SMALL_OBJECT_BYTES:
        buffer[8:8 + len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
    return buffer.to(device)


def _size_of(buffer: torch.Tensor) -> int:
    return int(buffer[:8].view(torch.int64)[0])


def _gather_flat(local: torch.Tensor, processes: int) -> torch.Tensor:
    """Every process's `local` (the same shape everywhere), stacked in rank order: one collective."""
    out = torch.empty((processes * local.numel(),), dtype=local.dtype, device=local.device)
    if _HAS_GATHER_SINGLE:
        dist.all_gather_single(out, local.reshape(-1))
    else:
        dist.all_gather_into_tensor(out, local.reshape(-1))
    return out.view((processes,) + tuple(local.shape))


#: torch 2.14 names the one-tensor gather all_gather_single; the torch-xla venv's torch 2.9 has only the old name
_HAS_GATHER_SINGLE = hasattr(dist, "all_gather_single")


def _unpacked(buffer: torch.Tensor) -> Any:
    return pickle.loads(buffer[8:8 + _size_of(buffer)].numpy().tobytes())


class ProcessGroupCollectives(OneReplicaPerProcess):
    """One replica per process over torch.distributed (gloo on CPU, nccl on CUDA GPUs)."""

    def __init__(self, spec: ProcessSpec, device: torch.device, backend: str, timeout: timedelta) -> None:
        super().__init__(process_rank=spec.rank)
        self.num_replicas = spec.world_size
        self.num_processes = spec.world_size
        # DDP averages gradients over processes while a replica's loss is already its share: undo the average
        self.loss_multiplier = float(spec.world_size)
        self.num_input_workers, self.input_worker_index = spec.num_tasks, spec.task_rank
        self._spec = spec
        self._device = device
        self._backend = backend
        self._owns_group = False
        #: small gathers between processes of this machine, through shared memory (None: all take the group)
        self._exchange: Optional[local_exchange.SharedMemoryExchange] = None
        if spec.world_size > 1:
            self._join(timeout)
            if backend == "gloo":
                # set up over the group (gather_objects takes it while there is no exchange yet)
                self._exchange = local_exchange.open_exchange(spec.rank, spec.world_size, timeout.total_seconds(),
                                                              self.gather_objects)

    @property
    def backend(self) -> str:
        return self._backend

    def gradient_hook(self) -> Optional[tuple]:
        """(state, hook) for DDP's register_comm_hook: the hook averages a gradient bucket of at most 64 KiB
        through the shared-memory exchange (divided by the number of processes, then gathered and added up in
        rank order, the same sum on every process) and any other bucket with gloo's all-reduce, as DDP's own
        hook does; None when there is no exchange (processes on several machines, or not gloo)."""
        if self._exchange is None:
            return None
        return (self._exchange, self.num_processes), _average_bucket

    def _gather_flat(self, local: torch.Tensor) -> torch.Tensor:
        """Every process's `local` (the same shape everywhere), stacked in rank order: one exchange through shared
        memory when every process is on this machine and it fits, else one collective of the group."""
        exchange = self._exchange
        if exchange is not None and local.device.type == "cpu" and \
                exchange.fits(local.numel() * local.element_size()):
            return exchange.gather(local)
        return _gather_flat(local, self.num_processes)

    # ----- joining and leaving -------------------------------------------------------------
    def _join(self, timeout: timedelta) -> None:
        spec = self._spec
        if dist.is_initialized():
            if dist.get_world_size() != spec.world_size or dist.get_rank() != spec.rank:
                raise RuntimeError(
                    f"A process group already exists with world size {dist.get_world_size()} (rank "
                    f"{dist.get_rank()}), but this strategy was configured for world size {spec.world_size} "
                    f"(rank {spec.rank}). Mismatched world sizes: create one strategy per process."
                )
            return
        if self._device.type == "cuda":
            torch.cuda.set_device(self._device)
        try:
            if spec.source == "torchrun":
                dist.init_process_group(self._backend, store=self._elastic_store(timeout), rank=spec.rank,
                                        world_size=spec.world_size, timeout=timeout)
            else:
                dist.init_process_group(self._backend, init_method=f"tcp://{spec.master_addr}:{spec.master_port}",
                                        rank=spec.rank, world_size=spec.world_size, timeout=timeout)
        except (RuntimeError, ValueError) as error:
            hint = " Another program is using that port: pick a free one." if "in use" in str(error).lower() else ""
            raise RuntimeError(
                f"Could not join the process group of {spec.world_size} replicas at {spec.master_addr}:"
                f"{spec.master_port} as rank {spec.rank} ({spec.source}).{hint} Underlying error: {error}"
            ) from error
        self._owns_group = True
        self.progress = ProgressBeacon(dist.PrefixStore("torchstrategy/progress", _default_store()), spec.rank,
                                       spec.world_size, timeout.total_seconds())
        sys.excepthook = _note_failure(sys.excepthook)
        exits.note_exit_codes()  # a replica leaving with sys.exit(n != 0) must not wait for its peers either
        atexit.register(self.teardown)

    def _elastic_store(self, timeout: timedelta) -> dist.Store:
        """torchrun's rendezvous store, with keys private to this restart attempt.

        After `--max-restarts` restarts the agent may serve the same store again; without a per-attempt
        prefix, a replica can read a dead predecessor's gloo address and fail to connect."""
        from torch.distributed.rendezvous import _create_c10d_store

        spec = self._spec
        store = _create_c10d_store(spec.master_addr, spec.master_port, spec.rank, spec.world_size, timeout)
        return dist.PrefixStore(f"torchstrategy/attempt_{spec.restart_count}", store)

    def teardown(self) -> None:
        if self._exchange is not None:  # this process's mapping only: a peer still reading keeps its own
            self._exchange.close()
            self._exchange = None
        if not self._owns_group or not dist.is_initialized():
            return
        self._owns_group = False
        requested = exits.requested_exit_code()
        if requested not in (None, 0) and self._spec.rank != 0:
            # a replica leaving with sys.exit(n) mid-training: gloo may abort (SIGABRT) while destroying a group
            # whose peer is still in a collective, which would hide n; leave now with n instead
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(requested))
        with contextlib.suppress(Exception):  # a peer is gone: nothing left to wait for
            failing = _failed or requested not in (None, 0)
            if not failing:  # wait for the peers so no rank tears down mid-collective (gloo aborts otherwise)
                # a peer waiting in a collective this replica never entered learns it now and ends the job
                self.progress.finish()
                if self._backend == "gloo":
                    dist.monitored_barrier(timeout=_TEARDOWN_TIMEOUT)
                else:
                    dist.barrier()
        self.progress.stop()
        dist.destroy_process_group()

    @property
    def active(self) -> bool:
        return self.num_replicas > 1 and dist.is_initialized()

    def unanswered_replicas(self, error: BaseException) -> Optional[list]:
        text = str(error).lower()
        if not self.active or not any(word in text for word in ("timed out", "timeout", "time out")):
            return None
        behind = self.progress.not_reached()  # the replicas whose beacons show they never entered it
        if behind:
            return behind
        if self.process_rank != 0 or self._backend != "gloo":
            return []  # only the chief can ask everyone (a monitored barrier); the others just report the wait
        try:
            dist.monitored_barrier(timeout=_PROBE_TIMEOUT, wait_all_ranks=True)
        except RuntimeError as probe:
            named = re.search(r"Ranks? ([\d, ]+) failed to pass", str(probe))
            if named:
                return sorted(int(rank) for rank in re.findall(r"\d+", named.group(1)))
            if "pair closure" in str(probe) and self.num_replicas == 2:
                return [1]  # gloo closed the link to the only other replica when the collective timed out
        return []

    def _home(self) -> torch.device:
        return self._device if self._backend == "nccl" else torch.device("cpu")

    # ----- per process ---------------------------------------------------------------------
    @counted("barrier")
    def barrier(self) -> None:
        if self.active:
            dist.barrier()

    @counted("broadcast")
    def broadcast(self, value: Any, src: int = 0) -> Any:
        if not self.active:
            return value
        # one collective for a small value (a dataset's state, a decision); every process learns its size, so
        # all of them take the second round together when it did not fit
        buffer = _packed(value, self._home()) if self.process_rank == src else \
            torch.zeros(8 + _SMALL_OBJECT_BYTES, dtype=torch.uint8, device=self._home())
        if self._exchange is not None and buffer.device.type == "cpu":
            buffer = self._exchange.gather(buffer)[src]  # through shared memory: everyone's buffer, src's kept
        else:
            dist.broadcast(buffer, src=src)
        buffer = buffer.cpu()
        if _size_of(buffer) <= _SMALL_OBJECT_BYTES:
            return value if self.process_rank == src else _unpacked(buffer)
        box = [value]
        dist.broadcast_object_list(box, src=src)
        return box[0]

    @counted("gather of Python objects")
    def gather_objects(self, value: Any) -> list:
        if not self.active:
            return [value]
        buffer = _packed(value, self._home())
        parts = list(self._gather_flat(buffer).cpu())  # one collective: every process sees every size
        if all(_size_of(part) <= _SMALL_OBJECT_BYTES for part in parts):
            return [_unpacked(part) for part in parts]
        gathered: list = [None] * self.num_processes
        dist.all_gather_object(gathered, value)
        return gathered

    @counted("broadcast of a new variable's initial value")
    def broadcast_initial(self, tensor: torch.Tensor) -> torch.Tensor:
        """Makes a freshly created weight equal rank 0's (TF mirrors variables created in scope)."""
        if self.active:
            with torch.no_grad():
                staged = tensor.to(self._home())
                dist.broadcast(staged, src=0)
                tensor.copy_(staged)
        return tensor

    @counted("sum over replicas")
    def sum_tensors(self, tensors: list) -> list:
        if not self.active or not tensors:
            return tensors
        groups = {}  # dtype -> positions, in the same order on every process
        for dtype in sorted({t.dtype for t in tensors}, key=str):
            groups[dtype] = [i for i, t in enumerate(tensors) if t.dtype == dtype]
        flats = {dtype: _flatten_dense_tensors([tensors[i].detach().reshape(-1).to(self._home()) for i in indices])
                 for dtype, indices in groups.items()}
        nbytes = sum(flat.numel() * flat.element_size() for flat in flats.values())
        if nbytes <= _SMALL_SUM_BYTES and set(flats) <= _GATHER_SUMMABLE:
            sums = self._sums_by_gather(flats)
        else:  # one all_reduce per dtype, in the same order everywhere
            sums = {}
            for dtype, flat in flats.items():
                # one tensor "flattens" to a view of itself: copy it, or the all-reduce would change the caller's
                sums[dtype] = flat.clone() if len(groups[dtype]) == 1 else flat
                dist.all_reduce(sums[dtype])
        out: list[Optional[torch.Tensor]] = [None] * len(tensors)
        for dtype, indices in groups.items():
            for i, part in zip(indices, _unflatten_dense_tensors(sums[dtype], [tensors[i].reshape(-1) for i in indices])):
                out[i] = part.reshape(tensors[i].shape).to(tensors[i].device)
        return out

    def _sums_by_gather(self, flats: dict) -> dict:
        """The per-dtype sums over processes of `flats`' vectors, from one gather of all their bytes."""
        local = torch.cat([flat.view(torch.uint8) for flat in flats.values()])
        rows = self._gather_flat(local)
        sums, start = {}, 0
        for dtype, flat in flats.items():
            end = start + flat.numel() * flat.element_size()
            sums[dtype] = rows[:, start:end].contiguous().view(dtype).sum(dim=0, dtype=dtype)
            start = end
        return sums

    @counted("agreement over replicas")
    def any(self, flag: bool) -> bool:
        if not self.active:
            return bool(flag)
        flags = self._gather_flat(torch.tensor([bool(flag)], dtype=torch.uint8, device=self._home()))
        return bool(flags.any())

    @counted("gather of tensors")
    def gather_padded(self, local: torch.Tensor) -> list:
        """Every process's `local` (their first dimensions may differ), in rank order."""
        if not self.active:
            return [local]
        sizes = self._gather_flat(torch.tensor([local.shape[0]], device=self._home()))
        return self._gather_rows(local, [int(n) for n in sizes.reshape(-1)])

    def _gather_rows(self, local: torch.Tensor, sizes: list) -> list:
        """Every process's `local`, whose first dimensions `sizes` (in rank order) every process knows."""
        device = self._home()
        padded = torch.zeros((max(sizes),) + tuple(local.shape[1:]), dtype=local.dtype, device=device)
        padded[: local.shape[0]] = local.detach().to(device)
        gathered = self._gather_flat(padded)
        return [part[:n].to(local.device) for part, n in zip(gathered, sizes)]

    def gather_batches(self, chunks: list) -> torch.Tensor:
        """All replicas' per-batch outputs put back in the order of the global batches (predict)."""
        local = torch.cat(chunks) if chunks else torch.empty(0)
        if not self.active:
            return local
        all_counts = self.gather_objects([int(chunk.shape[0]) for chunk in chunks])  # one small collective
        parts = self._gather_rows(local, [sum(counts) for counts in all_counts])
        cursors = [0] * self.num_replicas
        ordered = []
        for batch in range(len(chunks)):
            for rank in range(self.num_replicas):
                rows = int(all_counts[rank][batch])
                ordered.append(parts[rank][cursors[rank]:cursors[rank] + rows])
                cursors[rank] += rows
        return torch.cat(ordered)

    # ----- per replica (one per process, so the same calls) --------------------------------
    @counted("all-reduce")
    def all_reduce(self, op: ReduceOp, value: Any) -> Any:
        if not self.active:
            return value

        def reduce(leaf: Any) -> torch.Tensor:
            tensor = torch.as_tensor(leaf)
            home = tensor.device
            if tensor.requires_grad:
                out = _AllReduceSum.apply(tensor.to(self._home()))
            else:
                out = tensor.detach().to(self._home()).clone()
                dist.all_reduce(out)
            if op is ReduceOp.MEAN:
                out = out / self.num_replicas
            return out.to(home)

        return map_structure(reduce, value)

    @counted("cross-replica sum")
    def cross_replica_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        if not self.active:
            return tensor
        return _AllReduceSum.apply(tensor.to(self._home())).to(tensor.device)

    def all_gather(self, value: torch.Tensor, axis: int = 0) -> torch.Tensor:
        if not self.active:
            return value
        parts = self.gather_padded(value.movedim(axis, 0))
        return torch.cat(parts, dim=0).movedim(0, axis)

    def reduce_gradients(self, grads: list) -> list:
        present = [i for i, g in enumerate(grads) if g is not None]
        if not self.active or not present:
            return grads
        summed = self.sum_tensors([grads[i] for i in present])
        out = list(grads)
        for i, g in zip(present, summed):
            out[i] = g
        return out


def _average_bucket(state: tuple, bucket):  # type: ignore[no-untyped-def]
    """`ProcessGroupCollectives.gradient_hook`'s hook: DDP calls it with the state (the exchange, the number of
    processes) and a dist.GradBucket; it returns a torch.futures.Future of the averaged bucket. `bucket` and the
    result carry no annotations: DDP compares them with the real classes, and this module's are strings."""
    exchange, processes = state
    tensor = bucket.buffer()
    if tensor.device.type != "cpu" or tensor.dtype not in _GATHER_SUMMABLE \
            or not exchange.fits(tensor.numel() * tensor.element_size()):
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        return default_hooks.allreduce_hook(None, bucket)
    tensor.div_(processes)  # first, as DDP's hook does (no overflow in half precision)
    done: torch.futures.Future = torch.futures.Future()
    done.set_result(exchange.gather(tensor).sum(dim=0, dtype=tensor.dtype))
    return done


def leave_at_exit() -> None:
    """For a process group made outside the strategies (keras.distribution.initialize): at exit, unless this
    process is failing, waits for its peers (bounded, on gloo), then destroys the group. A gloo group left to the
    interpreter's exit can abort the process ('terminate called without an active exception')."""
    sys.excepthook = _note_failure(sys.excepthook)
    exits.note_exit_codes()
    atexit.register(_leave_group)


def _leave_group() -> None:
    if not dist.is_initialized():
        return  # a strategy that took the group over, or the script, destroyed it already
    requested = exits.requested_exit_code()
    with contextlib.suppress(Exception):  # a peer is gone: nothing left to wait for
        if not (_failed or requested not in (None, 0)):
            if dist.get_backend() == "gloo":
                dist.monitored_barrier(timeout=_TEARDOWN_TIMEOUT)
            else:
                dist.barrier()
    dist.destroy_process_group()


def _default_store() -> dist.Store:
    """The store the default process group was made with (our launcher's TCP store, or torchrun's, per attempt)."""
    from torch.distributed.distributed_c10d import _get_default_store

    return _get_default_store()
