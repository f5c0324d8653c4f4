"""OneDeviceStrategy: one replica on one device (CPU or a CUDA GPU), in this process.
The shape of every multi-replica script, with nothing to synchronise."""
from __future__ import annotations

from typing import Any

from torchstrategy.config import parse_device
from torchstrategy.distribute.strategy import Strategy


class OneDeviceStrategy(Strategy):
    """Places variables and computation on `device`; `num_replicas_in_sync` is 1.

    >>> import torchstrategy as tf
    >>> strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    >>> with strategy.scope():
    ...     model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    """

    def __init__(self, device: Any = "/cpu:0") -> None:
        super().__init__(parse_device(device))
