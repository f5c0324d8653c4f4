"""`tf.keras.distribution` (Keras 3's API): device meshes, tensor layouts, LayoutMap, and the DataParallel
and ModelParallel distributions, each run by a torchstrategy strategy once it is set."""
from __future__ import annotations

import collections.abc
import contextlib
import math
import re
from typing import Any, Iterator, Optional, Sequence

import numpy as np
import torch

from torchstrategy import _context

DEFAULT_BATCH_DIM_NAME = "batch"


def list_devices(device_type: Optional[str] = None) -> list[str]:
    """The job's devices as "gpu:i" / "cpu:i" strings: GPUs when there are any (or `device_type="gpu"`),
    else one CPU device per process of the job (torchrun's world size; 1 for a lone process).

    >>> list_devices("cpu")
    ['cpu:0']
    """
    from torchstrategy import cluster

    kind = (device_type or ("gpu" if torch.cuda.is_available() else "cpu")).lower()
    if kind in ("gpu", "cuda"):
        return [f"gpu:{i}" for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0)]
    if kind != "cpu":
        raise ValueError(f"list_devices: device_type must be 'cpu' or 'gpu' (TPUs are not supported here); "
                         f"got {device_type!r}.")
    spec = cluster.process_spec()
    return [f"cpu:{i}" for i in range(spec.world_size if spec.launched else 1)]


def initialize(job_addresses: Optional[str] = None, num_processes: Optional[int] = None,
               process_id: Optional[int] = None) -> None:
    """Joins this process to its multi-process job before any computation (Keras 3): `job_addresses` ('host:port'
    of process 0, or of every process, comma separated), `num_processes` and this `process_id`, each taken from
    KERAS_DISTRIBUTION_JOB_ADDRESSES / _NUM_PROCESSES / _PROCESS_ID when not given. With none of them, the job the
    environment describes (torchrun, TF_CONFIG, SLURM) is joined; a lone process has nothing to join.
    On torch this makes the process group (gloo, nccl on CUDA) that strategies made afterwards use."""
    from datetime import timedelta

    import torch.distributed as dist

    from torchstrategy import cluster
    from torchstrategy.cluster.environment import keras_distribution_settings

    env_addresses, env_count, env_id = keras_distribution_settings()
    job_addresses = env_addresses if job_addresses is None else job_addresses
    num_processes = env_count if num_processes is None else num_processes
    process_id = env_id if process_id is None else process_id
    if job_addresses is None and num_processes is None and process_id is None:
        spec = cluster.process_spec()
    else:
        spec = cluster.declare_job(job_addresses, num_processes, process_id).process_spec()
    if dist.is_available() and dist.is_initialized():
        if (dist.get_world_size(), dist.get_rank()) != (spec.world_size, spec.rank):
            raise RuntimeError(f"keras.distribution.initialize: a process group of {dist.get_world_size()} processes "
                               f"(rank {dist.get_rank()}) already exists; this call describes rank {spec.rank} of "
                               f"{spec.world_size}. Call initialize once, before any strategy is made.")
        return
    if spec.world_size == 1:
        return
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(spec.local_rank % torch.cuda.device_count())
    dist.init_process_group(backend, init_method=f"tcp://{spec.master_addr}:{spec.master_port}", rank=spec.rank,
                            world_size=spec.world_size, timeout=timedelta(seconds=300))
    from torchstrategy.distribute.parts import collectives

    collectives.leave_at_exit()


def get_device_count(device_type: Optional[str] = None) -> int:
    """How many devices of one type the job has (GPUs when there are any, else CPUs; never a mix), counted as
    list_devices(device_type) lists them."""
    return len(list_devices(device_type))


def _device_kind(device: Any) -> str:
    text = str(device).lower().lstrip("/").replace("device:", "")
    kind = text.split(":")[0]
    if kind not in ("cpu", "gpu", "cuda"):
        raise ValueError(f"Unknown device {device!r}: name devices like 'cpu:0' or 'gpu:0' (see list_devices()).")
    return "gpu" if kind in ("gpu", "cuda") else "cpu"


class DeviceMesh:
    """A grid of devices with named axes, e.g. `DeviceMesh((1, 2), ["batch", "model"], devices)`.

    >>> DeviceMesh((1,), ["batch"], ["cpu:0"]).axis_names
    ['batch']
    """

    def __init__(self, shape: Sequence[int], axis_names: Sequence[str], devices: Optional[Sequence[Any]] = None) -> None:
        if not shape or not axis_names:
            raise ValueError(f"DeviceMesh shape and axis_names must not be empty; got shape={shape}, "
                             f"axis_names={axis_names}.")
        if len(shape) != len(axis_names):
            raise ValueError(f"DeviceMesh shape and axis_names must have the same length; got shape={shape}, "
                             f"axis_names={axis_names}.")
        devices = np.array(list_devices() if devices is None else devices, dtype=object)
        if math.prod(shape) != devices.size:
            raise ValueError(
                f"DeviceMesh shape {tuple(shape)} holds {math.prod(shape)} devices, but {devices.size} device(s) "
                f"were given ({list(devices.reshape(-1))}): the shape must multiply to the device count. Pass "
                f"devices=[...] with {math.prod(shape)} entries, e.g. {[f'cpu:{i}' for i in range(math.prod(shape))]}.")
        kinds = {_device_kind(d) for d in devices.reshape(-1)}
        if len(kinds) > 1:
            raise ValueError(f"DeviceMesh devices must all be CPUs or all GPUs; got {list(devices.reshape(-1))}.")
        self._shape, self._axis_names = tuple(int(s) for s in shape), list(axis_names)
        self._devices = devices.reshape(self._shape)
        self.device_type = kinds.pop()

    shape = property(lambda self: self._shape)
    axis_names = property(lambda self: self._axis_names)
    devices = property(lambda self: self._devices)

    def __repr__(self) -> str:
        return f"<DeviceMesh shape={self.shape}, axis_names={self.axis_names}>"


