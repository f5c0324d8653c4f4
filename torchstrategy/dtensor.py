"""`tf.experimental.dtensor` on torch's DTensor: Mesh (a torch DeviceMesh over processes), Layout (placements),
pack/unpack/relayout/copy_to_mesh/call_with_layout, DVariable, the default mesh, clients = processes."""
from __future__ import annotations

import contextlib
import re
from datetime import timedelta
from typing import Any, Callable, Iterator, List, Optional, Sequence

import numpy as np
import torch
import torch.distributed as dist

from torchstrategy import _context
from torchstrategy.cluster.resolvers import process_spec
from torchstrategy.dtypes import as_dtype

UNSHARDED = "unsharded"
MATCH = "match"
_DEVICE = re.compile(r"(?:^|/)(?:device:)?(CPU|GPU|TPU)(?::(\d+))?$", re.IGNORECASE)


def _device_type(device_type: Optional[str]) -> str:
    kind = (device_type or ("GPU" if torch.cuda.is_available() else "CPU")).upper()
    if kind not in ("CPU", "GPU"):
        raise ValueError(f"dtensor here runs on 'CPU' or 'GPU' (torch DTensor over gloo/nccl); got {device_type!r}.")
    return kind


def _ensure_process_group(kind: str) -> None:
    """Joins the job's process group (one process per mesh device) unless one is joined already."""
    if dist.is_initialized():
        return
    spec = process_spec()
    backend = "nccl" if kind == "GPU" else "gloo"
    if spec.world_size == 1:
        dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
        return
    dist.init_process_group(backend, init_method=f"tcp://{spec.master_addr}:{spec.master_port}", rank=spec.rank,
                            world_size=spec.world_size, timeout=timedelta(seconds=300))


def initialize_accelerator_system(device_type: Optional[str] = None, enable_coordination_service: Optional[bool] = True,
                                  num_logical_cpu_devices: Optional[int] = None,
                                  experimental_reset_context: Optional[bool] = False,
                                  experimental_enable_megcore: Optional[bool] = False) -> str:
    """Joins the job's processes (torchrun/TF_CONFIG variables; a lone process needs none) and returns the
    device type. Each process is one client with one device: mesh devices are processes here."""
    if num_logical_cpu_devices not in (None, 1):
        raise NotImplementedError(f"initialize_accelerator_system(num_logical_cpu_devices={num_logical_cpu_devices}):"
                                  " each mesh device is one process here; start one process per device.")
    if experimental_enable_megcore:
        raise NotImplementedError("initialize_accelerator_system(experimental_enable_megcore=True) is not supported.")
    kind = _device_type(device_type)
    _ensure_process_group(kind)
    _context.set_config_setting("dtensor_device_type", kind)
    return kind


def shutdown_accelerator_system() -> None:
    """Leaves the process group initialize_accelerator_system joined."""
    if dist.is_initialized():
        dist.destroy_process_group()


def num_clients() -> int:
    """The number of processes (TF's clients) in the job."""
    return dist.get_world_size() if dist.is_initialized() else process_spec().world_size


def client_id() -> int:
    """This process's index among the clients."""
    return dist.get_rank() if dist.is_initialized() else process_spec().rank


def _local_device(kind: str) -> str:
    index = client_id() if kind == "CPU" else torch.cuda.current_device()
    return f"/job:localhost/replica:0/task:{client_id()}/device:{kind}:{index if kind == 'GPU' else 0}"


def num_local_devices(device_type: str) -> int:
    """Mesh devices of this client: one (each process is one device)."""
    _device_type(device_type)
    return 1


def num_global_devices(device_type: str) -> int:
    """Mesh devices of the job: one per process."""
    _device_type(device_type)
    return num_clients()


def local_devices(device_type: str, for_client_id: Optional[int] = None) -> List[str]:
    """The device names of a client (this one by default)."""
    kind = _device_type(device_type)
    client = client_id() if for_client_id is None else int(for_client_id)
    return [f"/job:localhost/replica:0/task:{client}/device:{kind}:0"]


def device_name() -> str:
    """The name TF gives its DTensor device."""
    return "/job:localhost/replica:0/task:0/device:CUSTOM:0"


