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


def test_cross_device_ops_are_tf_classes_whose_reduce_and_broadcast_combine_the_replicas():
    ops = [tf.distribute.NcclAllReduce(), tf.distribute.HierarchicalCopyAllReduce(num_packs=2),
           tf.distribute.ReductionToOneDevice()]
    assert all(isinstance(o, tf.distribute.CrossDeviceOps) for o in ops)
    assert [o.backend for o in ops] == ["nccl", None, "gloo"]
    with pytest.raises(ValueError, match="num_packs >= 0"):
        tf.distribute.NcclAllReduce(num_packs=-1)
    strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
    try:
        per_replica = strategy.experimental_distribute_values_from_function(
            lambda context: torch.tensor(float(context.replica_id_in_sync_group + 1)))
        with strategy.scope():
            reduced = ops[2].reduce(tf.distribute.ReduceOp.SUM, per_replica, destinations="/cpu:0")
            pairs = ops[1].batch_reduce("MEAN", [(per_replica, "/cpu:0"), (per_replica, "/cpu:0")])
            copied = ops[0].broadcast(torch.tensor([1.0, 2.0]), destinations="/cpu:0")
        assert float(reduced) == 3.0 and [float(p) for p in pairs] == [1.5, 1.5]
        assert copied.tolist() == [1.0, 2.0]
        with pytest.raises(ValueError, match="needs `destinations`"):
            ops[0].reduce("SUM", per_replica, destinations=None)
        with pytest.raises(ValueError, match="pairs"):
            ops[0].batch_reduce("SUM", [per_replica])
    finally:
        strategy.teardown()


def test_collective_hints_and_collective_communication_are_tfs_older_names():
    hints = tf.distribute.experimental.CollectiveHints(bytes_per_pack=1024, timeout_seconds=3)
    assert isinstance(hints, tf.distribute.experimental.CommunicationOptions)
    assert (hints.bytes_per_pack, hints.timeout_seconds, hints.implementation) == (1024, 3, Impl.AUTO)
    assert tf.distribute.experimental.CollectiveCommunication.RING is Impl.RING


def test_experimental_multi_worker_takes_the_implementation_directly():
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy(Impl.RING)
    assert isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) and strategy.num_replicas_in_sync == 1
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="NCCL communication needs CUDA GPUs"):
            tf.distribute.experimental.MultiWorkerMirroredStrategy(communication=Impl.NCCL)
