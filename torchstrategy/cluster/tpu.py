"""TF's TPUClusterResolver for this host's XLA devices (torch-xla), the TPU system set-up calls
(`initialize_tpu_system`, `shutdown_tpu_system`, Topology) and the checks that torch-xla is there."""
from __future__ import annotations

import collections
import enum
import socket
from typing import Any, Optional

from lightning_utilities.core.imports import module_available

from torchstrategy import _context
from torchstrategy.cluster.base import ClusterResolver, env_value
from torchstrategy.cluster.spec import ClusterSpec, ProcessSpec
from torchstrategy.cluster.tpu_topology import Topology, local_topology

#: The extra that installs torch-xla with the torch build it works with.
TPU_EXTRA_HINT = ("pip install 'torchstrategy[tpu]' (torch-xla 2.9.0, which needs torch 2.9.1 and "
                  "torchvision 0.24.1; or run scripts/setup_tpu.sh for a separate .venv-tpu)")
#: Names of a TPU that mean "the XLA devices attached to this host".
LOCAL_TPU_NAMES = (None, "", "local")
_XLA_CPU_HINT = "PJRT_DEVICE=TPU on a TPU VM, or PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 for 4 XLA:CPU devices"


def torch_xla_installed() -> bool:
    """Whether the torch_xla package can be found (it is not imported)."""
    return module_available("torch_xla")


def require_torch_xla(what: str) -> Any:
    """Imports and returns torch_xla, or raises ImportError saying `what` needs it and how to install it.

    >>> require_torch_xla("OneDeviceStrategy('/tpu:0')")  # doctest: +SKIP
    <module 'torch_xla' ...>
    """
    if not torch_xla_installed():
        raise ImportError(f"{what} needs torch-xla, which is not installed: {TPU_EXTRA_HINT}.")
    try:
        import torch_xla
    except ImportError as error:  # e.g. a torch-xla built for another torch
        import torch

        raise ImportError(f"{what} needs torch-xla, which is installed but does not import with torch "
                          f"{torch.__version__} ({error}). {TPU_EXTRA_HINT}.") from error
    return torch_xla


def xla_environment() -> dict:
    """The environment variables that choose torch-xla's devices (unset ones left out)."""
    names = ("PJRT_DEVICE", "CPU_NUM_DEVICES", "TPU_NAME", "TPU_VISIBLE_CHIPS")
    return {name: env_value(name) for name in names if env_value(name) is not None}


def xla_devices_configured() -> bool:
    """True when torch-xla is installed and told which devices to use: PJRT_DEVICE is set, or libtpu is
    installed (torch-xla then picks the TPU). Otherwise XLA devices are not listed as TPUs."""
    return torch_xla_installed() and (env_value("PJRT_DEVICE") is not None or module_available("libtpu"))


def xla_device_count(what: str) -> int:
    """How many XLA devices this process's runtime has (starts torch-xla's runtime); errors when none."""
    require_torch_xla(what)
    if not xla_devices_configured():
        raise RuntimeError(f"{what}: torch-xla is installed but no XLA device is chosen here (no PJRT_DEVICE, "
                           f"no libtpu). Set {_XLA_CPU_HINT}.")
    import torch_xla.runtime as xr

    count = int(xr.global_runtime_device_count())
    if count < 1:
        raise RuntimeError(f"{what}: torch-xla sees no device ({xla_environment()}). Set {_XLA_CPU_HINT}.")
    return count


def require_xla_autograd(what: str, device: Any) -> None:
    """Raises RuntimeError when autograd cannot run on XLA `device` in this process: PyTorch's autograd
    engine sizes its device queues at the first backward, so one run before torch-xla started (a CPU
    model trained earlier in the script) leaves XLA out for good. A scalar backward on `device` (lazy,
    nothing compiled) tells, so the strategy fails at creation and not at the first training step."""
    import torch

    probe = torch.zeros((), device=device, requires_grad=True)
    try:
        torch.autograd.grad(probe * 1.0, probe)
    except RuntimeError as error:
        if "device_ready_queues_" not in str(error):
            raise
        raise RuntimeError(
            f"{what}: a backward pass already ran in this process before torch-xla started, and PyTorch's autograd "
            "engine cannot take XLA devices after its first backward. Create the strategy (or the XLA device) "
            "before training or differentiating anything on the CPU in this script, or run that part in another "
            "process.") from None


def xla_device_kind() -> str:
    """torch-xla's device type in use: 'TPU', 'CPU', 'CUDA', ... (starts the runtime)."""
    import torch_xla.runtime as xr

    return str(xr.device_type())


