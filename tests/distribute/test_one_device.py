"""OneDeviceStrategy and the default strategy: scope, run, reduce, gather, distributed
datasets and InputContext, each checked against the single-replica arithmetic it must equal."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_default_strategy_outside_any_scope():
    strategy = tf.distribute.get_strategy()
    assert strategy.num_replicas_in_sync == 1
    assert not tf.distribute.has_strategy()
    with strategy.scope():
        assert not tf.distribute.has_strategy()


def test_scope_makes_the_strategy_current_and_nested_other_strategy_is_refused():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        assert tf.distribute.has_strategy()
        assert tf.distribute.get_strategy() is strategy
        assert tf.distribute.in_cross_replica_context()
        other = tf.distribute.OneDeviceStrategy("cpu")
        with pytest.raises(RuntimeError, match="Mixing different"):
            with other.scope():
                pass
    assert not tf.distribute.has_strategy()


@pytest.mark.parametrize("spec", ["/cpu:0", "cpu", "/job:localhost/replica:0/task:0/device:CPU:0", "CPU:0"])
def test_tf_and_torch_device_spellings(spec):
    assert tf.distribute.OneDeviceStrategy(spec).device.type == "cpu"


def test_unknown_device_string_is_a_clear_error():
    with pytest.raises(ValueError, match="Unknown device string 'potato:0'"):
        tf.distribute.OneDeviceStrategy("potato:0")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error raised where no CUDA GPU exists")
def test_cuda_device_without_cuda_is_a_clear_error():
    with pytest.raises(ValueError, match="0 usable CUDA GPU"):
        tf.distribute.OneDeviceStrategy("/gpu:0")


def test_run_gives_a_replica_context_and_reduce_follows_tf():
    strategy = tf.distribute.OneDeviceStrategy("cpu")
    seen = {}

    def step(x):
        ctx = tf.distribute.get_replica_context()
        seen["id"] = ctx.replica_id_in_sync_group
        seen["n"] = ctx.num_replicas_in_sync
        seen["cross"] = tf.distribute.in_cross_replica_context()
        return x * 2, ctx.all_reduce(tf.distribute.ReduceOp.SUM, x.sum())

    x = torch.arange(6.0).reshape(3, 2)
    with strategy.scope():
        doubled, total = strategy.run(step, args=(x,))
    assert seen == {"id": 0, "n": 1, "cross": False}
    assert torch.equal(doubled, x * 2) and float(total) == float(x.sum())
    assert torch.equal(strategy.reduce(tf.distribute.ReduceOp.SUM, doubled, axis=None), doubled)
    assert torch.allclose(strategy.reduce("SUM", doubled, axis=0), doubled.sum(0))
    assert torch.allclose(strategy.reduce(tf.distribute.ReduceOp.MEAN, doubled, axis=0), doubled.mean(0))
    assert torch.equal(strategy.gather(doubled, axis=0), doubled)
    assert strategy.experimental_local_results(doubled) == (doubled,)
    with pytest.raises(ValueError, match="ReduceOp"):
        strategy.reduce("MAX", doubled, axis=None)


def test_experimental_distribute_dataset_yields_the_same_global_batches():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    dataset = tf.data.Dataset.from_tensor_slices((x, np.arange(10))).batch(4)
    strategy = tf.distribute.OneDeviceStrategy("cpu")
    batches = list(strategy.experimental_distribute_dataset(dataset))
    assert [b[0].shape[0] for b in batches] == [4, 4, 2]
    assert torch.equal(torch.cat([b[0] for b in batches]), torch.from_numpy(x))


def test_distribute_datasets_from_function_passes_an_input_context():
    strategy = tf.distribute.OneDeviceStrategy("cpu")
    contexts = []

    def dataset_fn(context):
        contexts.append(context)
        batch = context.get_per_replica_batch_size(8)
        return tf.data.Dataset.range(16).shard(context.num_input_pipelines, context.input_pipeline_id).batch(batch)

    batches = list(strategy.distribute_datasets_from_function(dataset_fn))
    ctx = contexts[0]
    assert (ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync) == (1, 0, 1)
    assert [b.tolist() for b in batches] == [list(range(8)), list(range(8, 16))]
    with pytest.raises(ValueError, match="divisible"):
        tf.distribute.InputContext(num_replicas_in_sync=3).get_per_replica_batch_size(8)


def test_custom_loop_with_strategy_run_matches_a_plain_torch_loop():
    """GradientTape + strategy.run + compute_average_loss + apply_gradients == plain autograd SGD."""
    torch.manual_seed(0)
    x = torch.randn(32, 3)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    strategy = tf.distribute.OneDeviceStrategy("cpu")
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
    w0 = [w.detach().clone() for w in model.trainable_variables]
    dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(8))

    def train_step(inputs):
        features, targets = inputs
        with tf.GradientTape() as tape:
            pred = model(features, training=True)
            per_example = ((pred - targets) ** 2).mean(dim=-1)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=8)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for _ in range(2):
        for batch in dataset:
            per_replica = strategy.run(train_step, args=(batch,))
            strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    kernel, bias = (w.clone().requires_grad_(True) for w in w0)
    for _ in range(2):
        for start in range(0, 32, 8):
            loss = ((x[start:start + 8] @ kernel + bias - y[start:start + 8]) ** 2).mean()
            gk, gb = torch.autograd.grad(loss, [kernel, bias])
            with torch.no_grad():
                kernel -= 0.1 * gk
                bias -= 0.1 * gb
    assert torch.allclose(model.trainable_variables[0], kernel, atol=1e-6)
    assert torch.allclose(model.trainable_variables[1], bias, atol=1e-6)
