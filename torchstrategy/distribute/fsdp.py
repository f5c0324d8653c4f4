"""FSDPStrategy: data parallelism with parameters, gradients and optimizer state sharded over the
replicas (FSDP2's `fully_shard`), on the local devices or on every process of a multi-node job."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy import _context, cluster
from torchstrategy._machinery.moved_keywords import moved_keywords
from torchstrategy.distribute import parts
from torchstrategy.distribute.communication import DEFAULT_TIMEOUT, LOCAL_TIMEOUT, CommunicationOptions
from torchstrategy.distribute.mirrored import _local_devices
from torchstrategy.distribute.process_groups import (GroupConfig, checked_communication_options, cuda_devices,
                                                     join_process_group, threads_per_replica)
from torchstrategy.distribute.parts.sharded_io import ShardedStateIO
from torchstrategy.distribute.parts.sharding import FullyShardReplication, ShardingOptions
from torchstrategy.distribute.strategy import Strategy


def _policy_dtypes() -> tuple:
    """(param_dtype, reduce_dtype) from the Keras global policy: a mixed policy gathers parameters in its
    compute dtype and reduces gradients in float32; a plain one changes nothing."""
    policy = _context.global_dtype_policy()
    compute = getattr(policy, "compute_dtype", None)
    variable = getattr(policy, "variable_dtype", None)
    if compute is None or compute == variable:
        return None, None
    return getattr(torch, compute), torch.float32


class FSDPStrategy(Strategy):
    """Sharded data parallelism (tf.distribute.experimental.FSDPStrategy): each replica holds 1/N of every
    variable, its gradient and its optimizer slots; layers gather their weights just for their own
    forward and backward. Training gives the numbers of MirroredStrategy on the same data.

    `devices` as for MirroredStrategy (`["/cpu:0", "/cpu:1"]` re-runs the script for replica 1; GPUs by
    default); `cluster_resolver` (or torchrun, TF_CONFIG, SLURM in the environment) for a multi-node job.
    Create the model (and compile it) inside `strategy.scope()`.

    >>> import torchstrategy as tf
    >>> tf.distribute.experimental.FSDPStrategy(["/cpu:0"]).num_replicas_in_sync
    1
    """

    @moved_keywords(allow_uneven_split="set `strategy.extended.allow_uneven_split = True` after making the strategy.")
    def __init__(self, devices: Optional[Sequence[Any]] = None, cluster_resolver: Any = None,
                 options: Optional[ShardingOptions] = None, communication_options: Optional[CommunicationOptions] = None,
                 reshard_after_forward: Optional[bool] = None) -> None:
        if options is not None and not isinstance(options, ShardingOptions):
            raise TypeError(f"options must be a tf.distribute.experimental.ShardingOptions; got "
                            f"{type(options).__name__}.")
        options = options or ShardingOptions()
        if reshard_after_forward is not None:
            options = ShardingOptions(bool(reshard_after_forward), options.param_dtype, options.reduce_dtype,
                                      options.cpu_offload)
        communication = checked_communication_options(communication_options, "FSDPStrategy")
        if devices is not None and cluster_resolver is not None:
            raise ValueError("FSDPStrategy takes `devices` (replicas on this machine) or `cluster_resolver` (a "
                             "multi-node job), not both.")
        resolver = cluster_resolver if cluster_resolver is not None else (cluster.detect() if devices is None else None)
        if resolver is not None:
            on_cuda = torch.cuda.is_available()
            launcher: Any = parts.ClusterLauncher(resolver)
            config = GroupConfig("FSDPStrategy", on_cuda, DEFAULT_TIMEOUT)
        else:
            local = _local_devices(devices, owner="FSDPStrategy")
            on_cuda = local[0].type == "cuda"
            launcher = parts.RerunScriptLauncher(len(local), threads_per_replica(on_cuda))
            config = GroupConfig("FSDPStrategy", on_cuda, LOCAL_TIMEOUT, cuda_devices(local))
        group = join_process_group(launcher, config, communication)
        self.options = options
        super().__init__(self._wired(
            group.device, collectives=group.collectives, launcher=launcher,
            replication=FullyShardReplication(group.device, group.collectives.active, options, _policy_dtypes),
            checkpoint_io=ShardedStateIO(), cluster_resolver=resolver,
            needs_model_in_scope=True))
