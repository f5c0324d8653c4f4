"""distribute/__init__.py: tf.distribute's own names (InputOptions, experimental_set_strategy, the experimental
strategies with TF's older signatures, the dataset/iterator/value classes) as TF 2.21 has them."""
from __future__ import annotations

import pytest

import torchstrategy as tf


def test_input_options_is_tfs_namedtuple_with_tfs_defaults():
    options = tf.distribute.InputOptions()
    assert options.experimental_replication_mode is tf.distribute.InputReplicationMode.PER_WORKER
    assert (options.experimental_fetch_to_device, options.experimental_place_dataset_on_device,
            options.experimental_per_replica_buffer_size) == (None, False, 1)
    assert tuple(options) == (None, tf.distribute.InputReplicationMode.PER_WORKER, False, 1)
    with pytest.raises(ValueError, match="InputReplicationMode"):
        tf.distribute.InputOptions(experimental_replication_mode="PER_WORKER")
    with pytest.raises(ValueError, match="experimental_place_dataset_on_device"):
        tf.distribute.InputOptions(experimental_fetch_to_device=True, experimental_place_dataset_on_device=True)
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    batches = strategy.experimental_distribute_dataset(tf.data.Dataset.range(4).batch(2), options)
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3]]


def test_experimental_set_strategy_makes_a_strategy_current_until_reset():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    assert not tf.distribute.has_strategy()
    tf.distribute.experimental_set_strategy(strategy)
    try:
        assert tf.distribute.has_strategy() and tf.distribute.get_strategy() is strategy
        tf.distribute.experimental_set_strategy(strategy)  # setting it again replaces the first
        assert tf.distribute.get_strategy() is strategy
        with strategy.scope():
            with pytest.raises(RuntimeError, match="must not be called inside"):
                tf.distribute.experimental_set_strategy(None)
    finally:
        tf.distribute.experimental_set_strategy(None)
    assert not tf.distribute.has_strategy()
    with pytest.raises(TypeError, match="tf.distribute.Strategy or None"):
        tf.distribute.experimental_set_strategy("mirrored")


def test_dataset_iterator_and_value_classes_are_tfs_names():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    distributed = strategy.experimental_distribute_dataset(tf.data.Dataset.range(4).batch(2))
    assert isinstance(distributed, tf.distribute.DistributedDataset)
    iterator = iter(distributed)
    assert isinstance(iterator, tf.distribute.DistributedIterator)
    assert iterator.get_next().tolist() == [0, 1]
    assert issubclass(tf.distribute.PerReplica, tf.distribute.DistributedValues)


def test_the_current_worker_index_is_only_known_inside_a_scheduled_closure():
    # on the workers: the conformance suite's parameter_server row
    with pytest.raises(RuntimeError, match="inside a function scheduled with ClusterCoordinator.schedule"):
        tf.distribute.coordinator.experimental_get_current_worker_index()