class TensorLayout:
    """How a tensor lies on a mesh: one mesh axis name (that dimension is split over it) or None per dimension."""

    def __init__(self, axes: Sequence[Optional[str]], device_mesh: Optional[DeviceMesh] = None) -> None:
        self._axes = tuple(axes)
        self._device_mesh = device_mesh
        self._validate()

    axes = property(lambda self: self._axes)

    @property
    def device_mesh(self) -> Optional[DeviceMesh]:
        return self._device_mesh

    @device_mesh.setter
    def device_mesh(self, mesh: DeviceMesh) -> None:
        if self._device_mesh is not None:
            raise ValueError(f"This TensorLayout already has the mesh {self._device_mesh}; it cannot be replaced.")
        self._device_mesh = mesh
        self._validate()

    def _validate(self) -> None:
        if self._device_mesh is None:
            return
        unknown = sorted({a for a in self._axes if a is not None} - set(self._device_mesh.axis_names))
        if unknown:
            raise ValueError(f"TensorLayout axes {self._axes} name {unknown}, which the mesh does not have: valid "
                             f"axis names are {self._device_mesh.axis_names} (or None for an unsplit dimension).")

    def __repr__(self) -> str:
        return f"<TensorLayout axes={self.axes}, device_mesh={self.device_mesh}>"


class LayoutMap(collections.abc.MutableMapping):
    """Variable-path regexes -> TensorLayout (a tuple of axis names is turned into one). A path such as
    "dense_1/kernel" (layer name / weight name) gets the layout of its one matching key (re.search)."""

    def __init__(self, device_mesh: DeviceMesh) -> None:
        self._layouts: dict[str, TensorLayout] = collections.OrderedDict()
        self._device_mesh = device_mesh

    device_mesh = property(lambda self: self._device_mesh)

    def __getitem__(self, key: str) -> Optional[TensorLayout]:
        if key in self._layouts:
            return self._layouts[key]
        matching = [k for k in self._layouts if re.search(k, key)]
        if len(matching) > 1:
            raise ValueError(f"Path '{key}' matches several layout keys {matching}: make each variable path match "
                             f"at most one key of the LayoutMap.")
        return self._layouts[matching[0]] if matching else None

    def __setitem__(self, key: str, layout: Any) -> None:
        if key in self._layouts:
            raise ValueError(f"'{key}' is already in the LayoutMap (as {self._layouts[key]}); keys must be unique.")
        if isinstance(layout, (tuple, list)):
            layout = TensorLayout(layout)
        if not isinstance(layout, TensorLayout):
            raise ValueError(f"A LayoutMap value must be a TensorLayout or a tuple of axis names; got {layout!r}.")
        if layout.device_mesh is None and self._device_mesh is not None:
            layout.device_mesh = self._device_mesh
        self._layouts[key] = layout

    def __delitem__(self, key: str) -> None:
        del self._layouts[key]

    def __len__(self) -> int:
        return len(self._layouts)

    def __iter__(self) -> Iterator[str]:
        return iter(self._layouts)


class _AxesView(collections.abc.Mapping):
    """A LayoutMap seen as {regex: axes} (plain data for the strategy), read when the model is set up."""

    def __init__(self, layout_map: LayoutMap) -> None:
        self._map = layout_map

    def __getitem__(self, key: str) -> tuple:
        return self._map._layouts[key].axes

    def __len__(self) -> int:
        return len(self._map)

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)


class Distribution:
    """Base of DataParallel and ModelParallel: a mesh, and the strategy that runs it (started on first use)."""

    def __init__(self, device_mesh: DeviceMesh, batch_dim_name: str) -> None:
        self._device_mesh = device_mesh
        self.batch_dim_name = batch_dim_name
        self._strategy: Any = None

    device_mesh = property(lambda self: self._device_mesh)

    @property
    def strategy(self) -> Any:
        """The tf.distribute strategy that trains models created under this distribution (its processes
        start here: a plain `python train.py` re-runs itself once per further mesh device)."""
        if self._strategy is None:
            self._strategy = self._make_strategy()
        return self._strategy

    def _make_strategy(self) -> Any:
        raise NotImplementedError

    @contextlib.contextmanager
    def scope(self) -> Iterator["Distribution"]:
        """Makes this the current distribution within the block."""
        previous = distribution()
        set_distribution(self)
        try:
            yield self
        finally:
            set_distribution(previous)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} device_mesh={self.device_mesh}>"


