"""A pipeline's between-iteration state (shuffle seeds and pass counters, cache fills) as plain
data: capture, structure check and restore (Dataset.get_state/set_state); IndexPlan and skip helpers."""
from __future__ import annotations

import collections
import itertools
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from torchstrategy.data.dataset import Dataset

STATE_FORMAT = "torchstrategy.data.Dataset.state/1"


# ---------------------------------------------------------------- index plans and skipping


class IndexPlan:
    """How a dataset's elements come from a random-access source: `source` gives elements/batches by
    index and `indices(skip=0)` starts one pass of the index stream. Shuffle/take/skip/shard/repeat transform
    the index stream, so `batch` gathers rows with one fancy index instead of stacking elements.

    `indices(skip)` with skip > 0 returns the stream with its first `skip` indices already consumed (with
    the same effect on shuffle passes as pulling them), skipping whole passes without generating them."""

    __slots__ = ("source", "indices")

    def __init__(self, source: Any, indices: Callable[..., Iterator[int]]):
        self.source = source
        self.indices = indices


class IndexRun:
    """An index stream held whole: a `range` or an int64 array, made on first use by `make()` (so the input
    is read, and its pass effects happen, when the first index is pulled, as with a generator). Iterating it
    gives Python ints; `take(count)` gives the next run of indices as one slice (a range or an array view),
    which is how `batch` gathers without per-row Python."""

    __slots__ = ("_make", "_order", "_position")

    def __init__(self, make: Callable[[], Any]):
        self._make: Optional[Callable[[], Any]] = make
        self._order: Any = None
        self._position = 0

    def _held(self) -> Any:
        if self._make is not None:
            self._order, self._make = self._make(), None
        return self._order

    def __iter__(self) -> "IndexRun":
        return self

    def __next__(self) -> int:
        order = self._held()
        if self._position >= len(order):
            raise StopIteration
        self._position += 1
        return int(order[self._position - 1])

    def take(self, count: int) -> Any:
        """The next `count` indices (fewer at the end, none when done) as a range or an int64 array slice."""
        order = self._held()
        start = self._position
        self._position = min(start + count, len(order))
        return order[start:self._position]

    def advance(self, count: int) -> "IndexRun":
        """This stream after dropping its next `count` indices (fewer if it ends first)."""
        self.take(count)
        return self

    def close(self) -> None:
        """Drops the indices (a stream closed before its first pull never reads its input)."""
        self._make, self._order, self._position = None, (), 0


def advanced(iterator: Iterator, count: int) -> Iterator:
    """`iterator` after pulling (and dropping) `count` items now; fewer if it ends first."""
    if isinstance(iterator, IndexRun):
        return iterator.advance(count)
    collections.deque(itertools.islice(iterator, count), maxlen=0)
    return iterator


def finish_pass(iterator: Iterator, what: str) -> None:
    """Runs a pass that should have nothing left to its end, so its end-of-pass effects happen."""
    extra = sum(1 for _ in iterator)
    if extra:
        raise RuntimeError(f"Dataset._iterate_from: {what} produced {extra} more element(s) than its cardinality "
                           f"says, so elements cannot be skipped by count. Report this as a bug.")


def nothing() -> Iterator:
    """An empty generator (has close(), like every other element iterator)."""
    return
    yield  # noqa: unreachable - makes this a generator


def sliced(source: Iterator, start: int = 0, stop: Optional[int] = None, step: int = 1) -> Iterator:
    """`islice(source, start, stop, step)` as a generator that closes `source` when it stops."""
    try:
        yield from itertools.islice(source, start, stop, step)
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


# ---------------------------------------------------------------- capture / restore


def _graph(dataset: "Dataset") -> Tuple[List["Dataset"], Dict[int, int]]:
    """Every op of the pipeline once, depth-first from the output (an input used twice appears once)."""
    order: List["Dataset"] = []
    position: Dict[int, int] = {}
    stack = [dataset]
    while stack:
        node = stack.pop()
        if id(node) in position:
            continue
        position[id(node)] = len(order)
        order.append(node)
        stack.extend(reversed(node._inputs))
    return order, position


