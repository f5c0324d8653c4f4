"""tf.nest (torchstrategy/nest.py): the tree utilities every package takes from here, and the helpers
data/ uses (sorted_keys, is_namedtuple)."""
from __future__ import annotations

import collections

from torchstrategy import nest

Point = collections.namedtuple("Point", ["x", "y"])


def test_flatten_and_map_structure_keep_tf_nest_order_and_shape() -> None:
    structure = {"b": (1, [2, 3]), "a": Point(4, 5)}
    assert nest.flatten(structure) == [4, 5, 1, 2, 3]  # dicts by sorted key
    mapped = nest.map_structure(lambda leaf: leaf * 10, structure)
    assert mapped == {"b": (10, [20, 30]), "a": Point(40, 50)} and list(mapped) == ["b", "a"]
    assert nest.pack_sequence_as(structure, nest.flatten(structure)) == structure


def test_helpers() -> None:
    assert nest.sorted_keys({"b": 1, "a": 2}) == ["a", "b"]
    assert nest.sorted_keys({1: 0, "a": 0}) == [1, "a"]  # keys that do not compare: as inserted
    assert nest.is_namedtuple(Point(1, 2)) and not nest.is_namedtuple((1, 2))
    assert nest.same_structure({"a": (1, 2)}, {"a": [3, 4]}) and not nest.same_structure((1,), (1, 2))
