"""MirroredStrategy: synchronous training on the replicas of one machine (every local CUDA GPU
with NCCL, or several CPU processes with gloo), started from a plain `python train.py`."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy._machinery.moved_keywords import moved_keywords
from torchstrategy.config import parse_device
from torchstrategy.distribute import parts
from torchstrategy.distribute.communication import (LOCAL_TIMEOUT, CollectiveAllReduce, CommunicationOptions,
                                                    CrossDeviceOps)
from torchstrategy.distribute.process_groups import GroupConfig, cuda_devices, join_process_group, threads_per_replica
from torchstrategy.distribute.strategy import Strategy


def _local_devices(devices: Optional[Sequence[Any]], owner: str = "MirroredStrategy") -> list[torch.device]:
    """The replicas' devices from `devices` as the user spelled them (errors name `owner`, the strategy asked)."""
    if devices is None:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return [torch.device("cuda", i) for i in range(count)] or [torch.device("cpu")]
    if isinstance(devices, (str, torch.device)):
        devices = [devices]
    parsed = [parse_device(d) for d in devices]
    if not parsed:
        raise ValueError(f"{owner}(devices=[]) has no device: pass e.g. ['/gpu:0', '/gpu:1'] or "
                         "['/cpu:0', '/cpu:1'], or leave devices unset to use every local GPU.")
    kinds = {d.type for d in parsed}
    unsupported = sorted(kinds - {"cpu", "cuda"})
    if unsupported:
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        raise ValueError(
            f"{owner} was asked for {list(devices)}, but it runs replicas on CUDA GPUs or on CPU processes, "
            f"not on {'/'.join(k.upper() for k in unsupported)} devices. This machine has: CPU"
            f"{f', {gpus} CUDA GPU(s)' if gpus else ' (no CUDA GPU)'}. Pass ['/gpu:0', ...] or ['/cpu:0', '/cpu:1', ...]"
            f"{' (TPUs get TPUStrategy)' if 'xla' in unsupported else ''}.")
    if len(kinds) > 1:
        raise ValueError(f"{owner} devices must all be GPUs or all CPUs; got {list(devices)}.")
    if len(set(parsed)) != len(parsed):
        kind = "gpu" if parsed[0].type == "cuda" else "cpu"
        raise ValueError(
            f"No duplicates allowed in `devices` argument: {list(devices)} (as in TF). Each entry is one replica: "
            f"for {len(parsed)} replicas pass distinct indices, {[f'/{kind}:{i}' for i in range(len(parsed))]}.")
    # CPU "devices" name replicas, not hardware: each becomes one process on the CPU.
    return [torch.device("cpu") if d.type == "cpu" else d for d in parsed]


class MirroredStrategy(Strategy):
    """One replica per local device, variables mirrored, gradients all-reduced each step.

    In a plain `python train.py`, the script is re-run for replicas 1..N-1 (this process is
    replica 0); under torchrun, each process joins as the rank torchrun gave it.

    `cross_device_ops` picks the backend (NcclAllReduce: nccl, ReductionToOneDevice: gloo); the collective
    timeout is set with `tf.distribute.experimental.CollectiveAllReduce(CommunicationOptions(...))` there.
    `strategy.extended.allow_uneven_split = True` lets global batches that do not divide be split.

    >>> import torchstrategy as tf
    >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    >>> strategy.num_replicas_in_sync
    1
    """

    @moved_keywords(
        allow_uneven_split="set `strategy.extended.allow_uneven_split = True` after making the strategy.",
        communication_options="pass cross_device_ops=tf.distribute.experimental.CollectiveAllReduce("
                              "communication_options=tf.distribute.experimental.CommunicationOptions(...)).")
    def __init__(self, devices: Optional[Sequence[Any]] = None,
                 cross_device_ops: Optional[CrossDeviceOps] = None) -> None:
        local = _local_devices(devices)
        on_cuda = local[0].type == "cuda"
        if cross_device_ops is not None and not isinstance(cross_device_ops, CrossDeviceOps):
            raise TypeError(f"MirroredStrategy(cross_device_ops=...) takes a tf.distribute.CrossDeviceOps (NcclAllReduce, "
                            f"HierarchicalCopyAllReduce, ReductionToOneDevice, or torchstrategy's "
                            f"tf.distribute.experimental.CollectiveAllReduce); got {type(cross_device_ops).__name__}.")
        options = (cross_device_ops.communication_options if isinstance(cross_device_ops, CollectiveAllReduce)
                   else CommunicationOptions())
        # devices unset (every local GPU): under torchrun, whatever it started decides
        launcher = parts.RerunScriptLauncher(len(local), threads_per_replica(on_cuda), follow_launcher=devices is None)
        # a collective that waits longer than LOCAL_TIMEOUT fails, naming the replica that stopped answering
        config = GroupConfig("MirroredStrategy", on_cuda, LOCAL_TIMEOUT, cuda_devices(local),
                             requested_backend=cross_device_ops.backend if cross_device_ops else None)
        super().__init__(self._wired(**parts.data_parallel(join_process_group(launcher, config, options)),
                                     needs_model_in_scope=True))
