"""Strategy parts: every strategy is composed of collectives, replication, precision, checkpoint IO
and placement parts, and a part missing a method is refused when the strategy is built."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy.distribute import parts
from torchstrategy.distribute.strategy import Strategy


class _Bare(Strategy):
    """A strategy on the CPU made of the given parts (the rest the defaults)."""

    def __init__(self, **chosen) -> None:
        super().__init__(self._wired("cpu", **chosen))


class _NoBackward:
    def forward_context(self):
        return torch.no_grad()


class _CollectivesWithoutAny:
    """Working collectives except that `any` (agreeing on stop_training) is missing."""

    def __init__(self) -> None:
        self._inner = parts.SingleReplicaCollectives()

    def __getattr__(self, name: str):
        if name == "any":
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_a_part_missing_a_method_is_refused_when_the_strategy_is_built():
    with pytest.raises(TypeError, match=r"precision part _NoBackward is missing backward"):
        _Bare(precision=_NoBackward())
    with pytest.raises(TypeError, match=r"collectives part _CollectivesWithoutAny is missing any\b"):
        _Bare(collectives=_CollectivesWithoutAny())
    assert _Bare(collectives=_CollectivesWithoutAny()._inner).num_replicas_in_sync == 1


def test_every_built_strategy_is_made_of_checked_parts():
    for strategy in (tf.distribute.OneDeviceStrategy("/cpu:0"), tf.distribute.MirroredStrategy(["/cpu:0"]),
                     tf.distribute.MultiWorkerMirroredStrategy(), tf.distribute.get_strategy()):
        for role, part in (("collectives", strategy._collectives), ("replication", strategy._replication),
                           ("precision", strategy._precision), ("checkpoint_io", strategy._checkpoint_io),
                           ("placement", strategy._placement), ("stepping", strategy._stepping),
                           ("launcher", strategy._launcher)):
            assert parts.check_part(role, part) is part
        assert strategy.num_local_replicas == 1 and strategy.local_replica_ids == (0,)


def test_placement_splits_a_batch_over_local_replicas_in_row_order():
    placement = parts.BatchPlacement(torch.device("cpu"), num_local_replicas=2, combine=tuple)
    x, y = torch.arange(5.0), torch.arange(5)
    first, second = placement.place((x, y))
    assert first[0].tolist() == [0.0, 1.0, 2.0] and second[1].tolist() == [3, 4]
    assert parts.BatchPlacement(torch.device("cpu")).place(x) is x


class _RecordingStateIO(parts.FullStateIO):
    """Full-state IO that notes what it reads and writes (a sharded part would convert here)."""

    def __init__(self) -> None:
        self.calls: list = []

    def state_dict(self, module):
        self.calls.append(("save", type(module).__name__))
        return super().state_dict(module)

    def load_state_dict(self, module, state):
        self.calls.append(("load", type(module).__name__))
        return super().load_state_dict(module, state)


def test_checkpoints_and_backups_read_and_write_state_through_the_checkpoint_io_part(tmp_path):
    io = _RecordingStateIO()
    strategy = _Bare(checkpoint_io=io)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        model.compile(optimizer="sgd", loss="mse")
        checkpoint = tf.train.Checkpoint(model=model)
    saved = [w.copy() for w in model.get_weights()]
    path = checkpoint.write(str(tmp_path / "ckpt"))
    assert ("save", "Sequential") in io.calls
    model.set_weights([w * 0 for w in saved])
    checkpoint.read(path).assert_consumed()
    assert ("load", "Sequential") in io.calls
    for restored, expected in zip(model.get_weights(), saved):
        assert (restored == expected).all()
    io.calls.clear()
    x = torch.zeros(4, 3).numpy()
    model.fit(x, x[:, :2], epochs=1, verbose=0,
              callbacks=[tf.keras.callbacks.BackupAndRestore(str(tmp_path / "backup"), save_freq=1)])
    assert ("save", "Sequential") in io.calls and ("save", "SGD") in io.calls
