"""The TrackableObjectGraph proto: parsing TF 2.21's (fixture from tools/tf_reference/tf_checkpoint_fixtures.py,
tensorflow-cpu 2.21.0 / Keras 3.15.1) and writing it back byte for byte."""
from __future__ import annotations

import os

import numpy as np

from torchstrategy.formats import tf_bundle
from torchstrategy.formats.tf_object_graph import OBJECT_GRAPH_KEY, ObjectGraph

DATA = os.path.join(os.path.dirname(__file__), "..", "checkpoint", "data", "tf_cnn_adam")


def _graph_bytes() -> bytes:
    return tf_bundle.BundleReader(os.path.join(DATA, "ckpt-1")).tensor(OBJECT_GRAPH_KEY)[()]


def test_parses_tf_graph_and_writes_the_same_bytes():
    raw = _graph_bytes()
    graph = ObjectGraph.parse(raw)
    assert [name for _, name in graph.nodes[0].children] == ["model", "optimizer", "step", "save_counter"]
    assert graph.serialize() == raw


def test_every_saved_key_is_a_variable_node_and_paths_follow_tf_names():
    graph = ObjectGraph.parse(_graph_bytes())
    listed = {item.split("|")[0] for item in np.load(os.path.join(DATA, "expected.npz"))["variables"]}
    keys = {node.value_key() for node in graph.nodes if node.value_key() is not None}
    assert keys | {OBJECT_GRAPH_KEY} == listed
    paths = graph.paths()
    for node_id, node in enumerate(graph.nodes):
        if node.value_key() is not None:  # TF names each variable by its first breadth-first path
            assert node.value_key() == paths[node_id] + "/.ATTRIBUTES/VARIABLE_VALUE"
    optimizer = graph.nodes[graph.nodes[0].child("optimizer")]
    assert [name for _, name in optimizer.children][:2] == ["_variables", "_trainable_variables"]
