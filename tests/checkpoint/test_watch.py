"""tf.train.checkpoints_iterator: yields the checkpoint there at the start, then each new one (the newest
only, when several appeared between polls), and ends at the timeout (or goes on while timeout_fn says so)."""
from __future__ import annotations

import time

import torchstrategy as tf


def test_yields_each_new_checkpoint_then_times_out(tmp_path):
    variable = tf.Variable(0.0)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=variable), str(tmp_path), max_to_keep=5)
    manager.save()
    seen = []
    started = time.monotonic()
    for path in tf.train.checkpoints_iterator(str(tmp_path), timeout=0.5):
        seen.append(path)
        if len(seen) == 1:
            manager.save()
        elif len(seen) == 2:
            manager.save()
            manager.save()  # two saves between polls: only the newest is yielded
    assert seen == [str(tmp_path / "ckpt-1"), str(tmp_path / "ckpt-2"), str(tmp_path / "ckpt-4")]
    assert time.monotonic() - started < 10  # ended by the timeout after ckpt-4


def test_timeout_with_and_without_timeout_fn(tmp_path):
    started = time.monotonic()
    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.2)) == []
    assert time.monotonic() - started < 3
    calls = []

    def timeout_fn():
        calls.append(1)
        return len(calls) == 2  # keep waiting once, then stop

    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.1, timeout_fn=timeout_fn)) == []
    assert len(calls) == 2