class Mesh:
    """A named grid of devices (`dim_names` x sizes of `global_device_ids`), backed by a torch DeviceMesh
    whose entries are process ranks: device id i is the process of rank i."""

    def __init__(self, dim_names: List[str], global_device_ids: np.ndarray, local_device_ids: List[int],
                 local_devices: List[Any], mesh_name: str = "", global_devices: Optional[List[Any]] = None,
                 use_xla_spmd: bool = False):
        ids = np.asarray(global_device_ids, dtype=np.int64)
        if ids.ndim != len(dim_names) or len(set(dim_names)) != len(dim_names):
            raise ValueError(f"Mesh: {len(dim_names)} distinct dim_names {list(dim_names)} are needed for "
                             f"global_device_ids of shape {ids.shape}.")
        if sorted(ids.reshape(-1).tolist()) != list(range(ids.size)):
            raise ValueError(f"Mesh: global_device_ids must hold 0..{ids.size - 1} once each; got {ids.tolist()}.")
        if any(name in (UNSHARDED, MATCH) for name in dim_names):
            raise ValueError(f"Mesh: dim names {UNSHARDED!r} and {MATCH!r} are reserved.")
        if use_xla_spmd:
            raise NotImplementedError("Mesh(use_xla_spmd=True) is not supported here.")
        self._dim_names, self._ids = list(dim_names), ids
        self._local_ids, self._local_devices = [int(i) for i in local_device_ids], [str(d) for d in local_devices]
        self._name = mesh_name
        match = _DEVICE.search(self._local_devices[0]) if self._local_devices else None
        self._kind = match.group(1).upper() if match else "CPU"
        self._torch: Any = None

    @property
    def dim_names(self) -> List[str]:
        return list(self._dim_names)

    @property
    def name(self) -> str:
        return self._name

    @property
    def size(self) -> int:
        return int(self._ids.size)

    def shape(self) -> List[int]:
        return list(self._ids.shape)

    def dim_size(self, dim_name: str) -> int:
        """The number of devices along `dim_name`."""
        if dim_name not in self._dim_names:
            raise ValueError(f"Mesh has no dimension {dim_name!r}; its dimensions are {self._dim_names}.")
        return int(self._ids.shape[self._dim_names.index(dim_name)])

    def device_type(self) -> str:
        return self._kind

    def global_device_ids(self) -> np.ndarray:
        return self._ids.copy()

    def local_device_ids(self) -> List[int]:
        return list(self._local_ids)

    def local_devices(self) -> List[str]:
        return list(self._local_devices)

    def num_local_devices(self) -> int:
        return len(self._local_devices)

    def torch_mesh(self) -> Any:
        """The torch DeviceMesh (made on first use, joining the process group if needed)."""
        if self._torch is None:
            from torch.distributed.device_mesh import DeviceMesh

            _ensure_process_group(self._kind)
            if dist.get_world_size() != self.size:
                raise ValueError(f"This mesh has {self.size} devices but the job has {dist.get_world_size()} "
                                 "processes: each mesh device is one process here.")
            self._torch = DeviceMesh("cuda" if self._kind == "GPU" else "cpu", torch.as_tensor(self._ids),
                                     mesh_dim_names=tuple(self._dim_names))
        return self._torch

    def to_string(self) -> str:
        """TF's text form: |dim=size,...|global ids|local ids|local devices."""
        dims = ",".join(f"{n}={s}" for n, s in zip(self._dim_names, self._ids.shape))
        ids = ",".join(str(i) for i in self._ids.reshape(-1))
        local = ",".join(str(i) for i in self._local_ids)
        return f"{self._name}|{dims}|{ids}|{local}|{','.join(self._local_devices)}"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Mesh) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:
        return f"Mesh({self.to_string()!r})"


def _mesh_dims(mesh_dims: Any) -> list:
    items = list(mesh_dims.items()) if isinstance(mesh_dims, dict) else [tuple(d) for d in mesh_dims]
    return [(str(name), int(size)) for name, size in items]