def _entry(node: "Dataset", position: Dict[int, int]) -> dict:
    entry: dict = {"op": type(node).__name__, "inputs": [position[id(child)] for child in node._inputs]}
    config = node._state_config()
    if config:
        entry["config"] = config
    return entry


def structure(dataset: "Dataset") -> List[dict]:
    """The pipeline's ops (type, inputs, order-fixing arguments, cardinality, what a source holds) depth-first from
    the output, without their state."""
    nodes, position = _graph(dataset)
    return [dict(_entry(node, position), cardinality=node._cardinality(), content=node._content_key()) for node in nodes]


def capture(dataset: "Dataset") -> dict:
    """The state of every op of `dataset`'s pipeline, with the pipeline's structure to check against."""
    nodes, position = _graph(dataset)
    ops = []
    for node in nodes:
        entry = _entry(node, position)
        state = node._op_state()
        if state is not None:
            entry["state"] = state
        ops.append(entry)
    return {"format": STATE_FORMAT, "ops": ops}


def _describe(entry: dict) -> str:
    config = entry.get("config") or {}
    arguments = ", ".join(f"{key}={value!r}" for key, value in config.items())
    inputs = entry.get("inputs", [])
    return f"{entry.get('op')}({arguments}) reading op(s) {inputs}" if inputs else f"{entry.get('op')}({arguments})"


def _outline(ops: List[dict]) -> str:
    names = [str(entry.get("op")) for entry in ops[:12]]
    return " <- ".join(names) + (" <- ..." if len(ops) > 12 else "")


def prepare(dataset: "Dataset", state: Any, where: str = "Dataset.set_state") -> Callable[[], None]:
    """Checks `state` against `dataset`'s pipeline and returns the function that applies it.

    Nothing changes until the returned function runs, so a bad state leaves the pipeline as it was."""
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT or not isinstance(state.get("ops"), list):
        raise ValueError(f"{where}: expected the dict returned by Dataset.get_state() (format {STATE_FORMAT!r}), "
                         f"got {type(state).__name__}{' without that format' if isinstance(state, dict) else ''}. "
                         f"Pass a state saved from get_state() of the same pipeline.")
    saved: List[dict] = state["ops"]
    nodes, position = _graph(dataset)
    here = [_entry(node, position) for node in nodes]
    for index, (mine, theirs) in enumerate(itertools.zip_longest(here, saved)):
        theirs_key = None if not isinstance(theirs, dict) else {k: theirs.get(k) for k in ("op", "inputs", "config")}
        mine_key = None if mine is None else {"op": mine["op"], "inputs": mine["inputs"], "config": mine.get("config")}
        if mine_key != theirs_key:
            this = "nothing" if mine is None else _describe(mine)
            that = "nothing" if not isinstance(theirs, dict) else _describe(theirs)
            raise ValueError(
                f"{where}: the state comes from a different pipeline. Op #{index} (depth-first from the output) is "
                f"{this} in this dataset but {that} in the state (this pipeline: {_outline(here)}; the state's: "
                f"{_outline([e for e in saved if isinstance(e, dict)])}). Build the dataset with the same ops, "
                f"order and arguments as the one whose get_state() was saved.")
    appliers = [node._op_state_loader(entry.get("state"), where) for node, entry in zip(nodes, saved)]

    def apply() -> None:
        for applier in appliers:
            if applier is not None:
                applier()
        # Caches that were filled refill now from their fill's input state, once every op holds its
        # restored state; deepest first, since an outer cache's fill replays the inner ones.
        for node in reversed(nodes):
            if getattr(node, "_refill_state", None) is not None:
                node._refill()

    return apply


def restore(dataset: "Dataset", state: Any) -> None:
    """Checks `state` against the pipeline and applies it (see `prepare`)."""
    prepare(dataset, state)()


def check_int(value: Any, where: str, name: str) -> int:
    """`value` as an int >= 0 (bools refused), else a clear error naming `where`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: {name} must be an integer >= 0, got {value!r}. The state is damaged or was "
                         f"not made by get_state()/state_dict().")
    if value < 0:
        raise ValueError(f"{where}: {name} must be >= 0, got {value}.")
    return value
