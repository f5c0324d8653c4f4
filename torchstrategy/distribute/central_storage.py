"""CentralStorageStrategy: synchronous training in one process, the variables kept once on the
parameter device while each replica (a thread) computes on its slice of every global batch."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.config import parse_device
from torchstrategy.distribute import parts
from torchstrategy.distribute.strategy import Strategy


def _compute_devices(compute_devices: Optional[Sequence[Any]]) -> list[torch.device]:
    if compute_devices is None:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return [torch.device("cuda", i) for i in range(count)] or [torch.device("cpu")]
    if isinstance(compute_devices, (str, torch.device)):
        compute_devices = [compute_devices]
    parsed = [parse_device(d) for d in compute_devices]
    if not parsed:
        raise ValueError("CentralStorageStrategy(compute_devices=[]) has no device: pass e.g. ['/cpu:0', '/cpu:1'] "
                         "or leave it unset to use every local GPU.")
    kinds = sorted({d.type for d in parsed})
    if len(kinds) > 1:
        raise ValueError(f"CentralStorageStrategy compute devices must all be of one kind; got {list(compute_devices)} "
                         f"({' and '.join(kinds)}). Pass only GPUs or only CPUs.")
    if kinds[0] not in ("cpu", "cuda"):
        raise ValueError(f"CentralStorageStrategy computes on CPUs or CUDA GPUs, not {kinds[0].upper()} devices; "
                         f"got {list(compute_devices)}.")
    if len(set(parsed)) != len(parsed):
        raise ValueError(f"No duplicates allowed in compute_devices: {list(compute_devices)} (as in TF). Each entry "
                         f"is one replica: pass distinct indices, e.g. ['/cpu:0', '/cpu:1'].")
    return parsed


class CentralStorageStrategy(Strategy):
    """One process; the variables live once, on `parameter_device` (the CPU unless the one compute device
    is a GPU); every compute device is a replica that runs the step on its slice of the global batch in
    its own thread, and their gradients are summed into the one copy (tf.distribute.experimental.
    CentralStorageStrategy).

    `["/cpu:0", "/cpu:1"]` gives two CPU replica threads over one set of variables. Several CUDA GPUs
    would need a copy of the variables per GPU each step: use MirroredStrategy for those.

    >>> import torchstrategy as tf
    >>> tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"]).num_replicas_in_sync
    2
    """

    def __init__(self, compute_devices: Optional[Sequence[Any]] = None, parameter_device: Optional[Any] = None) -> None:
        devices = _compute_devices(compute_devices)
        if devices[0].type == "cuda" and len(devices) > 1:
            raise NotImplementedError(
                f"CentralStorageStrategy over {len(devices)} GPUs is not supported: each step would copy the "
                f"variables to every GPU. Use tf.distribute.MirroredStrategy({[f'/gpu:{d.index}' for d in devices]}) "
                f"(the same numbers, variables mirrored on each GPU), or CPU compute devices.")
        default = devices[0] if devices[0].type == "cuda" else torch.device("cpu")
        device = parse_device(parameter_device) if parameter_device is not None else default
        if device.type != "cpu" and device != devices[0]:
            raise ValueError(f"parameter_device {parameter_device!r} is neither the CPU nor the device the replicas "
                             f"compute on ({devices[0]}): keep the variables on the CPU (the default) or on that "
                             f"one compute GPU.")
        self._compute_devices = tuple(devices)
        super().__init__(self._wired(device, collectives=parts.ReplicaThreads(len(devices)), needs_model_in_scope=True,
                                     worker_devices=tuple(str(d) for d in devices), parameter_devices=(str(device),)))

    def __repr__(self) -> str:
        return f"CentralStorageStrategy(compute_devices={[str(d) for d in self._compute_devices]}, " \
               f"parameter_device={self.device})"