def create_distributed_mesh(mesh_dims: Any, mesh_name: str = "", local_devices: Optional[List[Any]] = None,
                            device_type: Optional[str] = None, use_xla_spmd: bool = False) -> Mesh:
    """A mesh over every process of the job (device id = rank), `mesh_dims` [(name, size), ...] in row-major
    order; the sizes must multiply to the number of processes."""
    kind = _device_type(device_type)
    _ensure_process_group(kind)
    dims = _mesh_dims(mesh_dims)
    total = int(np.prod([size for _, size in dims]))
    if total != num_clients():
        raise ValueError(f"create_distributed_mesh: mesh_dims {dims} hold {total} devices but the job has "
                         f"{num_clients()} processes (one device each here).")
    ids = np.arange(total).reshape([size for _, size in dims])
    devices = local_devices or [_local_device(kind)]
    return Mesh([name for name, _ in dims], ids, [client_id()], devices, mesh_name, use_xla_spmd=use_xla_spmd)


def create_mesh(mesh_dims: Any = None, mesh_name: str = "", devices: Optional[List[Any]] = None,
                device_type: Optional[str] = None, use_xla_spmd: bool = False) -> Mesh:
    """A single-client mesh: this process's one device (mesh_dims default: [('x', 1)])."""
    dims = _mesh_dims(mesh_dims) if mesh_dims is not None else [("x", 1)]
    if int(np.prod([size for _, size in dims])) != 1 or (devices is not None and len(devices) != 1):
        raise ValueError(f"create_mesh: a single-client mesh has this process's one device here (got {dims}); "
                         "for more devices start one process per device and use create_distributed_mesh.")
    return create_distributed_mesh(dims, mesh_name, devices, device_type, use_xla_spmd) if num_clients() == 1 else \
        Mesh([n for n, _ in dims], np.zeros([1] * len(dims), dtype=np.int64), [0],
             devices or [_local_device(_device_type(device_type))], mesh_name)


class Layout:
    """How a tensor is split over a mesh: one entry per tensor axis, UNSHARDED or the mesh dimension whose
    devices each hold one slice of that axis."""

    def __init__(self, sharding_specs: List[str], mesh: Mesh):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"Layout needs a dtensor.Mesh; got {type(mesh).__name__}.")
        used = [s for s in sharding_specs if s != UNSHARDED]
        for spec in sharding_specs:
            if spec != UNSHARDED and spec not in mesh.dim_names:
                raise ValueError(f"Layout: {spec!r} is neither {UNSHARDED!r} nor a mesh dimension {mesh.dim_names}.")
        if len(set(used)) != len(used):
            raise ValueError(f"Layout: a mesh dimension shards at most one tensor axis; got {list(sharding_specs)}.")
        self._specs, self._mesh = list(sharding_specs), mesh

    @classmethod
    def replicated(cls, mesh: Mesh, rank: int) -> "Layout":
        """Every device holds the whole tensor."""
        return cls([UNSHARDED] * rank, mesh)

    @classmethod
    def batch_sharded(cls, mesh: Mesh, batch_dim: str, rank: int, axis: int = 0) -> "Layout":
        """Axis `axis` split along mesh dimension `batch_dim`, the rest replicated."""
        specs = [UNSHARDED] * rank
        specs[axis] = batch_dim
        return cls(specs, mesh)

    @classmethod
    def inner_sharded(cls, mesh: Mesh, inner_dim: str, rank: int) -> "Layout":
        """The last axis split along `inner_dim`."""
        return cls.batch_sharded(mesh, inner_dim, rank, axis=rank - 1)

    @property
    def sharding_specs(self) -> List[str]:
        return list(self._specs)

    @property
    def mesh(self) -> Mesh:
        return self._mesh

    @property
    def rank(self) -> int:
        return len(self._specs)

    def num_shards(self, idx: int) -> int:
        """How many slices axis `idx` is cut into."""
        spec = self._specs[idx]
        return 1 if spec == UNSHARDED else self._mesh.dim_size(spec)

    def is_fully_replicated(self) -> bool:
        return all(spec == UNSHARDED for spec in self._specs)

    def delete(self, dims: List[int]) -> "Layout":
        """This layout without the axes in `dims`."""
        return Layout([s for i, s in enumerate(self._specs) if i not in set(dims)], self._mesh)

    def placements(self) -> list:
        """torch placements, one per mesh dimension (Shard(axis) or Replicate())."""
        from torch.distributed.tensor import Replicate, Shard

        return [Shard(self._specs.index(name)) if name in self._specs else Replicate() for name in self._mesh.dim_names]

    def to_string(self) -> str:
        return f"sharding_specs:{','.join(self._specs)}, mesh:{self._mesh.to_string()}"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Layout) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:
        return f"Layout({self.to_string()!r})"


