"""The only process-wide state: the per-thread strategy, replica and Keras call-context stacks, the dtype policy,
the distribution and the other process settings; every module reads and changes them through its functions."""
from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

if TYPE_CHECKING:  # pragma: no cover
    from torchstrategy.distribute.strategy import Strategy


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.strategy_stack: list[Any] = []
        self.replica_stack: list[Any] = []
        self.training_stack: list[Optional[bool]] = []
        self.thread_share: int = 1  # replica threads of this process that share its cores (see share_threads)
        self.name_scopes: list[str] = []  # tf.name_scope's stack of full scope names ("a", "a/b")


_state = _ThreadState()
_default_strategy: Optional["Strategy"] = None
_default_strategy_factory: Optional[Callable[[], "Strategy"]] = None


def set_default_strategy_factory(factory: Callable[[], "Strategy"]) -> None:
    """Registers what makes the default strategy on first use (the package's __init__ does, at import: this
    module sits below distribute/ and names no strategy class itself)."""
    global _default_strategy_factory
    _default_strategy_factory = factory


def _get_default_strategy() -> "Strategy":
    global _default_strategy
    if _default_strategy is None:
        if _default_strategy_factory is None:
            raise RuntimeError("No default strategy is registered: import torchstrategy (its __init__ registers it).")
        _default_strategy = _default_strategy_factory()
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
def enter_strategy(strategy: "Strategy") -> Iterator["Strategy"]:
    """Pushes `strategy` on this thread's strategy stack for the block (`strategy.scope()` uses it); another
    strategy entered inside a different one's scope is a RuntimeError."""
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


class enter_replica:  # noqa: N801 - a context manager used like the function it replaced (every replica step)
    """Makes `replica_context` this thread's current replica for the block (`strategy.run` uses it)."""

    __slots__ = ("_replica_context",)

    def __init__(self, replica_context: Any) -> None:
        self._replica_context = replica_context

    def __enter__(self) -> Any:
        _state.replica_stack.append(self._replica_context)
        return self._replica_context

    def __exit__(self, *exc: Any) -> None:
        _state.replica_stack.pop()


@contextmanager
def cross_replica_section() -> Iterator[None]:
    """Leaves the replica context for the block (ReplicaContext.merge_call's merge_fn runs cross-replica)."""
    saved = list(_state.replica_stack)
    _state.replica_stack.clear()
    try:
        yield
    finally:
        _state.replica_stack[:] = saved


_global_scope: list = []  # [(strategy, its entered scope)] set by tf.distribute.experimental_set_strategy


def set_global_strategy(strategy: Any) -> None:
    """Makes `strategy` current without a `with strategy.scope():` block (None: back to the default), as
    tf.distribute.experimental_set_strategy; refused inside a strategy's scope."""
    current = _global_scope[0][0] if _global_scope else None
    if _state.strategy_stack and not (current is not None and _state.strategy_stack == [current]):
        raise RuntimeError("tf.distribute.experimental_set_strategy must not be called inside a "
                           "tf.distribute.Strategy scope: leave the `with strategy.scope():` block first.")
    if _global_scope:
        _, scope = _global_scope.pop()
        scope.__exit__(None, None, None)
    if strategy is not None:
        scope = strategy.scope()
        scope.__enter__()
        _global_scope.append((strategy, scope))


def current_replica() -> Any:
    """The ReplicaContext of the replica running on this thread, or None (cross-replica context)."""
    return _state.replica_stack[-1] if _state.replica_stack else None


class training_scope:  # noqa: N801 - a context manager used like the function it replaced (every layer call)
    """Marks a Keras layer call on this thread for the block, with the `training` value it hands down."""

    __slots__ = ("_training",)

    def __init__(self, training: Optional[bool]) -> None:
        self._training = training

    def __enter__(self) -> None:
        _state.training_stack.append(self._training)

    def __exit__(self, *exc: Any) -> None:
        _state.training_stack.pop()


