"""Replica is not process: a strategy with 2 replicas in one process (threads sharing the variables,
tests/_local_replicas.py) runs `run`, `reduce`, datasets, fit/evaluate/predict, synchronized
BatchNorm and custom loops, and matches a one-replica run on the same global batches."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests._local_replicas import ThreadReplicaStrategy
from torchstrategy.distribute.values import PerReplica


@pytest.fixture(params=["test_threads", "central_storage"])
def strategy(request):
    """The tests' own 2-thread strategy, and CentralStorageStrategy (the public one of that shape)."""
    made = ThreadReplicaStrategy(2) if request.param == "test_threads" else \
        tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
    yield made
    made.teardown()


def _data(n: int = 64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 5)).astype(np.float32), rng.integers(0, 3, (n,)).astype(np.int64)


def _model(strategy, batch_norm: bool = False, optimizer: str = "adam", seed: int = 7):
    tf.random.set_seed(seed)
    with strategy.scope():
        layers = [tf.keras.layers.Dense(8, activation="relu", input_shape=(5,))]
        if batch_norm:
            layers.append(tf.keras.layers.BatchNormalization(synchronized=True, momentum=0.5))
        layers.append(tf.keras.layers.Dense(3))
        model = tf.keras.Sequential(layers)
        model.compile(optimizer=tf.keras.optimizers.get({"class_name": optimizer, "config": {"learning_rate": 0.05}}),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def test_facts_and_run_give_one_value_per_local_replica(strategy):
    assert (strategy.num_replicas_in_sync, strategy.num_local_replicas) == (2, 2)
    assert strategy.local_replica_ids == (0, 1) and strategy.num_processes == 1 and strategy.is_chief
    ids = strategy.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group)
    assert isinstance(ids, PerReplica) and strategy.experimental_local_results(ids) == (0, 1)
    values = PerReplica([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 5.0])])
    doubled = strategy.run(lambda v: v * 2, args=(values,))
    assert [t.tolist() for t in strategy.experimental_local_results(doubled)] == [[2.0, 4.0], [6.0, 10.0]]
    assert strategy.reduce("SUM", values, axis=None).tolist() == [4.0, 7.0]
    assert strategy.reduce("MEAN", values, axis=None).tolist() == [2.0, 3.5]
    assert float(strategy.reduce("SUM", values, axis=0)) == 11.0
    assert float(strategy.reduce("MEAN", values, axis=0)) == 2.75
    assert strategy.gather(values, axis=0).tolist() == [1.0, 2.0, 3.0, 5.0]


def test_replica_context_collectives_meet_across_threads(strategy):
    def step():
        context = tf.distribute.get_replica_context()
        mine = torch.tensor([float(context.replica_id_in_sync_group + 1)])
        return (context.all_reduce("SUM", mine), context.all_reduce("MEAN", mine),
                context.all_gather(mine, axis=0))

    for total, mean, gathered in strategy.experimental_local_results(strategy.run(step)):
        assert total.tolist() == [3.0] and mean.tolist() == [1.5] and gathered.tolist() == [1.0, 2.0]


def test_a_replica_that_raises_stops_the_others_instead_of_hanging(strategy):
    def step():
        context = tf.distribute.get_replica_context()
        if context.replica_id_in_sync_group == 1:
            raise ValueError("replica 1 broke")
        return context.all_reduce("SUM", torch.ones(1))  # replica 0 waits here for replica 1

    with pytest.raises(ValueError, match="replica 1 broke"):
        strategy.run(step)
    assert strategy.run(lambda: 1) is not None  # the strategy still works afterwards


