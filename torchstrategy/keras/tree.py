"""`keras.tree`: Keras 3's nested-structure utilities (flatten, map_structure, pack_sequence_as, traverse, ...)
with the pytree rules Keras 3.15 follows: None is a leaf, dicts go by sorted key, OrderedDicts as inserted."""
from __future__ import annotations

import collections
import warnings
from typing import Any, Callable, Iterator, Optional, Sequence

__all__ = ["MAP_TO_NONE", "assert_same_paths", "assert_same_structure", "flatten", "flatten_with_path",
           "is_nested", "lists_to_tuples", "map_shape_structure", "map_structure", "map_structure_up_to",
           "pack_sequence_as", "traverse"]


class MAP_TO_NONE:  # noqa: N801 - Keras's name
    """Returned by a `traverse()` function to replace a sub-structure with None."""


_SAME = "Structures don't have the same nested structure."


def _is_namedtuple(value: Any) -> bool:
    cls = type(value)
    return (isinstance(value, tuple) and isinstance(getattr(cls, "_fields", None), tuple)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None)))


def _is_structseq(value: Any) -> bool:
    """A C struct sequence (time.struct_time, torch.return_types.max): a tuple type with n_sequence_fields."""
    return isinstance(value, tuple) and isinstance(getattr(type(value), "n_sequence_fields", None), int)


def _kind(value: Any, none_is_leaf: bool) -> Optional[str]:
    """The node kind of `value`, or None for a leaf. Exact container types only: a subclass of list or dict
    is a leaf, as in optree (namedtuples and struct sequences excepted)."""
    cls = type(value)
    if value is None:
        return None if none_is_leaf else "none"
    if cls in (list, tuple, dict, collections.OrderedDict, collections.defaultdict, collections.deque):
        return cls.__name__
    if _is_namedtuple(value):
        return "namedtuple"
    if _is_structseq(value):
        return "structseq"
    return None


def _sorted_keys(keys: Sequence) -> list:
    """Keys in a total order: sorted; else sorted by (type name, key); else as inserted."""
    keys = list(keys)
    try:
        return sorted(keys)
    except TypeError:
        try:
            return sorted(keys, key=lambda k: (f"{type(k).__module__}.{type(k).__qualname__}", k))
        except TypeError:
            return keys


def _entries(value: Any, kind: str) -> tuple[list, list]:
    """(path entries, children) of one node, in flattening order."""
    if kind in ("dict", "defaultdict"):
        keys = _sorted_keys(value)
        return keys, [value[k] for k in keys]
    if kind == "OrderedDict":
        return list(value), list(value.values())
    if kind == "none":
        return [], []
    items = list(value)
    return list(range(len(items))), items


class _Spec:
    """The shape of a structure: a leaf (kind None) or a node with its kind, rebuild data and child specs."""

    __slots__ = ("kind", "node", "entries", "children")

    def __init__(self, kind: Optional[str], node: Any = None, entries: Sequence = (),
                 children: Sequence["_Spec"] = ()) -> None:
        self.kind, self.node, self.entries, self.children = kind, node, list(entries), list(children)

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else sum(child.num_leaves for child in self.children)

    def rebuild(self, children: list) -> Any:
        """This node with new children (in flattening order)."""
        kind, node = self.kind, self.node
        if kind == "none":
            return None
        if kind in ("list", "tuple"):
            return type(node)(children)
        if kind == "namedtuple":
            return type(node)(*children)
        if kind == "structseq":
            return type(node)(children)
        if kind == "deque":
            return collections.deque(children, maxlen=node.maxlen)
        by_key = dict(zip(self.entries, children))
        ordered = [(key, by_key[key]) for key in node]  # dicts come back in their own insertion order
        if kind == "defaultdict":
            return collections.defaultdict(node.default_factory, ordered)
        return type(node)(ordered)


def _flatten(value: Any, none_is_leaf: bool, leaves: list, is_leaf: Optional[Callable] = None) -> _Spec:
    if is_leaf is not None and is_leaf(value):
        leaves.append(value)
        return _Spec(None)
    kind = _kind(value, none_is_leaf)
    if kind is None:
        leaves.append(value)
        return _Spec(None)
    entries, children = _entries(value, kind)
    return _Spec(kind, value, entries, [_flatten(child, none_is_leaf, leaves, is_leaf) for child in children])


