"""keras.ops.core's control flow and functional transforms, run eagerly: cond, switch, fori_loop, while_loop,
scan, associative_scan, map, vectorized_map, vectorize, custom_gradient and jvp."""
from __future__ import annotations

import builtins
from typing import Any, Callable, Optional

import numpy as np
import torch

from torchstrategy.keras.ops._core import _t
from torchstrategy.nest import flatten as flatten_structure, map_structure, pack_sequence_as


def cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]) -> Any:
    """true_fn() if `pred` else false_fn()."""
    return true_fn() if bool(_t(pred)) else false_fn()


def switch(index: Any, branches: list, *operands: Any) -> Any:
    """branches[index](*operands), the index clamped to the branches."""
    position = builtins.min(builtins.max(int(_t(index)), 0), len(branches) - 1)
    return branches[position](*operands)


def fori_loop(lower: int, upper: int, body_fun: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """val = body_fun(i, val) for i in [lower, upper)."""
    value = init_val
    for i in range(int(lower), int(upper)):
        value = body_fun(i, value)
    return value


def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any,
               maximum_iterations: Optional[int] = None) -> Any:
    """loop_vars = body(*loop_vars) while cond(*loop_vars) (at most `maximum_iterations` times); a single
    loop variable may be given without a tuple."""
    single = not isinstance(loop_vars, (list, tuple))
    values = (loop_vars,) if single else tuple(loop_vars)
    count = 0
    while bool(_t(cond(*values))) and (maximum_iterations is None or count < maximum_iterations):
        result = body(*values)
        values = (result,) if single else tuple(result) if isinstance(result, (list, tuple)) else (result,)
        count += 1
    return values[0] if single else type(loop_vars)(values) if isinstance(loop_vars, list) else values


def scan(f: Callable[[Any, Any], tuple], init: Any, xs: Any = None, length: Optional[int] = None,
         reverse: bool = False, unroll: int = 1) -> tuple:
    """(final carry, stacked ys) of `carry, y = f(carry, x)` over the leading axis of `xs`."""
    if xs is None and length is None:
        raise ValueError("Got no `xs` to scan over and `length` not provided.")
    leaves = flatten_structure(xs) if xs is not None else []
    steps = int(length) if length is not None else int(_t(leaves[0]).shape[0])
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    carry, ys = init, []
    for i in order:
        x = None if xs is None else pack_sequence_as(xs, [_t(leaf)[i] for leaf in leaves])
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys or ys[0] is None:
        return carry, None
    stacked = [torch.stack([_t(leaf) for leaf in column]) for column in zip(*(flatten_structure(y) for y in ys))]
    return carry, pack_sequence_as(ys[0], stacked)


def associative_scan(f: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """Inclusive prefix combination with the associative `f` along `axis` (sequentially here)."""
    leaves = [_t(leaf) for leaf in flatten_structure(elems)]
    steps = leaves[0].shape[axis]
    order = list(range(steps))[::-1] if reverse else list(range(steps))
    outputs: list = []
    acc = None
    for i in order:
        current = pack_sequence_as(elems, [leaf.select(axis, i) for leaf in leaves])
        acc = current if acc is None else (f(current, acc) if reverse else f(acc, current))
        outputs.append(acc)
    if reverse:
        outputs.reverse()
    stacked = [torch.stack(column, dim=axis) for column in zip(*(flatten_structure(o) for o in outputs))]
    return pack_sequence_as(elems, stacked)


def map(f: Callable[[Any], Any], xs: Any) -> Any:
    """f applied to each slice along the leading axis of `xs`, stacked."""
    leaves = [_t(leaf) for leaf in flatten_structure(xs)]
    results = [f(pack_sequence_as(xs, [leaf[i] for leaf in leaves])) for i in range(leaves[0].shape[0])]
    stacked = [torch.stack([_t(v) for v in column]) for column in zip(*(flatten_structure(r) for r in results))]
    return pack_sequence_as(results[0], stacked)


def vectorized_map(function: Callable[[Any], Any], elements: Any) -> Any:
    """`map` with torch.vmap when `function` allows it, else slice by slice."""
    try:
        return torch.vmap(function)(map_structure(_t, elements))
    except Exception:  # functions with data-dependent Python control flow: fall back to a loop
        return map(function, elements)


def vectorize(pyfunc: Callable[..., Any], *, excluded: Any = None, signature: Optional[str] = None) -> Callable:
    """A function applying `pyfunc` element-wise (NumPy's vectorize), returning tensors."""
    vectorized = np.vectorize(lambda *args: _numpy(pyfunc(*args)), excluded=excluded, signature=signature)

    def apply(*args: Any, **kwargs: Any) -> Any:
        result = vectorized(*[_numpy(a) for a in args], **kwargs)
        return torch.as_tensor(np.asarray(result))

    return apply


def _numpy(value: Any) -> Any:
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value


def custom_gradient(f: Callable[..., tuple]) -> Callable[..., Any]:
    """Decorator: `f(*args)` returns (output, grad_fn) and grad_fn(*upstream) the gradients of the args."""

    class _Function(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *args: Any) -> Any:
            with torch.enable_grad():
                output, grad_fn = f(*args)
            ctx.grad_fn = grad_fn
            return output.detach() if isinstance(output, torch.Tensor) else output

        @staticmethod
        def backward(ctx: Any, *upstream: Any) -> Any:
            grads = ctx.grad_fn(*upstream)
            return grads if isinstance(grads, tuple) else (grads,)

    def wrapper(*args: Any) -> Any:
        return _Function.apply(*[_t(a) if not isinstance(a, torch.Tensor) else a for a in args])

    return wrapper


def jvp(fun: Callable[..., Any], primals: Any, tangents: Any, has_aux: bool = False) -> tuple:
    """(fun(*primals), the Jacobian-vector product with `tangents`) (and aux with `has_aux`)."""
    primals = tuple(_t(p) for p in primals)
    tangents = tuple(_t(t).to(p.dtype) for t, p in zip(tangents, primals))
    return torch.func.jvp(fun, primals, tangents, has_aux=has_aux)
