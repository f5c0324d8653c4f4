"""The parts of an XLA SPMD mesh (TPUStrategy): one program over every local XLA device, each global
batch sharded over the mesh's data axis, weights replicated; the step graph is cut once per step."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Optional, Sequence

import torch

from torchstrategy.data.distribute import DistributedDataset, batch_size_of, check_divisible
from torchstrategy.distribute.parts.collectives import SingleReplicaCollectives
from torchstrategy.distribute.parts.placement import BatchPlacement
from torchstrategy.distribute.parts.replication import LocalReplication
from torchstrategy.nest import flatten as flatten_structure, map_structure


def _xla() -> Any:
    import torch_xla

    return torch_xla


class XlaMesh:
    """The SPMD mesh of this host's XLA devices: ('data',) of size N (model axes may come later)."""

    def __init__(self, num_devices: int) -> None:
        import numpy as np
        import torch_xla.distributed.spmd as xs

        self.num_devices = int(num_devices)
        self.device = _xla().device()
        self.mesh = xs.Mesh(np.arange(self.num_devices), (self.num_devices,), ("data",))

    def shard_variable(self, tensor: torch.Tensor) -> None:
        """Annotates a variable as split over the data axis along its first dimension that divides by the
        device count (FSDP-style: XLA gathers it where it is used); replicated when none divides."""
        import torch_xla.distributed.spmd as xs

        even = [dim for dim, size in enumerate(tensor.shape) if size % self.num_devices == 0]
        if not even:
            self.replicate(tensor)
            return
        spec = tuple("data" if dim == even[0] else None for dim in range(tensor.dim()))
        xs.mark_sharding(tensor, self.mesh, spec)

    def replicate(self, tensor: torch.Tensor) -> None:
        """Annotates a tensor on the device as replicated on every device. Said once up front, the first
        step's graph is the steady one (else XLA adds the annotation after that step: a second graph)."""
        import torch_xla.distributed.spmd as xs

        if tensor.dim():
            xs.mark_sharding(tensor, self.mesh, (None,) * tensor.dim())

    def shard_batch(self, tensor: torch.Tensor) -> torch.Tensor:
        """The tensor on the XLA device, its first (batch) dimension split over the data axis."""
        import torch_xla.distributed.spmd as xs

        tensor = torch.as_tensor(tensor).to(self.device)
        if tensor.dim() and tensor.shape[0] % self.num_devices == 0:
            xs.mark_sharding(tensor, self.mesh, ("data",) + (None,) * (tensor.dim() - 1))
        return tensor


class SpmdCollectives(SingleReplicaCollectives):
    """N replicas in sync, one step program: a step computes the whole global batch at once (XLA splits
    it over the devices and inserts the all-reduces), so every combination over replicas is already
    done and the process runs the step once. `execution()` groups steps into one graph (steps_per_execution)."""

    num_local_replicas = 1
    num_step_replicas = 1  # one program computes the global batch: losses are not divided into shares

    def __init__(self, num_replicas: int) -> None:
        super().__init__(0)
        self.num_replicas = int(num_replicas)
        self._deferred = 0

    def run_replicas(self, fn: Callable[..., Any], per_replica_args: list) -> list:
        results = super().run_replicas(fn, per_replica_args)
        if not self._deferred:
            _xla().sync()  # one graph per step: an epoch never becomes one growing lazy graph
        return results

    @contextlib.contextmanager
    def execution(self) -> Iterator[None]:
        """The steps inside run as one XLA graph, cut when the block ends (Keras's steps_per_execution)."""
        self._deferred += 1
        try:
            yield
        finally:
            self._deferred -= 1
            if not self._deferred:
                _xla().sync()