def _spec_of(structure: Any, none_is_leaf: bool = True, is_leaf: Optional[Callable] = None) -> tuple[list, _Spec]:
    leaves: list = []
    spec = _flatten(structure, none_is_leaf, leaves, is_leaf)
    return leaves, spec


def _unflatten(spec: _Spec, leaves: Iterator) -> Any:
    if spec.kind is None:
        return next(leaves)
    return spec.rebuild([_unflatten(child, leaves) for child in spec.children])


_DICT_KINDS = ("dict", "OrderedDict", "defaultdict")


def _up_to(spec: _Spec, value: Any, none_is_leaf: bool, out: list) -> None:
    """`value`'s subtrees at `spec`'s leaves (deeper parts stay whole); ValueError where `value` does not
    have `spec`'s nodes (dict, OrderedDict and defaultdict match each other when their keys do)."""
    if spec.kind is None:
        out.append(value)
        return
    kind = _kind(value, none_is_leaf)
    same = kind == spec.kind if spec.kind not in _DICT_KINDS else kind in _DICT_KINDS
    if same and kind in ("namedtuple", "structseq"):
        same = type(value) is type(spec.node)
    if not same:
        raise ValueError(f"{_SAME} Expected an instance of {type(spec.node).__name__}, got "
                         f"{type(value).__name__}: {value!r}.")
    if kind in _DICT_KINDS:
        if set(value) != set(spec.entries):
            raise ValueError(f"{_SAME} Dictionary keys differ: expected {sorted(map(repr, spec.entries))}, got "
                             f"{sorted(map(repr, value))}.")
        children = [value[key] for key in spec.entries]
    else:
        children = [] if kind == "none" else list(value)
        if len(children) != len(spec.children):
            raise ValueError(f"{_SAME} Expected a {type(spec.node).__name__} of {len(spec.children)} items, got "
                             f"{len(children)}: {value!r}.")
    for child_spec, child in zip(spec.children, children):
        _up_to(child_spec, child, none_is_leaf, out)


def _tree_map(func: Callable, first: Any, rests: Sequence, none_is_leaf: bool,
              is_leaf: Optional[Callable] = None) -> Any:
    leaves, spec = _spec_of(first, none_is_leaf, is_leaf)
    columns = [leaves]
    for rest in rests:
        subtrees: list = []
        _up_to(spec, rest, none_is_leaf, subtrees)
        columns.append(subtrees)
    return _unflatten(spec, iter([func(*args) for args in zip(*columns)]))


def is_nested(structure: Any) -> bool:
    """True for a list, tuple, dict (any of Keras's mappings), namedtuple or deque; False for a leaf and None."""
    return _kind(structure, True) is not None


def traverse(func: Callable, structure: Any, top_down: bool = True) -> Any:
    """Depth-first walk calling `func` on every sub-structure. Top-down, a non-None result replaces that
    sub-structure and stops the descent; bottom-up, it replaces the already-traversed sub-structure.
    Return `MAP_TO_NONE` to put None in its place."""
    def children_traversed() -> Any:
        kind = _kind(structure, True)
        if kind is None:
            return structure
        entries, children = _entries(structure, kind)
        spec = _Spec(kind, structure, entries, [_Spec(None)] * len(children))
        return spec.rebuild([traverse(func, child, top_down=top_down) for child in children])

    if top_down:
        result = func(structure)
        if result is None:
            return children_traversed()
    else:
        walked = children_traversed()
        result = func(walked)
        if result is None:
            return walked
    return None if result is MAP_TO_NONE else result


def flatten(structure: Any) -> list:
    """The leaves of `structure` in order (dict values by sorted key; OrderedDict as inserted); a leaf gives
    `[leaf]`, None gives `[None]`."""
    return _spec_of(structure)[0]


