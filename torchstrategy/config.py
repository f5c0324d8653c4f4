"""Devices as tf.config names them: listing physical/logical devices (CPU, GPU, TPU = XLA devices),
parsing TF device strings ("/gpu:0", "/tpu:0", "cuda:1"), connecting to a TPU cluster, thread settings."""
from __future__ import annotations

import re
import types
from dataclasses import dataclass
from typing import Any, Optional

import torch

from torchstrategy import _context
from torchstrategy.cluster import tpu as _tpu

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
        return torch.device("xla", index or 0)  # not checked here: use_xla_device() checks before placing
    return torch.device("cpu", index) if index is not None else torch.device("cpu")


def use_xla_device(spec: Any, device: torch.device) -> torch.device:
    """`device` (parsed from `spec`, type 'xla') after checking torch-xla is installed and has it.

    >>> use_xla_device("/tpu:0", parse_device("/tpu:0"))  # doctest: +SKIP
    device(type='xla', index=0)
    """
    what = f"Device {str(spec)!r}"
    index = device.index or 0
    count = _tpu.xla_device_count(what)
    import torch_xla.runtime as xr

    # In SPMD mode torch-xla shows one virtual device over all of them. (Not torch_xla.devices(): asked
    # before use_spmd(), it pins the device list and a later TPUStrategy cannot switch to SPMD.)
    placeable = 1 if xr.is_spmd() else count
    if index >= min(count, placeable):
        raise ValueError(f"{what} asks for XLA device {index}, but torch-xla has {placeable} placeable device(s) "
                         f"here ({count} in the runtime). Pick an index below {placeable}, e.g. '/tpu:0'.")
    _tpu.require_xla_autograd(what, torch.device("xla", index))
    return torch.device("xla", index)


def list_physical_devices(device_type: Optional[str] = None) -> list[PhysicalDevice]:
    """Visible devices: 'CPU' always, 'GPU' per CUDA device, 'TPU' per XLA device.

    XLA devices are listed as 'TPU' (whatever PJRT backs them, so XLA:CPU with PJRT_DEVICE=CPU too)
    when torch-xla is installed and PJRT_DEVICE is set or libtpu is present; listing them starts
    torch-xla's runtime, so `list_physical_devices('GPU')` alone never does.
    """
    wanted = device_type.upper() if device_type is not None else None
    devices = []
    if wanted in (None, "CPU"):
        devices.append(PhysicalDevice("/physical_device:CPU:0", "CPU"))
    if wanted in (None, "GPU") and torch.cuda.is_available():
        devices += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(torch.cuda.device_count())]
    if wanted in (None, "TPU") and _tpu.xla_devices_configured():
        count = _tpu.xla_device_count("tf.config.list_physical_devices('TPU')")
        devices += [PhysicalDevice(f"/physical_device:TPU:{i}", "TPU") for i in range(count)]
    return devices


@dataclass(frozen=True)
class LogicalDeviceConfiguration:
    """One logical device a physical device is split into (tf.config.LogicalDeviceConfiguration). On CPU the
    count is what matters (a MirroredStrategy over "/cpu:0", "/cpu:1" runs a replica per logical CPU);
    the GPU fields are accepted for TF scripts."""

    memory_limit: Optional[int] = None
    experimental_priority: Optional[int] = None
    experimental_device_ordinal: Optional[int] = None


def set_logical_device_configuration(device: PhysicalDevice, logical_devices: Optional[list]) -> None:
    """Splits `device` into `len(logical_devices)` logical devices (None or [] undoes it), as
    tf.config.set_logical_device_configuration does.

    >>> cpu = tf.config.list_physical_devices("CPU")[0]
    >>> tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    >>> [d.name for d in tf.config.list_logical_devices("CPU")]
    ['/device:CPU:0', '/device:CPU:1']
    """
    if not isinstance(device, PhysicalDevice):
        raise TypeError(f"set_logical_device_configuration needs a PhysicalDevice from "
                        f"tf.config.list_physical_devices(); got {device!r}.")
    configs = tuple(logical_devices or ())
    for config in configs:
        if not isinstance(config, LogicalDeviceConfiguration):
            raise TypeError(f"logical_devices must be tf.config.LogicalDeviceConfiguration objects; got {config!r}.")
    if device.device_type == "GPU" and len(configs) > 1:
        raise ValueError(f"Splitting {device.name} into {len(configs)} logical GPUs is not supported: each replica "
                         f"of MirroredStrategy needs a GPU of its own here. Use one configuration per GPU.")
    if configs:
        _context.set_keyed_setting("logical_devices", device.name, configs)
    else:
        _context.set_keyed_setting("logical_devices", device.name, None)