def is_dtensor(tensor: Any) -> bool:
    """True for a tensor laid out over a mesh (a torch DTensor)."""
    from torch.distributed.tensor import DTensor

    return isinstance(tensor, DTensor)


def _require_dtensor(tensor: Any, what: str) -> Any:
    if not is_dtensor(tensor):
        raise ValueError(f"{what} needs a DTensor (made by copy_to_mesh, pack, call_with_layout or relayout); got "
                         f"{type(tensor).__name__}.")
    return tensor


_MESHES: dict = {}


def _remember(layout: Layout) -> Layout:
    _MESHES[id(layout.mesh.torch_mesh())] = layout.mesh
    return layout


def fetch_layout(tensor: Any) -> Layout:
    """The Layout of a DTensor."""
    from torch.distributed.tensor import Shard

    tensor = _require_dtensor(tensor, "fetch_layout")
    mesh = _MESHES.get(id(tensor.device_mesh))
    if mesh is None:
        names = list(tensor.device_mesh.mesh_dim_names or [f"dim{i}" for i in range(tensor.device_mesh.ndim)])
        kind = "GPU" if tensor.device_mesh.device_type == "cuda" else "CPU"
        mesh = Mesh(names, tensor.device_mesh.mesh.numpy(), [client_id()], [_local_device(kind)])
    specs = [UNSHARDED] * tensor.dim()
    for name, placement in zip(mesh.dim_names, tensor.placements):
        if isinstance(placement, Shard):
            specs[placement.dim] = name
    return Layout(specs, mesh)


def check_layout(tensor: Any, layout: Layout) -> None:
    """Raises ValueError unless `tensor` has `layout`."""
    if fetch_layout(tensor) != layout:
        raise ValueError(f"Layout of tensor: {fetch_layout(tensor)}, did not match expected layout: {layout}")


def copy_to_mesh(tensor: Any, layout: Layout, source_layout: Optional[Layout] = None) -> Any:
    """A regular tensor (the same on every process) laid out over the mesh as `layout`."""
    from torch.distributed.tensor import distribute_tensor

    _remember(layout)
    value = torch.as_tensor(np.asarray(tensor) if not isinstance(tensor, torch.Tensor) else tensor)
    if value.dim() != layout.rank:
        raise ValueError(f"copy_to_mesh: layout has rank {layout.rank} but the tensor has shape {tuple(value.shape)}.")
    return distribute_tensor(value.detach(), layout.mesh.torch_mesh(), layout.placements())


def relayout(tensor: Any, layout: Layout, name: Optional[str] = None) -> Any:
    """The DTensor moved to `layout` (gathering or slicing as needed); gradients flow through."""
    tensor = _require_dtensor(tensor, "relayout")
    _remember(layout)
    return tensor.redistribute(layout.mesh.torch_mesh(), layout.placements())


def relayout_like(tensor: Any, layout_tensor: Any, name: Optional[str] = None) -> Any:
    """`tensor` relaid out as `layout_tensor` is."""
    return relayout(tensor, fetch_layout(layout_tensor), name)


def pack(tensors: Sequence[Any], layout: Layout) -> Any:
    """A DTensor from this client's local components (one per local device: one here)."""
    from torch.distributed.tensor import DTensor

    _remember(layout)
    if len(tensors) != layout.mesh.num_local_devices():
        raise ValueError(f"pack: {len(tensors)} components given for {layout.mesh.num_local_devices()} local "
                         "device(s) of the mesh.")
    local = torch.as_tensor(np.asarray(tensors[0]) if not isinstance(tensors[0], torch.Tensor) else tensors[0])
    return DTensor.from_local(local, layout.mesh.torch_mesh(), layout.placements(), run_check=False)


def unpack(tensor: Any) -> Sequence[Any]:
    """This client's local components of a DTensor (one per local device: one here)."""
    return [_require_dtensor(tensor, "unpack").to_local()]


