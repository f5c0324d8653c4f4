"""TF's top-level execution-context names: tf.device, tf.name_scope, tf.init_scope, tf.executing_eagerly,
tf.get_logger, tf.no_op / tf.group / tf.tuple / tf.control_dependencies and the tensor tests (is_tensor, ...)."""
from __future__ import annotations

import builtins
import contextlib
import logging
import re
import time
from typing import Any, Iterator, Optional

import numpy as np
import torch

from torchstrategy import _context

__all__ = ["DeviceSpec", "device", "name_scope", "init_scope", "get_current_name_scope", "executing_eagerly", "inside_function",
           "get_logger", "no_op", "group", "tuple", "control_dependencies", "timestamp", "is_tensor",
           "is_symbolic_tensor", "get_static_value"]

_DEVICE = re.compile(r"^(?:/?job:[^/]+)?(?:/?replica:\d+)?(?:/?task:\d+)?/?(?:device:)?([A-Za-z_]+)(?::(\d+|\*))?$")


def _torch_device(device_name: str) -> torch.device:
    """'/CPU:0', '/GPU:1', '/job:localhost/replica:0/task:0/device:GPU:0', 'gpu', 'cuda:0' as a torch device."""
    match = _DEVICE.match(device_name.strip())
    if not match:
        raise ValueError(f"tf.device: cannot parse the device name {device_name!r}; use e.g. '/CPU:0' or '/GPU:0'.")
    kind, index = match.group(1).upper(), match.group(2)
    index = 0 if index in (None, "*") else int(index)
    if kind == "CPU":
        return torch.device("cpu")
    if kind in ("GPU", "CUDA"):
        if not torch.cuda.is_available():
            raise RuntimeError(f"tf.device({device_name!r}): no CUDA GPU is visible to this process; use '/CPU:0', "
                               "or run where torch.cuda.is_available() is True.")
        if index >= torch.cuda.device_count():
            raise RuntimeError(f"tf.device({device_name!r}): this process sees {torch.cuda.device_count()} GPU(s), "
                               f"so GPU:{index} does not exist.")
        return torch.device("cuda", index)
    raise ValueError(f"tf.device({device_name!r}): device type {kind} is not supported here; use CPU or GPU "
                     "(TPUs go through tf.distribute.TPUStrategy).")


def torch_device(device_name: str) -> torch.device:
    """The torch device a TF device name stands for ('/GPU:1' -> cuda:1); errors as tf.device gives them."""
    return _torch_device(str(device_name))


@contextlib.contextmanager
def device(device_name: Any) -> Iterator[None]:
    """Places the tensors and variables created in the block on `device_name` ('/CPU:0', '/GPU:0', ...);
    None or '' leaves placement as it is. A GPU name without a visible GPU is a RuntimeError.

    >>> with device("/CPU:0"):
    ...     torch.zeros(1).device.type
    'cpu'
    """
    if device_name is None or device_name == "":
        yield
        return
    if callable(device_name):
        raise RuntimeError("tf.device does not take a function in eager mode (as in TF 2); pass a device name.")
    with _torch_device(str(device_name)):
        yield


