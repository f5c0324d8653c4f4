"""distribute/extended.py: Strategy(extended) / StrategyExtended(container_strategy) as in TF, the parts a strategy
is wired from, and extended's calls in one process (reduce_to and friends across processes: conformance suite)."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy.distribute.extended import StrategyExtended, StrategyParts
from torchstrategy.distribute.strategy import Strategy


class _Plain(Strategy):
    """The smallest strategy: one replica on the CPU, every part the default."""

    def __init__(self) -> None:
        super().__init__(StrategyExtended.wired(self, StrategyParts("cpu", worker_devices=("/cpu:0",))))


def test_a_strategy_is_built_from_its_extended_and_extended_knows_its_strategy():
    strategy = _Plain()
    assert strategy.extended._container_strategy() is strategy
    assert strategy.extended is strategy.extended  # one object, as TF's
    assert strategy.extended.worker_devices == ("/cpu:0",)
    assert strategy.extended.parameter_devices == ("cpu",)  # unset: the strategy's device
    assert strategy.extended.should_checkpoint and strategy.extended.should_save_summary
    assert strategy.extended.experimental_require_static_shapes is False


def test_strategy_refuses_what_is_not_its_own_wired_extended():
    with pytest.raises(TypeError, match="concrete strategy such as tf.distribute.MirroredStrategy"):
        tf.distribute.Strategy(None)

    class Unwired(Strategy):
        def __init__(self) -> None:
            super().__init__(StrategyExtended(self))

    with pytest.raises(TypeError, match="StrategyParts"):
        Unwired()

    other = _Plain()

    class Borrowing(Strategy):
        def __init__(self) -> None:
            super().__init__(other.extended)

    with pytest.raises(ValueError, match="belongs to another strategy"):
        Borrowing()


def test_reduce_to_batch_reduce_to_update_and_value_container_in_one_process():
    strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
    try:
        per_replica = strategy.experimental_distribute_values_from_function(
            lambda context: torch.tensor([1.0, 2.0]) * (context.replica_id_in_sync_group + 1))
        summed = strategy.extended.reduce_to("SUM", per_replica, destinations="/cpu:0")
        assert summed.tolist() == [3.0, 6.0]
        pairs = strategy.extended.batch_reduce_to(tf.distribute.ReduceOp.MEAN, [(per_replica, "/cpu:0")] * 2)
        assert [p.tolist() for p in pairs] == [[1.5, 3.0], [1.5, 3.0]]
        with pytest.raises(ValueError, match=r"\(value, destinations\) pairs"):
            strategy.extended.batch_reduce_to("SUM", [per_replica])
        with strategy.scope():
            variable = tf.Variable([1.0, 1.0])
        result = strategy.extended.update(variable, lambda v, d: v.assign_add(d), args=(torch.tensor([1.0, 2.0]),))
        assert variable.numpy().tolist() == [2.0, 3.0] and result is not None
        assert strategy.extended.value_container(variable) is variable
        with strategy.extended.colocate_vars_with(variable), strategy.colocate_vars_with(variable):
            pass

        def inside():
            return strategy.extended.reduce_to("SUM", torch.tensor(1.0), destinations="/cpu:0")

        with pytest.raises(RuntimeError, match="cross-replica context"):
            strategy.run(inside)
    finally:
        strategy.teardown()


def test_tf1_spellings_of_strategy_calls_do_what_their_tf2_names_do():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    dataset = tf.data.Dataset.range(6).batch(3)
    assert [b.tolist() for b in strategy.make_dataset_iterator(dataset)] == [[0, 1, 2], [3, 4, 5]]
    assert [b.tolist() for b in strategy.experimental_distribute_datasets_from_function(lambda ctx: dataset)] == \
        [[0, 1, 2], [3, 4, 5]]
    iterator = strategy.make_input_fn_iterator(lambda ctx: dataset)
    assert strategy.experimental_run(lambda batch: batch * 2, iterator).tolist() == [0, 2, 4]
    assert strategy.unwrap(torch.tensor(1.0)) == (torch.tensor(1.0),)
    assert strategy.group(5) == 5 and strategy.update_config_proto("config") == "config"
    with pytest.raises(ValueError, match="PER_WORKER"):
        strategy.make_input_fn_iterator(lambda ctx: dataset, tf.distribute.InputReplicationMode.PER_REPLICA)
    with pytest.raises(ValueError, match="cluster resolver"):
        strategy.configure(cluster_spec={"worker": ["localhost:1"]})
    strategy.configure()  # nothing to configure


def test_distributed_dataset_reduce_folds_the_batches_in_order():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    distributed = strategy.experimental_distribute_dataset(tf.data.Dataset.range(8).batch(2))
    assert distributed.reduce([], lambda state, batch: state + [batch.tolist()]) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    with pytest.raises(TypeError, match="callable"):
        distributed.reduce(0, None)
