"""The sharding replication part: parameters, gradients and optimizer state split over the replicas with
FSDP2 (`fully_shard`: one unit per layer that owns weights, plus the root), and the norm over all shards."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Optional, Sequence

import torch
import torch.distributed as dist
from torch import nn

from torchstrategy.distribute.parts.replication import LocalReplication


@dataclass(frozen=True)
class ShardingOptions:
    """How FSDPStrategy shards (tf.distribute.experimental.ShardingOptions).

    `reshard_after_forward`: free the gathered parameters after each unit's forward (less memory, one more
    all-gather in backward). `param_dtype`/`reduce_dtype`: the dtypes parameters are gathered in and
    gradients reduced in (None: from the Keras global policy, e.g. bfloat16/float32 for 'mixed_bfloat16').
    `cpu_offload`: keep the shards and optimizer state in host memory (for GPU training).

    >>> ShardingOptions(reshard_after_forward=False).reshard_after_forward
    False
    """

    reshard_after_forward: bool = True
    param_dtype: Optional[torch.dtype] = None
    reduce_dtype: Optional[torch.dtype] = None
    cpu_offload: bool = False


def is_sharded(tensor: Any) -> bool:
    """True for a DTensor (a sharded parameter, gradient or optimizer slot)."""
    from torch.distributed.tensor import DTensor

    return isinstance(tensor, DTensor)


def _weighted_units(module: nn.Module) -> list[nn.Module]:
    """The modules that own parameters directly (a Keras layer's kernel and bias), innermost first."""
    units = [m for m in module.modules() if m is not module and any(True for _ in m.parameters(recurse=False))]
    return list(reversed(units))


def _keep_class_name(module: nn.Module) -> None:
    """fully_shard swaps the class for a subclass named 'FSDP<Name>'; Keras names, configs and saved files
    use the class name, so the subclass takes the original's name (construction still gives the original)."""
    cls = type(module)
    original = cls.__mro__[2] if len(cls.__mro__) > 2 else cls  # (FSDPName, FSDPModule, Name, ...)
    if cls.__name__ == f"FSDP{original.__name__}":
        cls.__name__, cls.__qualname__ = original.__name__, original.__qualname__
        cls.__module__ = original.__module__


class FullyShardReplication(LocalReplication):
    """Shards a module in place (its Parameters become DTensors), so it trains sharded wherever it is called:
    in fit, in `strategy.run`, or in a plain loop. An optimizer built before sharding is re-pointed."""

    setup_before_first_call = True  # a model is sharded before its first training call, in custom loops too
    forward_syncs = True  # each layer gathers its sharded weights for its forward

    def __init__(self, device: torch.device, active: bool, options: ShardingOptions,
                 policy_dtypes: Callable[[], tuple] = lambda: (None, None)) -> None:
        super().__init__(device)
        self._active = active
        self.options = options
        self._policy_dtypes = policy_dtypes
        self._mesh: Any = None
        self._after_training: dict = {}  # id(module) -> whether its last forward had gradients

    @property
    def mesh(self) -> Any:
        if self._mesh is None:
            from torch.distributed.device_mesh import init_device_mesh

            self._mesh = init_device_mesh(self.device.type, (dist.get_world_size(),))
        return self._mesh

    def _fsdp_kwargs(self) -> dict:
        from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy

        param_dtype, reduce_dtype = self.options.param_dtype, self.options.reduce_dtype
        if param_dtype is None and reduce_dtype is None:
            param_dtype, reduce_dtype = self._policy_dtypes()
        offload = CPUOffloadPolicy(pin_memory=torch.cuda.is_available()) if self.options.cpu_offload \
            else OffloadPolicy()  # pinned host memory needs a CUDA driver
        return {"mesh": self.mesh, "reshard_after_forward": self.options.reshard_after_forward,
                "mp_policy": MixedPrecisionPolicy(param_dtype=param_dtype, reduce_dtype=reduce_dtype),
                "offload_policy": offload, "shard_placement_fn": self._placement}

    def _placement(self, param: nn.Parameter) -> Any:
        """Which dimension a parameter is split along: the first (FSDP's default, no copies) when it divides
        evenly, else the first that does (FSDP splits other dimensions only evenly), else the first unevenly.
        Keras kernels are HWIO, so a Conv2D kernel's first dimension is often 3: split there, one replica
        would hold two thirds of it."""
        from torch.distributed.tensor import Shard

        count = dist.get_world_size()
        shape = tuple(param.shape)
        if not shape or shape[0] % count == 0:
            return Shard(0)
        even = [dim for dim, size in enumerate(shape) if size % count == 0]
        return Shard(even[0] if even else 0)

    def setup(self, module: nn.Module, optimizer: Any = None) -> nn.Module:
        from torch.distributed.fsdp import FSDPModule

        if not self._active or isinstance(module, FSDPModule):
            return module
        module.to(self.device)
        before = dict(module.named_parameters(remove_duplicate=False))
        kwargs = self._fsdp_kwargs()
        from torch.distributed.fsdp import fully_shard

        for unit in _weighted_units(module):
            if not isinstance(unit, FSDPModule):
                fully_shard(unit, **kwargs)
                _keep_class_name(unit)
        fully_shard(module, **kwargs)
        _keep_class_name(module)
        module.register_forward_pre_hook(self._sync_buffers)
        after = dict(module.named_parameters(remove_duplicate=False))
        mapping = {id(before[name]): after[name] for name in before if name in after}
        if optimizer is not None and any(True for group in optimizer.param_groups for _ in group["params"]):
            replace_optimizer_parameters(optimizer, mapping)
        return module

    def _sync_buffers(self, module: nn.Module, args: Any) -> None:
        # Buffers (BatchNorm's moving statistics) are not sharded. As DDP does, rank 0's copy becomes every
        # rank's at the start of a forward with gradients and of the first forward after one (the first
        # evaluation batch after training), so replicas agree exactly as they do under MirroredStrategy.
        with_grad = torch.is_grad_enabled()
        if with_grad or self._after_training.get(id(module), False):
            for buffer in module.buffers():
                if buffer.is_floating_point():
                    dist.broadcast(buffer.data, src=0)
        self._after_training[id(module)] = with_grad

    def no_sync(self, module: nn.Module) -> ContextManager[None]:
        from torch.distributed.fsdp import FSDPModule

        if not isinstance(module, FSDPModule):
            return contextlib.nullcontext()

        @contextlib.contextmanager
        def unsynced() -> Any:
            module.set_requires_gradient_sync(False)
            try:
                yield
            finally:
                module.set_requires_gradient_sync(True)

        return unsynced()

    def gradients(self, targets: Sequence[torch.Tensor], sources: Sequence[torch.Tensor],
                  grad_outputs: Sequence[torch.Tensor], retain_graph: bool, multiplier: float) -> list:
        """Gradients of sharded parameters come out of FSDP's backward (reduce-scattered into `.grad`), not
        out of autograd.grad; they are the sum over replicas (`multiplier` undoes FSDP's average)."""
        sharded = [s for s in sources if is_sharded(s)]
        if not sharded:
            return super().gradients(targets, sources, grad_outputs, retain_graph, multiplier)
        saved = [s.grad for s in sources]
        for source in sources:
            source.grad = None
        scaled = [g * multiplier for g in grad_outputs]
        torch.autograd.backward(list(targets), grad_tensors=scaled, retain_graph=retain_graph)
        results = [s.grad if is_sharded(s) or s.grad is None else s.grad / multiplier for s in sources]
        for source, grad in zip(sources, saved):
            source.grad = grad
        return results

    def global_norm(self, grads: Sequence[torch.Tensor]) -> torch.Tensor:
        """sqrt of the sum of squares over every shard of every gradient (the same on all replicas)."""
        local = [g.to_local() if is_sharded(g) else g for g in grads]
        device = local[0].device
        squares = [torch.linalg.vector_norm(g.detach().float()).to(device) ** 2 for g in local]
        zero = torch.zeros((), device=device)
        sharded = sum((sq for sq, g in zip(squares, grads) if is_sharded(g)), zero)
        replicated = sum((sq for sq, g in zip(squares, grads) if not is_sharded(g)), zero)
        if self._active:
            dist.all_reduce(sharded)  # each rank holds different shards; replicated ones are equal everywhere
        return torch.sqrt(sharded + replicated).to(local[0].dtype)


def placed_like(value: Any, param: Any) -> Any:
    """A full-size tensor (an optimizer slot, a loaded weight) laid out as its sharded parameter: this rank's
    shard of it, cut locally since every rank holds the same full value. Other values are returned as they are."""
    if not isinstance(value, torch.Tensor) or is_sharded(value) or not is_sharded(param) \
            or tuple(value.shape) != tuple(param.shape):
        return value
    from torch.distributed.tensor import distribute_tensor

    local = param.to_local()
    return distribute_tensor(value.to(local.device, local.dtype), param.device_mesh, param.placements,
                             src_data_rank=None)


def lay_out_state_like_parameters(optimizer: Any) -> None:
    """Slots loaded as full tensors (a Keras file, a checkpoint of another strategy) for sharded parameters
    are laid out as their parameter: each replica keeps its own shard."""
    for param, state in optimizer.state.items():
        if is_sharded(param):
            for key, value in state.items():
                state[key] = placed_like(value, param)


def replace_optimizer_parameters(optimizer: Any, mapping: dict) -> None:
    """Points an already-built torch optimizer at the sharded parameters that replaced its own (`mapping`:
    id(old) -> new), its per-parameter state laid out as the new parameter. Keras optimizers also carry
    names keyed by parameter: they get `_replace_parameters(mapping)` to re-key those."""
    hook = getattr(optimizer, "_replace_parameters", None)
    for group in optimizer.param_groups:
        new_params = []
        for old in group["params"]:
            new = mapping.get(id(old), old)
            if new is not old and old in optimizer.state:
                optimizer.state[new] = {key: placed_like(value, new)
                                        for key, value in optimizer.state.pop(old).items()}
            new_params.append(new)
        group["params"] = new_params
    if hook is not None:
        hook(mapping)
