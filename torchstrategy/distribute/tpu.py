"""TPUStrategy: synchronous training on this host's XLA devices (TPU cores, or XLA:CPU devices) as one
SPMD program per step: each global batch sharded over the devices, weights replicated or split (torch-xla)."""
from __future__ import annotations

from typing import Any

from torchstrategy._machinery.moved_keywords import moved_keywords
from torchstrategy.distribute.parts.spmd import SpmdCollectives, SpmdPlacement, SpmdReplication, XlaMesh, init_spmd
from torchstrategy.distribute.strategy import Strategy


class TPUStrategy(Strategy):
    """One replica per local XLA device (tf.distribute.TPUStrategy): `num_replicas_in_sync` is the device
    count and each global batch is split over them, as in TF. A step runs as one SPMD program over the
    whole global batch (XLA splits it and adds the all-reduces), compiled once per input shape.

    `experimental_spmd_xla_partitioning=True` has XLA's SPMD partitioner split every weight and optimizer
    slot over the devices (FSDP-style, along a dimension that divides by the device count) instead of
    replicating them; XLA gathers them where used, and training computes the same numbers.
    `strategy.extended.allow_uneven_split = True` lets global batches that do not divide be split.

    Inside `strategy.run` the step sees the global batch, so `tf.nn.compute_average_loss` without a
    `global_batch_size` and the Keras loss divide by the global batch, and `strategy.reduce` of the
    step's result is that result: the sum of the replicas' shares, as TF returns it.

    >>> import torchstrategy as tf  # doctest: +SKIP
    >>> resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")  # doctest: +SKIP
    >>> tf.distribute.TPUStrategy(resolver).num_replicas_in_sync  # doctest: +SKIP
    4
    """

    @moved_keywords(
        allow_uneven_split="set `strategy.extended.allow_uneven_split = True` after making the strategy.",
        shard_variables="pass experimental_spmd_xla_partitioning=True (XLA's SPMD partitioner then splits every "
                        "weight and optimizer slot over the devices).")
    def __init__(self, tpu_cluster_resolver: Any = None, experimental_device_assignment: Any = None,
                 experimental_spmd_xla_partitioning: bool = False) -> None:
        from torchstrategy.cluster import tpu as tpu_cluster

        tpu_cluster.require_torch_xla("TPUStrategy")  # says which extra to install
        if tpu_cluster_resolver is not None and hasattr(tpu_cluster_resolver, "num_accelerators"):
            tpu_cluster_resolver.num_accelerators()  # a resolver naming a TPU that is not here fails now
        init_spmd()
        count = tpu_cluster.xla_device_count("TPUStrategy")
        if experimental_device_assignment is not None:
            wanted = int(getattr(experimental_device_assignment, "num_replicas", experimental_device_assignment))
            if not 1 <= wanted <= count:
                raise ValueError(f"experimental_device_assignment asks for {wanted} replicas; this host has {count} "
                                 f"XLA device(s).")
            if wanted != count:
                raise ValueError(f"TPUStrategy spans every local XLA device ({count}) in one SPMD mesh; a device "
                                 f"assignment of {wanted} is not supported. Set CPU_NUM_DEVICES / the visible TPU "
                                 f"chips to {wanted} instead.")
        self._mesh = XlaMesh(count)
        tpu_cluster.require_xla_autograd("TPUStrategy", self._mesh.device)
        collectives = SpmdCollectives(count)
        devices = tuple(f"/device:TPU:{i}" for i in range(count))
        super().__init__(self._wired(
            self._mesh.device, collectives=collectives,
            replication=SpmdReplication(self._mesh, shard_variables=bool(experimental_spmd_xla_partitioning)),
            placement=SpmdPlacement(self._mesh, collectives),
            cluster_resolver=tpu_cluster_resolver, needs_model_in_scope=True, worker_devices=devices,
            parameter_devices=devices))

    def __repr__(self) -> str:
        return f"TPUStrategy(devices={self.num_replicas_in_sync}, mesh=('data',))"

    @property
    def compile_count(self) -> int:
        """XLA graphs compiled so far in this process (stops growing once every step shape was seen)."""
        from torchstrategy.distribute.parts.spmd import compile_count

        return compile_count()
