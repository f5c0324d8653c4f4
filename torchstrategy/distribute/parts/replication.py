"""The replication part: how the module the trainer calls is kept in sync across replicas (DDP
with its overlapped gradient all-reduce, or a plain local module when there is nothing to sync)."""
from __future__ import annotations

import contextlib
from typing import Any, ContextManager, Optional, Sequence

import torch
from torch import nn


class LocalReplication:
    """One copy of the module in this process: move it to the device, nothing to synchronise."""

    #: True when a model must be set up (e.g. sharded) before its first call, also outside fit (custom loops)
    setup_before_first_call = False
    #: True when a forward pass runs collectives (sharded weights are gathered): every replica must run it
    forward_syncs = False

    def __init__(self, device: torch.device) -> None:
        self.device = torch.device(device)

    def setup(self, module: nn.Module, optimizer: Any = None) -> nn.Module:
        module.to(self.device)
        return module

    def no_sync(self, module: nn.Module) -> ContextManager[None]:
        return contextlib.nullcontext()

    def prepare_optimizer(self, optimizer: Any) -> None:
        """Called before each optimizer step (a mesh lays the optimizer's slots out on it); nothing here."""

    def init_context(self) -> ContextManager[None]:
        return contextlib.nullcontext()

    def gradients(self, targets: Sequence[torch.Tensor], sources: Sequence[torch.Tensor],
                  grad_outputs: Sequence[torch.Tensor], retain_graph: bool, multiplier: float) -> list:
        """This replica's own gradients of `targets` for `sources` (None where unconnected), as
        GradientTape.gradient returns them; replicas' gradients are combined later, by apply_gradients."""
        return list(torch.autograd.grad(list(targets), list(sources), grad_outputs=list(grad_outputs),
                                        retain_graph=retain_graph, allow_unused=True))

    def global_norm(self, grads: Sequence[torch.Tensor]) -> torch.Tensor:
        """The norm of all gradients together (every replica holds whole gradients)."""
        norms = torch._foreach_norm([g.detach() for g in grads])
        return torch.linalg.vector_norm(torch.stack([norm.to(grads[0].device) for norm in norms]))


class DDPReplication(LocalReplication):
    """One replica per process: the module is wrapped in DistributedDataParallel (once per module)."""

    def __init__(self, device: torch.device, active: bool, comm_hook: Optional[tuple] = None) -> None:
        super().__init__(device)
        self._active = active
        self._comm_hook = comm_hook  # (state, hook): how DDP averages a gradient bucket; None: DDP's own all-reduce
        self._wrapped: dict[int, nn.Module] = {}

    def setup(self, module: nn.Module, optimizer: Optional[Any] = None) -> nn.Module:
        module.to(self.device)
        if not self._active or not any(p.requires_grad for p in module.parameters()):
            return module
        # DDP all-reduces the parameters that required gradients when it was made: a model whose trainable set
        # changed since (fine-tuning: layers unfrozen, then compile again) gets a new wrapper
        trainable = tuple(p.requires_grad for p in module.parameters())
        wrapped = self._wrapped.get(id(module))
        if wrapped is None or getattr(wrapped, "_torchstrategy_trainable", None) != trainable:
            device_ids = [self.device.index] if self.device.type == "cuda" else None
            wrapped = nn.parallel.DistributedDataParallel(module, device_ids=device_ids)
            if self._comm_hook is not None:
                wrapped.register_comm_hook(*self._comm_hook)
            wrapped._torchstrategy_trainable = trainable
            self._wrapped[id(module)] = wrapped
        return wrapped

    def no_sync(self, module: Any) -> ContextManager[None]:
        wrapped = self._wrapped.get(id(module), module)
        return wrapped.no_sync() if isinstance(wrapped, nn.parallel.DistributedDataParallel) \
            else contextlib.nullcontext()