def test_datasets_give_each_replica_its_part(strategy):
    dataset = tf.data.Dataset.range(8).batch(4)
    batches = [strategy.experimental_local_results(b) for b in strategy.experimental_distribute_dataset(dataset)]
    assert [[t.tolist() for t in b] for b in batches] == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]

    def dataset_fn(context):
        assert (context.num_input_pipelines, context.num_replicas_in_sync) == (1, 2)
        return tf.data.Dataset.range(8).batch(context.get_per_replica_batch_size(4))

    per_replica = [strategy.experimental_local_results(b) for b in strategy.distribute_datasets_from_function(dataset_fn)]
    assert [[t.tolist() for t in b] for b in per_replica] == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_fit_on_two_thread_replicas_equals_one_replica(strategy, optimizer):
    x, y = _data()
    reference = _model(tf.distribute.OneDeviceStrategy("/cpu:0"), optimizer=optimizer)
    expected = reference.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0).history
    model = _model(strategy, optimizer=optimizer)
    got = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0).history
    for ours, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(got["loss"], expected["loss"], rtol=1e-5)
    np.testing.assert_allclose(got["accuracy"], expected["accuracy"], rtol=1e-6)
    assert model.evaluate(x, y, batch_size=16, verbose=0) == pytest.approx(
        reference.evaluate(x, y, batch_size=16, verbose=0), rel=1e-5)
    np.testing.assert_allclose(model.predict(x, batch_size=16, verbose=0),
                               reference.predict(x, batch_size=16, verbose=0), atol=1e-5)


def test_synchronized_batch_norm_over_thread_replicas_keeps_the_global_statistics(strategy):
    x, y = _data()
    reference = _model(tf.distribute.OneDeviceStrategy("/cpu:0"), batch_norm=True, optimizer="sgd")
    reference.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)
    model = _model(strategy, batch_norm=True, optimizer="sgd")
    model.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)  # fit outside the scope
    norm, expected = model.layers[1], reference.layers[1]
    np.testing.assert_allclose(norm.moving_mean.numpy(), expected.moving_mean.numpy(), atol=1e-5)
    np.testing.assert_allclose(norm.moving_variance.numpy(), expected.moving_variance.numpy(), atol=1e-5)
    for ours, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_custom_loop_with_gradient_tape_on_thread_replicas_equals_one_replica(strategy):
    x, y = _data(32)

    def train(strat):
        model = _model(strat, optimizer="sgd")
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE)

        def step(batch):
            images, labels = batch
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(loss_object(labels, model(images, training=True)),
                                                  global_batch_size=16)
            grads = tape.gradient(loss, model.trainable_variables)
            model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
        losses = [float(strat.reduce("SUM", strat.run(step, args=(batch,)), axis=None))
                  for batch in strat.experimental_distribute_dataset(dataset)]
        return model, losses

    reference, expected = train(tf.distribute.OneDeviceStrategy("/cpu:0"))
    model, got = train(strategy)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    for ours, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert int(model.optimizer.iterations) == 2  # one update per step, not one per replica


def test_mixed_bfloat16_on_thread_replicas_equals_one_replica(strategy):
    # each replica thread keeps its own cast scope: a race there would mix dtypes or miss casts
    from torchstrategy.keras import mixed_precision

    x, y = _data()
    mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        reference = _model(tf.distribute.OneDeviceStrategy("/cpu:0"), optimizer="sgd")
        expected = reference.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0).history
        model = _model(strategy, optimizer="sgd")
        got = model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0).history
        assert model.layers[0].compute_dtype == "bfloat16" and model.layers[0].kernel.dtype == torch.float32
        halves = PerReplica([torch.from_numpy(x[:4]), torch.from_numpy(x[4:8])])
        outputs = strategy.run(lambda rows: model(rows, training=False), args=(halves,))
        assert [t.dtype for t in strategy.experimental_local_results(outputs)] == [torch.bfloat16] * 2
    finally:
        mixed_precision.set_global_policy(None)
    # bfloat16 keeps ~3 digits, and half batches round their sums differently: bfloat16-level agreement
    np.testing.assert_allclose(got["loss"], expected["loss"], rtol=2e-3)
    for ours, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(ours, theirs, atol=2e-3)