def inside_layer_call() -> bool:
    """True while some Keras layer's call is running on this thread (a model nested in another's call)."""
    return bool(_state.training_stack)


def inherited_training() -> Optional[bool]:
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


# keras.distribution.set_distribution (process-wide, as in Keras): the Distribution object and the strategy
# that runs it; get_strategy() returns that strategy outside any scope. Both None when none is set.
_distribution: Any = None
_distribution_strategy: Any = None


def current_distribution() -> Any:
    """The keras.distribution Distribution set for the process, or None."""
    return _distribution


def set_distribution(distribution: Any, strategy: Any) -> None:
    """Sets (or, with None, None, clears) the process's keras.distribution and the strategy that runs it."""
    global _distribution, _distribution_strategy
    _distribution, _distribution_strategy = distribution, strategy


# The strategy whose replicas span this process and others (a process group joined by a Mirrored, MultiWorker,
# FSDP or tensor-parallel strategy, or a keras.distribution mesh): a model of the default strategy trained here
# would be trained apart on every process. None in a lone process.
_job_strategy: Any = None


def job_strategy() -> Any:
    """The multi-process strategy this process has joined, or None."""
    return _job_strategy


def set_job_strategy(strategy: Any) -> None:
    """Records the multi-process strategy this process joined (the latest one wins)."""
    global _job_strategy
    _job_strategy = strategy


# Keras-style default names ("dense", "dense_1", ...) count per prefix for the process.
_name_counts: dict[str, int] = {}
_name_lock = threading.Lock()


def unique_name(prefix: str) -> str:
    """`prefix`, then `prefix_1`, `prefix_2`, ... on later calls (Keras default layer and metric names)."""
    with _name_lock:
        count = _name_counts.get(prefix, 0)
        _name_counts[prefix] = count + 1
    return prefix if count == 0 else f"{prefix}_{count}"


def name_uid(prefix: str) -> int:
    """Counts one more use of `prefix` and returns the count (Keras's `backend.get_uid`; shares the counter
    `unique_name` keeps, so after one 'dense' layer `name_uid("dense")` is 2)."""
    with _name_lock:
        _name_counts[prefix] = _name_counts.get(prefix, 0) + 1
        return _name_counts[prefix]


def reset_names() -> None:
    """Keras's `backend.clear_session()` naming reset."""
    with _name_lock:
        _name_counts.clear()


# The process's one running tf.profiler session (TF allows one at a time); torchstrategy.profiler owns it.
_profiler_lock = threading.Lock()
_profiler_session: Any = None


def profiler_lock() -> threading.Lock:
    """The lock held while the profiler session is started or stopped."""
    return _profiler_lock


def profiler_session() -> Any:
    """The running tf.profiler session, or None."""
    return _profiler_session


def set_profiler_session(session: Any) -> None:
    """Records the running tf.profiler session (None once it stopped)."""
    global _profiler_session
    _profiler_session = session


# ----- mixed precision -------------------------------------------------------------------------
# The global dtype policy is process-wide (as Keras's `set_global_policy`); None means "not set",
# i.e. floatx. The autocast dtype is per thread: inside a mixed-policy layer's call, that layer's
# float weights are read in this dtype (Keras's autocast scope); None outside any such call.
_global_dtype_policy: Any = None


class _AutocastState(threading.local):
    def __init__(self) -> None:
        self.dtype: Any = None


_autocast = _AutocastState()


def global_dtype_policy() -> Any:
    """The policy `set_global_policy` stored, or None if none was set."""
    return _global_dtype_policy


def set_global_dtype_policy(policy: Any) -> None:
    """Stores the process's global dtype policy (None: not set)."""
    global _global_dtype_policy
    _global_dtype_policy = policy


def autocast_dtype() -> Any:
    """The torch dtype float weights are read in on this thread right now, or None."""
    return _autocast.dtype


