"""CommunicationOptions / cross_device_ops -> torch.distributed backend, and the single-worker
MultiWorkerMirroredStrategy TF gives when no cluster is configured."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy.distribute.communication import choose_backend

Impl = tf.distribute.experimental.CommunicationImplementation


def test_implementation_maps_to_backend():
    assert choose_backend(on_cuda=False) == "gloo"
    assert choose_backend(on_cuda=True) == "nccl"
    assert choose_backend(on_cuda=True, implementation=Impl.RING) == "gloo"
    assert choose_backend(on_cuda=False, requested=tf.distribute.ReductionToOneDevice().backend) == "gloo"
    with pytest.raises(ValueError, match="NCCL communication needs CUDA GPUs"):
        choose_backend(on_cuda=False, implementation=Impl.NCCL)
    with pytest.raises(ValueError, match="NCCL communication needs CUDA GPUs"):
        choose_backend(on_cuda=False, requested=tf.distribute.NcclAllReduce().backend)


def test_communication_options_validate():
    options = tf.distribute.experimental.CommunicationOptions(implementation=Impl.RING, timeout_seconds=5)
    assert options.timeout_seconds == 5
    with pytest.raises(ValueError, match="timeout_seconds must be positive"):
        tf.distribute.experimental.CommunicationOptions(timeout_seconds=0)
    with pytest.raises(ValueError, match="CommunicationImplementation"):
        tf.distribute.experimental.CommunicationOptions(implementation="RING")


def test_multi_worker_without_a_cluster_is_one_local_worker():
    options = tf.distribute.experimental.CommunicationOptions(implementation=Impl.RING)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    assert strategy.num_replicas_in_sync == 1 and strategy.cluster_resolver.task_type is None  # TF: no task named
    assert strategy.extended.should_checkpoint
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="NCCL communication needs CUDA GPUs"):
            tf.distribute.MultiWorkerMirroredStrategy(
                communication_options=tf.distribute.experimental.CommunicationOptions(implementation=Impl.NCCL))


def test_multi_worker_takes_an_explicit_resolver(monkeypatch):
    spec = tf.train.ClusterSpec({"worker": ["127.0.0.1:2222"]})
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, task_type="worker", task_id=0)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)
    assert strategy.cluster_resolver is resolver and strategy.num_replicas_in_sync == 1
