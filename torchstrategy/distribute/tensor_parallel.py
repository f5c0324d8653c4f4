"""TensorParallelStrategy: one process per device of a named mesh (e.g. ("batch", "model")); weights
named by layouts are DTensor shards over the model axes, batches are split over the batch axis."""
from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

import torch

from torchstrategy.distribute import parts
from torchstrategy.distribute.communication import LOCAL_TIMEOUT, CommunicationOptions
from torchstrategy.distribute.parts.collectives import OneReplicaPerProcess, ProcessGroupCollectives, counted
from torchstrategy.distribute.parts.layouts import MeshLayouts
from torchstrategy.distribute.process_groups import (GroupConfig, checked_communication_options, join_process_group,
                                                     threads_per_replica)
from torchstrategy.distribute.strategy import Strategy
from torchstrategy.distribute.values import InputContext


class _OneDataReplicaCollectives(ProcessGroupCollectives):
    """The process group of a mesh whose batch axis has size 1: every process is part of the same
    data replica (same rows), so replica-level combinations are the values themselves, while
    process-level agreement (broadcast, any, barrier, objects) still spans every process."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.num_replicas = 1
        self.loss_multiplier = 1.0  # one data replica: its loss is the whole loss

    def local_replica_ids(self) -> tuple:
        return (0,)

    @property
    def active(self) -> bool:
        return self.num_processes > 1 and torch.distributed.is_initialized()

    # a replica's combinations over the one data replica: the values themselves
    all_reduce = OneReplicaPerProcess.all_reduce
    all_gather = OneReplicaPerProcess.all_gather
    cross_replica_sum = OneReplicaPerProcess.cross_replica_sum
    reduce_gradients = OneReplicaPerProcess.reduce_gradients

    def sum_tensors(self, tensors: list) -> list:
        return tensors

    def gather_batches(self, chunks: list) -> torch.Tensor:
        return torch.cat(chunks) if chunks else torch.empty(0)

    def unanswered_replicas(self, error: BaseException) -> Optional[list]:
        return None if self.num_processes < 2 else []


def check_mesh(mesh_shape: Sequence[int], axis_names: Sequence[str], batch_axis: Optional[str]) -> str:
    """Checks a mesh description; returns the batch axis (the first axis when None)."""
    shape, names = tuple(mesh_shape), tuple(axis_names)
    if not shape or len(shape) != len(names):
        raise ValueError(f"The mesh shape {shape} and axis names {names} must be non-empty and of the same length.")
    if any(not isinstance(size, int) or size < 1 for size in shape):
        raise ValueError(f"Mesh sizes must be positive integers; got shape {shape}.")
    if len(set(names)) != len(names):
        raise ValueError(f"Mesh axis names must be distinct; got {names}.")
    batch_axis = names[0] if batch_axis is None else batch_axis
    if batch_axis not in names:
        raise ValueError(f"The batch axis '{batch_axis}' is not an axis of the mesh {names}.")
    return batch_axis


class TensorParallelStrategy(Strategy):
    """One process per mesh device: parameters laid out by `layouts` ({regex over "layer/weight" paths:
    axes, one mesh axis name or None per tensor dimension}) are DTensor shards; the rest is replicated.

    In a plain `python train.py` the script is re-run for the other devices (as MirroredStrategy does);
    under torchrun each process joins. Supported meshes: the batch axis of size 1 (pure tensor
    parallelism: every process sees the same batches) or the only axis above 1 (data parallelism).

    >>> TensorParallelStrategy((1,), ("batch",)).num_replicas_in_sync
    1
    """

    def __init__(self, mesh_shape: Sequence[int], axis_names: Sequence[str], batch_axis: Optional[str] = None,
                 layouts: Optional[Mapping[str, Sequence]] = None, device_type: str = "cpu",
                 communication_options: Optional[CommunicationOptions] = None) -> None:
        self.mesh_shape, self.axis_names = tuple(mesh_shape), tuple(axis_names)
        self.batch_axis = check_mesh(self.mesh_shape, self.axis_names, batch_axis)
        world = math.prod(self.mesh_shape)
        batch_size = self.mesh_shape[self.axis_names.index(self.batch_axis)]
        if batch_size not in (1, world):
            raise NotImplementedError(
                f"The mesh {dict(zip(self.axis_names, self.mesh_shape))} splits batches over '{self.batch_axis}' "
                f"({batch_size}) and weights over other axes at once; for now use a batch axis of size 1 "
                f"(tensor parallel) or of size {world} (data parallel).")
        on_cuda = device_type in ("cuda", "gpu")
        options = checked_communication_options(communication_options, "TensorParallelStrategy")
        launcher = parts.RerunScriptLauncher(world, threads_per_replica(on_cuda))
        group = join_process_group(launcher, GroupConfig("TensorParallelStrategy", on_cuda, LOCAL_TIMEOUT), options,
                                   _OneDataReplicaCollectives if batch_size == 1 else ProcessGroupCollectives)
        device, collectives = group.device, group.collectives
        mesh = None
        if world > 1:
            from torch.distributed.device_mesh import init_device_mesh

            mesh = init_device_mesh(device.type, self.mesh_shape, mesh_dim_names=self.axis_names)
        #: the torch DeviceMesh (None for a one-device mesh)
        self.device_mesh = mesh
        replication = MeshLayouts(mesh, self.axis_names, self.batch_axis, layouts or {}, device,
                                  average_gradients=batch_size > 1)
        super().__init__(self._wired(device, collectives=collectives, replication=replication, launcher=launcher,
                                     needs_model_in_scope=True))
        self._batch_size = batch_size

    def _input_context(self) -> InputContext:
        # batches are split over the batch axis only: processes differing only in model axes see the same rows
        pipelines = self._batch_size
        pipeline_id = self.process_rank if pipelines > 1 else 0
        return InputContext(num_input_pipelines=pipelines, input_pipeline_id=pipeline_id,
                            num_replicas_in_sync=pipelines)

    def __repr__(self) -> str:
        mesh = ", ".join(f"{n}={s}" for n, s in zip(self.axis_names, self.mesh_shape))
        return f"TensorParallelStrategy(mesh=({mesh}), batch_axis='{self.batch_axis}', device={self.device})"
