"""tf.train.CheckpointOptions: TF 2.21's fields and defaults, and the write-format switch of this library."""
from __future__ import annotations

import inspect

import pytest

import torchstrategy as tf


def test_signature_is_tf_2_21s():
    # inspect.signature(tf.train.CheckpointOptions) in tensorflow-cpu 2.21.0
    expected = [("experimental_io_device", None), ("experimental_enable_async_checkpoint", False),
                ("experimental_write_callbacks", None), ("enable_async", False),
                ("experimental_skip_slot_variables", False), ("experimental_sharding_callback", None)]
    parameters = inspect.signature(tf.train.CheckpointOptions).parameters
    assert [(name, p.default) for name, p in parameters.items()] == expected


def test_write_format_switch_and_refused_values():
    options = tf.train.CheckpointOptions(experimental_io_device="/job:localhost")
    assert options.experimental_write_format == "torchstrategy"
    options.experimental_write_format = "tf"
    assert options.experimental_write_format == "tf"
    with pytest.raises(ValueError, match=r"experimental_write_format must be one of \('torchstrategy', 'tf'\)"):
        options.experimental_write_format = "h5"
    with pytest.raises(NotImplementedError, match="experimental_sharding_callback"):
        tf.train.CheckpointOptions(experimental_sharding_callback=object())
    with pytest.raises(TypeError, match="options must be a tf.train.CheckpointOptions"):
        tf.train.Checkpoint(v=tf.Variable(1.0)).write("/tmp/never_written", options={"format": "tf"})


def test_skip_slot_variables_is_refused_for_our_own_format(tmp_path):
    checkpoint = tf.train.Checkpoint(v=tf.Variable(1.0))
    path = checkpoint.write(str(tmp_path / "own"))
    with pytest.raises(NotImplementedError, match="TF-written checkpoints only"):
        checkpoint.read(path, options=tf.train.CheckpointOptions(experimental_skip_slot_variables=True))