#: TF's tf.tpu.experimental.TPUSystemMetadata fields.
TPUSystemMetadata = collections.namedtuple(
    "TPUSystemMetadata", ["num_cores", "num_hosts", "num_of_cores_per_host", "topology", "devices"])


class XLAOptions(collections.namedtuple("XLAOptions", ["use_spmd_for_xla_partitioning", "enable_xla_dynamic_padder",
                                                       "use_shardy_partitioner"])):
    """tf.tpu.XLAOptions: compilation options of a TPU step. Steps here are SPMD programs (torch-xla) whatever
    `use_spmd_for_xla_partitioning` says; the padder and Shardy choices are XLA's own."""

    __slots__ = ()

    def __new__(cls, use_spmd_for_xla_partitioning: bool = True, enable_xla_dynamic_padder: bool = True,
                use_shardy_partitioner: bool = False) -> "XLAOptions":
        return super().__new__(cls, use_spmd_for_xla_partitioning, enable_xla_dynamic_padder, use_shardy_partitioner)


class DeviceOrderMode(enum.IntEnum):
    """tf.tpu.experimental.DeviceOrderMode: how a device assignment orders the cores (TF's values)."""

    AUTO = 0
    RING = 1
    MESH = 2


class TPUClusterResolver(ClusterResolver):
    """TF's `tf.distribute.cluster_resolver.TPUClusterResolver`, for the XLA devices of this host.

    >>> resolver = TPUClusterResolver(tpu="local")   # or tpu=None / tpu=''
    >>> resolver.num_accelerators()                 # doctest: +SKIP
    {'TPU': 4}

    `tpu` None, '' and 'local' (and this host's own name, or TPU_NAME when set, as on a TPU VM) mean
    the devices torch-xla runs here (PJRT_DEVICE=TPU, or CPU for XLA:CPU). torch-xla cannot drive a
    remote TPU, so any other name or a 'grpc://' address is refused: run the script on the TPU VM.
    `zone`, `project`, `credentials`, `service`, `discovery_url` and the coordinator arguments only
    find remote Cloud TPUs in TF and are accepted and unused. `master()` is '' and `cluster_spec()`
    is empty, as TF gives for a local TPU; `task_type` is `job_name`, `task_id` 0.
    """

    def __init__(self, tpu: Optional[str] = None, zone: Optional[str] = None, project: Optional[str] = None,
                 job_name: str = "worker", coordinator_name: Optional[str] = None,
                 coordinator_address: Optional[str] = None, credentials: Any = "default", service: Any = None,
                 discovery_url: Optional[str] = None) -> None:
        super().__init__()
        del zone, project, coordinator_name, coordinator_address, credentials, service, discovery_url
        self._tpu = _local_tpu_name(tpu)
        require_torch_xla(f"TPUClusterResolver(tpu={tpu!r})")
        self._task_type = job_name
        self._task_id = 0

    @staticmethod
    def connect(tpu: Optional[str] = None, zone: Optional[str] = None,
                project: Optional[str] = None) -> "TPUClusterResolver":
        """TF's shortcut: makes the resolver, connects to it and initializes the TPU system."""
        resolver = TPUClusterResolver(tpu, zone, project)
        initialize_tpu_system(resolver)
        return resolver

    @property
    def tpu_name(self) -> str:
        """'local': the name initialize_tpu_system records this system under."""
        return self._tpu

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """'' (TF's master for a TPU attached to this host)."""
        del task_type, task_id, rpc_layer
        return ""

    def get_master(self) -> str:
        return self.master()

    def get_job_name(self) -> str:
        return self.task_type

    def cluster_spec(self) -> ClusterSpec:
        """An empty ClusterSpec, as TF gives for a local TPU (there are no other tasks)."""
        return ClusterSpec({})

    def num_accelerators(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                         config_proto: object = None) -> dict:
        """{'TPU': n}: the XLA devices of this host (starts torch-xla's runtime)."""
        del task_type, task_id, config_proto
        return {"TPU": xla_device_count("TPUClusterResolver.num_accelerators()")}

    def get_tpu_system_metadata(self) -> TPUSystemMetadata:
        """TF's TPUSystemMetadata: one host, all of its XLA devices, TF's device names."""
        count = xla_device_count("TPUClusterResolver.get_tpu_system_metadata()")
        topology = local_topology(count, xla_device_kind())
        devices = tuple(f"/job:{self.task_type}/replica:0/task:0/device:TPU:{index}" for index in range(count))
        return TPUSystemMetadata(num_cores=count, num_hosts=1, num_of_cores_per_host=count,
                                 topology=topology, devices=devices)

    def process_spec(self) -> ProcessSpec:
        """One process: single-process SPMD drives every device of the host."""
        return ProcessSpec()

    def __enter__(self) -> "TPUClusterResolver":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        return None