class name_scope:  # noqa: N801  (TF's class name)
    """A context that prefixes the names of variables created inside with `name/` (tf.name_scope); scopes nest
    ('outer/inner'), a name ending in '/' is taken as a full scope name.

    >>> with name_scope("block") as scope:
    ...     scope
    'block/'
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise ValueError(f"tf.name_scope takes a string name, got {name!r}.")
        if name and not re.match(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$", name):
            raise ValueError(f"'{name}' is not a valid scope name: use letters, digits, '_', '.', '-', '/'.")
        self._name = name
        self._exits: list = []

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> str:
        if self._name.endswith("/") or not self._name:
            full = self._name.rstrip("/")
        else:
            outer = _context.current_name_scope()
            full = f"{outer}/{self._name}" if outer else self._name
        scope = _context.enter_name_scope(full)
        scope.__enter__()
        self._exits.append(scope)
        return f"{full}/" if full else ""

    def __exit__(self, *exc: Any) -> None:
        self._exits.pop().__exit__(*exc)


def get_current_name_scope() -> str:
    """The current full name scope ('outer/inner'; '' outside any)."""
    return _context.current_name_scope()


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """The scope TF lifts variable creation into: eager already, so here only gradient recording pauses
    in the block (as TF's init_scope pauses the tape)."""
    with torch.no_grad():
        yield


def executing_eagerly() -> bool:
    """True: ops run eagerly, except while torch.compile traces a `tf.function(jit_compile=True)`."""
    return not torch.compiler.is_compiling()


def inside_function() -> bool:
    """True while a compiled `tf.function` is being traced (torch.compile), else False."""
    return bool(torch.compiler.is_compiling())


def get_logger() -> logging.Logger:
    """TF's logger (the 'tensorflow' Python logger)."""
    return logging.getLogger("tensorflow")


def no_op(name: Optional[str] = None) -> None:
    """Does nothing (ops run eagerly, so there is nothing to group or wait for)."""
    return None


def group(*inputs: Any, **kwargs: Any) -> None:
    """Eagerly, every input has already run: returns None (TF returns no value eagerly either)."""
    unknown = set(kwargs) - {"name"}
    if unknown:
        raise TypeError(f"tf.group got unexpected keyword arguments: {sorted(unknown)}")
    return None


def tuple(tensors: Any, control_inputs: Any = None, name: Optional[str] = None) -> list:  # noqa: A001
    """The tensors, as a list (eagerly they are already computed)."""
    if control_inputs is not None and not isinstance(control_inputs, (list, builtins.tuple)):
        raise TypeError("tf.tuple: control_inputs must be a list or tuple.")
    return list(tensors)


@contextlib.contextmanager
def control_dependencies(control_inputs: Any) -> Iterator[None]:
    """Eagerly a no-op: everything listed has already run (TF ignores it in eager mode too)."""
    yield


def timestamp(name: Optional[str] = None) -> torch.Tensor:
    """Seconds since the epoch, as a float64 scalar tensor."""
    return torch.tensor(time.time(), dtype=torch.float64)


def is_tensor(x: Any) -> bool:
    """True for tensors (torch tensors, tf.Variable, string tensors and SparseTensor), not NumPy arrays."""
    from torchstrategy.sparse import SparseTensor

    if isinstance(x, (torch.Tensor, SparseTensor)):
        return True
    return isinstance(x, np.ndarray) and x.dtype == object  # a tf.string tensor


def is_symbolic_tensor(tensor: Any) -> bool:
    """False: tensors here are always concrete (eager)."""
    return False


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """The value of `tensor` as a NumPy array (always known eagerly); None for a non-tensor as TF does."""
    if isinstance(tensor, torch.Tensor):
        return torch.Tensor.detach(tensor).cpu().numpy()
    if isinstance(tensor, np.ndarray):
        return tensor
    if isinstance(tensor, (int, float, bool, list, builtins.tuple)):
        return np.asarray(tensor)
    raise TypeError(f"tf.get_static_value takes a tensor, got {type(tensor).__name__}.")


class DeviceSpec:
    """A device name split into its fields (tf.DeviceSpec): job, replica, task, device_type ('CPU', 'GPU') and
    device_index; `to_string()` gives '/job:worker/replica:0/task:1/device:GPU:0' with the unset fields left out.

    >>> DeviceSpec.from_string("/gpu:1").to_string()
    '/device:GPU:1'
    """

    _FIELDS = ("job", "replica", "task", "device_type", "device_index")

    def __init__(self, job: Optional[str] = None, replica: Optional[int] = None, task: Optional[int] = None,
                 device_type: Optional[str] = None, device_index: Optional[int] = None) -> None:
        self._job = None if job is None else str(job)
        self._replica = None if replica is None else int(replica)
        self._task = None if task is None else int(task)
        self._device_type = None if device_type is None else str(device_type).upper()
        self._device_index = None if device_index is None else int(device_index)

    job = property(lambda self: self._job)
    replica = property(lambda self: self._replica)
    task = property(lambda self: self._task)
    device_type = property(lambda self: self._device_type)
    device_index = property(lambda self: self._device_index)

    @classmethod
    def from_string(cls, spec: str) -> "DeviceSpec":
        """Parses '/job:name/replica:0/task:1/device:GPU:0' (every part optional; 'gpu:1' and '/cpu:0' too)."""
        return cls(**cls._parse(spec))

    @staticmethod
    def _parse(spec: str) -> dict:
        fields: dict = {}
        for part in [p for p in str(spec).split("/") if p]:
            pieces = part.split(":")
            key = pieces[0].lower()
            if key in ("job", "replica", "task") and len(pieces) == 2:
                fields[key] = pieces[1] if key == "job" else int(pieces[1])
            elif key == "device" and len(pieces) in (2, 3):
                fields["device_type"] = pieces[1]
                if len(pieces) == 3 and pieces[2] != "*":
                    fields["device_index"] = int(pieces[2])
            elif len(pieces) in (1, 2) and key in ("cpu", "gpu", "tpu"):
                fields["device_type"] = key
                if len(pieces) == 2 and pieces[1] != "*":
                    fields["device_index"] = int(pieces[1])
            else:
                raise ValueError(f"Unknown attribute '{part}' in device specification '{spec}'.")
        return fields

    def parse_from_string(self, spec: str) -> "DeviceSpec":
        """A new spec with the fields named in `spec` replaced (TF 2's DeviceSpec is immutable)."""
        return self.replace(**self._parse(spec))

    def replace(self, **kwargs: Any) -> "DeviceSpec":
        """A copy with the given fields changed."""
        unknown = set(kwargs) - set(self._FIELDS)
        if unknown:
            raise TypeError(f"DeviceSpec.replace got unknown fields {sorted(unknown)}.")
        values = {name: getattr(self, name) for name in self._FIELDS}
        values.update(kwargs)
        return DeviceSpec(**values)

    def make_merged_spec(self, dev: "DeviceSpec") -> "DeviceSpec":
        """This spec with the fields `dev` sets taking their values from `dev`."""
        return self.replace(**{name: getattr(dev, name) for name in self._FIELDS if getattr(dev, name) is not None})

    def to_string(self) -> str:
        out = "".join(f"/{name}:{getattr(self, name)}" for name in ("job", "replica", "task")
                      if getattr(self, name) is not None)
        if self._device_type is not None:
            index = "*" if self._device_index is None else self._device_index
            out += f"/device:{self._device_type}:{index}"
        return out

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)}" for name in self._FIELDS)
        return f"<DeviceSpec({inner})>"