def get_logical_device_configuration(device: PhysicalDevice) -> Optional[list]:
    """The LogicalDeviceConfiguration list `device` was split into, or None."""
    configs = _context.keyed_setting("logical_devices", device.name)
    return list(configs) if configs else None


def list_logical_devices(device_type: Optional[str] = None) -> list[LogicalDevice]:
    """One entry per physical device, or per logical device where one was split (CPU:0, CPU:1, ...)."""
    devices = []
    counts: dict = {}
    for physical in list_physical_devices(device_type):
        for _ in range(len(_context.keyed_setting("logical_devices", physical.name) or ()) or 1):
            index = counts.get(physical.device_type, 0)
            counts[physical.device_type] = index + 1
            devices.append(LogicalDevice(f"/device:{physical.device_type}:{index}", physical.device_type))
    return devices


def experimental_connect_to_cluster(cluster_spec_or_resolver: Any, job_name: str = "localhost", task_index: int = 0,
                                    protocol: Optional[str] = None, make_master_device_default: bool = True,
                                    cluster_device_filters: Any = None) -> None:
    """`tf.config.experimental_connect_to_cluster` for a TPUClusterResolver: checks that this host's XLA
    devices are there (torch-xla runs them in this process, so there is no remote server to reach).

    >>> resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")  # doctest: +SKIP
    >>> tf.config.experimental_connect_to_cluster(resolver)                        # doctest: +SKIP

    Other resolvers are refused: multi-worker CPU/GPU jobs give the resolver to the strategy itself
    (e.g. MultiWorkerMirroredStrategy(cluster_resolver=...)).
    """
    cluster_resolver = cluster_spec_or_resolver
    del job_name, task_index, protocol, make_master_device_default, cluster_device_filters
    if cluster_resolver is not None and not isinstance(cluster_resolver, _tpu.TPUClusterResolver):
        raise TypeError(f"tf.config.experimental_connect_to_cluster supports a TPUClusterResolver here; got "
                        f"{type(cluster_resolver).__name__}. For CPU/GPU workers, pass the resolver to the "
                        "strategy instead: MultiWorkerMirroredStrategy(cluster_resolver=resolver).")
    _tpu.connect_to_tpu_cluster(cluster_resolver)


def _physical(device: Any, what: str) -> PhysicalDevice:
    if not isinstance(device, PhysicalDevice) or device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}. {what} takes a device from "
                         "tf.config.list_physical_devices().")
    return device


def set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """Records memory growth for a GPU (PyTorch's caching allocator grows on demand either way); other
    devices are refused, as in TF."""
    _physical(device, "set_memory_growth")
    if _context.keyed_setting("logical_devices", device.name):
        raise ValueError("Cannot set memory growth on device when virtual devices configured")
    if device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    _context.set_config_setting("memory_growth", {**_context.config_setting("memory_growth"),
                                                  device.name: bool(enable)})


def get_memory_growth(device: PhysicalDevice) -> Optional[bool]:
    """What set_memory_growth recorded for a GPU (None before it was called)."""
    _physical(device, "get_memory_growth")
    if device.device_type != "GPU":
        raise KeyError(device)  # TF keeps the setting for GPUs only
    return _context.config_setting("memory_growth").get(device.name)


