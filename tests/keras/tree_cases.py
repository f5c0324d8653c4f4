"""Shared keras.tree cases (plain Python, so Keras can run them too): each case calls one keras.tree function
on literal structures. `python tests/keras/tree_cases.py` under TF 2.21 rewrites keras_tree_reference.json."""
from __future__ import annotations

import collections
import json
import os

Point = collections.namedtuple("Point", ["x", "y"])
AlsoPoint = collections.namedtuple("Point", ["x", "y"])
Pair = collections.namedtuple("Pair", ["first", "second"])


class MyList(list):
    pass


class MyDict(dict):
    pass


class F:
    """A callable argument, named; run() resolves it against the keras.tree under test."""

    def __init__(self, name):
        self.name = name


def _od(*items):
    return collections.OrderedDict(items)


def _dd(*items):
    return collections.defaultdict(list, items)


NESTED = [{"b": (1, 2), "a": [3, Point(4, 5)]}, None, _od(("z", 6), ("y", 7))]

# (case id, function name, positional args[, keyword args]): a callable argument is given by name (see FUNCS).
CASES = [
    ("flatten_nested", "flatten", [NESTED]),
    ("flatten_leaf", "flatten", [1]),
    ("flatten_none", "flatten", [None]),
    ("flatten_str", "flatten", ["abc"]),
    ("flatten_int_keys", "flatten", [{100: "world!", 6: "Hello"}]),
    ("flatten_mixed_keys", "flatten", [{1: "i", "a": "s", 0.5: "f"}]),
    ("flatten_ordered", "flatten", [_od(("b", 1), ("a", 2))]),
    ("flatten_defaultdict", "flatten", [_dd(("b", 1), ("a", 2))]),
    ("flatten_deque", "flatten", [collections.deque([1, [2, 3]])]),
    ("flatten_set_leaf", "flatten", [[{1, 2}]]),
    ("flatten_subclass_list", "flatten", [[MyList([1, 2]), 3]]),
    ("flatten_subclass_dict", "flatten", [[MyDict(a=1), 3]]),
    ("flatten_empty", "flatten", [[[], (), {}]]),
    ("flatten_namedtuple", "flatten", [Pair(second=1, first=[2, 3])]),
    ("is_nested_int", "is_nested", [42]),
    ("is_nested_dict", "is_nested", [{"foo": 42}]),
    ("is_nested_none", "is_nested", [None]),
    ("is_nested_empty", "is_nested", [[]]),
    ("is_nested_str", "is_nested", ["ab"]),
    ("is_nested_set", "is_nested", [{1}]),
    ("is_nested_subclass", "is_nested", [MyList([1])]),
    ("is_nested_deque", "is_nested", [collections.deque([1])]),
    ("flatten_with_path", "flatten_with_path", [NESTED]),
    ("flatten_with_path_leaf", "flatten_with_path", [5]),
    ("flatten_with_path_namedtuple", "flatten_with_path", [[{"foo": 42}, Point(1, 2)]]),
    ("pack_dict_order", "pack_sequence_as", [{"key3": "", "key1": "", "key2": ""}, ["v1", "v2", "v3"]]),
    ("pack_nested", "pack_sequence_as", [NESTED, list(range(10, 17))]),
    ("pack_tuple", "pack_sequence_as", [(("a", "b"), ("c", "d", "e"), "f"), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]),
    ("pack_deep_dicts", "pack_sequence_as",
     [{"key3": {"c": ("alpha", "beta"), "a": "gamma"}, "key1": {"e": "val1", "d": "val2"}},
      ["val2", "val1", 3.0, 1.0, 2.0]]),
    ("pack_leaf", "pack_sequence_as", ["a", [7]]),
    ("pack_ordered", "pack_sequence_as", [_od(("b", 0), ("a", 0)), [1, 2]]),
    ("pack_defaultdict", "pack_sequence_as", [_dd(("b", 0), ("a", 0)), [1, 2]]),
    ("pack_deque", "pack_sequence_as", [collections.deque([0, 0], maxlen=4), [1, 2]]),
    ("pack_too_few", "pack_sequence_as", [[1, 2, 3], [1, 2]]),
    ("pack_too_many", "pack_sequence_as", [[1, 2], [1, 2, 3]]),
    ("pack_not_iterable", "pack_sequence_as", [[1], 5]),
    ("map_square", "map_structure", [F("square"), [[1], [2], [3]]]),
    ("map_two", "map_structure", [F("mul"), [[1], [2], [3]], [[1], [2], [3]]]),
    ("map_namedtuple", "map_structure", [F("double"), Point(x=1, y=2)]),
    ("map_nested", "map_structure", [F("repr"), NESTED]),
    ("map_leaf", "map_structure", [F("double"), 21]),
    ("map_three_dicts", "map_structure", [F("add3"), {"b": 1, "a": 2}, {"a": 10, "b": 20}, {"b": 100, "a": 200}]),
    ("map_dict_vs_ordered", "map_structure", [F("add"), {"b": 1, "a": 2}, _od(("a", 10), ("b", 20))]),
    ("map_ordered_vs_dict", "map_structure", [F("add"), _od(("b", 1), ("a", 2)), {"a": 10, "b": 20}]),
    ("map_list_vs_tuple", "map_structure", [F("add"), [1, 2], (3, 4)]),
    ("map_len_mismatch", "map_structure", [F("add"), [1, 2], [3, 4, 5]]),
    ("map_keys_mismatch", "map_structure", [F("add"), {"a": 1}, {"b": 1}]),
    ("map_leaf_vs_nested", "map_structure", [F("add"), [1, 2], [3, [4]]]),
    ("map_nested_vs_leaf", "map_structure", [F("add"), [1, [2]], [3, 4]]),
    ("map_none_leaves", "map_structure", [F("repr"), [None, 1, {"a": None}]]),
    ("map_namedtuple_vs_tuple", "map_structure", [F("add"), Point(1, 2), (3, 4)]),
    ("map_namedtuple_vs_same_name", "map_structure", [F("add"), Point(1, 2), AlsoPoint(3, 4)]),
    ("map_none_not_leaf", "map_structure", [F("double"), [None, 1, {"a": None, "b": 2}]], {"none_is_leaf": False}),
    ("map_none_not_leaf_top", "map_structure", [F("double"), None], {"none_is_leaf": False}),
    ("map_two_none_not_leaf", "map_structure", [F("add"), [None, 1], [None, 2]], {"none_is_leaf": False}),
    ("map_two_none_vs_leaf", "map_structure", [F("add"), [None, 1], [5, 2]], {"none_is_leaf": False}),
    ("map_none_top_leaf", "map_structure", [F("repr"), None]),
    ("map_no_structures", "map_structure", [F("repr")]),
    ("map_deque", "map_structure", [F("double"), collections.deque([1, 2], maxlen=3)]),
    ("up_to_len", "map_structure_up_to", [[0, 0], F("len"), [[1, 1], [2, 2]]]),
    ("up_to_str", "map_structure_up_to", [[0, [0, 0]], F("str"), [[1, 1], [2, 2]]]),
    ("up_to_none_shallow", "map_structure_up_to", [[None, None], F("len"), [[1, 1], [2, 2]]]),
    ("up_to_two", "map_structure_up_to", [{"a": 0, "b": 0}, F("add"), {"a": 1, "b": [2]}, {"a": 3, "b": [4]}]),
    ("up_to_shallower", "map_structure_up_to", [[0, [0, 0]], F("repr"), [1, 2]]),
    ("same_ok", "assert_same_structure", [[(0, 1)], [(2, 3)]]),
    ("same_namedtuple", "assert_same_structure", [Point(0, 1), Point(2, 3)]),
    ("same_namedtuple_other_class", "assert_same_structure", [Point(0, 1), AlsoPoint(2, 3)]),
    ("same_list_tuple", "assert_same_structure", [[0, 1], (0, 1)]),
    ("same_dict_ordered", "assert_same_structure", [{"a": 1, "b": 2}, _od(("b", 1), ("a", 2))]),
    ("same_dict_defaultdict", "assert_same_structure", [{"a": 1}, _dd(("a", 2))]),
    ("same_none_vs_leaf", "assert_same_structure", [[None, 1], [1, None]]),
    ("same_leaf_vs_list", "assert_same_structure", [1, [1]]),
    ("same_list_vs_leaf", "assert_same_structure", [[1], 1]),
    ("same_strings", "assert_same_structure", ["abc", 1]),
    ("paths_list_tuple", "assert_same_paths", [[0, 1], (2, 3)]),
    ("paths_namedtuples", "assert_same_paths", [Point(0, 1), Pair(2, 3)]),
    ("paths_differ", "assert_same_paths", [{"a": 1}, {"b": 1}]),
    ("paths_deque_list", "assert_same_paths", [collections.deque([1, 2]), [1, 2]]),
    ("lists_to_tuples", "lists_to_tuples", [[1, [2, {"a": [3]}], (4, [5])]]),
    ("lists_to_tuples_leaf", "lists_to_tuples", [3]),
    ("shape_map", "map_shape_structure", [F("repr"), {"a": (None, 3), "b": [(2,), [4, None]], "c": ()}]),
    ("shape_map_leaf", "map_shape_structure", [F("repr"), 5]),
    ("traverse_top_down", "traverse", [F("collect"), [(1, 2), [3], {"a": 4}]]),
    ("traverse_bottom_up", "traverse", [F("collect"), [(1, 2), [3], {"a": 4}], False]),
    ("traverse_replace", "traverse", [F("replace_tuples"), [(1, 2), [3, (4,)], {"a": (5, 6)}]]),
    ("traverse_map_to_none", "traverse", [F("drop_lists"), [(1, [2]), [3], {"b": [4], "a": 5}]]),
    ("traverse_bottom_up_replace", "traverse", [F("sum_lists"), [[1, 2], ([3], 4)], False]),
    ("traverse_dict_order", "traverse", [F("collect"), {"b": 1, "a": [2], "c": None}]),
]