class DataParallel(Distribution):
    """Replicated weights, batches split over the mesh's first axis (MirroredStrategy underneath)."""

    def __init__(self, device_mesh: Optional[DeviceMesh] = None, devices: Optional[Sequence[Any]] = None,
                 auto_shard_dataset: bool = True) -> None:
        if device_mesh is not None and not isinstance(device_mesh, DeviceMesh):
            raise ValueError(f"DataParallel(device_mesh=...) must be a DeviceMesh; got {type(device_mesh).__name__}.")
        if device_mesh is None:
            devices = list_devices() if devices is None else list(devices)
            device_mesh = DeviceMesh((len(devices),), [DEFAULT_BATCH_DIM_NAME], devices)
        super().__init__(device_mesh, device_mesh.axis_names[0])
        self.auto_shard_dataset = auto_shard_dataset

    def _make_strategy(self) -> Any:
        from torchstrategy.distribute.mirrored import MirroredStrategy

        kind = self.device_mesh.device_type
        return MirroredStrategy([f"/{kind}:{i}" for i in range(self.device_mesh.devices.size)])


class ModelParallel(Distribution):
    """Weights laid out by a LayoutMap (DTensor shards over the named mesh axes), batches split over
    `batch_dim_name` (default: the mesh's first axis). Keyword-only, as Keras 3.15 (which refuses Keras 3.0's
    positional form); `device_mesh=` is still taken as a keyword. `auto_shard_dataset` is kept as
    DataParallel keeps it."""

    def __init__(self, *, layout_map: Optional[LayoutMap] = None, batch_dim_name: Optional[str] = None,
                 auto_shard_dataset: bool = True, **kwargs: Any) -> None:
        mesh = kwargs.pop("device_mesh", None)
        if kwargs:
            raise TypeError(f"ModelParallel got unexpected keyword arguments {sorted(kwargs)}.")
        if not isinstance(layout_map, LayoutMap):
            raise ValueError(f"ModelParallel needs layout_map=LayoutMap(device_mesh); got {layout_map!r}.")
        mesh = mesh or layout_map.device_mesh
        batch_dim_name = batch_dim_name or mesh.axis_names[0]
        if batch_dim_name not in mesh.axis_names:
            raise ValueError(f"batch_dim_name '{batch_dim_name}' is not an axis of the mesh {mesh.axis_names}.")
        super().__init__(mesh, batch_dim_name)
        self.layout_map = layout_map
        self.auto_shard_dataset = auto_shard_dataset

    def _make_strategy(self) -> Any:
        from torchstrategy.distribute.tensor_parallel import TensorParallelStrategy

        mesh = self.device_mesh
        return TensorParallelStrategy(mesh.shape, mesh.axis_names, self.batch_dim_name, _AxesView(self.layout_map),
                                      device_type="cuda" if mesh.device_type == "gpu" else "cpu")


def set_distribution(value: Optional[Distribution]) -> None:
    """Makes `value` the global distribution: models, layers and optimizers created afterwards (outside any
    strategy scope) belong to its strategy, and fit trains them with it. None clears it."""
    if value is not None and not isinstance(value, Distribution):
        raise ValueError(f"set_distribution expects a DataParallel or ModelParallel (or None); got {value!r}.")
    _context.set_distribution(value, value.strategy if value is not None else None)


def distribution() -> Optional[Distribution]:
    """The distribution set by `set_distribution`, or None."""
    return _context.current_distribution()


def distribute_tensor(tensor: Any, layout: TensorLayout) -> Any:
    """`tensor` laid out as `layout`: a torch DTensor (this process's shard) on a multi-device mesh whose
    distribution is set; on a one-device mesh the tensor itself."""
    if not isinstance(layout, TensorLayout) or layout.device_mesh is None:
        raise ValueError(f"distribute_tensor needs a TensorLayout with a device_mesh; got {layout!r}.")
    tensor = torch.as_tensor(tensor)
    if len(layout.axes) != tensor.dim():
        raise ValueError(f"The layout {layout.axes} has {len(layout.axes)} entries but the tensor has "
                         f"{tensor.dim()} dimension(s) (shape {tuple(tensor.shape)}).")
    mesh = layout.device_mesh
    if mesh.devices.size == 1:
        return tensor
    current = distribution()
    torch_mesh = current.strategy.device_mesh if current is not None else None
    if torch_mesh is None or current.device_mesh.shape != mesh.shape or \
            list(current.device_mesh.axis_names) != list(mesh.axis_names):
        raise ValueError(f"distribute_tensor on the {mesh.devices.size}-device mesh {mesh} needs that mesh's "
                         f"processes: call set_distribution(ModelParallel(...)) on it first.")
    from torch.distributed.tensor import distribute_tensor as _distribute
    from torchstrategy.distribute.parts.layouts import placements_for

    return _distribute(tensor, torch_mesh, placements_for(layout.axes, mesh.axis_names, "tensor", tensor.dim()))
