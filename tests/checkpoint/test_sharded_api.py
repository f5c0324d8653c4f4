"""The public sharded-checkpoint API (torchstrategy/checkpoint/sharded.py) in one process: write_sharded
writes a directory is_sharded recognises; ShardedCheckpointReader gives the state back, whole or pending."""
from __future__ import annotations

import os

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