def _memory_device(device: str, what: str) -> Optional[int]:
    """The CUDA index `device` ('GPU:0', '/device:GPU:1', 'CPU:0') names, None for the CPU."""
    match = _DEVICE_RE.match(str(device).strip())
    kind = match.group(1).lower() if match else None
    index = int(match.group(2) or 0) if match else 0
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if kind == "cpu" and index == 0:
        return None
    if kind in ("gpu", "cuda") and index < count:
        return index
    raise ValueError(f"No matching devices found for {device!r}: {what} takes 'CPU:0' or 'GPU:<i>' with i below "
                     f"{count} (the CUDA GPUs here).")


def get_memory_info(device: str) -> dict:
    """{'current': bytes allocated now, 'peak': the most since start or reset_memory_stats} for 'GPU:<i>'
    (torch.cuda's allocator); 'CPU:0' has no allocator statistics and gives zeros, as TF does by default."""
    index = _memory_device(device, "get_memory_info")
    if index is None:
        return {"current": 0, "peak": 0}
    return {"current": int(torch.cuda.memory_allocated(index)), "peak": int(torch.cuda.max_memory_allocated(index))}


def reset_memory_stats(device: str) -> None:
    """Resets the peak of get_memory_info for 'GPU:<i>' (nothing to reset on 'CPU:0')."""
    index = _memory_device(device, "reset_memory_stats")
    if index is not None:
        torch.cuda.reset_peak_memory_stats(index)


def get_memory_usage(device: str) -> int:
    """The bytes allocated now on `device` (the older form of get_memory_info(device)['current'])."""
    return get_memory_info(device)["current"]


experimental = types.SimpleNamespace(
    set_memory_growth=set_memory_growth,
    get_memory_growth=get_memory_growth,
    get_memory_info=get_memory_info,
    reset_memory_stats=reset_memory_stats,
    get_memory_usage=get_memory_usage,
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
    # TF 2.x's older names of the logical-device calls
    VirtualDeviceConfiguration=LogicalDeviceConfiguration,
    set_virtual_device_configuration=set_logical_device_configuration,
    get_virtual_device_configuration=get_logical_device_configuration,
)


def _thread_count(num_threads: Any, what: str) -> int:
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 0:
        raise ValueError(f"{what}: num_threads must be an int >= 0 (0: let the runtime choose); got {num_threads!r}.")
    return num_threads


def set_intra_op_parallelism_threads(num_threads: int) -> None:
    """Threads one op may use (torch.set_num_threads); 0 leaves torch's choice."""
    count = _thread_count(num_threads, "set_intra_op_parallelism_threads")
    if count:
        torch.set_num_threads(count)
    _context.set_config_setting("intra_op_threads", count)


def get_intra_op_parallelism_threads() -> int:
    """The count set_intra_op_parallelism_threads set; 0 (the runtime chooses) before."""
    return _context.config_setting("intra_op_threads")


def set_inter_op_parallelism_threads(num_threads: int) -> None:
    """Threads for running independent ops (torch.set_num_interop_threads, which torch allows only before
    its first parallel work); 0 leaves torch's choice."""
    count = _thread_count(num_threads, "set_inter_op_parallelism_threads")
    if count and count != torch.get_num_interop_threads():
        try:
            torch.set_num_interop_threads(count)
        except RuntimeError as error:
            raise RuntimeError(f"Inter op parallelism cannot be modified after initialization ({error}). Call "
                               "tf.config.threading.set_inter_op_parallelism_threads before running any op."
                               ) from None
    _context.set_config_setting("inter_op_threads", count)


def get_inter_op_parallelism_threads() -> int:
    """The count set_inter_op_parallelism_threads set; 0 (the runtime chooses) before."""
    return _context.config_setting("inter_op_threads")


threading = types.SimpleNamespace(
    set_intra_op_parallelism_threads=set_intra_op_parallelism_threads,
    get_intra_op_parallelism_threads=get_intra_op_parallelism_threads,
    set_inter_op_parallelism_threads=set_inter_op_parallelism_threads,
    get_inter_op_parallelism_threads=get_inter_op_parallelism_threads,
)


