"""Strategy parts: every strategy is composed of collectives, replication, precision, checkpoint IO
and placement parts, and a part missing a method is refused when the strategy is built."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy.distribute import parts
from torchstrategy.distribute.strategy import Strategy


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
        Strategy("cpu", precision=_NoBackward())
    with pytest.raises(TypeError, match=r"collectives part _CollectivesWithoutAny is missing any\b"):
        Strategy("cpu", collectives=_CollectivesWithoutAny())
    assert Strategy("cpu", collectives=_CollectivesWithoutAny()._inner).num_replicas_in_sync == 1


def test_every_built_strategy_is_made_of_checked_parts():
    for strategy in (tf.distribute.OneDeviceStrategy("/cpu:0"), tf.distribute.MirroredStrategy(["/cpu:0"]),
                     tf.distribute.MultiWorkerMirroredStrategy(), tf.distribute.get_strategy()):
        for role, part in (("collectives", strategy._collectives), ("replication", strategy._replication),
                           ("precision", strategy._precision), ("checkpoint_io", strategy._checkpoint_io),
                           ("placement", strategy._placement)):
            assert parts.check_part(role, part) is part
        assert strategy.num_local_replicas == 1 and strategy.local_replica_ids == (0,)


def test_placement_splits_a_batch_over_local_replicas_in_row_order():
    placement = parts.BatchPlacement(torch.device("cpu"), num_local_replicas=2, combine=tuple)
    x, y = torch.arange(5.0), torch.arange(5)
    first, second = placement.place((x, y))
    assert first[0].tolist() == [0.0, 1.0, 2.0] and second[1].tolist() == [3, 4]
    assert parts.BatchPlacement(torch.device("cpu")).place(x) is x
