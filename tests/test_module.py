"""tf.Module: variable and submodule tracking, name scopes, tf.train.Checkpoint round trip."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf
from torchstrategy import keras


class Dense(tf.Module):
    def __init__(self, units, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = tf.Variable(np.ones((2, units), np.float32), name="w")
            self.b = tf.Variable(np.zeros(units, np.float32), name="b")
        self.count = tf.Variable(0, trainable=False)

    @tf.Module.with_name_scope
    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


class Stack(tf.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Dense(3, name="first"), Dense(2, name="second")]
        self.extra = {"k": keras.layers.Dense(4)}


def test_tracks_variables_and_submodules_in_attribute_order():
    stack = Stack()
    assert stack.name == "stack" and Dense(1).name == "dense"
    # TF 2.21 order: attributes by name, recursively (b, count, w of each Dense)
    assert [v.name for v in stack.layers[0].variables] == ["first/b:0", "Variable:0", "first/w:0"]
    assert len(stack.trainable_variables) == 4 and len(stack.non_trainable_variables) == 2
    assert len(stack.submodules) == 3
    keras_layer = stack.extra["k"]
    keras_layer.build((None, 2))
    assert len(stack.trainable_variables) == 6
    out = stack.layers[0](np.ones((1, 2), np.float32))
    np.testing.assert_allclose(out.numpy(), [[2.0, 2.0, 2.0]])


def test_invalid_module_name():
    with pytest.raises(ValueError, match="valid Python identifiers"):
        tf.Module(name="bad name")


def test_checkpoint_round_trip(tmp_path):
    layer = Dense(2)
    ckpt = tf.train.Checkpoint(layer=layer)
    path = ckpt.save(str(tmp_path / "ckpt"))
    layer.w.assign(np.full((2, 2), 5.0, np.float32))
    layer.count.assign(7)
    ckpt.restore(path)
    np.testing.assert_array_equal(layer.w.numpy(), np.ones((2, 2)))
    assert int(layer.count) == 0


def test_tracked_children_are_what_tfs_checkpoint_graph_records():
    """TF 2.21: a tf.Module's children are its trackable attributes in assignment order (private ones too); list
    items keep their index when non-trackable items are left out; dict items go by key."""
    from torchstrategy.module import tracked_children

    class Holder(tf.Module):
        def __init__(self):
            super().__init__(name="holder")
            self.z = tf.Variable(1.0)
            self.count = 3
            self.items = [1, tf.Variable(2.0), "s", []]
            self.table = {"b": tf.Variable(3.0), "a": keras.layers.Dense(2), "n": None}
            self._hidden = tf.Variable(4.0)
            self.plain = np.zeros(2)

    holder = Holder()
    assert [name for name, _ in tracked_children(holder)] == ["z", "items", "table", "_hidden"]
    assert [name for name, _ in tracked_children(holder.items)] == ["1", "3"]
    assert [name for name, _ in tracked_children(holder.table)] == ["b", "a"]
    assert tracked_children(holder.z) == [] and tracked_children(3) == []