def set_autocast_dtype(dtype: Any) -> Any:
    """Sets this thread's autocast dtype (None: no casting) and returns the previous one."""
    previous, _autocast.dtype = _autocast.dtype, dtype
    return previous


# ----- shape probes (keras functional API) ----------------------------------------------------------
# Per thread: while a layer runs on stand-in tensors to learn its output shapes, the symbolic batch size.
class _ShapeProbeState(threading.local):
    def __init__(self) -> None:
        self.batches: list[Optional[int]] = []


_shape_probes = _ShapeProbeState()


@contextmanager
def shape_probe(static_batch: Optional[int]) -> Iterator[None]:
    """Marks calls on stand-in tensors (shape inference of a KerasTensor graph); `static_batch` is the symbolic
    inputs' batch size, None when it is unknown."""
    _shape_probes.batches.append(static_batch)
    try:
        yield
    finally:
        _shape_probes.batches.pop()


def current_shape_probe() -> tuple[bool, Optional[int]]:
    """(whether layers now run on stand-ins for shape inference, the symbolic batch size then)."""
    return (True, _shape_probes.batches[-1]) if _shape_probes.batches else (False, None)


def call_context_snapshot() -> tuple:
    """What a recomputation must see again: the `training` values handed down and the autocast dtype."""
    return tuple(_state.training_stack), autocast_dtype()


@contextmanager
def restored_call_context(snapshot: tuple) -> Iterator[None]:
    """Runs a recomputation (in backward, maybe on another thread) inside the forward's call context."""
    training_stack, autocast_dtype = snapshot
    saved_stack, _state.training_stack = _state.training_stack, list(training_stack)
    saved_dtype = set_autocast_dtype(autocast_dtype)
    try:
        yield
    finally:
        _state.training_stack = saved_stack
        set_autocast_dtype(saved_dtype)


# The code the last sys.exit asked for (torchstrategy.launch.exits notes it); None when there was none.
_exit_request: Any = None


def exit_request() -> Any:
    """The code the last sys.exit asked for, or None when there was none."""
    return _exit_request


def set_exit_request(code: Any) -> None:
    """Notes the code a sys.exit asked for."""
    global _exit_request
    _exit_request = code


# The generator tf.random.get_global_generator hands out (None until first asked for or set).
_global_rng_generator: Any = None


def global_rng_generator() -> Any:
    """The process's tf.random global Generator, or None when none was made or set yet."""
    return _global_rng_generator


def set_global_rng_generator(generator: Any) -> None:
    """Replaces the process's tf.random global Generator."""
    global _global_rng_generator
    _global_rng_generator = generator


# The class counts of tf.random.learned_unigram_candidate_sampler, one table per sampler configuration (TF keeps
# them inside the op's kernel, which eager mode reuses for equal attributes).
_learned_unigram_counts: dict = {}


def learned_unigram_counts(key: tuple, size: int) -> list:
    """A copy of the counts (every class starting at 1) kept for the sampler configuration `key`."""
    return list(_learned_unigram_counts.get(key, [1] * size))


def add_learned_unigram_counts(key: tuple, size: int, classes: list) -> None:
    """Counts each of `classes` once more in the table of the sampler configuration `key`."""
    counts = _learned_unigram_counts.setdefault(key, [1] * size)
    for value in classes:
        counts[value] += 1


# ----- parameter-server tasks ---------------------------------------------------------------------
# The object that answers this process's RPC calls in a parameter-server cluster (a ps task's variable
# store or a worker's closure runner); None outside such a task. Remote calls arrive as module-level
# functions, which find it here.
_task_service: Any = None


def set_task_service(service: Any) -> None:
    """Sets the object that answers this process's parameter-server RPC calls (None: not a task)."""
    global _task_service
    _task_service = service


