"""`tf.tpu`: the TPU system calls TF scripts make before building a TPUStrategy (initialize_tpu_system,
shutdown_tpu_system, Topology); they run on this host's XLA devices through torch-xla."""
from __future__ import annotations

from torchstrategy._machinery.lazy import namespace_module
from torchstrategy.cluster.tpu import (DeviceOrderMode, Topology, TPUSystemMetadata, XLAOptions, initialize_tpu_system,
                                       shutdown_tpu_system)

experimental = namespace_module("torchstrategy.tpu.experimental", ("tf.tpu.experimental",), dict(
    initialize_tpu_system=initialize_tpu_system,
    shutdown_tpu_system=shutdown_tpu_system,
    Topology=Topology,
    TPUSystemMetadata=TPUSystemMetadata,
    DeviceOrderMode=DeviceOrderMode,
))

__all__ = ["experimental", "XLAOptions"]
