"""The one piece of global state: the per-thread stack of entered strategies.
Also holds the per-thread Keras call context (the `training` flag an outer layer hands down)."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Optional

if TYPE_CHECKING:  # pragma: no cover
    from torchstrategy.distribute.strategy import Strategy


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.strategy_stack: list[Any] = []
        self.replica_stack: list[Any] = []
        self.training_stack: list[Optional[bool]] = []


_state = _ThreadState()
_default_strategy: Optional["Strategy"] = None


def _get_default_strategy() -> "Strategy":
    global _default_strategy
    if _default_strategy is None:
        from torchstrategy.distribute.default import DefaultStrategy

        _default_strategy = DefaultStrategy()
    return _default_strategy


def get_strategy() -> "Strategy":
    """The strategy whose `scope()` is innermost, else the default (one-replica) strategy.

    >>> import torchstrategy as tf
    >>> tf.distribute.get_strategy().num_replicas_in_sync
    1
    """
    if _state.strategy_stack:
        return _state.strategy_stack[-1]
    return _get_default_strategy()


def has_strategy() -> bool:
    """True inside some strategy's `scope()` (the default strategy does not count)."""
    return bool(_state.strategy_stack)


def in_cross_replica_context() -> bool:
    """True inside a `scope()` but outside `strategy.run` (as in TF)."""
    return has_strategy() and not _state.replica_stack


@contextmanager
def _enter_strategy(strategy: "Strategy") -> Iterator["Strategy"]:
    if _state.strategy_stack and _state.strategy_stack[-1] is not strategy:
        raise RuntimeError(
            f"Mixing different tf.distribute.Strategy objects: {strategy!r} entered inside "
            f"the scope of {_state.strategy_stack[-1]!r}. Leave one scope before entering another."
        )
    _state.strategy_stack.append(strategy)
    try:
        yield strategy
    finally:
        _state.strategy_stack.pop()


@contextmanager
def _enter_replica(replica_context: Any) -> Iterator[Any]:
    _state.replica_stack.append(replica_context)
    try:
        yield replica_context
    finally:
        _state.replica_stack.pop()


def _current_replica() -> Any:
    return _state.replica_stack[-1] if _state.replica_stack else None


@contextmanager
def _training_scope(training: Optional[bool]) -> Iterator[None]:
    _state.training_stack.append(training)
    try:
        yield
    finally:
        _state.training_stack.pop()


def _inherited_training() -> Optional[bool]:
    """The `training` value an enclosing layer call was given, if any."""
    for value in reversed(_state.training_stack):
        if value is not None:
            return value
    return None


# Keras-style default names ("dense", "dense_1", ...) count per prefix for the process.
_name_counts: dict[str, int] = {}
_name_lock = threading.Lock()


def _unique_name(prefix: str) -> str:
    with _name_lock:
        count = _name_counts.get(prefix, 0)
        _name_counts[prefix] = count + 1
    return prefix if count == 0 else f"{prefix}_{count}"


def _reset_names() -> None:
    """Keras's `backend.clear_session()` naming reset."""
    with _name_lock:
        _name_counts.clear()
