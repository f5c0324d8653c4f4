"""`tf.custom_gradient` and `tf.grad_pass_through`: functions whose gradient is given by the user, as torch
autograd Functions, so that GradientTape and `backward()` both use it."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Optional

import torch
from torch.overrides import TorchFunctionMode

from torchstrategy.nest import flatten, pack_sequence_as

__all__ = ["custom_gradient", "grad_pass_through"]


class _WatchVariables(TorchFunctionMode):
    """Notes the trainable leaf tensors (variables) that ops in the block read, besides the inputs."""

    def __init__(self, inputs: list) -> None:
        super().__init__()
        self._skip = {id(t) for t in inputs}
        self.found: list = []

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        for value in flatten((list(args), dict(kwargs or {}))):
            if isinstance(value, torch.Tensor) and value.requires_grad and value.is_leaf and \
                    id(value) not in self._skip:
                self._skip.add(id(value))
                self.found.append(value)
        return func(*args, **(kwargs or {}))


def _wants_variables(grad_fn: Callable) -> bool:
    try:
        parameters = inspect.signature(grad_fn).parameters
    except (TypeError, ValueError):
        return False
    return "variables" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def custom_gradient(f: Optional[Callable] = None) -> Callable:
    """Decorates `f(*x) -> (y, grad_fn)`: the result is y, and its gradient is `grad_fn(*dy)` (one gradient per
    tensor input). When f reads variables, grad_fn takes `variables=` and returns (input grads, variable grads).

    >>> @custom_gradient
    ... def clip_grad(x):
    ...     return x * 1, lambda dy: dy.clamp(-1, 1)
    >>> x = torch.tensor([3.0], requires_grad=True)
    >>> clip_grad(x * 5).sum().backward(); x.grad.tolist()
    [5.0]
    """
    if f is None:
        return custom_gradient
    if not callable(f):
        raise TypeError(f"tf.custom_gradient decorates a function, got {type(f).__name__}.")

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        detached = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
        watch = _WatchVariables(tensors)
        with torch.no_grad(), watch:
            result = f(*detached, **kwargs)
        if not isinstance(result, tuple) or len(result) != 2 or not callable(result[1]):
            raise TypeError("A tf.custom_gradient function must return (outputs, grad_fn), with grad_fn a callable "
                            "taking the upstream gradients.")
        outputs, grad_fn = result
        variables = watch.found
        if variables and not _wants_variables(grad_fn):
            raise TypeError(f"tf.custom_gradient: {f.__name__} reads variables ({len(variables)}) but its grad_fn "
                            "has no `variables` argument: add `variables=None` and return (input grads, "
                            "variable grads).")
        flat_out = flatten(outputs)
        n_in = len(tensors)

        class _Function(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, *inputs: torch.Tensor) -> Any:
                return tuple(t.clone() if isinstance(t, torch.Tensor) else torch.as_tensor(t) for t in flat_out)

            @staticmethod
            def backward(ctx: Any, *upstream: torch.Tensor) -> Any:
                if variables:
                    grads, var_grads = grad_fn(*upstream, variables=variables)
                else:
                    grads, var_grads = grad_fn(*upstream), []
                grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
                if len(grads) != n_in:
                    raise ValueError(f"tf.custom_gradient: grad_fn returned {len(grads)} gradient(s) for "
                                     f"{n_in} tensor input(s).")
                return tuple(grads) + tuple(var_grads)

        results = _Function.apply(*tensors, *variables)
        return pack_sequence_as(outputs, list(results))

    return decorated


def grad_pass_through(f: Callable) -> Callable:
    """`f` evaluated as is, with an identity gradient to its (single tensor) input: y = x + stop_gradient(f(x) - x)."""
    if not callable(f):
        raise TypeError(f"tf.grad_pass_through takes a function, got {type(f).__name__}.")

    @functools.wraps(f)
    def wrapped(x: Any) -> Any:
        with torch.no_grad():
            value = f(x.detach() if isinstance(x, torch.Tensor) else x)
        if not isinstance(x, torch.Tensor):
            return value
        return x + (torch.as_tensor(value, dtype=x.dtype, device=x.device) - x.detach())

    return wrapped
