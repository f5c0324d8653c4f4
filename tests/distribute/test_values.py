"""distribute/values.py: ReplicaContext (properties, merge_call over replica threads), ValueContext, RunOptions,
InputReplicationMode and DistributedValues, against TF 2.21's behaviour (multi-process runs: the conformance suite)."""
from __future__ import annotations

import threading

import pytest
import torch

import torchstrategy as tf


@pytest.fixture
def two_threads():
    strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
    yield strategy
    strategy.teardown()


def test_merge_call_hands_merge_fn_every_local_replicas_value_once_in_cross_replica_context(two_threads):
    calls, seen = [], []

    def merge_fn(strategy, value, scale=None):
        calls.append(threading.get_ident())
        seen.append((tf.distribute.in_cross_replica_context(), tf.distribute.get_replica_context()))
        assert isinstance(value, tf.distribute.DistributedValues)
        return strategy.reduce("SUM", value, axis=None) * scale.values[0]

    def replica_fn():
        context = tf.distribute.get_replica_context()
        mine = torch.tensor(float(context.replica_id_in_sync_group + 1))
        merged = context.merge_call(merge_fn, args=(mine,), kwargs={"scale": torch.tensor(10.0)})
        return merged, tf.distribute.in_cross_replica_context()

    with two_threads.scope():
        results = two_threads.experimental_local_results(two_threads.run(replica_fn))
    assert len(calls) == 1  # one call for the two replicas
    assert seen == [(True, None)]  # merge_fn runs in cross-replica context
    assert [float(merged) for merged, _ in results] == [30.0, 30.0]  # (1 + 2) * 10, on both replicas
    assert [inside for _, inside in results] == [False, False]  # back in replica context afterwards


def test_merge_call_with_one_replica_passes_the_value_itself():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")

    def replica_fn():
        return tf.distribute.get_replica_context().merge_call(lambda s, v: (type(v).__name__, float(v) * 2),
                                                              args=(torch.tensor(4.0),))

    with strategy.scope():
        assert strategy.run(replica_fn) == ("Tensor", 8.0)


def test_merge_call_outside_the_replica_function_is_refused():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    context = tf.distribute.ReplicaContext(strategy, 0)
    with pytest.raises(RuntimeError, match="called from the replica function"):
        context.merge_call(lambda s: None)


def test_replica_context_properties_are_read_only_and_name_the_device(two_threads):
    def replica_fn():
        context = tf.distribute.get_replica_context()
        return context.replica_id_in_sync_group, context.num_replicas_in_sync, context.devices, context.strategy

    with two_threads.scope():
        results = two_threads.experimental_local_results(two_threads.run(replica_fn))
    assert [r[:3] for r in results] == [(0, 2, ("cpu",)), (1, 2, ("cpu",))]
    assert all(r[3] is two_threads for r in results)
    with pytest.raises(AttributeError):
        tf.distribute.ReplicaContext(two_threads, 0).replica_id_in_sync_group = 1


def test_value_context_run_options_and_replication_modes_follow_tf():
    # TF 2.21: ValueContext() -> replica 0 of 1; RunOptions is a namedtuple with TF's defaults
    context = tf.distribute.experimental.ValueContext()
    assert (context.replica_id_in_sync_group, context.num_replicas_in_sync) == (0, 1)
    assert tf.distribute.experimental.ValueContext(3, 4).replica_id_in_sync_group == 3
    options = tf.distribute.RunOptions()
    assert (options.experimental_enable_dynamic_batch_size, options.experimental_bucketizing_dynamic_shape,
            options.experimental_xla_options) == (True, False, None)
    assert tf.distribute.RunOptions(experimental_bucketizing_dynamic_shape=True).count(True) == 2
    assert {m.name for m in tf.distribute.InputReplicationMode} == {"PER_WORKER", "PER_REPLICA"}


def test_values_from_function_get_a_value_context_per_local_replica(two_threads):
    values = two_threads.experimental_distribute_values_from_function(
        lambda context: (context.replica_id_in_sync_group, context.num_replicas_in_sync))
    assert isinstance(values, tf.distribute.DistributedValues)
    assert isinstance(values, tf.types.experimental.distributed.PerReplica)
    assert two_threads.experimental_local_results(values) == ((0, 2), (1, 2))