class SpmdReplication(LocalReplication):
    """The module on the XLA device with its weights replicated over the mesh (XLA's default). Moved there
    when fit sets it up or at its first training call (custom loops); host tensors given to it are moved too
    (their batch sharded), as TF places a TPU model's inputs."""

    setup_before_first_call = True

    def __init__(self, mesh: XlaMesh, shard_variables: bool = False) -> None:
        super().__init__(mesh.device)
        self._mesh = mesh
        # FSDP-style: weights and optimizer slots split over the devices instead of replicated
        self._lay_out = mesh.shard_variable if shard_variables else mesh.replicate
        self._placed: set = set()
        self._annotated: dict = {}  # id(optimizer) -> how many slots were annotated

    def setup(self, module: Any, optimizer: Any = None) -> Any:
        _to_device_in_place(module, self._mesh.device)
        if id(module) not in self._placed:
            self._placed.add(id(module))
            for tensor in module.parameters():
                self._lay_out(tensor)
            for tensor in module.buffers():
                self._mesh.replicate(tensor)
            module.register_forward_pre_hook(self._inputs_to_mesh, with_kwargs=True)
        if optimizer is not None:
            _move_optimizer_state(optimizer, self._mesh.device)
            build = getattr(optimizer, "build", None)
            if build is not None and not getattr(optimizer, "built", True):
                variables = getattr(module, "trainable_variables", None)  # Keras order, as fit builds it
                build(variables if variables is not None else [p for p in module.parameters() if p.requires_grad])
            self.prepare_optimizer(optimizer)
            # slots made now are data on the device before the first step, as they are in every later epoch's
            # first step: one graph for both (else the second epoch compiles its first step again)
            _xla().sync()
        return module

    def prepare_optimizer(self, optimizer: Any) -> None:
        """Annotates the optimizer's slots (made when it was built, after the model moved) as their weights
        are laid out, once, before its first update: the first step then compiles to the steady step's graph."""
        count = sum(len(state) for state in optimizer.state.values())
        if self._annotated.get(id(optimizer)) == count:
            return
        self._annotated[id(optimizer)] = count
        for state in optimizer.state.values():
            for value in state.values():
                if isinstance(value, torch.Tensor) and value.device.type == "xla":
                    self._lay_out(value)

    def _inputs_to_mesh(self, module: Any, args: tuple, kwargs: dict) -> tuple:
        def place(value: Any) -> Any:
            if isinstance(value, torch.Tensor) and value.device.type != "xla":
                return self._mesh.shard_batch(value)
            return value

        return map_structure(place, args), kwargs


def _to_device_in_place(module: Any, device: torch.device) -> None:
    """`module.to(device)` keeping every parameter and buffer object: a host tensor cannot hold XLA storage, so
    plain `.to()` makes new Parameters, and an optimizer built before (`optimizer.build(model.trainable_variables)`
    in the scope, TF's idiom before restoring a checkpoint) would hold the old ones. torch's swap of tensor
    contents keeps the objects, with the Keras attributes they carry."""
    swapping = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        module.to(device)
    finally:
        torch.__future__.set_swap_module_params_on_conversion(swapping)


def _move_optimizer_state(optimizer: Any, device: torch.device) -> None:
    """Slots of an optimizer built before the model moved (its parameters are moved in place by .to())."""
    for state in optimizer.state.values():
        for key, value in state.items():
            if isinstance(value, torch.Tensor) and value.dim() and value.device != device:
                state[key] = value.to(device)


def _concatenated(parts: Sequence[Any]) -> Any:
    """One structure whose tensors are the parts' tensors joined along the batch dimension."""
    if len(parts) == 1:
        return parts[0]
    leaves = [flatten_structure(part) for part in parts]
    joined = iter([torch.cat([torch.as_tensor(leaf) for leaf in column]) if hasattr(column[0], "shape")
                   and len(column[0].shape) else column[0] for column in zip(*leaves)])
    return map_structure(lambda _leaf: next(joined), parts[0])


class SpmdPlacement(BatchPlacement):
    """Global batches go to the XLA device whole, sharded over the data axis (each tensor its own
    sharding). A dataset function's per-replica batches are joined N at a time into one global batch."""

    whole_batches = True

    def __init__(self, mesh: XlaMesh, collectives: Any) -> None:
        super().__init__(torch.device("cpu"), mesh.num_devices, combine=self._global_batch, collectives=collectives)
        self._mesh = mesh

    def _global_batch(self, parts: Sequence[Any]) -> Any:
        return map_structure(lambda leaf: self._mesh.shard_batch(leaf) if hasattr(leaf, "shape") else leaf,
                             _concatenated(parts))

    def place(self, batch: Any) -> Any:
        if not self.allow_uneven_split:
            check_divisible(batch_size_of(batch), self._mesh.num_devices)
        return self._global_batch([batch])

    def distribute_per_replica_batches(self, dataset: Any, context: Any, replica_ids: Sequence[int],
                                       options: Any = None) -> DistributedDataset:
        return super().distribute_per_replica_batches(dataset, context, tuple(range(self._mesh.num_devices)),
                                                      options)


def compile_count() -> int:
    """How many XLA graphs this process compiled so far (torch-xla's CompileTime metric)."""
    import torch_xla.debug.metrics as metrics

    data: Optional[tuple] = metrics.metric_data("CompileTime")
    return int(data[0]) if data else 0


def init_spmd() -> None:
    """Switches torch-xla to SPMD mode (once per process, before any XLA tensor is made)."""
    import torch_xla.runtime as xr

    if not getattr(xr, "is_spmd", lambda: False)():
        xr.use_spmd()