def set_jit(enabled: Any) -> None:
    """Records the XLA JIT setting (True or 'autoclustering': on; False or '': off). Here it is a setting
    scripts can read back: models compile with XLA through jit_compile on TPU strategies, not through it."""
    if enabled is True or enabled == "autoclustering":
        value = "autoclustering"
    elif enabled is False or enabled == "" or enabled is None:
        value = ""
    else:
        raise ValueError(f"set_jit takes True, False or 'autoclustering'; got {enabled!r}.")
    _context.set_config_setting("jit", value)


def get_jit() -> str:
    """'autoclustering' after set_jit(True), '' otherwise."""
    return _context.config_setting("jit")


def set_experimental_options(options: dict) -> None:
    """Records graph-optimizer options (layout_optimizer, constant_folding, ...): eager PyTorch runs no
    graph optimizer, so they are kept for get_experimental_options only."""
    if not isinstance(options, dict):
        raise TypeError(f"set_experimental_options takes a dict of option names to values; got {options!r}.")
    _context.set_config_setting("optimizer_options", {**_context.config_setting("optimizer_options"), **options})


def get_experimental_options() -> dict:
    """The options set, plus TF's two that are always reported."""
    options = dict(_context.config_setting("optimizer_options"))
    options.setdefault("disable_model_pruning", False)
    options.setdefault("disable_meta_optimizer", False)
    return options


