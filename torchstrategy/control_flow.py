"""TF's functional control flow run eagerly: tf.cond, tf.case, tf.switch_case, tf.while_loop, tf.map_fn,
tf.vectorized_map, tf.scan, tf.foldl and tf.foldr, with TF's signatures, argument checks and results."""
from __future__ import annotations

import builtins
from typing import Any, Callable, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import to_tensor
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.nest import assert_same_structure, flatten, map_structure, pack_sequence_as, same_structure

__all__ = ["cond", "case", "switch_case", "while_loop", "map_fn", "vectorized_map", "scan", "foldl", "foldr"]


def _callable(fn: Any, what: str) -> None:
    if not callable(fn):
        raise TypeError(f"'{what}' must be callable, got {fn!r} of type {type(fn).__name__}; pass a function "
                        "(e.g. a lambda) that builds the value.")


def _truth(pred: Any, op: str) -> bool:
    """A scalar predicate (Python bool or a one-element bool tensor) as a Python bool."""
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    tensor = pred if isinstance(pred, torch.Tensor) else to_tensor(pred, op=op)
    if tensor.numel() != 1:
        raise ValueError(f"{op}: the predicate must be a scalar, got shape {tuple(tensor.shape)}.")
    if tensor.dtype != torch.bool:
        raise TypeError(f"{op}: the predicate must be a bool tensor, got {tensor.dtype}; compare first, "
                        "e.g. tf.greater(x, 0).")
    return bool(tensor.reshape(()))


def cond(pred: Any, true_fn: Optional[Callable] = None, false_fn: Optional[Callable] = None,
         name: Optional[str] = None) -> Any:
    """`true_fn()` if `pred` is true, else `false_fn()` (only the chosen branch runs).

    >>> cond(torch.tensor(True), lambda: 1, lambda: 2)
    1
    """
    _callable(true_fn, "true_fn")
    _callable(false_fn, "false_fn")
    return true_fn() if _truth(pred, "tf.cond") else false_fn()


def case(pred_fn_pairs: Any, default: Optional[Callable] = None, exclusive: bool = False, strict: bool = False,
         name: str = "case") -> Any:
    """The result of the fn of the first pair whose predicate is true (all are checked when `exclusive`);
    `default()` when none is; with no default, none being true is an InvalidArgumentError.

    >>> case([(torch.tensor(False), lambda: 1), (torch.tensor(True), lambda: 2)])
    2
    """
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, builtins.tuple) or len(pair) != 2:
            raise TypeError(f"tf.case: each entry of pred_fn_pairs must be a (predicate, fn) pair, got {pair!r}.")
        _callable(pair[1], "fn")
    if default is not None:
        _callable(default, "default")
    chosen = [index for index, (pred, _) in enumerate(pairs) if _truth(pred, "tf.case")]
    if exclusive and len(chosen) > 1:
        raise InvalidArgumentError(None, None, f"tf.case: more than one condition evaluated as True (pairs {chosen}) but "
                                   "exclusive=True.")
    if chosen:
        return pairs[chosen[0]][1]()
    if default is None:
        raise InvalidArgumentError(None, None, "tf.case: none of the conditions evaluated as True and no default was given.")
    return default()


def switch_case(branch_index: Any, branch_fns: Any, default: Optional[Callable] = None,
                name: str = "switch_case") -> Any:
    """`branch_fns[branch_index]()`; an index outside the branches runs `default` (the last branch when
    there is none). `branch_fns` is a list, a dict {int: fn} or a list of (int, fn) pairs.

    >>> switch_case(torch.tensor(1), [lambda: "a", lambda: "b"])
    'b'
    """
    if not isinstance(branch_index, torch.Tensor):
        raise TypeError(f"tf.switch_case: 'branch_index' must be a Tensor, got {type(branch_index).__name__}; "
                        "wrap it with tf.constant.")
    if branch_index.numel() != 1 or branch_index.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"tf.switch_case: branch_index must be a scalar int32 tensor, got {branch_index!r}.")
    items = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if items and isinstance(items[0], builtins.tuple):
        table = {int(key): fn for key, fn in items}
        if sorted(table) != list(builtins.range(len(table))):
            raise ValueError(f"tf.switch_case: branch keys must be 0..{len(table) - 1}, got {sorted(table)}.")
        fns = [table[i] for i in builtins.range(len(table))]
    else:
        fns = items
    if not fns:
        raise ValueError("tf.switch_case: branch_fns must not be empty.")
    for fn in fns:
        _callable(fn, "branch_fns entry")
    index = int(branch_index.reshape(()))
    if 0 <= index < len(fns):
        return fns[index]()
    if default is not None:
        _callable(default, "default")
        return default()
    return fns[-1]()


