"""TF checkpoints of a tf.Module (Variables and sub-modules as attributes, in lists, dicts and nested containers)
and of a Keras LossScaleOptimizer, both ways: TF 2.21's files (tests/checkpoint/data/tf_module, tf_loss_scale,
written by tools/tf_reference/tf_checkpoint_fixtures.py) restore here with TF's values, ours in TF's format have
TF's object graph and keys (tools/tf_reference/tf_restores_ours.py restores them in TF, outside the suite)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import torchstrategy as tf
from torchstrategy import keras
from torchstrategy.formats.tf_bundle import BundleReader
from torchstrategy.formats.tf_object_graph import OBJECT_GRAPH_KEY, ObjectGraph

DATA = os.path.join(os.path.dirname(__file__), "data")
MODULE = os.path.join(DATA, "tf_module", "module")
LOSS_SCALE = os.path.join(DATA, "tf_loss_scale", "lso")
SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


class Block(tf.Module):
    def __init__(self, rows, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(np.zeros((rows, 2), "float32"), name="w")
        self.b = tf.Variable([0.0, 0.0], name="b")


class Net(tf.Module):
    """tf_checkpoint_fixtures.Net, every value zero (TF's checkpoint holds others)."""

    def __init__(self, head_rows=4):
        super().__init__(name="net")
        self.blocks = [Block(1), Block(2)]
        self.table = {"a": tf.Variable([0, 0, 0], dtype="int32"), "blk": Block(3)}
        self.scale = tf.Variable(0.0)
        self.head = Block(head_rows, name="head")
        self.alias = self.head.w
        self.nested = [[tf.Variable(0.0)], {"x": tf.Variable([0.0, 0.0])}]
        self.frozen = tf.Variable([0.0, 0.0], trainable=False)
        self.count = 3
        self.mixed = [1, tf.Variable(0.0), "s"]
        self._private = tf.Variable(0.0)


def _where(net):
    """TF's checkpoint key of each of the Net's values."""
    return {"module/_private": net._private, "module/alias": net.head.w, "module/blocks/0/b": net.blocks[0].b,
            "module/blocks/0/w": net.blocks[0].w, "module/blocks/1/b": net.blocks[1].b,
            "module/blocks/1/w": net.blocks[1].w, "module/frozen": net.frozen, "module/head/b": net.head.b,
            "module/mixed/1": net.mixed[1], "module/nested/0/0": net.nested[0][0], "module/nested/1/x": net.nested[1]["x"],
            "module/scale": net.scale, "module/table/a": net.table["a"], "module/table/blk/b": net.table["blk"].b,
            "module/table/blk/w": net.table["blk"].w}


def _tf_options():
    options = tf.train.CheckpointOptions()
    options.experimental_write_format = "tf"
    return options


def _graph(prefix):
    return ObjectGraph.parse(BundleReader(prefix).tensor(OBJECT_GRAPH_KEY)[()])


def _shape_of(graph):
    """Each node's children and saved keys, by path: the object graph without node numbers and variable names."""
    paths = graph.paths()
    return {paths[i]: ([name for _, name in node.children], [a.checkpoint_key for a in node.attributes])
            for i, node in enumerate(graph.nodes)}


def test_a_tf_written_module_restores_every_attribute_list_and_dict_value():
    net = Net()
    tf.train.Checkpoint(module=net).read(MODULE).assert_consumed()
    expected = np.load(os.path.join(DATA, "tf_module", "expected.npz"))
    where = _where(net)
    assert sorted(where) == sorted(key[:-len(SUFFIX)] for key in expected)
    for key, variable in where.items():
        np.testing.assert_array_equal(variable.numpy(), expected[key + SUFFIX])
        assert variable.numpy().dtype == expected[key + SUFFIX].dtype
    assert net.alias is net.head.w and float(net.head.w[3, 1]) == 34.0  # the shared Variable, saved once
    assert net.count == 3 and net.mixed[0] == 1 and net.mixed[2] == "s"


def test_our_module_in_tf_format_has_tfs_object_graph_and_restores_here(tmp_path):
    net = Net()
    tf.train.Checkpoint(module=net).read(MODULE).assert_consumed()
    written = tf.train.Checkpoint(module=net).write(str(tmp_path / "ours"), options=_tf_options())
    assert tf.train.list_variables(written) == tf.train.list_variables(MODULE)
    assert _shape_of(_graph(written)) == _shape_of(_graph(MODULE))
    names = {a.full_name for node in _graph(written).nodes for a in node.attributes}
    assert names == {a.full_name for node in _graph(MODULE).nodes for a in node.attributes} == {"w", "b", "Variable"}
    again = Net()
    tf.train.Checkpoint(module=again).read(written).assert_consumed()
    for (key, ours), theirs in zip(_where(again).items(), _where(net).values()):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=key)


