"""`tf.recompute_grad`: gradient checkpointing on torch.utils.checkpoint (non-reentrant), with the
forward's Keras call context and every explicitly passed torch.Generator replayed on recomputation."""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.checkpoint import checkpoint

from torchstrategy import _context


def recompute_grad(f: Callable[..., Any]) -> Callable[..., Any]:
    """Wraps `f` so that its intermediate values are not kept for backward but recomputed there.

    `f` may be a function or a Keras layer or model; it takes tensors (and anything else) as positional
    or keyword arguments. Gradients equal those of `f` itself: the recomputation sees the same global
    RNG state, the same `training` value, and the same draws from any `torch.Generator` a layer owns
    (a seeded `Dropout` recomputes its mask). Outside gradient recording `f` simply runs. As in TF, the
    wrapper's `__wrapped__` is `f` (for a model's `variables`).

    >>> import torchstrategy as tf
    >>> w = torch.ones(3, requires_grad=True)
    >>> block = tf.recompute_grad(lambda x: torch.tanh(x * w).sum())
    >>> block(torch.arange(3.0)).backward()   # tanh runs again here, in backward
    >>> w.grad.shape
    torch.Size([3])
    """
    if not callable(f):
        raise TypeError(
            f"recompute_grad expects a callable (a function, or a Keras layer or model), but got "
            f"{type(f).__name__}: {f!r}. Pass the function itself, e.g. tf.recompute_grad(block), "
            "not the result of calling it.")

    def recomputed(*args: Any, **kwargs: Any) -> Any:
        return run_recomputed(f, args, kwargs)

    functools.update_wrapper(recomputed, f, updated=())  # a module's __dict__ must not be copied
    recomputed.__wrapped__ = f
    return recomputed


def run_recomputed(f: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """`f(*args, **kwargs)` as one checkpointed region (plainly when no gradient is being recorded)."""
    if not torch.is_grad_enabled():
        return f(*args, **kwargs)
    leaves, structure = tree_flatten((args, kwargs))
    tensor_slots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

    def run(*tensors: torch.Tensor) -> Any:
        filled = list(leaves)
        for slot, tensor in zip(tensor_slots, tensors):
            filled[slot] = tensor
        call_args, call_kwargs = tree_unflatten(filled, structure)
        return f(*call_args, **call_kwargs)

    # The tensors go in positionally so checkpoint sees their devices (it saves those devices' RNG states).
    return checkpoint(run, *(leaves[i] for i in tensor_slots), use_reentrant=False,
                      preserve_rng_state=True, context_fn=_replay_contexts)


def _replay_contexts() -> tuple["_RecordGenerators", "_ReplayForward"]:
    first_states: dict[int, tuple[torch.Generator, torch.Tensor]] = {}
    return _RecordGenerators(first_states), _ReplayForward(first_states, _context.call_context_snapshot())


def _generators_in(args: tuple, kwargs: dict) -> list[torch.Generator]:
    values = list(args) + list(kwargs.values())
    return [value for value in values if isinstance(value, torch.Generator)]


class _RecordGenerators(TorchDispatchMode):
    """Forward: notes each generator's state just before the region first draws from it."""

    def __init__(self, first_states: dict) -> None:
        super().__init__()
        self._first_states = first_states

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Optional[dict] = None) -> Any:
        kwargs = kwargs or {}
        for generator in _generators_in(args, kwargs):
            if id(generator) not in self._first_states:
                self._first_states[id(generator)] = (generator, generator.get_state())
        return func(*args, **kwargs)


class _ReplayForward(TorchDispatchMode):
    """Recomputation: rewinds each generator to its forward state at first use, restores the forward's
    call context, and on exit puts every generator back where it was, so its stream goes on unchanged."""

    def __init__(self, first_states: dict, call_context: tuple) -> None:
        super().__init__()
        self._first_states = first_states
        self._call_context = call_context
        self._resume_states: dict[int, tuple[torch.Generator, torch.Tensor]] = {}
        self._context_manager: Any = None

    def __enter__(self) -> "_ReplayForward":
        self._resume_states = {}  # entered once per recomputation (twice with retain_graph)
        self._context_manager = _context.restored_call_context(self._call_context)
        self._context_manager.__enter__()
        return super().__enter__()

    def __exit__(self, *exc_info: Any) -> Any:
        try:
            return super().__exit__(*exc_info)
        finally:
            for generator, state in self._resume_states.values():
                generator.set_state(state)
            self._resume_states = {}
            self._context_manager.__exit__(None, None, None)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Optional[dict] = None) -> Any:
        kwargs = kwargs or {}
        for generator in _generators_in(args, kwargs):
            key = id(generator)
            if key in self._first_states and key not in self._resume_states:
                self._resume_states[key] = (generator, generator.get_state())
                generator.set_state(self._first_states[key][1])
        return func(*args, **kwargs)
