"""`tf.tpu`: the TPU system calls TF scripts make before building a TPUStrategy (initialize_tpu_system,
shutdown_tpu_system, Topology); they run on this host's XLA devices through torch-xla."""
from __future__ import annotations

import types

from torchstrategy.cluster.tpu import Topology, TPUSystemMetadata, initialize_tpu_system, shutdown_tpu_system

experimental = types.SimpleNamespace(
    initialize_tpu_system=initialize_tpu_system,
    shutdown_tpu_system=shutdown_tpu_system,
    Topology=Topology,
    TPUSystemMetadata=TPUSystemMetadata,
)

__all__ = ["experimental"]
