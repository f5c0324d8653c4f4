"""`tf.nest`: the one implementation of nested structures (tuples, lists, dicts, namedtuples) that
datasets, layers, the tape, strategies and the trainer share. Dicts flatten by sorted key, as in tf.nest."""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence


def is_namedtuple(value: Any) -> bool:
    """True for an instance of a namedtuple class (a tuple whose type has `_fields`)."""
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def sorted_keys(value: dict) -> list:
    """A dict's keys in the order tf.nest visits them: sorted, else (keys that do not compare) as inserted."""
    try:  # tf.nest orders dict entries by sorted key
        return sorted(value)
    except TypeError:
        return list(value)


def flatten(structure: Any, expand_composites: bool = False) -> list:
    """Leaves of a nested tuple/list/dict structure, depth first (dicts by sorted key); composite tensors
    (SparseTensor) are leaves whatever `expand_composites` says."""
    if isinstance(structure, (tuple, list)):
        return [leaf for item in structure for leaf in flatten(item)]
    if isinstance(structure, dict):
        return [leaf for key in sorted_keys(structure) for leaf in flatten(structure[key])]
    return [structure]


def _pack(template: Any, leaves: Iterator) -> Any:
    if is_namedtuple(template):
        return type(template)(*[_pack(item, leaves) for item in template])
    if isinstance(template, (tuple, list)):
        return type(template)(_pack(item, leaves) for item in template)
    if isinstance(template, dict):
        packed = {key: _pack(template[key], leaves) for key in sorted_keys(template)}
        return {key: packed[key] for key in template}
    return next(leaves)


def pack_as(template: Any, leaves: Sequence) -> Any:
    """Inverse of `flatten`: puts `leaves` back into the shape of `template`."""
    return _pack(template, iter(leaves))


def map_structure(func: Callable, *structure: Any, **kwargs: Any) -> Any:
    """Applies `func` to every leaf (to the matching leaves of several same-shaped structures), keeping the
    first structure's shape. kwargs: TF's `check_types` and `expand_composites` (composites are leaves here)."""
    unknown = set(kwargs) - {"check_types", "expand_composites"}
    if unknown:
        raise ValueError(f"Only valid keyword arguments are `check_types` and `expand_composites`; got {sorted(unknown)}.")
    if not structure:
        raise ValueError("Must provide at least one structure.")
    if len(structure) == 1:
        return _map_one(func, structure[0])
    for other in structure[1:]:
        assert_same_structure(structure[0], other, kwargs.get("check_types", True))
    leaves = zip(*(flatten(s) for s in structure))
    return pack_as(structure[0], [func(*items) for items in leaves])


def _map_one(fn: Callable, structure: Any) -> Any:
    if type(structure) is tuple:
        return tuple(_map_one(fn, item) for item in structure)
    return pack_as(structure, [fn(leaf) for leaf in flatten(structure)])


def flatten_up_to(template: Any, value: Any) -> list:
    """`value` flattened only as deep as `template` goes (deeper parts of `value` stay whole).
    Raises ValueError when `value` lacks part of the structure."""
    if isinstance(template, dict):
        if not isinstance(value, dict) or set(value) != set(template):
            raise ValueError(f"expected a dict with keys {sorted(template)}, got {value!r}")
        return [leaf for key in sorted_keys(template) for leaf in flatten_up_to(template[key], value[key])]
    if isinstance(template, (tuple, list)):
        if not isinstance(value, (tuple, list)) or len(value) != len(template):
            raise ValueError(f"expected a sequence of {len(template)} items, got {value!r}")
        return [leaf for part, item in zip(template, value) for leaf in flatten_up_to(part, item)]
    return [value]


def same_structure(a: Any, b: Any) -> bool:
    """True when `a` and `b` nest the same way (same dict keys, same sequence lengths; leaves not compared)."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or set(a) != set(b):
            return False
        return all(same_structure(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        if not (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list))) or len(a) != len(b):
            return False
        return all(same_structure(x, y) for x, y in zip(a, b))
    return True


def pack_sequence_as(structure: Any, flat_sequence: Sequence, expand_composites: bool = False) -> Any:
    """tf.nest.pack_sequence_as: `flat_sequence` put back into the shape of `structure`."""
    return pack_as(structure, list(flat_sequence))


def is_nested(seq: Any) -> bool:
    """True for tuples, lists and dicts (the containers tf.nest descends into)."""
    return isinstance(seq, (tuple, list, dict))


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False) -> None:
    """Raises ValueError when `nest1` and `nest2` do not nest the same way."""
    if not same_structure(nest1, nest2):
        raise ValueError(f"The two structures don't have the same nested structure: {nest1!r} vs {nest2!r}.")