def _shape_allowed(invariant: Any, shape: tuple) -> bool:
    if invariant is None or getattr(invariant, "rank", 0) is None:  # no invariant, or a shape of unknown rank
        return True
    dims = getattr(invariant, "dims", invariant)
    if dims is None:
        return True
    dims = list(dims)
    return len(dims) == len(shape) and all(d is None or int(d) == s for d, s in zip(dims, shape))


def while_loop(cond: Callable, body: Callable, loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, name: Optional[str] = None) -> Any:
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` holds (at most `maximum_iterations`
    times); returns the final loop_vars. A loop variable may not change structure, dtype, or shape unless
    `shape_invariants` gives it a shape with None dimensions.

    >>> while_loop(lambda i: i < 3, lambda i: i + 1, [torch.tensor(0)])
    [tensor(3)]
    """
    _callable(cond, "cond")
    _callable(body, "body")
    packed = isinstance(loop_vars, (list, builtins.tuple))
    current = loop_vars if packed else (loop_vars,)
    first = [(tuple(t.shape), t.dtype) if isinstance(t, torch.Tensor) else None for t in flatten(current)]
    invariants = _invariants(shape_invariants, len(first)) if shape_invariants is not None else [None] * len(first)
    limit = None if maximum_iterations is None else int(maximum_iterations)
    steps = 0
    while (limit is None or steps < limit) and _truth(cond(*current), "tf.while_loop cond"):
        result = body(*current)
        if not packed or not isinstance(result, (list, builtins.tuple)):
            result = (result,)
        elif len(current) == 1 and not same_structure(list(current), list(result)):
            result = (result,)  # a one-variable loop's body may return the variable itself (as TF allows)
        try:
            assert_same_structure(list(current), list(result))
        except (ValueError, TypeError) as error:
            raise ValueError(f"tf.while_loop: body must return the same structure as loop_vars: {error}") from None
        _check_iteration(first, invariants, flatten(result))
        current = pack_sequence_as(current, flatten(result))
        steps += 1
    return current if packed else current[0]


def _invariants(shape_invariants: Any, count: int) -> list:
    """One shape invariant per flat loop variable (a TensorShape or list of dims counts as one leaf)."""
    def is_shape(value: Any) -> bool:
        return hasattr(value, "dims") or (isinstance(value, (list, builtins.tuple)) and
                                          builtins.all(d is None or isinstance(d, int) for d in value))

    if count == 1 and is_shape(shape_invariants):
        return [shape_invariants]
    if isinstance(shape_invariants, (list, builtins.tuple)) and len(shape_invariants) == count:
        return list(shape_invariants)
    return flatten(shape_invariants)


def _check_iteration(first: list, invariants: list, values: list) -> None:
    for index, (entry, value) in enumerate(zip(first, values)):
        if entry is None or not isinstance(value, torch.Tensor):
            continue
        shape, dtype = entry
        if value.dtype != dtype:
            raise TypeError(f"tf.while_loop: loop variable {index} enters the loop as {dtype} but is {value.dtype} "
                            "after an iteration; the body must keep each variable's dtype (cast it back).")
        invariant = invariants[index] if index < len(invariants) else None
        if tuple(value.shape) != shape and not (invariant is not None and _shape_allowed(invariant, value.shape)):
            raise ValueError(f"tf.while_loop: loop variable {index} enters the loop with shape {list(shape)} but has "
                             f"shape {list(value.shape)} after one iteration. To let the shape vary across "
                             "iterations, give it a less specific shape in `shape_invariants` (e.g. "
                             "tf.TensorShape([None])).")


def _elements(elems: Any, op: str) -> tuple:
    """(flat tensors, count): `elems` (a nest) unstacked along axis 0."""
    flat = [e if isinstance(e, (torch.Tensor, np.ndarray)) else to_tensor(e, op=op) for e in flatten(elems)]
    if not flat:
        raise ValueError(f"{op}: elems must contain at least one tensor.")
    counts = {int(e.shape[0]) if e.ndim else -1 for e in flat}
    if -1 in counts:
        raise ValueError(f"{op}: elems must have at least one dimension to unstack along; got a scalar.")
    if len(counts) > 1:
        raise ValueError(f"{op}: all elems must have the same size along axis 0, got sizes {sorted(counts)}.")
    return flat, counts.pop()


def _stack(values: list, op: str) -> Any:
    """Stacks per-element results (nests of tensors) along a new axis 0."""
    def join(*leaves: Any) -> Any:
        if isinstance(leaves[0], np.ndarray) and leaves[0].dtype == object:
            return np.stack(leaves)
        return torch.stack([to_tensor(leaf, op=op) for leaf in leaves])

    flats = [flatten(v) for v in values]
    return pack_sequence_as(values[0], [join(*column) for column in zip(*flats)])


def map_fn(fn: Callable, elems: Any, dtype: Any = None, parallel_iterations: Any = None, back_prop: bool = True,
           swap_memory: bool = False, infer_shape: bool = True, name: Optional[str] = None,
           fn_output_signature: Any = None) -> Any:
    """`fn` applied to each slice of `elems` along axis 0 (a nest of tensors is sliced together), the results
    stacked along axis 0.

    >>> map_fn(lambda x: x * 2, torch.tensor([1, 2])).tolist()
    [2, 4]
    """
    _callable(fn, "fn")
    flat, count = _elements(elems, "tf.map_fn")
    if count == 0:
        raise ValueError("tf.map_fn: elems are empty along axis 0, so the output shape is unknown.")
    outputs = [fn(pack_sequence_as(elems, [e[i] for e in flat])) for i in builtins.range(count)]
    return _stack(outputs, "tf.map_fn")


def vectorized_map(fn: Callable, elems: Any, fallback_to_while_loop: bool = True, warn: bool = True) -> Any:
    """`map_fn` computed in one vectorized call (torch.vmap); falls back to a loop for functions vmap cannot
    run when `fallback_to_while_loop`."""
    _callable(fn, "fn")
    flat, _ = _elements(elems, "tf.vectorized_map")
    if builtins.all(isinstance(e, torch.Tensor) for e in flat):
        try:
            return torch.vmap(lambda *leaves: fn(pack_sequence_as(elems, list(leaves))))(*flat)
        except Exception as error:  # vmap refuses data-dependent Python control flow, .item(), ...
            if not fallback_to_while_loop:
                raise ValueError(f"tf.vectorized_map could not vectorize fn ({error}); pass "
                                 "fallback_to_while_loop=True to run it element by element.") from error
            if warn:
                from torchstrategy.framework import get_logger

                get_logger().warning("tf.vectorized_map: falling back to a loop: %s", error)
    return map_fn(fn, elems)


def scan(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
         swap_memory: bool = False, infer_shape: bool = True, reverse: bool = False, name: Optional[str] = None) -> Any:
    """Every running value of `acc = fn(acc, x)` over the slices x of `elems`, stacked; without `initializer`
    the first slice starts the run (and is the first output).

    >>> scan(lambda a, x: a + x, torch.tensor([1, 2, 3])).tolist()
    [1, 3, 6]
    """
    _callable(fn, "fn")
    flat, count = _elements(elems, "tf.scan")
    order = list(builtins.range(count))[::-1] if reverse else list(builtins.range(count))
    item = lambda i: pack_sequence_as(elems, [e[i] for e in flat])  # noqa: E731
    outputs = []
    if initializer is None:
        if not order:
            raise ValueError("tf.scan: elems are empty and no initializer was given.")
        acc = item(order[0])
        outputs.append(acc)
        order = order[1:]
    else:
        acc = initializer
    for i in order:
        acc = fn(acc, item(i))
        outputs.append(acc)
    if not outputs:
        raise ValueError("tf.scan: elems are empty along axis 0, so there is nothing to stack.")
    stacked = _stack(outputs, "tf.scan")
    return map_structure(lambda t: t.flip(0), stacked) if reverse else stacked


def _fold(fn: Callable, elems: Any, initializer: Any, reverse: bool, op: str) -> Any:
    _callable(fn, "fn")
    flat, count = _elements(elems, op)
    order = list(builtins.range(count))[::-1] if reverse else list(builtins.range(count))
    item = lambda i: pack_sequence_as(elems, [e[i] for e in flat])  # noqa: E731
    if initializer is None:
        if not order:
            raise ValueError(f"{op}: elems are empty and no initializer was given.")
        acc, order = item(order[0]), order[1:]
    else:
        acc = initializer
    for i in order:
        acc = fn(acc, item(i))
    return acc


def foldl(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name: Optional[str] = None) -> Any:
    """`acc = fn(acc, x)` over the slices of `elems` from first to last; the final acc.

    >>> int(foldl(lambda a, x: a - x, torch.tensor([1, 2, 3])))
    -4
    """
    return _fold(fn, elems, initializer, False, "tf.foldl")


def foldr(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name: Optional[str] = None) -> Any:
    """`acc = fn(acc, x)` over the slices of `elems` from last to first; the final acc.

    >>> int(foldr(lambda a, x: a - x, torch.tensor([1, 2, 3])))
    0
    """
    return _fold(fn, elems, initializer, True, "tf.foldr")
