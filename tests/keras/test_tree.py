"""keras.tree against Keras 3.15's results (TF 2.21 reference env, optree 0.20) frozen in
keras_tree_reference.json by tests/keras/tree_cases.py; plus messages, warnings and tensor leaves."""
from __future__ import annotations

import collections
import json
import os
import warnings

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.keras import tree_cases
from torchstrategy.keras import tree

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_tree_reference.json")))


@pytest.mark.parametrize("case", tree_cases.CASES, ids=[c[0] for c in tree_cases.CASES])
def test_matches_keras(case):
    assert tree_cases.run(tree, case) == REF["cases"][case[0]]


def test_reference_covers_every_case():
    assert set(REF["cases"]) == {c[0] for c in tree_cases.CASES}
    assert REF["keras_version"].startswith("3.15")


def test_reached_as_tf_keras_tree():
    assert tf.keras.tree.flatten({"b": 1, "a": 2}) == [2, 1]
    assert tf.keras.tree.MAP_TO_NONE is tree.MAP_TO_NONE


def test_tensors_and_arrays_are_leaves():
    t, a = torch.ones(2, 3), np.zeros((4,))
    leaves = tree.flatten({"t": t, "a": [a]})
    assert leaves[0] is a and leaves[1] is t
    doubled = tree.map_structure(lambda x: x * 2, (t, a))
    assert torch.equal(doubled[0], t * 2) and np.array_equal(doubled[1], a * 2)
    assert not tree.is_nested(t)


def test_assert_same_structure_messages_and_warnings():
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tree.assert_same_structure([1, [2]], [1, 2])
    with pytest.warns(DeprecationWarning, match="please remove"):
        tree.assert_same_structure([1], [2], check_types=True)
    with pytest.warns(DeprecationWarning, match="assert_same_paths"):
        tree.assert_same_structure([1], [2], check_types=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree.assert_same_structure([1], [2])


def test_assert_same_paths_message_names_the_paths():
    with pytest.raises(ValueError) as info:
        tree.assert_same_paths({"a": 1}, {"b": 1})
    assert str(info.value) == ("`a` and `b` don't have the same paths.\nPaths in `a` missing in `b`:\n{('a',)}"
                               "\nPaths in `b` missing in `a`:\n{('b',)}")


def test_pack_sequence_as_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match="has 2 items but the structure has 3 leaves"):
        tree.pack_sequence_as([1, 2, 3], [1, 2])
    with pytest.raises(TypeError, match="must be an iterable"):
        tree.pack_sequence_as([1], 5)


def test_round_trip_keeps_dict_insertion_order_and_containers():
    structure = collections.OrderedDict([("z", [1, (2, None)]), ("a", {"y": 3, "x": collections.deque([4])})])
    leaves = tree.flatten(structure)
    assert leaves == [1, 2, None, 4, 3]
    back = tree.pack_sequence_as(structure, leaves)
    assert back == structure and list(back) == ["z", "a"] and list(back["a"]) == ["y", "x"]
    assert isinstance(back["a"]["x"], collections.deque)


def test_traverse_needs_a_callable():
    with pytest.raises(TypeError):
        tree.traverse(3, [1, 2])
