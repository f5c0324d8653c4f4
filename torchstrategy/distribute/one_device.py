"""OneDeviceStrategy: one replica on one device (CPU, a CUDA GPU or one XLA/TPU device), in this process.
The shape of every multi-replica script, with nothing to synchronise."""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch

from torchstrategy.config import parse_device, use_xla_device
from torchstrategy.distribute.strategy import Strategy


class OneDeviceStrategy(Strategy):
    """Places variables and computation on `device`; `num_replicas_in_sync` is 1.

    >>> import torchstrategy as tf
    >>> strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    >>> with strategy.scope():
    ...     model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

    On an XLA device ('/tpu:0', needs torch-xla) each optimizer step ends the lazy graph, so every
    step runs the same compiled program instead of an epoch growing into one graph.
    """

    def __init__(self, device: Any) -> None:
        parsed = parse_device(device)
        super().__init__(self._wired(use_xla_device(device, parsed) if parsed.type == "xla" else parsed))

    def optimizer_step(self, optimizer: torch.optim.Optimizer, step_fn: Optional[Callable[[], Any]] = None) -> Any:
        result = super().optimizer_step(optimizer, step_fn)
        if self.device.type == "xla":
            import torch_xla  # present: use_xla_device checked it for this device

            torch_xla.sync()
        return result
