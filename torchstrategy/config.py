"""Devices as tf.config names them: listing physical/logical devices, parsing TF device
strings ("/gpu:0", "/job:worker/device:CPU:1", "cuda:1"), and thread settings."""
from __future__ import annotations

import re
import types
from dataclasses import dataclass
from typing import Any, Optional

import torch

_DEVICE_RE = re.compile(r"^(?:/job:\w+(?:/replica:\d+)?(?:/task:\d+)?)?/?(?:device:)?(cpu|gpu|cuda|tpu|xla)(?::(\d+))?$",
                        re.IGNORECASE)


@dataclass(frozen=True)
class PhysicalDevice:
    """A device the process can see (tf.config.PhysicalDevice)."""

    name: str
    device_type: str


@dataclass(frozen=True)
class LogicalDevice:
    name: str
    device_type: str


def parse_device(spec: Any) -> torch.device:
    """Parses a TF or torch device string into a torch.device, checking it exists.

    >>> parse_device("/gpu:0")  # doctest: +SKIP
    device(type='cuda', index=0)
    >>> parse_device("/cpu:0")
    device(type='cpu', index=0)
    """
    if isinstance(spec, torch.device):
        kind, index = spec.type, spec.index
    else:
        match = _DEVICE_RE.match(str(spec).strip())
        if not match:
            raise ValueError(
                f"Unknown device string {spec!r}. Use TF spelling ('/cpu:0', '/gpu:1', "
                f"'/job:worker/task:0/device:GPU:0') or torch spelling ('cpu', 'cuda:1')."
            )
        kind = match.group(1).lower()
        index = int(match.group(2)) if match.group(2) is not None else None
    if kind in ("gpu", "cuda"):
        available = torch.cuda.device_count() if torch.cuda.is_available() else 0
        wanted = index or 0
        if wanted >= available:
            raise ValueError(
                f"Device {spec!r} asks for CUDA GPU {wanted}, but this machine has {available} usable "
                f"CUDA GPU(s). Use '/cpu:0' or pick an index below {available}."
            )
        return torch.device("cuda", wanted)
    if kind in ("tpu", "xla"):
        return torch.device("xla", index or 0)
    return torch.device("cpu", index) if index is not None else torch.device("cpu")


def list_physical_devices(device_type: Optional[str] = None) -> list[PhysicalDevice]:
    """Visible devices: 'CPU' always, 'GPU' per CUDA device, 'TPU' when torch-xla sees one."""
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    if torch.cuda.is_available():
        devices += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(torch.cuda.device_count())]
    if device_type is None:
        return devices
    wanted = device_type.upper()
    return [d for d in devices if d.device_type == wanted]


def list_logical_devices(device_type: Optional[str] = None) -> list[LogicalDevice]:
    return [LogicalDevice(d.name.replace("/physical_device:", "/device:"), d.device_type)
            for d in list_physical_devices(device_type)]


def get_visible_devices(device_type: Optional[str] = None) -> list[PhysicalDevice]:
    return list_physical_devices(device_type)


def _set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """Accepted for TF scripts; PyTorch's caching allocator already grows on demand."""


def _get_memory_growth(device: PhysicalDevice) -> bool:
    return True


experimental = types.SimpleNamespace(
    set_memory_growth=_set_memory_growth,
    get_memory_growth=_get_memory_growth,
    list_physical_devices=list_physical_devices,
)

threading = types.SimpleNamespace(
    set_intra_op_parallelism_threads=lambda n: torch.set_num_threads(int(n)) if n else None,
    get_intra_op_parallelism_threads=torch.get_num_threads,
    set_inter_op_parallelism_threads=lambda n: None,
    get_inter_op_parallelism_threads=torch.get_num_interop_threads,
)


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Accepted for TF scripts: torchstrategy always runs eagerly unless jit_compile is asked."""