def call_with_layout(fn: Callable[..., Any], layout: Optional[Layout], *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` laid out as `layout` (each process computes the value, then keeps its shard)."""
    result = fn(*args, **kwargs)
    return result if layout is None else copy_to_mesh(result, layout)


def _dtensor_class() -> type:
    from torch.distributed.tensor import DTensor

    return DTensor


class DVariable(_dtensor_class()):
    """A variable holding a DTensor: a trainable torch parameter over `initial_value` (a DTensor, or a callable
    giving one) with TF's `assign`, `assign_add`, `assign_sub`, `read_value`, `name` and `trainable`; its
    layout is `fetch_layout(v)` (torch tensors keep `.layout` for their memory layout)."""

    def __new__(cls, initial_value: Any, *args: Any, dtype: Any = None, **kwargs: Any) -> "DVariable":
        # TF forwards *args/**kwargs to tf.Variable: trainable and name are the ones that matter here
        trainable, name = kwargs.pop("trainable", True), kwargs.pop("name", None)
        value = initial_value() if callable(initial_value) else initial_value
        value = _require_dtensor(value, "DVariable")
        if dtype is not None:
            value = value.to(as_dtype(dtype))
        variable = torch.nn.Parameter(value.detach().clone(), requires_grad=bool(trainable))
        variable.__class__ = cls
        variable._tf_name, variable._tf_trainable = name or "Variable", bool(trainable)
        return variable

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # all done in __new__
        pass

    @property
    def trainable(self) -> bool:
        return self._tf_trainable

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._tf_name

    def assign(self, value: Any, use_locking: Any = None, name: Any = None, read_value: bool = True) -> "DVariable":
        """Sets the value (a DTensor, or a plain tensor laid out as this variable)."""
        with torch.no_grad():
            self.copy_(value if is_dtensor(value) else copy_to_mesh(value, fetch_layout(self)))
        return self

    def assign_add(self, delta: Any, use_locking: Any = None, name: Any = None, read_value: bool = True
                   ) -> "DVariable":
        with torch.no_grad():
            self.add_(delta)
        return self

    def assign_sub(self, delta: Any, use_locking: Any = None, name: Any = None, read_value: bool = True
                   ) -> "DVariable":
        with torch.no_grad():
            self.sub_(delta)
        return self

    def read_value(self) -> Any:
        """The value as a DTensor (no gradient link)."""
        return self.detach()

    def numpy(self) -> Any:
        """The whole value (every shard gathered) as a NumPy array."""
        return self.detach().full_tensor().cpu().numpy()

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> "DVariable":
        """Adds `sparse_delta.values` to the rows `sparse_delta.indices` (an IndexedSlices), as TF does."""
        indices = torch.as_tensor(sparse_delta.indices).reshape(-1).long()
        with torch.no_grad():
            whole = self.detach().full_tensor()
            rows = torch.as_tensor(sparse_delta.values, dtype=whole.dtype).reshape(indices.numel(), *whole.shape[1:])
            whole = whole.index_add(0, indices.to(whole.device), rows.to(whole.device))
            self.copy_(copy_to_mesh(whole, fetch_layout(self)))
        return self


def get_default_mesh() -> Optional[Mesh]:
    """The mesh `default_mesh` set for this block, else None."""
    stack = _context.config_setting("dtensor_meshes")
    return stack[-1] if stack else None


@contextlib.contextmanager
def default_mesh(mesh: Mesh) -> Iterator[Mesh]:
    """Makes `mesh` the default mesh inside the block."""
    if not isinstance(mesh, Mesh):
        raise ValueError(f"default_mesh needs a dtensor.Mesh; got {type(mesh).__name__}.")
    stack = _context.config_setting("dtensor_meshes")
    _context.set_config_setting("dtensor_meshes", stack + [mesh])
    try:
        yield mesh
    finally:
        _context.set_config_setting("dtensor_meshes", stack)


run_on = default_mesh


def barrier(mesh: Mesh, barrier_name: Optional[str] = None, timeout_in_ms: Optional[int] = None) -> None:
    """Waits until every process of the mesh reaches this point."""
    mesh.torch_mesh()
    dist.barrier()
