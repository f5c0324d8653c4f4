"""MirroredStrategy: synchronous training on the replicas of one machine (every local CUDA GPU
with NCCL, or several CPU processes with gloo), started from a plain `python train.py`."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from torchstrategy.config import parse_device
from torchstrategy.distribute import parts
from datetime import timedelta

from torchstrategy.distribute.communication import (LOCAL_TIMEOUT, CommunicationOptions, CrossDeviceOps,
                                                    choose_backend)
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

    >>> import torchstrategy as tf
    >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    >>> strategy.num_replicas_in_sync
    1
    """

    def __init__(self, devices: Optional[Sequence[Any]] = None, cross_device_ops: Optional[CrossDeviceOps] = None,
                 allow_uneven_split: bool = False, communication_options: Optional[CommunicationOptions] = None) -> None:
        local = _local_devices(devices)
        on_cuda = local[0].type == "cuda"
        if communication_options is not None and not isinstance(communication_options, CommunicationOptions):
            raise TypeError(f"communication_options must be a tf.distribute.experimental.CommunicationOptions; got "
                            f"{type(communication_options).__name__}.")
        options = communication_options or CommunicationOptions()
        # a collective that waits longer than this fails, naming the replica that stopped answering
        timeout = timedelta(seconds=options.timeout_seconds) if options.timeout_seconds else LOCAL_TIMEOUT
        backend = choose_backend(on_cuda, options.implementation,
                                 requested=cross_device_ops.backend if cross_device_ops else None)
        launcher = parts.RerunScriptLauncher(len(local), threads_per_replica=None if on_cuda else 1)
        if devices is None:  # every local GPU: under torchrun, whatever it started decides
            from torchstrategy import cluster

            spec = cluster.process_spec()
            spec = spec if spec.launched else launcher.start()
        else:
            spec = launcher.start()
        if on_cuda:
            device = local[spec.local_rank] if spec.local_rank < len(local) else torch.device("cuda", spec.local_rank)
        else:
            device = torch.device("cpu")
        super().__init__(device, **parts.one_process_per_replica(spec, device, backend, timeout),
                         allow_uneven_split=allow_uneven_split, needs_model_in_scope=True)