def _local_tpu_name(tpu: Any) -> str:
    if tpu in LOCAL_TPU_NAMES:
        return "local"
    if not isinstance(tpu, str):
        raise TypeError(f"TPUClusterResolver: tpu must be a TPU name string (or None, '', 'local'); got {tpu!r}.")
    name = tpu.strip()
    if name in ("", "local") or name == env_value("TPU_NAME") or name == socket.gethostname():
        return "local"
    raise ValueError(
        f"TPUClusterResolver: TPU {tpu!r} cannot be reached from here. torchstrategy drives the XLA devices of "
        f"the host it runs on (torch-xla has no remote TPU connection): use tpu='local' (or None / '') and run "
        f"the script on the TPU VM itself ({_XLA_CPU_HINT}). Names accepted as this host: 'local', "
        f"{socket.gethostname()!r}" + (f", TPU_NAME={env_value('TPU_NAME')!r}" if env_value("TPU_NAME") else "")
        + ".")


def _tpu_resolver(cluster_resolver: Any, where: str) -> TPUClusterResolver:
    require_torch_xla(where)
    if cluster_resolver is None:
        return TPUClusterResolver("")
    if isinstance(cluster_resolver, str):
        return TPUClusterResolver(cluster_resolver)
    if not isinstance(cluster_resolver, TPUClusterResolver):
        raise TypeError(f"{where} needs a tf.distribute.cluster_resolver.TPUClusterResolver (or None for this "
                        f"host's TPU); got {type(cluster_resolver).__name__}.")
    return cluster_resolver


def connect_to_tpu_cluster(cluster_resolver: Any) -> TPUClusterResolver:
    """What `tf.config.experimental_connect_to_cluster` does for a TPU resolver: checks its devices exist."""
    resolver = _tpu_resolver(cluster_resolver, "tf.config.experimental_connect_to_cluster")
    xla_device_count("tf.config.experimental_connect_to_cluster")
    return resolver


def initialize_tpu_system(cluster_resolver: Optional[TPUClusterResolver] = None) -> Topology:
    """`tf.tpu.experimental.initialize_tpu_system`: starts torch-xla's runtime, returns the Topology.

    >>> topology = initialize_tpu_system(TPUClusterResolver("local"))  # doctest: +SKIP
    >>> topology.num_tasks, topology.num_tpus_per_task                  # doctest: +SKIP
    (1, 4)

    A second call for the same system is an error. TF 2.21 only logs a warning there and
    re-initializes, which loses every variable already on the TPU; call it once per process
    (or `shutdown_tpu_system` first).
    """
    resolver = _tpu_resolver(cluster_resolver, "tf.tpu.experimental.initialize_tpu_system")
    if _context.keyed_setting("tpu_systems", resolver.tpu_name):
        raise RuntimeError(f"tf.tpu.experimental.initialize_tpu_system: the TPU system {resolver.tpu_name!r} is "
                           "already initialized in this process. Call it once (re-initializing would lose the "
                           "variables already on the devices), or call tf.tpu.experimental.shutdown_tpu_system "
                           "first.")
    count = xla_device_count("tf.tpu.experimental.initialize_tpu_system")
    topology = local_topology(count, xla_device_kind())
    _context.set_keyed_setting("tpu_systems", resolver.tpu_name, True)
    return topology


def shutdown_tpu_system(cluster_resolver: Optional[TPUClusterResolver] = None) -> None:
    """`tf.tpu.experimental.shutdown_tpu_system`: forgets the initialization (torch-xla's runtime stays up
    for the process's life; its devices cannot be released and started again in one process)."""
    resolver = _tpu_resolver(cluster_resolver, "tf.tpu.experimental.shutdown_tpu_system")
    _context.set_keyed_setting("tpu_systems", resolver.tpu_name, None)


def tpu_system_initialized(cluster_resolver: Optional[TPUClusterResolver] = None) -> bool:
    """Whether `initialize_tpu_system` ran for this resolver's system (and was not shut down)."""
    name = "local" if cluster_resolver is None else _tpu_resolver(cluster_resolver, "tpu_system_initialized").tpu_name
    return bool(_context.keyed_setting("tpu_systems", name))