def test_a_module_that_does_not_fit_is_refused_with_tf_wording_and_nothing_is_restored():
    wider = Net(head_rows=5)
    with pytest.raises(ValueError, match=r"shape \(4, 2\) .*shape \(5, 2\) and name \(root\)\.module\.head\.w"):
        tf.train.Checkpoint(module=wider).read(MODULE)
    assert all(float(abs(v.numpy()).sum()) == 0.0 for v in _where(wider).values())  # checked before any copy
    extra = Net()
    extra.more = [Block(1)]
    status = tf.train.Checkpoint(module=extra).read(MODULE)
    with pytest.raises(AssertionError, match=r"2 Python objects .*not bound.*\(root\)\.module\.more\.0\.w"):
        status.assert_consumed()
    status.assert_nontrivial_match()
    fewer = Net()
    del fewer._private
    status = tf.train.Checkpoint(module=fewer).read(MODULE)
    status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match=r"Unresolved object in checkpoint \(root\)\.module\._private"):
        status.assert_consumed()
    status.expect_partial()


# ----- LossScaleOptimizer ---------------------------------------------------------------------------------------
def _loss_scale_model():
    """write_keras_fixtures.loss_scale_model, built here (zeros until restored)."""
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu", dtype="mixed_float16",
                                                                    name="hidden"), keras.layers.Dense(2, name="out")])
    optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam(0.01), initial_scale=4096.0,
                                                         dynamic_growth_steps=2)
    model.compile(optimizer=optimizer, loss="mse")
    optimizer.build(model.trainable_variables)
    return model


def test_a_tf_written_loss_scale_optimizer_restores_its_scale_counter_and_the_inner_adam():
    model = _loss_scale_model()
    tf.train.Checkpoint(model=model, optimizer=model.optimizer).read(LOSS_SCALE).assert_consumed()
    expected = np.load(os.path.join(DATA, "tf_loss_scale", "expected.npz"))
    optimizer = model.optimizer
    assert int(optimizer.iterations) == int(expected["iterations"]) == 3  # the inner Adam's (two steps skipped)
    assert float(optimizer.dynamic_scale) == float(expected["dynamic_scale"]) == 2048.0
    assert int(optimizer.step_counter) == int(expected["step_counter"]) == 1
    assert abs(float(optimizer.learning_rate) - 0.01) < 1e-9  # the inner rate, not the wrapper's 0
    for index, weight in enumerate(model.trainable_weights):
        state = optimizer.inner_optimizer.state[weight]
        np.testing.assert_array_equal(state["momentum"].numpy(), expected[f"momentum_{index}"])
        np.testing.assert_array_equal(state["velocity"].numpy(), expected[f"velocity_{index}"])
    for index, weight in enumerate(model.get_weights()):
        np.testing.assert_array_equal(weight, expected[f"weight_{index}"])


def test_our_loss_scale_optimizer_in_tf_format_has_tfs_object_graph_and_keys(tmp_path):
    model = _loss_scale_model()
    tf.train.Checkpoint(model=model, optimizer=model.optimizer).read(LOSS_SCALE).assert_consumed()
    written = tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(str(tmp_path / "ours"),
                                                                               options=_tf_options())
    assert tf.train.list_variables(written) == tf.train.list_variables(LOSS_SCALE)
    for name, _ in tf.train.list_variables(LOSS_SCALE):
        if name != OBJECT_GRAPH_KEY:
            np.testing.assert_array_equal(tf.train.load_variable(written, name), tf.train.load_variable(LOSS_SCALE, name))
    ours, theirs = _shape_of(_graph(written)), _shape_of(_graph(LOSS_SCALE))
    optimizer_paths = [path for path in theirs if path.startswith("optimizer")]
    # Keras 3.15's layout, frozen: the wrapper's own lists, then the whole inner optimizer under `inner_optimizer`
    assert theirs["optimizer"][0] == ["_variables", "_trainable_variables", "_trainable_variables_indices",
                                      "_iterations", "_learning_rate", "inner_optimizer", "step_counter",
                                      "dynamic_scale"]
    assert theirs["optimizer/inner_optimizer"][0][-2:] == ["_momentums", "_velocities"]
    assert {path: ours[path] for path in optimizer_paths} == {path: theirs[path] for path in optimizer_paths}
    again = _loss_scale_model()
    tf.train.Checkpoint(model=again, optimizer=again.optimizer).read(written).assert_consumed()
    assert float(again.optimizer.dynamic_scale) == 2048.0 and int(again.optimizer.step_counter) == 1


def test_a_plain_optimizer_does_not_take_a_loss_scale_checkpoint_silently():
    plain = _loss_scale_model()
    plain.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    plain.optimizer.build(plain.trainable_variables)
    status = tf.train.Checkpoint(model=plain, optimizer=plain.optimizer).read(LOSS_SCALE)
    with pytest.raises(AssertionError, match="not bound to checkpointed values|Unresolved object"):
        status.assert_consumed()
    status.expect_partial()