def flatten_with_path(structure: Any) -> list:
    """`(path, leaf)` pairs, the path a tuple of list indices and dict keys leading to the leaf."""
    out: list = []

    def walk(value: Any, path: tuple) -> None:
        kind = _kind(value, True)
        if kind is None:
            out.append((path, value))
            return
        entries, children = _entries(value, kind)
        for entry, child in zip(entries, children):
            walk(child, path + (entry,))

    walk(structure, ())
    return out


def map_structure(func: Callable, *structures: Any, none_is_leaf: bool = True) -> Any:
    """`func` applied to the matching leaves of one or more same-shaped structures, in the first's shape.
    With `none_is_leaf=False`, None values stay None and `func` never sees them."""
    if len(structures) == 1 and not is_nested(structures[0]):
        if structures[0] is None and not none_is_leaf:
            return None
        return func(structures[0])
    if not structures:
        raise ValueError("Must provide at least one structure")
    if not callable(func):
        raise TypeError(f"`func` must be callable; got {func!r}.")

    def checked(*args: Any) -> Any:
        if any(_kind(arg, none_is_leaf) is not None for arg in args):
            raise ValueError(_SAME)
        return func(*args)

    return _tree_map(checked if len(structures) > 1 else func, structures[0], structures[1:], none_is_leaf)


def map_structure_up_to(shallow_structure: Any, func: Callable, *structures: Any) -> Any:
    """`func` applied to the parts of `structures` at the leaves of `shallow_structure` (deeper parts are
    passed whole), in `shallow_structure`'s shape. A None in `shallow_structure` is not a leaf here."""
    if not structures:
        raise ValueError("Must provide at least one structure")

    def checked(shallow: Any, *args: Any) -> Any:
        if _kind(shallow, False) is not None:
            raise ValueError(_SAME)
        return func(*args)

    return _tree_map(checked, shallow_structure, structures, True)


def assert_same_structure(a: Any, b: Any, check_types: Optional[bool] = None) -> None:
    """Raises ValueError unless `a` and `b` nest the same way (same container types and lengths; dict,
    OrderedDict and defaultdict match when their keys do). `check_types` is deprecated and has no effect."""
    if check_types is not None:
        if check_types:
            message = "The `check_types` argument is deprecated and no longer has any effect, please remove."
        else:
            message = ("The `check_types` argument is deprecated and no longer has any effect. For a looser "
                       "check, use `keras.tree.assert_same_paths()`, which considers `list`, `tuple`, "
                       "`namedtuple` and `deque` as matching")
        warnings.warn(message, DeprecationWarning, stacklevel=2)

    def check(a_leaf: Any, b_leaf: Any) -> None:
        if is_nested(a_leaf) or is_nested(b_leaf):
            raise ValueError(_SAME)

    _tree_map(check, a, [b], True)


def _paths(structure: Any) -> set:
    return {path for path, _ in flatten_with_path(structure)}


def assert_same_paths(a: Any, b: Any) -> None:
    """Raises ValueError unless `a` and `b` have the same leaf paths (container types are not compared)."""
    a_paths, b_paths = _paths(a), _paths(b)
    if a_paths != b_paths:
        message = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            message += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            message += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(message)


def pack_sequence_as(structure: Any, flat_sequence: Sequence) -> Any:
    """`flat_sequence` put back into `structure`'s shape (the inverse of `flatten`)."""
    _, spec = _spec_of(structure)
    try:
        leaves = list(flat_sequence)
    except TypeError:
        raise TypeError(f"`flat_sequence` must be an iterable of leaves; got {type(flat_sequence).__name__}: "
                        f"{flat_sequence!r}.") from None
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"`flat_sequence` has {len(leaves)} items but the structure has {spec.num_leaves} "
                         f"leaves: {structure!r}.")
    return _unflatten(spec, iter(leaves))


def lists_to_tuples(structure: Any) -> Any:
    """`structure` with every list (at any depth) turned into a tuple."""
    return traverse(lambda value: tuple(value) if isinstance(value, list) else None, structure, top_down=False)


def _is_shape(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(d, (int, type(None))) for d in value)


def map_shape_structure(func: Callable, structure: Any) -> Any:
    """`map_structure` over shapes: a list or tuple of ints and Nones is passed to `func` whole."""
    return _tree_map(func, structure, [], True, is_leaf=_is_shape)
