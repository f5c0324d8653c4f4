"""The one piece of global state: the per-thread stack of entered strategies.
Also holds the per-thread Keras call context (the `training` flag an outer layer hands down) and thread budget."""
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
        self.thread_share: int = 1  # replica threads of this process that share its cores (see share_threads)


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
    if _distribution_strategy is not None:
        return _distribution_strategy
    return _get_default_strategy()


def has_strategy() -> bool:
    """True inside some strategy's `scope()`, or while a keras.distribution is set (the default strategy
    does not count)."""
    return bool(_state.strategy_stack) or _distribution_strategy is not None


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


def _inside_layer_call() -> bool:
    """True while some Keras layer's call is running on this thread (a model nested in another's call)."""
    return bool(_state.training_stack)


def _inherited_training() -> Optional[bool]:
    """The `training` value an enclosing layer call was given, if any."""
    for value in reversed(_state.training_stack):
        if value is not None:
            return value
    return None


@contextmanager
def share_threads(parts: int) -> Iterator[None]:
    """On this thread, a kernel asks for `1 / parts` of the process's intra-op threads (see `thread_budget`).

    ReplicaThreads enters this on each replica thread, so that replicas running kernels at the same time do
    not each ask OpenMP for every core. Example: `with share_threads(2): thread_budget()` is half of
    `torch.get_num_threads()`, at least 1.
    """
    if parts < 1:
        raise ValueError(f"share_threads needs a positive number of parts; got {parts}.")
    saved, _state.thread_share = _state.thread_share, int(parts)
    try:
        yield
    finally:
        _state.thread_share = saved


def thread_budget() -> int:
    """How many OpenMP threads a hand-written kernel called on this thread may use: torch's intra-op thread
    count, divided among the replica threads that share this process (at least 1)."""
    import torch

    return max(1, torch.get_num_threads() // _state.thread_share)


def is_chief_process() -> bool:
    """Whether this process is rank 0 of its job: the entered strategy's `is_chief`, else the torch process
    group's rank, else the rank a launcher put in the environment (RANK); True for a lone process."""
    if has_strategy():
        return bool(get_strategy().is_chief)
    import torch.distributed as distributed

    if distributed.is_available() and distributed.is_initialized():
        return distributed.get_rank() == 0
    from torchstrategy.cluster import environment

    return environment.launched_rank() in (None, 0)


# keras.distribution.set_distribution (process-wide, as in Keras): the Distribution object and the strategy
# that runs it; get_strategy() returns that strategy outside any scope. Both None when none is set.
_distribution: Any = None
_distribution_strategy: Any = None


def _set_distribution(distribution: Any, strategy: Any) -> None:
    global _distribution, _distribution_strategy
    _distribution, _distribution_strategy = distribution, strategy


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


# The process's one running tf.profiler session (TF allows one at a time); torchstrategy.profiler owns it.
_profiler_lock = threading.Lock()
_profiler_session: Any = None


# ----- mixed precision -------------------------------------------------------------------------
# The global dtype policy is process-wide (as Keras's `set_global_policy`); None means "not set",
# i.e. floatx. The autocast dtype is per thread: inside a mixed-policy layer's call, that layer's
# float weights are read in this dtype (Keras's autocast scope); None outside any such call.
_global_dtype_policy: Any = None


class _AutocastState(threading.local):
    def __init__(self) -> None:
        self.dtype: Any = None


_autocast = _AutocastState()


def _get_global_dtype_policy() -> Any:
    """The policy `set_global_policy` stored, or None if none was set."""
    return _global_dtype_policy


def _set_global_dtype_policy(policy: Any) -> None:
    global _global_dtype_policy
    _global_dtype_policy = policy


def _autocast_dtype() -> Any:
    """The torch dtype float weights are read in on this thread right now, or None."""
    return _autocast.dtype


def _set_autocast_dtype(dtype: Any) -> Any:
    """Sets this thread's autocast dtype (None: no casting) and returns the previous one."""
    previous, _autocast.dtype = _autocast.dtype, dtype
    return previous


# ----- rematerialization (keras.RematScope) --------------------------------------------------------
# Per thread, as the strategy stack: the modes of the entered RematScopes (None entries disable remat).
class _RematState(threading.local):
    def __init__(self) -> None:
        self.mode_stack: list[Any] = []


_remat = _RematState()


def _push_remat_mode(mode: Any) -> None:
    _remat.mode_stack.append(mode)


def _pop_remat_mode() -> None:
    _remat.mode_stack.pop()


def _current_remat_mode() -> Any:
    """The innermost RematScope's mode (what a layer created now records), or None outside any."""
    return _remat.mode_stack[-1] if _remat.mode_stack else None


def _call_context_snapshot() -> tuple:
    """What a recomputation must see again: the `training` values handed down and the autocast dtype."""
    return tuple(_state.training_stack), _autocast_dtype()


@contextmanager
def _restored_call_context(snapshot: tuple) -> Iterator[None]:
    """Runs a recomputation (in backward, maybe on another thread) inside the forward's call context."""
    training_stack, autocast_dtype = snapshot
    saved_stack, _state.training_stack = _state.training_stack, list(training_stack)
    saved_dtype = _set_autocast_dtype(autocast_dtype)
    try:
        yield
    finally:
        _state.training_stack = saved_stack
        _set_autocast_dtype(saved_dtype)


# The code the last sys.exit asked for (torchstrategy.launch.exits notes it); None when there was none.
_exit_request: Any = None

# Names of the TPU systems tf.tpu.experimental.initialize_tpu_system set up in this process ('local' here).
_initialized_tpu_systems: set[str] = set()


# ----- parameter-server tasks ---------------------------------------------------------------------
# The object that answers this process's RPC calls in a parameter-server cluster (a ps task's variable
# store or a worker's closure runner); None outside such a task. Remote calls arrive as module-level
# functions, which find it here.
_task_service: Any = None


def _set_task_service(service: Any) -> None:
    global _task_service
    _task_service = service


def _get_task_service() -> Any:
    if _task_service is None:
        raise RuntimeError("This process is not a task of a parameter-server cluster (no tf.distribute.Server "
                           "or ParameterServerStrategy started here), yet it received a task call.")
    return _task_service


# ----- tf.config logical devices -----------------------------------------------------------------
# Physical device name -> the tuple of LogicalDeviceConfiguration it was split into (process-wide, as in TF).
_logical_device_configs: dict = {}


# ----- keras.config ------------------------------------------------------------------------------
# Process-wide Keras settings (keras.config / keras.backend set_floatx, set_epsilon, set_image_data_format).
keras_config: dict = {"floatx": "float32", "epsilon": 1e-7, "image_data_format": "channels_last"}
