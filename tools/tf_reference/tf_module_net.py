"""The tf.Module of the tf_module checkpoint fixture (tf_checkpoint_fixtures.py) and of tf_restores_ours.py's check
(TF only): Variables and sub-modules as attributes, in lists, dicts and nested containers, one Variable under two
names, a non-trainable and an int32 Variable, and values TF does not track (a number, a string)."""
from __future__ import annotations

import tensorflow as tf


class Block(tf.Module):
    def __init__(self, rows, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.reshape(tf.range(rows * 2, dtype=tf.float32), (rows, 2)) + rows, name="w")
        self.b = tf.Variable([0.5, -0.5], name="b")


class Net(tf.Module):
    """The structure tests/checkpoint/test_tf_checkpoint_objects.py builds with torchstrategy's tf.Module."""

    def __init__(self):
        super().__init__(name="net")
        self.blocks = [Block(1), Block(2)]
        self.table = {"a": tf.Variable([1, 2, 3], dtype=tf.int32), "blk": Block(3)}
        self.scale = tf.Variable(2.0)
        self.head = Block(4, name="head")
        self.alias = self.head.w  # the same Variable under two names: saved once
        self.nested = [[tf.Variable(7.0)], {"x": tf.Variable([8.0, 9.0])}]
        self.frozen = tf.Variable([1.0, -1.0], trainable=False)
        self.count = 3  # not trackable: not in the checkpoint
        self.mixed = [1, tf.Variable(4.0), "s"]  # only the Variable is saved, as item "1"
        self._private = tf.Variable(11.0)
