"""One process per replica, gradients all-reduced: the torch.distributed machinery that Mirrored
and MultiWorkerMirrored strategies share (process group, DDP wrapping, collectives, data split)."""
from __future__ import annotations

import atexit
import sys
from datetime import timedelta
from typing import Any, Callable, Optional

import torch
import torch.distributed as dist
from torch import nn
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

from torchstrategy.cluster.spec import ProcessSpec
from torchstrategy.data.distribute import DistributedDataset, flatten_structure, map_structure
from torchstrategy.data.options import AutoShardPolicy
from torchstrategy.distribute.strategy import Strategy
from torchstrategy.distribute.values import InputContext, ReduceOp

_TEARDOWN_TIMEOUT = timedelta(seconds=30)
_failed = False  # set by the excepthook below: a failing process must not wait for its peers at exit


def _note_failure(previous: Callable) -> Callable:
    def hook(kind: type, value: BaseException, traceback: Any) -> None:
        global _failed
        _failed = True
        previous(kind, value, traceback)

    return hook


class _AllReduceSum(torch.autograd.Function):
    """Differentiable cross-replica sum: the gradient of each input is the sum of the replicas' output
    gradients (every replica's loss depends on every replica's input)."""

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


class DataParallelStrategy(Strategy):
    """Synchronous data parallelism with one process per replica (DDP under the hood).

    Subclasses decide which processes exist and which device each uses; this class joins the
    process group and implements every cross-replica operation of the Strategy interface.
    """

    _needs_model_in_scope = True

    def __init__(self, spec: ProcessSpec, device: torch.device, backend: str, timeout: timedelta,
                 cluster_resolver: Any = None, allow_uneven_split: bool = False) -> None:
        super().__init__(device, num_replicas=spec.world_size, replica_id=spec.rank)
        self._spec = spec
        self._backend = backend
        self._resolver = cluster_resolver
        self._allow_uneven_split = allow_uneven_split
        self._owns_group = False
        self._wrapped: dict[int, nn.Module] = {}
        if spec.launcher_pid is not None:
            from torchstrategy.launch import start_parent_watchdog

            start_parent_watchdog(spec.launcher_pid)
        if spec.world_size > 1:
            self._join_group(timeout)

    # ----- process group -------------------------------------------------------------------
    def _join_group(self, timeout: timedelta) -> None:
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
        sys.excepthook = _note_failure(sys.excepthook)
        atexit.register(self._teardown)

    def _elastic_store(self, timeout: timedelta) -> dist.Store:
        """torchrun's rendezvous store, with keys private to this restart attempt.

        After `--max-restarts` restarts the agent may serve the same store again; without a per-attempt
        prefix, a replica can read a dead predecessor's gloo address and fail to connect."""
        from torch.distributed.rendezvous import _create_c10d_store

        spec = self._spec
        store = _create_c10d_store(spec.master_addr, spec.master_port, spec.rank, spec.world_size, timeout)
        return dist.PrefixStore(f"torchstrategy/attempt_{spec.restart_count}", store)

    def _teardown(self) -> None:
        if not self._owns_group or not dist.is_initialized():
            return
        self._owns_group = False
        try:
            if not _failed:  # wait for the peers so no rank tears down mid-collective (gloo aborts otherwise)
                if self._backend == "gloo":
                    dist.monitored_barrier(timeout=_TEARDOWN_TIMEOUT)
                else:
                    dist.barrier()
        except Exception:  # a peer is gone: nothing left to wait for
            pass
        dist.destroy_process_group()

    @property
    def cluster_resolver(self) -> Any:
        return self._resolver

    @property
    def _distributed(self) -> bool:
        return self._num_replicas > 1 and dist.is_initialized()

    # ----- the trainer's hooks -------------------------------------------------------------
    def setup(self, module: nn.Module, optimizer: Optional[torch.optim.Optimizer] = None) -> nn.Module:
        """Moves the model to this replica's device and wraps it in DDP (weights broadcast from rank 0)."""
        module.to(self._device)
        if not self._distributed or not any(p.requires_grad for p in module.parameters()):
            return module
        if id(module) not in self._wrapped:
            device_ids = [self._device.index] if self._device.type == "cuda" else None
            self._wrapped[id(module)] = nn.parallel.DistributedDataParallel(module, device_ids=device_ids)
        return self._wrapped[id(module)]

    def barrier(self) -> None:
        if self._distributed:
            dist.barrier()

    def broadcast(self, value: Any, src: int = 0) -> Any:
        if not self._distributed:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=src)
        return box[0]

    def _gather_objects(self, value: Any) -> list:
        if not self._distributed:
            return [value]
        gathered: list = [None] * self._num_replicas
        dist.all_gather_object(gathered, value)
        return gathered

    def _broadcast_initial(self, tensor: torch.Tensor) -> torch.Tensor:
        """Makes a freshly created weight equal rank 0's (TF mirrors variables created in scope)."""
        if self._distributed:
            with torch.no_grad():
                staged = tensor.to(self._collective_device())
                dist.broadcast(staged, src=0)
                tensor.copy_(staged)
        return tensor

    # ----- collectives ---------------------------------------------------------------------
    def _collective_device(self) -> torch.device:
        return self._device if self._backend == "nccl" else torch.device("cpu")

    def _all_reduce(self, op: ReduceOp, value: Any) -> Any:
        if not self._distributed:
            return value

        def reduce(leaf: Any) -> torch.Tensor:
            tensor = torch.as_tensor(leaf)
            home = tensor.device
            if tensor.requires_grad:
                out = _AllReduceSum.apply(tensor.to(self._collective_device()))
            else:
                out = tensor.detach().to(self._collective_device()).clone()
                dist.all_reduce(out)
            if op is ReduceOp.MEAN:
                out = out / self._num_replicas
            return out.to(home)

        return map_structure(reduce, value)

    def _cross_replica_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        if not self._distributed:
            return tensor
        return _AllReduceSum.apply(tensor.to(self._collective_device())).to(tensor.device)

    def _all_gather(self, value: torch.Tensor, axis: int = 0) -> torch.Tensor:
        if not self._distributed:
            return value
        parts = self._gather_padded(value.movedim(axis, 0))
        return torch.cat(parts, dim=0).movedim(0, axis)

    def _gather_padded(self, local: torch.Tensor) -> list[torch.Tensor]:
        """Every replica's `local` (their first dimensions may differ), in rank order."""
        device = self._collective_device()
        size = torch.tensor([local.shape[0]], device=device)
        sizes = [torch.zeros_like(size) for _ in range(self._num_replicas)]
        dist.all_gather(sizes, size)
        longest = int(max(int(s) for s in sizes))
        padded = torch.zeros((longest,) + tuple(local.shape[1:]), dtype=local.dtype, device=device)
        padded[: local.shape[0]] = local.detach().to(device)
        gathered = [torch.empty_like(padded) for _ in range(self._num_replicas)]
        dist.all_gather(gathered, padded)
        return [part[: int(n)].to(local.device) for part, n in zip(gathered, sizes)]

    def _gather_batches(self, chunks: list[torch.Tensor]) -> torch.Tensor:
        """All replicas' per-batch outputs put back in the order of the global batches."""
        local = torch.cat(chunks) if chunks else torch.empty(0)
        if not self._distributed:
            return local
        counts = torch.tensor([chunk.shape[0] for chunk in chunks], dtype=torch.long)
        all_counts = self._gather_padded(counts.unsqueeze(1))
        parts = self._gather_padded(local)
        cursors = [0] * self._num_replicas
        ordered = []
        for batch in range(len(chunks)):
            for rank in range(self._num_replicas):
                rows = int(all_counts[rank][batch])
                ordered.append(parts[rank][cursors[rank]:cursors[rank] + rows])
                cursors[rank] += rows
        return torch.cat(ordered)

    def _sum_tensors(self, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        if not self._distributed or not tensors:
            return tensors
        out: list[Optional[torch.Tensor]] = [None] * len(tensors)
        for dtype in {t.dtype for t in tensors}:  # one collective per dtype
            indices = [i for i, t in enumerate(tensors) if t.dtype == dtype]
            group = [tensors[i].detach().reshape(-1).to(self._collective_device()) for i in indices]
            flat = _flatten_dense_tensors(group)
            dist.all_reduce(flat)
            for i, part in zip(indices, _unflatten_dense_tensors(flat, group)):
                out[i] = part.reshape(tensors[i].shape).to(tensors[i].device)
        return out  # type: ignore[return-value]

    def _reduce_gradients(self, grads: list) -> list:
        present = [i for i, g in enumerate(grads) if g is not None]
        if not self._distributed or not present:
            return grads
        summed = self._sum_tensors([grads[i] for i in present])
        out = list(grads)
        for i, g in zip(present, summed):
            out[i] = g
        return out

    def _any(self, flag: bool) -> bool:
        if not self._distributed:
            return bool(flag)
        value = torch.tensor([1.0 if flag else 0.0], device=self._collective_device())
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return bool(value.item())

    # ----- datasets ------------------------------------------------------------------------
    def _input_context(self) -> InputContext:
        return InputContext(num_input_pipelines=self._num_replicas, input_pipeline_id=self._replica_id,
                            num_replicas_in_sync=self._num_replicas)

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> DistributedDataset:
        """Each replica keeps its share of every global batch (AutoShardPolicy DATA: every sample once)."""
        if isinstance(dataset, DistributedDataset):
            return dataset
        policy = AutoShardPolicy.AUTO
        if hasattr(dataset, "options"):
            policy = AutoShardPolicy(dataset.options().experimental_distribute.auto_shard_policy)
        if policy is AutoShardPolicy.FILE and self._num_replicas > 1:
            raise ValueError("AutoShardPolicy.FILE shards by input files, and this dataset is not read from files. "
                             "Use AutoShardPolicy.DATA (or AUTO), or build per-worker datasets with "
                             "strategy.distribute_datasets_from_function.")
        shared = self._distributed and policy is not AutoShardPolicy.OFF
        if shared and hasattr(dataset, "get_state"):
            # torch seeds each process differently, so unseeded shuffles would differ between replicas:
            # every replica takes rank 0's pipeline random state (seeds, pass counters) instead.
            dataset.set_state(self.broadcast(dataset.get_state(), src=0))
        verify = self._verify_same_batches if shared else None
        uneven = getattr(options, "experimental_allow_uneven_split", None)
        return DistributedDataset(dataset, self._input_context(), self._device, split_global_batch=True,
                                  options=options, replica_id=self._replica_id, verify=verify,
                                  allow_uneven_split=self._allow_uneven_split if uneven is None else uneven)

    def _verify_same_batches(self, batch: Any) -> None:
        """Slicing global batches is only right if every replica's pipeline yields the same batches."""
        leaves = [torch.as_tensor(leaf) for leaf in flatten_structure(batch) if hasattr(leaf, "shape")]
        stats = [float(leaf.numel()) for leaf in leaves]
        stats += [float(leaf.double().sum()) for leaf in leaves if leaf.dtype != torch.bool]
        mine = torch.tensor(stats, dtype=torch.float64)
        everyone = self._gather_padded(mine.unsqueeze(0))
        if any(not torch.allclose(other, mine.unsqueeze(0), rtol=1e-9, atol=0) for other in everyone):
            raise ValueError(
                "The dataset gives different batches on different replicas, so splitting each global batch "
                "would not cover every sample exactly once. Make the input pipeline identical on every "
                "replica (call tf.random.set_seed(...) before building it, or shuffle(..., seed=...)), or "
                "use strategy.distribute_datasets_from_function to build per-replica datasets."
            )
