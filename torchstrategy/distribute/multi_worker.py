"""MultiWorkerMirroredStrategy: synchronous training across machines, each process one replica,
placed by torchrun, TF_CONFIG or SLURM (the cluster resolvers) and talking over gloo or NCCL."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy import cluster, config
from torchstrategy._machinery.moved_keywords import moved_keywords
from torchstrategy.distribute import parts
from torchstrategy.distribute.communication import DEFAULT_TIMEOUT, CommunicationOptions
from torchstrategy.distribute.process_groups import (GroupConfig, checked_communication_options, join_process_group,
                                                     threads_per_replica)
from torchstrategy.distribute.strategy import Strategy


class MultiWorkerMirroredStrategy(Strategy):
    """Data parallelism over every process of a multi-node job (tf.distribute.MultiWorkerMirroredStrategy).

    Without a resolver the environment decides (torchrun, TF_CONFIG, SLURM, in that order); with
    none of them it is a single local worker, as in TF. A TF_CONFIG (or SimpleClusterResolver) task
    runs one replica per local GPU, as TF's does, each a process started here (every task must see
    the same number); on CPU, one per logical CPU device configured with
    `tf.config.set_logical_device_configuration` (one by default, as TF).

    >>> import torchstrategy as tf
    >>> tf.distribute.MultiWorkerMirroredStrategy().num_replicas_in_sync  # no cluster: one worker
    1
    """

    @moved_keywords(allow_uneven_split="set `strategy.extended.allow_uneven_split = True` after making the strategy.")
    def __init__(self, cluster_resolver: Any = None,
                 communication_options: Optional[CommunicationOptions] = None) -> None:
        resolver = cluster_resolver if cluster_resolver is not None else cluster.detect()
        options = checked_communication_options(communication_options, "MultiWorkerMirroredStrategy")
        on_cuda = torch.cuda.is_available()
        # TF runs a task's replicas on every local GPU; here each is a process (CPU: the logical devices set
        # with tf.config.set_logical_device_configuration, one by default)
        per_task = torch.cuda.device_count() if on_cuda else len(config.list_logical_devices("CPU"))
        launcher = parts.ClusterLauncher(resolver, per_task, threads_per_replica(on_cuda))
        group = join_process_group(launcher, GroupConfig("MultiWorkerMirroredStrategy", on_cuda, DEFAULT_TIMEOUT),
                                   options)
        if resolver is None:  # as TF: a TF_CONFIG resolver that names no task (task_type None, empty cluster)
            from torchstrategy.cluster.resolvers import TFConfigClusterResolver

            resolver = TFConfigClusterResolver()
        super().__init__(self._wired(**parts.data_parallel(group), cluster_resolver=resolver,
                                     needs_model_in_scope=True))