def task_service() -> Any:
    """The object that answers this process's parameter-server RPC calls; a RuntimeError outside a task."""
    if _task_service is None:
        raise RuntimeError("This process is not a task of a parameter-server cluster (no tf.distribute.Server "
                           "or ParameterServerStrategy started here), yet it received a task call.")
    return _task_service


# ----- keyed optional settings (process-wide, as in TF) ----------------------------------------------------------
# 'logical_devices': physical device name -> the tuple of LogicalDeviceConfiguration it was split into;
# 'debug': tf.debugging's 'check_numerics', 'log_device_placement', 'traceback_filtering' and the torch function
# mode that carries the first two ('torch_function_mode'); 'tpu_systems': TPU system name ('local' here) -> True
# while tf.tpu.experimental.initialize_tpu_system has set it up (and no shutdown since).
_keyed: dict = {"logical_devices": {}, "debug": {}, "tpu_systems": {}}


def keyed_setting(table: str, key: str) -> Any:
    """One entry of a keyed setting table ('logical_devices', 'debug' or 'tpu_systems'), or None when unset."""
    return _keyed[table].get(key)


def set_keyed_setting(table: str, key: str, value: Any) -> None:
    """Sets (None: clears) one entry of a keyed setting table (see `keyed_setting`)."""
    if value is None:
        _keyed[table].pop(key, None)
    else:
        _keyed[table][key] = value


# ----- tf.config settings ------------------------------------------------------------------------
# tf.config.optimizer (jit, grappler options), tf.config.threading as set (0: never set, the runtime picks)
# and tf.config.experimental.set_memory_growth per GPU name; dtensor's default-mesh stack; tf.experimental.numpy's
# prefer_float32 (Python floats as float32, set by experimental_enable_numpy_behavior); tf.compat's
# forward-compatibility horizon while a forward_compatibility_horizon block is open.
tf_config: dict = {"jit": "", "optimizer_options": {}, "intra_op_threads": 0, "inter_op_threads": 0,
                   "memory_growth": {}, "dtensor_meshes": [], "dtensor_device_type": None,
                   "tnp_prefer_float32": False, "run_functions_eagerly": False, "soft_device_placement": True,
                   "device_policy": None, "synchronous_execution": True, "mlir_bridge": False,
                   "visible_devices": None, "forward_compatibility_horizon": None}


def config_setting(name: str) -> Any:
    """One process-wide tf.config setting: 'jit', 'optimizer_options', 'intra_op_threads', 'inter_op_threads',
    'memory_growth', 'tnp_prefer_float32', 'run_functions_eagerly', 'soft_device_placement', 'device_policy',
    'synchronous_execution', 'mlir_bridge', 'visible_devices' or 'forward_compatibility_horizon' (a date number
    set by tf.compat.forward_compatibility_horizon; None: TF's built-in horizon)."""
    return tf_config[name]


def set_config_setting(name: str, value: Any) -> None:
    """Changes one process-wide tf.config setting (see `config_setting`)."""
    tf_config[name] = value


# ----- keras.config ------------------------------------------------------------------------------
# Process-wide Keras settings (keras.config / keras.backend set_floatx, set_epsilon, set_image_data_format; the
# flash-attention and traceback-filtering flags; the debugging caps on epochs and steps per epoch).
keras_config: dict = {"floatx": "float32", "epsilon": 1e-7, "image_data_format": "channels_last",
                      "flash_attention": None, "traceback_filtering": True, "max_epochs": None,
                      "max_steps_per_epoch": None}


def keras_setting(name: str) -> Any:
    """One process-wide Keras setting (a key of `keras_config`: 'floatx', 'epsilon', 'max_epochs', ...)."""
    return keras_config[name]


def set_keras_setting(name: str, value: Any) -> None:
    """Changes one process-wide Keras setting (a key of `keras_config`)."""
    keras_config[name] = value


