"""`strategy.extended` (tf.distribute.StrategyExtended): the parts a strategy file wires (StrategyParts) and
the lower-level calls TF puts there (reduce_to, batch_reduce_to, update, device lists)."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Optional, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from torchstrategy.distribute.strategy import Strategy


@dataclass(frozen=True)
class StrategyParts:
    """What one strategy is made of (see distribute/parts): the device of this process's replicas, the parts
    (None: the one-replica default), the cluster resolver, and facts the strategy's users read."""

    device: Any
    collectives: Any = None
    replication: Any = None
    precision: Any = None
    checkpoint_io: Any = None
    placement: Any = None
    stepping: Any = None
    launcher: Any = None
    cluster_resolver: Any = None
    #: True for strategies whose variables must be created inside `scope()` (mirrored, sharded)
    needs_model_in_scope: bool = False
    #: `extended.worker_devices` / `parameter_devices`; None: the strategy's device
    worker_devices: Optional[tuple] = None
    parameter_devices: Optional[tuple] = None


class StrategyExtended:
    """`strategy.extended`: TF's lower-level view of a strategy. `container_strategy` is the Strategy it
    belongs to; a strategy file makes it with `StrategyExtended.wired(strategy, StrategyParts(...))`."""

    def __init__(self, container_strategy: "Strategy") -> None:
        self._container_strategy_ref = container_strategy
        self._parts: Optional[StrategyParts] = None

    @classmethod
    def wired(cls, container_strategy: "Strategy", parts: StrategyParts) -> "StrategyExtended":
        """The extended of `container_strategy` made of `parts` (what Strategy.__init__ takes)."""
        if not isinstance(parts, StrategyParts):
            raise TypeError(f"StrategyExtended.wired takes a StrategyParts; got {type(parts).__name__}.")
        extended = cls(container_strategy)
        extended._parts = parts
        return extended

    @property
    def parts(self) -> StrategyParts:
        """The parts the strategy was built from."""
        if self._parts is None:
            raise ValueError("This StrategyExtended was made without parts: a strategy is built from "
                             "StrategyExtended.wired(strategy, StrategyParts(device, ...)).")
        return self._parts

    def _container_strategy(self) -> "Strategy":
        return self._container_strategy_ref

    # ----- torchstrategy's switches (not TF's signature: the strategies' constructors keep TF's) --------------
    @property
    def allow_uneven_split(self) -> bool:
        """torchstrategy extension, False by default: whether a global batch that does not divide by
        `num_replicas_in_sync` is split anyway (some replicas get one row fewer, as TF splits it) instead of
        refused naming the nearest valid sizes. Set it before `fit` or distributing a dataset."""
        return self._container_strategy()._placement.allow_uneven_split

    @allow_uneven_split.setter
    def allow_uneven_split(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"strategy.extended.allow_uneven_split takes True or False; got {value!r}.")
        self._container_strategy()._placement.allow_uneven_split = value

    # ----- facts ---------------------------------------------------------------------------------------
    @property
    def should_checkpoint(self) -> bool:
        """Whether this process writes checkpoints (the chief)."""
        return self._container_strategy().is_chief

    @property
    def should_save_summary(self) -> bool:
        """Whether this process writes summaries (the chief)."""
        return self._container_strategy().is_chief

    @property
    def should_init(self) -> bool:
        """Whether this process initialises variables (every process does: their values are broadcast)."""
        return True

    @property
    def worker_devices(self) -> tuple:
        """The devices the replicas compute on, as device strings."""
        return self.parts.worker_devices or (str(self._container_strategy().device),)

    @property
    def parameter_devices(self) -> tuple:
        """The devices holding the variables, as device strings."""
        return self.parts.parameter_devices or (str(self._container_strategy().device),)

    @property
    def experimental_require_static_shapes(self) -> bool:
        """True where a step is compiled for fixed shapes (XLA devices: TPUStrategy, a '/tpu:0' device)."""
        return self._container_strategy().device.type == "xla"

    # ----- calls ---------------------------------------------------------------------------------------
    def colocate_vars_with(self, colocate_with_variable: Any) -> ContextManager[None]:
        """Accepted for TF scripts: variables made in the block are placed by the strategy, as all are."""
        return contextlib.nullcontext()

    def reduce_to(self, reduce_op: Any, value: Any, destinations: Any, options: Any = None) -> Any:
        """`value` (a per-replica value, or one value every replica holds) combined over all replicas by
        `reduce_op`, on this strategy's device (`destinations` and `options` are placement/performance hints
        the strategy decides for itself). Called in cross-replica context."""
        from torchstrategy import _context

        if _context.current_replica() is not None:
            raise RuntimeError("extended.reduce_to is called in cross-replica context (outside strategy.run); "
                               "inside it use tf.distribute.get_replica_context().all_reduce(reduce_op, value).")
        return self._container_strategy().reduce(reduce_op, value, axis=None)

    def batch_reduce_to(self, reduce_op: Any, value_destination_pairs: Sequence[Any], options: Any = None) -> list:
        """`reduce_to` of each (value, destinations) pair, in order."""
        pairs = list(value_destination_pairs)
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"batch_reduce_to takes (value, destinations) pairs; got {pair!r}.")
        return [self.reduce_to(reduce_op, value, destinations, options) for value, destinations in pairs]

    def update(self, var: Any, fn: Callable, args: Sequence[Any] = (), kwargs: Optional[dict] = None,
               group: bool = True) -> Any:
        """Runs `fn(var, *args, **kwargs)` once in this process (the variable's one copy here) and returns
        its result; inside `strategy.run` the replicas of this process wait for that one call."""
        kwargs = kwargs or {}
        strategy = self._container_strategy()
        return strategy.run_once(lambda: fn(var, *args, **kwargs))

    def value_container(self, value: Any) -> Any:
        """The container of `value`: here every value is its own container (variables are not split into
        per-device components)."""
        return value


__all__ = ["StrategyParts", "StrategyExtended"]