optimizer = types.SimpleNamespace(
    set_jit=set_jit,
    get_jit=get_jit,
    set_experimental_options=set_experimental_options,
    get_experimental_options=get_experimental_options,
)


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Makes every tf.function run eagerly, also those with jit_compile=True (the others always do here)."""
    _context.set_config_setting("run_functions_eagerly", bool(run_eagerly))


def functions_run_eagerly() -> bool:
    """What `run_functions_eagerly` set (False by default, as in TF)."""
    return bool(_context.config_setting("run_functions_eagerly"))


def set_soft_device_placement(enabled: bool) -> None:
    """Recorded for TF scripts: ops here run where their tensors are, so there is no placement to soften."""
    _context.set_config_setting("soft_device_placement", bool(enabled))


def get_soft_device_placement() -> bool:
    """What `set_soft_device_placement` set (True by default, as in TF)."""
    return bool(_context.config_setting("soft_device_placement"))


def set_visible_devices(devices: Any, device_type: Optional[str] = None) -> None:
    """Restricts what `get_visible_devices` lists of one device type (TF's form: a PhysicalDevice, a list of them,
    or [] to hide every device of `device_type`). The CPU cannot be hidden; devices must be from
    list_physical_devices(), set before they are used."""
    chosen = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for device in chosen:
        _physical(device, "tf.config.set_visible_devices")
    kinds = {d.device_type for d in chosen} | ({device_type.upper()} if device_type else set())
    if len(kinds) != 1:
        raise ValueError(f"tf.config.set_visible_devices takes devices of one type; got {sorted(kinds) or 'none'}: "
                         f"pass device_type= with an empty list.")
    kind = kinds.pop()
    if kind == "CPU" and not chosen:
        raise ValueError("tf.config.set_visible_devices cannot hide the CPU: every program needs it.")
    visible = dict(_context.config_setting("visible_devices") or {})
    visible[kind] = [d.name for d in chosen]
    _context.set_config_setting("visible_devices", visible)


def get_visible_devices(device_type: Optional[str] = None) -> list[PhysicalDevice]:
    """The physical devices not hidden by `set_visible_devices` (all of them by default)."""
    visible = _context.config_setting("visible_devices") or {}
    return [d for d in list_physical_devices(device_type)
            if d.device_type not in visible or d.name in visible[d.device_type]]


def enable_op_determinism() -> None:
    """Makes ops deterministic (torch.use_deterministic_algorithms; CUDA's cuBLAS workspace must be set before
    the first CUDA op, as TF's TF_DETERMINISTIC_OPS asks of its own)."""
    torch.use_deterministic_algorithms(True, warn_only=False)
    if torch.backends.cudnn.is_available():
        torch.backends.cudnn.benchmark = False


def enable_tensor_float_32_execution(enabled: bool) -> None:
    """Lets float32 matmuls and convolutions on Ampere+ GPUs use TensorFloat-32 (TF's default: enabled)."""
    torch.backends.cuda.matmul.allow_tf32 = bool(enabled)
    torch.backends.cudnn.allow_tf32 = bool(enabled)
    torch.set_float32_matmul_precision("high" if enabled else "highest")


def tensor_float_32_execution_enabled() -> bool:
    """Whether TensorFloat-32 is allowed for float32 matmuls."""
    return bool(torch.backends.cuda.matmul.allow_tf32)


def get_device_details(device: PhysicalDevice) -> dict:
    """TF's details of a physical device: a GPU's 'device_name' and 'compute_capability'; {} for others."""
    device = _physical(device, "tf.config.experimental.get_device_details")
    if device.device_type != "GPU":
        return {}
    index = int(device.name.rsplit(":", 1)[1])
    return {"device_name": torch.cuda.get_device_name(index),
            "compute_capability": tuple(torch.cuda.get_device_capability(index))}


_DEVICE_POLICIES = (None, "warn", "explicit", "silent", "silent_for_int32")


def set_device_policy(device_policy: Optional[str]) -> None:
    """Recorded for TF scripts (None, 'warn', 'explicit', 'silent', 'silent_for_int32'); tensors are moved
    between devices by the strategies here."""
    if device_policy not in _DEVICE_POLICIES:
        raise ValueError(f"Not a valid device policy: {device_policy!r}; use one of {list(_DEVICE_POLICIES)}.")
    _context.set_config_setting("device_policy", device_policy)


def get_device_policy() -> str:
    """The policy `set_device_policy` set ('silent' when None, as TF reports its default)."""
    return _context.config_setting("device_policy") or "silent"


def set_synchronous_execution(enable: bool) -> None:
    """Recorded for TF scripts: eager ops here return when torch queued them (CUDA runs asynchronously)."""
    _context.set_config_setting("synchronous_execution", bool(enable))


def get_synchronous_execution() -> bool:
    return bool(_context.config_setting("synchronous_execution"))


def enable_mlir_bridge() -> None:
    """Recorded for TF scripts: there is no TF graph to bridge to MLIR here."""
    _context.set_config_setting("mlir_bridge", True)


def disable_mlir_bridge() -> None:
    _context.set_config_setting("mlir_bridge", False)


class ClusterDeviceFilters:
    """Which devices each task of a cluster may see (tf.config.experimental.ClusterDeviceFilters), kept for the
    cluster connection calls; `set_device_filters(job_name, task_index, device_filters)` records one task's."""

    def __init__(self) -> None:
        self._filters: dict = {}

    def set_device_filters(self, job_name: str, task_index: int, device_filters: Any) -> None:
        if not isinstance(job_name, str) or int(task_index) < 0:
            raise ValueError(f"set_device_filters needs a job name and a task index >= 0; got {job_name!r}, "
                             f"{task_index!r}.")
        self._filters[(job_name, int(task_index))] = [str(f) for f in device_filters]

    def filters(self) -> dict:
        """(job_name, task_index) -> device filter strings."""
        return dict(self._filters)


experimental.set_visible_devices = set_visible_devices
experimental.get_visible_devices = get_visible_devices
experimental.enable_op_determinism = enable_op_determinism
experimental.enable_tensor_float_32_execution = enable_tensor_float_32_execution
experimental.tensor_float_32_execution_enabled = tensor_float_32_execution_enabled
experimental.get_device_details = get_device_details
experimental.set_device_policy = set_device_policy
experimental.get_device_policy = get_device_policy
experimental.set_synchronous_execution = set_synchronous_execution
experimental.get_synchronous_execution = get_synchronous_execution
experimental.enable_mlir_bridge = enable_mlir_bridge
experimental.disable_mlir_bridge = disable_mlir_bridge
experimental.ClusterDeviceFilters = ClusterDeviceFilters
experimental_run_functions_eagerly = run_functions_eagerly  # TF 2.2's names
experimental_functions_run_eagerly = functions_run_eagerly
