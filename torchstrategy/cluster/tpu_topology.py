"""tf.tpu.experimental.Topology: the TPU mesh's shape and each task's devices' coordinates in it, TF's
constructor (serialized TopologyProto bytes, or mesh_shape + device_coordinates) and lookups."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

# TopologyProto (tensorflow/core/protobuf/tpu/topology.proto) field numbers
_MESH_SHAPE, _NUM_TASKS, _DEVICES_PER_TASK, _DEVICE_COORDINATES = 1, 2, 3, 4


def _varint(value: int, out: bytearray) -> None:
    value &= 0xFFFFFFFFFFFFFFFF
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_varint(data: bytes, position: int) -> tuple:
    result = shift = 0
    while True:
        if position >= len(data):
            raise ValueError("Topology(serialized=...): the TopologyProto bytes end inside a number.")
        byte = data[position]
        result, position, shift = result | (byte & 0x7F) << shift, position + 1, shift + 7
        if not byte & 0x80:
            return result, position


def _packed(values: Any, field: int, out: bytearray) -> None:
    payload = bytearray()
    for value in values:
        _varint(int(value), payload)
    _varint(field << 3 | 2, out)
    _varint(len(payload), out)
    out += payload


def _parse(serialized: bytes) -> tuple:
    """(mesh_shape, num_tasks, devices per task, flat coordinates) from TopologyProto bytes."""
    found: dict = {_MESH_SHAPE: [], _DEVICE_COORDINATES: [], _NUM_TASKS: 0, _DEVICES_PER_TASK: 0}
    position = 0
    while position < len(serialized):
        key, position = _read_varint(serialized, position)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _read_varint(serialized, position)
            if field in (_MESH_SHAPE, _DEVICE_COORDINATES):
                found[field].append(value)
            elif field in found:
                found[field] = value
        elif wire == 2:
            length, position = _read_varint(serialized, position)
            end = position + length
            if end > len(serialized):
                raise ValueError("Topology(serialized=...): the TopologyProto bytes are cut short.")
            while field in (_MESH_SHAPE, _DEVICE_COORDINATES) and position < end:
                value, position = _read_varint(serialized, position)
                found[field].append(value)
            position = end
        else:
            raise ValueError(f"Topology(serialized=...): not TopologyProto bytes (field {field}, wire type {wire}).")
    return found[_MESH_SHAPE], found[_NUM_TASKS], found[_DEVICES_PER_TASK], found[_DEVICE_COORDINATES]


class Topology:
    """tf.tpu.experimental.Topology: `mesh_shape` (one size per mesh axis; TPUs have 4: x, y, z, core) and
    `device_coordinates` ([num_tasks, num_tpus_per_task, mesh_rank]: where each task's devices sit), given
    directly or as TF's serialized TopologyProto. `initialize_tpu_system` returns this host's: one task whose
    XLA devices lie along the first axis. `device_kind` (torchstrategy's) is the XLA device type, "TPU" or "CPU"."""

    def __init__(self, serialized: Optional[bytes] = None, mesh_shape: Any = None, device_coordinates: Any = None) -> None:
        if serialized is not None:
            if mesh_shape is not None or device_coordinates is not None:
                raise ValueError("Topology takes `serialized` or `mesh_shape` with `device_coordinates`, not both.")
            shape, tasks, per_task, flat = _parse(bytes(serialized))
            if not shape or tasks * per_task * len(shape) != len(flat):
                raise ValueError(f"Topology(serialized=...): {tasks} task(s) x {per_task} device(s) x "
                                 f"{len(shape)} axes do not match the {len(flat)} coordinates it holds.")
            mesh_shape, device_coordinates = shape, np.asarray(flat, np.int32).reshape(tasks, per_task, len(shape))
        if mesh_shape is None or device_coordinates is None:
            raise ValueError("Topology needs `serialized` (TopologyProto bytes) or both `mesh_shape` (e.g. [4, 1, 1, 1]) "
                             "and `device_coordinates` (shape [num_tasks, num_tpus_per_task, len(mesh_shape)]).")
        self._mesh_shape = np.asarray(mesh_shape, np.int32).reshape(-1)
        coordinates = np.asarray(device_coordinates, np.int32)
        if coordinates.ndim != 3 or coordinates.shape[2] != self._mesh_shape.size:
            raise ValueError(f"device_coordinates must have shape [num_tasks, num_tpus_per_task, "
                             f"{self._mesh_shape.size}] (one coordinate per mesh axis); got {list(coordinates.shape)}.")
        if (coordinates < 0).any() or (coordinates >= self._mesh_shape).any():
            raise ValueError(f"device_coordinates must lie inside mesh_shape {self._mesh_shape.tolist()}; got "
                             f"{coordinates.reshape(-1, self._mesh_shape.size).tolist()}.")
        self._coordinates = coordinates
        self._where: dict = {}  # coordinate tuple -> (task, device ordinal)
        for task in range(coordinates.shape[0]):
            for device in range(coordinates.shape[1]):
                self._where[tuple(coordinates[task, device].tolist())] = (task, device)
        self.device_kind = "TPU"

    @property
    def mesh_shape(self) -> np.ndarray:
        return self._mesh_shape

    @property
    def mesh_rank(self) -> int:
        return int(self._mesh_shape.size)

    @property
    def device_coordinates(self) -> np.ndarray:
        return self._coordinates

    @property
    def num_tasks(self) -> int:
        return int(self._coordinates.shape[0])

    @property
    def num_tpus_per_task(self) -> int:
        return int(self._coordinates.shape[1])

    @property
    def num_devices(self) -> int:
        """Devices in the whole system (num_tasks * num_tpus_per_task; torchstrategy's)."""
        return self.num_tasks * self.num_tpus_per_task

    @property
    def missing_devices(self) -> np.ndarray:
        """Coordinates of the mesh with no device, [count, mesh_rank] (int64, as TF's)."""
        every = np.stack(np.meshgrid(*[np.arange(n) for n in self._mesh_shape], indexing="ij"), -1)
        missing = [c for c in every.reshape(-1, self.mesh_rank).tolist() if tuple(c) not in self._where]
        return np.asarray(missing, np.int64).reshape(-1, self.mesh_rank)

    def _lookup(self, device_coordinates: Any) -> tuple:
        key = tuple(int(c) for c in np.asarray(device_coordinates).reshape(-1))
        if key not in self._where:
            raise ValueError(f"No device at coordinates {list(key)} of mesh {self._mesh_shape.tolist()}.")
        return self._where[key]

    def task_ordinal_at_coordinates(self, device_coordinates: Any) -> int:
        return self._lookup(device_coordinates)[0]

    def tpu_device_ordinal_at_coordinates(self, device_coordinates: Any) -> int:
        return self._lookup(device_coordinates)[1]

    def cpu_device_name_at_coordinates(self, device_coordinates: Any, job: Optional[str] = None) -> str:
        task = self._lookup(device_coordinates)[0]
        return f"{'' if job is None else f'/job:{job}'}/task:{task}/device:CPU:0"

    def tpu_device_name_at_coordinates(self, device_coordinates: Any, job: Optional[str] = None) -> str:
        task, ordinal = self._lookup(device_coordinates)
        return f"{'' if job is None else f'/job:{job}'}/task:{task}/device:TPU:{ordinal}"

    def serialized(self) -> bytes:
        """TF's TopologyProto bytes (the same bytes TF writes for the same mesh)."""
        out = bytearray()
        _packed(self._mesh_shape, _MESH_SHAPE, out)
        for field, value in ((_NUM_TASKS, self.num_tasks), (_DEVICES_PER_TASK, self.num_tpus_per_task)):
            _varint(field << 3, out)
            _varint(value, out)
        _packed(self._coordinates.reshape(-1), _DEVICE_COORDINATES, out)
        return bytes(out)

    def __repr__(self) -> str:
        return (f"Topology(mesh_shape={self._mesh_shape.tolist()}, num_tasks={self.num_tasks}, "
                f"num_tpus_per_task={self.num_tpus_per_task}, device_kind={self.device_kind!r})")


def local_topology(count: int, device_kind: str) -> Topology:
    """This host's XLA devices as a Topology: one task, `count` devices along the first of 4 mesh axes."""
    coordinates = [[[index, 0, 0, 0] for index in range(count)]]
    topology = Topology(mesh_shape=[count, 1, 1, 1], device_coordinates=coordinates)
    topology.device_kind = device_kind
    return topology