# ----- tf.summary ---------------------------------------------------------------------------------
class _SummaryState(threading.local):
    def __init__(self) -> None:
        self.writer: Any = None  # the default tf.summary writer of this thread (None: summaries are not written)
        self.step: Any = None  # tf.summary.experimental's default step (an int, tensor or Variable)
        self.condition: Any = True  # tf.summary.record_if's condition (a bool, tensor or callable)
        self.scopes: list[str] = []  # tf.summary.experimental.summary_scope names, outermost first
        self.trace: Any = None  # tf.summary.trace_on's settings while a trace is on


_summary = _SummaryState()


def summary_state() -> _SummaryState:
    """This thread's tf.summary state: `writer`, `step`, `condition` and `scopes` (read and set by tf.summary)."""
    return _summary


# ----- keras.saving object registration --------------------------------------------------------------
# Process-wide, as in Keras: registered name ('Package>Name') -> object, object -> registered name.
custom_objects: dict = {}
custom_names: dict = {}


class _CustomObjectScopes(threading.local):
    def __init__(self) -> None:
        self.objects: dict = {}  # what the custom_object_scope()s entered on this thread make visible


_custom_object_scopes = _CustomObjectScopes()


def scoped_custom_objects() -> dict:
    """The objects made visible by the `custom_object_scope`s entered on this thread (name -> object)."""
    return _custom_object_scopes.objects


def set_scoped_custom_objects(objects: dict) -> None:
    """Replaces this thread's scoped custom objects (a scope sets them on entry and restores them on exit)."""
    _custom_object_scopes.objects = objects


# ----- tf.name_scope (per thread, as TF's eager context) --------------------------------------------------------
def current_name_scope() -> str:
    """The full name of the innermost tf.name_scope on this thread ('' outside any)."""
    return _state.name_scopes[-1] if _state.name_scopes else ""


@contextmanager
def enter_name_scope(full_name: str) -> Iterator[str]:
    """Makes `full_name` ('outer/inner') this thread's current name scope for the block."""
    _state.name_scopes.append(full_name)
    try:
        yield full_name
    finally:
        _state.name_scopes.pop()


# ----- keras.StatelessScope / SymbolicScope / RematScope (per thread, as Keras's global state) ------------------
class _KerasScopes(threading.local):
    def __init__(self) -> None:
        # a RematScope's entry is its mode (None: remat disabled inside)
        self.stacks: dict = {"stateless": [], "symbolic": [], "remat": []}


_keras_scopes = _KerasScopes()


def push_keras_scope(kind: str, scope: Any) -> None:
    """Enters `scope` ('stateless', 'symbolic' or 'remat') on this thread; `pop_keras_scope` leaves it."""
    _keras_scopes.stacks[kind].append(scope)


def pop_keras_scope(kind: str) -> None:
    _keras_scopes.stacks[kind].pop()


def keras_scope(kind: str) -> Any:
    """The innermost entered scope of `kind` on this thread, or None outside any."""
    stack = _keras_scopes.stacks[kind]
    return stack[-1] if stack else None


# ----- Keras layers holding losses (add_loss values, weight regularizers): walks for them skip when none does -----
_loss_holders: "weakref.WeakSet[Any]" = weakref.WeakSet()


def note_loss_holder(layer: Any) -> None:
    """Records that `layer` holds losses (`add_loss`, a regularized weight, or a copy of such a layer)."""
    _loss_holders.add(layer)


def any_loss_holder() -> bool:
    """Whether a living layer holds losses (False: `Layer.losses` is empty for every model; nothing to clear)."""
    return bool(_loss_holders)


# ----- keras.distribution.initialize: the job it declared (process-wide; the cluster resolvers read it) ----------
_declared_resolver: list = [None]


def declared_cluster_resolver() -> Any:
    """The cluster resolver `keras.distribution.initialize` declared for this process, or None."""
    return _declared_resolver[0]


def declare_cluster_resolver(resolver: Any) -> None:
    _declared_resolver[0] = resolver
