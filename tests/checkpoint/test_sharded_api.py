"""The public sharded-checkpoint API (torchstrategy/checkpoint/sharded.py) in one process: write_sharded
writes a directory is_sharded recognises; ShardedCheckpointReader gives the state back, whole or pending."""
from __future__ import annotations

import os

import pytest
import torch

import torchstrategy as tf
from torchstrategy.checkpoint import (PendingShardedState, ShardedCheckpointReader, is_sharded, remove_sharded,
                                      run_on_chief, write_sharded)


def _states() -> tuple:
    module = torch.nn.Linear(3, 2)
    optimizer = torch.optim.Adam(module.parameters(), lr=0.1)
    module(torch.ones(1, 3)).sum().backward()
    optimizer.step()
    return module, optimizer


def test_write_then_read_everything_back(tmp_path) -> None:
    module, optimizer = _states()
    path = os.path.join(tmp_path, "backup")
    strategy = tf.distribute.get_strategy()
    assert write_sharded(path, {"epoch": 3}, modules={"model": module.state_dict()},
                         optimizers={"optimizer": optimizer.state_dict(), "absent": None}, strategy=strategy) == path
    assert is_sharded(path) and not is_sharded(os.path.join(tmp_path, "nothing"))

    reader = ShardedCheckpointReader(path)
    assert reader.state["epoch"] == 3 and reader.state["absent"] is None
    assert reader.state["model"]["weight"].device.type == "meta"  # not loaded yet
    reader.load_all()
    torch.testing.assert_close(reader.state["model"]["weight"], module.state_dict()["weight"])
    slots = optimizer.state_dict()["state"][0]
    torch.testing.assert_close(reader.state["optimizer"]["state"][0]["exp_avg"], slots["exp_avg"])

    assert remove_sharded(path) == path and not os.path.exists(path)


def test_pending_state_loads_into_its_owner(tmp_path) -> None:
    module, optimizer = _states()
    path = os.path.join(tmp_path, "backup")
    write_sharded(path, {}, modules={"model": module.state_dict()}, optimizers={"optimizer": optimizer.state_dict()},
                  strategy=tf.distribute.get_strategy())
    reader = ShardedCheckpointReader(path)
    pending = reader.pending_module_state(reader.state["model"])
    assert isinstance(pending, PendingShardedState)
    fresh = torch.nn.Linear(3, 2)

    class PlainIO:
        def state_dict(self, owner: torch.nn.Module) -> dict:
            return owner.state_dict()

    fresh.load_state_dict(pending.materialize(fresh, PlainIO()))
    torch.testing.assert_close(fresh.weight, module.weight)
    assert isinstance(reader.pending_optimizer_state(reader.state["optimizer"]), PendingShardedState)


def test_run_on_chief_runs_the_write_here_in_one_process(tmp_path) -> None:
    calls = []
    run_on_chief(lambda: calls.append(1))
    run_on_chief(lambda: calls.append(2), tf.distribute.get_strategy())
    assert calls == [1, 2]


def _written(tmp_path) -> str:
    module = torch.nn.Linear(300, 200)
    path = os.path.join(tmp_path, "backup")
    write_sharded(path, {}, modules={"model": module.state_dict()}, optimizers={}, strategy=tf.distribute.get_strategy())
    return path


@pytest.mark.parametrize("damage", ["truncated", "deleted"])
def test_a_damaged_or_missing_shard_is_named_with_its_rank(tmp_path, damage) -> None:
    from torchstrategy.checkpoint import CheckpointCorruptedError

    path = _written(tmp_path)
    shard = os.path.join(path, "__0_0.distcp")
    if damage == "truncated":
        with open(shard, "rb") as handle:
            data = handle.read()
        with open(shard, "wb") as handle:
            handle.write(data[:len(data) // 2])
        expected = r"the shard file '__0_0\.distcp' written by rank 0 is cut short \(\d+ bytes, its tensors need \d+\)"
    else:
        os.unlink(shard)
        expected = r"is missing the shard file '__0_0\.distcp' written by rank 0"
    with pytest.raises(CheckpointCorruptedError, match=expected):
        ShardedCheckpointReader(path).load_all()


def test_restore_or_initialize_falls_back_past_a_sharded_checkpoint_with_a_missing_shard(tmp_path) -> None:
    import warnings

    import numpy as np

    strategy = tf.distribute.experimental.FSDPStrategy(["/cpu:0"])  # sharded checkpoints, one process
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3)])
        model.compile(optimizer="adam", loss="mse")
    x, y = np.ones((8, 4), np.float32), np.ones((8, 3), np.float32)
    model.fit(x, y, verbose=0)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), str(tmp_path), max_to_keep=3)
    first = manager.save()
    kept = model.get_weights()
    model.fit(x, y, verbose=0)
    second = manager.save()
    assert is_sharded(first) and is_sharded(second)
    os.unlink(os.path.join(second, "__0_0.distcp"))
    again = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), str(tmp_path), max_to_keep=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again.fallback_to_previous = True
        assert again.restore_or_initialize() == first
    assert any(f"Skipping checkpoint '{second}'" in str(w.message) and "'__0_0.distcp' written by rank 0"
               in str(w.message) for w in caught)
    for ours, expected in zip(model.get_weights(), kept):
        np.testing.assert_array_equal(ours, expected)