def funcs(tree):
    """(the values `collect` saw, the callables the cases name) for one keras.tree module (Keras's or ours)."""
    seen = []

    def collect(value):
        seen.append(value)

    return seen, {
        "square": lambda v: v ** 2, "mul": lambda a, b: a * b, "double": lambda v: v * 2, "repr": repr,
        "add": lambda a, b: a + b, "add3": lambda a, b, c: a + b + c, "len": len, "str": str, "collect": collect,
        "replace_tuples": lambda v: "T" if isinstance(v, tuple) else None,
        "drop_lists": lambda v: tree.MAP_TO_NONE if isinstance(v, list) and len(v) == 1 else None,
        "sum_lists": lambda v: sum(v) if isinstance(v, list) and all(isinstance(i, int) for i in v) else None,
    }


def encode(value):
    """A JSON form that keeps container types, key order, namedtuple classes and leaf reprs."""
    kind = type(value)
    if kind in (list, tuple):
        return {kind.__name__: [encode(v) for v in value]}
    if kind in (dict, collections.OrderedDict):
        return {kind.__name__: [[repr(k), encode(v)] for k, v in value.items()]}
    if kind is collections.defaultdict:
        return {"defaultdict": [[repr(k), encode(v)] for k, v in value.items()],
                "factory": repr(value.default_factory)}
    if kind is collections.deque:
        return {"deque": [encode(v) for v in value], "maxlen": value.maxlen}
    if isinstance(value, tuple) and hasattr(kind, "_fields"):
        return {"namedtuple": kind.__name__, "id": {Point: "Point", AlsoPoint: "AlsoPoint"}.get(kind, "other"),
                "fields": [encode(v) for v in value]}
    if isinstance(value, set):
        return {"set": sorted(repr(v) for v in value)}
    return {"leaf": repr(value)}


def run(tree, case):
    """{'result': ..., 'seen': [...]} or {'raises': 'ValueError'} for one case against one keras.tree."""
    name, args, kwargs = case[1], case[2], (case[3] if len(case) > 3 else {})
    seen, table = funcs(tree)
    args = [table[a.name] if isinstance(a, F) else a for a in args]
    try:
        result = getattr(tree, name)(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the exception type is the fact recorded
        return {"raises": type(error).__name__}
    return {"result": encode(result), "seen": [encode(v) for v in seen]}


if __name__ == "__main__":
    import keras

    out = {"keras_version": keras.__version__,
           "cases": {case[0]: run(keras.tree, case) for case in CASES}}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_tree_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print("wrote", path)
