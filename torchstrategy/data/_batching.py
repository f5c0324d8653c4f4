"""Buffering Dataset ops: shuffle (tf's buffer algorithm, on indices when it can), batch (one
gather per batch on the fast path), padded_batch, unbatch and cache (memory or file)."""
from __future__ import annotations

import itertools
import os
import random
import threading
from typing import Any, Iterator, Optional

import numpy as np
import torch

from torchstrategy.data import _state, _structure
from torchstrategy.data._ops import UnaryDataset, closing
from torchstrategy.data.dataset import UNKNOWN_CARDINALITY, Dataset, IndexPlan, batch_cardinality


def shuffle_stream(items: Iterator, buffer_size: int, rng: random.Random) -> Iterator:
    """tf.data's shuffle: fill a buffer of `buffer_size`, then repeatedly emit a uniformly chosen slot
    and refill that slot with the next input; at the end, emit what is left in random order.
    So output position p can only hold input positions <= p + buffer_size - 1."""
    iterator = iter(items)
    draw = rng.random
    try:
        buffer = list(itertools.islice(iterator, buffer_size))
        for item in iterator:
            slot = int(draw() * buffer_size)
            yield buffer[slot]
            buffer[slot] = item
        while buffer:  # what is left, a run at a time: the same draws as one element at a time, in a tight loop
            yield from _drained(buffer, draw, _DRAIN_RUN)
    finally:
        closing(iterator)


#: how many elements the end of a shuffle draws at once (a bound on the draws a consumer that stops early wastes)
_DRAIN_RUN = 256


def _drained(buffer: list, draw: Any, count: int) -> list:
    """The next `count` (at most) elements of `buffer`'s drain, taken out of it: each a uniformly drawn slot among
    those left, whose place the last element takes."""
    out = []
    for left in range(len(buffer), max(len(buffer) - count, 0), -1):
        slot = int(draw() * left)
        out.append(buffer[slot])
        buffer[slot] = buffer[left - 1]
    del buffer[len(buffer) - len(out):]
    return out


def _whole_pass(items: Iterator, buffer_size: int, rng: random.Random) -> np.ndarray:
    """`shuffle_stream(items, buffer_size, rng)` as an int64 array, for int items that fit in the buffer: the
    buffer then holds the whole pass and only the drain is left, whose draws are made in bulk."""
    try:
        if isinstance(items, _state.IndexRun):  # the input's indices in one piece, not one pull per index
            buffer, more = items.take(buffer_size), items.take(1)
            buffer, more = (list(run) if isinstance(run, range) else run.tolist() for run in (buffer, more))
        else:
            buffer = list(itertools.islice(items, buffer_size))
            more = list(itertools.islice(items, 1))
        if more:  # longer than its cardinality said: the streaming algorithm over the same input
            return np.fromiter(shuffle_stream(itertools.chain(buffer, more, items), buffer_size, rng), np.int64)
    finally:
        closing(items)
    count = len(buffer)
    # slot k = int(u_k * left_k), as _drained computes it from the same doubles
    slots = (_random_doubles(rng, count) * np.arange(count, 0, -1, dtype=np.float64)).astype(np.int64).tolist()
    for slot, left in zip(slots, range(count - 1, -1, -1)):  # swap-remove: the drawn one goes after what is left
        buffer[slot], buffer[left] = buffer[left], buffer[slot]
    buffer.reverse()
    return np.fromiter(buffer, np.int64, count)


#: a per-thread NumPy generator that _random_doubles loads with a Random's state: scratch, it holds nothing between
#: calls (shuffles may run in a prefetch thread)
_scratch = threading.local()

#: from how many doubles _random_doubles copies the generator's state to NumPy rather than drawing one at a time
_BULK_DRAWS = 2048


def _random_doubles(rng: random.Random, count: int) -> np.ndarray:
    """The next `count` values of `rng.random()` in one array, leaving `rng` as after drawing them one by one.
    Both Python's Random and NumPy's legacy RandomState are MT19937 with the same 53-bit doubles, so the
    state copied across gives the same values. Copying the state costs about 0.15 ms, what 2,000 single draws
    cost, so fewer are drawn one by one."""
    if count < _BULK_DRAWS:
        draw = rng.random
        return np.array([draw() for _ in range(count)], dtype=np.float64)
    version, internal, gauss = rng.getstate()
    generator = getattr(_scratch, "generator", None)
    if generator is None:  # made once per thread (about 0.1 ms); its state is replaced before every use
        generator = _scratch.generator = np.random.RandomState(0)
    generator.set_state(("MT19937", np.fromiter(internal, np.uint32, len(internal) - 1), internal[-1]))
    doubles = generator.random_sample(count)
    key, position = generator.get_state()[1:3]
    rng.setstate((version, tuple(key.tolist()) + (int(position),), gauss))
    return doubles


class ShuffleDataset(UnaryDataset):
    def __init__(self, input_dataset: Dataset, buffer_size: int, seed: Optional[int], reshuffle: bool):
        super().__init__(input_dataset)
        self._buffer_size, self._reshuffle = buffer_size, reshuffle
        # No seed: draw one from torch's global RNG now, so torch.manual_seed (tf.random.set_seed)
        # before building the pipeline makes the order reproducible, as a global seed does in tf.
        self._seed = int(seed) if seed is not None else int(torch.randint(0, 2**62, (1,)).item())
        self._passes = 0
        self._lock = threading.Lock()

    def _take_pass(self) -> int:
        """The pass number for a new pass (counted only when reshuffling, and never by a peek)."""
        with self._lock:
            current = self._passes if self._reshuffle else 0
            if self._reshuffle and not _structure.is_peeking():
                self._passes += 1
        return current

    def _rng(self) -> random.Random:
        """A generator for one pass: pass k of a reshuffling dataset uses its own derived seed."""
        return random.Random(f"torchstrategy.shuffle/{self._seed}/{self._take_pass()}")

    def _index_plan(self) -> Optional[IndexPlan]:
        plan = self._input._index_plan()
        if plan is None:
            return None
        start = plan.indices

        def indices(skip: int = 0) -> Iterator[int]:
            if skip == 0:
                return self._index_pass(start())
            return self._shuffled_from(start, skip, self._index_pass)
        return IndexPlan(plan.source, indices)

    def _index_pass(self, indices: Iterator[int]) -> Iterator[int]:
        """One shuffled pass of an index stream: held whole (batches take slices of it) when the buffer holds
        the whole pass, streamed otherwise; the same order either way."""
        rng, size = self._rng(), self._buffer_size
        if 0 <= self._input._cardinality() <= size:
            return _state.IndexRun(lambda: _whole_pass(indices, size, rng))
        return shuffle_stream(indices, size, rng)

    def _element_pass(self, elements: Iterator) -> Iterator:
        """One shuffled pass of elements (always streamed)."""
        return shuffle_stream(elements, self._buffer_size, self._rng())

    def _iterate_elements(self) -> Iterator[Any]:
        return shuffle_stream(self._input._iterate(), self._buffer_size, self._rng())

    def _elements_from(self, skip: int) -> Iterator[Any]:
        return self._shuffled_from(self._input._iterate_from, skip, self._element_pass)

    def _shuffled_from(self, start_from: Any, skip: int, shuffled: Any) -> Iterator:
        count = self._input._cardinality()
        if 0 <= count <= skip:  # the whole pass is skipped: consume its input and its pass number only
            _state.finish_pass(start_from(count), "the input of shuffle")
            self._take_pass()
            return _state.nothing()
        return _state.advanced(shuffled(start_from(0)), skip)

    def _state_config(self) -> dict:
        return {"buffer_size": self._buffer_size, "reshuffle_each_iteration": self._reshuffle}

    def _op_state(self) -> Optional[dict]:
        return {"seed": self._seed, "passes": self._passes}

    def _op_state_loader(self, state: Any, where: str) -> Any:
        if not isinstance(state, dict):
            raise ValueError(f"{where}: the state has no seed/pass counter for a ShuffleDataset; it comes from a "
                             f"different pipeline or is damaged.")
        seed = _state.check_int(state.get("seed"), where, "the shuffle seed")
        passes = _state.check_int(state.get("passes"), where, "the shuffle pass counter")

        def apply() -> None:
            with self._lock:
                self._seed, self._passes = seed, passes
        return apply


def _chunks(iterator: Iterator, size: int, drop_remainder: bool) -> Iterator[Any]:
    """Lists of `size` consecutive items (the last shorter unless dropped); slices of an IndexRun's indices."""
    if isinstance(iterator, _state.IndexRun):
        take = iterator.take
    else:
        def take(count: int) -> list:
            return list(itertools.islice(iterator, count))
    try:
        while True:
            chunk = take(size)
            if not len(chunk) or (drop_remainder and len(chunk) < size):
                return
            yield chunk
    finally:
        closing(iterator)


def _mapped(fn: Any, chunks: Iterator[list]) -> Iterator[Any]:
    try:
        for chunk in chunks:
            yield fn(chunk)
    finally:
        closing(chunks)


class BatchDataset(UnaryDataset):
    def __init__(self, input_dataset: Dataset, batch_size: int, drop_remainder: bool):
        super().__init__(input_dataset)
        self._batch_size, self._drop = batch_size, drop_remainder

    def _iterate_elements(self) -> Iterator[Any]:
        yield from self._batches_after(0)

    def _elements_from(self, skip: int) -> Iterator[Any]:
        return self._batches_after(skip)

    def _batches_after(self, skip: int) -> Iterator[Any]:
        """Batches after the first `skip` (skipped now, as skip * batch_size input elements)."""
        plan = self._input._index_plan()
        if plan is not None:  # fast path: rows gathered with one fancy index per leaf
            indices = plan.indices(skip * self._batch_size) if skip else plan.indices()
            return _mapped(plan.source.gather, _chunks(indices, self._batch_size, self._drop))
        elements = self._input._iterate_from(skip * self._batch_size)
        return _mapped(self._combine, _chunks(elements, self._batch_size, self._drop))

    def _state_config(self) -> dict:
        return {"batch_size": self._batch_size, "drop_remainder": self._drop}

    def _combine(self, chunk: list) -> Any:
        return _structure.stack_elements(chunk, "batch")

    def _cardinality(self) -> int:
        return batch_cardinality(self._input._cardinality(), self._batch_size, self._drop)

    def _spec(self, peek: bool = False) -> Any:
        size = self._batch_size if self._drop else None
        return _structure.map_specs(lambda spec: _structure.batched_spec(spec, size), self._input._spec(peek))


def _up_to(template: Any, value: Any, what: str) -> list:
    """`value` flattened only as deep as the element structure `template` (shapes stay whole)."""
    if value is None or not isinstance(value, (tuple, list, dict)) or isinstance(value, torch.Size):
        if isinstance(template, (tuple, list, dict)):
            return [value] * len(_structure.flatten(template))
        return [value]
    if isinstance(template, dict):
        return [leaf for key in _structure._dict_keys(template) for leaf in _up_to(template[key], value[key], what)]
    if isinstance(template, (tuple, list)):
        if len(template) != len(value):
            raise ValueError(f"Dataset.padded_batch: {what} {value!r} does not match the element structure.")
        return [leaf for item, part in zip(template, value) for leaf in _up_to(item, part, what)]
    return [value]


class PaddedBatchDataset(BatchDataset):
    def __init__(self, input_dataset: Dataset, batch_size: int, drop_remainder: bool, padded_shapes: Any,
                 padding_values: Any):
        super().__init__(input_dataset, batch_size, drop_remainder)
        self._padded_shapes, self._padding_values = padded_shapes, padding_values

    def _batches_after(self, skip: int) -> Iterator[Any]:
        elements = self._input._iterate_from(skip * self._batch_size)
        return _mapped(self._combine, _chunks(elements, self._batch_size, self._drop))

    def _combine(self, chunk: list) -> Any:
        template = chunk[0]
        shapes = _up_to(template, self._padded_shapes, "padded_shapes")
        values = _up_to(template, self._padding_values, "padding_values")
        columns = zip(*[_structure.flatten(element) for element in chunk])
        leaves = [_pad_and_stack(list(column), shape, value) for column, shape, value in zip(columns, shapes, values)]
        return _structure.pack_as(template, leaves)

    def _spec(self, peek: bool = False) -> Any:
        return self._peek() if peek else None


def _pad_and_stack(leaves: list, padded_shape: Any, padding_value: Any) -> torch.Tensor:
    ranks = {leaf.dim() for leaf in leaves}
    if len(ranks) != 1:
        raise ValueError(f"Dataset.padded_batch: components have different ranks {sorted(ranks)}; padding "
                         f"changes sizes, not the number of dimensions.")
    rank = ranks.pop()
    target = [max(int(leaf.shape[d]) for leaf in leaves) for d in range(rank)]
    if padded_shape is not None:
        wanted = list(padded_shape)
        if len(wanted) != rank:
            raise ValueError(f"Dataset.padded_batch: padded shape {wanted} has rank {len(wanted)} but the "
                             f"component has rank {rank}.")
        for d, size in enumerate(wanted):
            if size is not None and size >= 0:
                if int(size) < target[d]:
                    raise ValueError(f"Dataset.padded_batch: a component of size {target[d]} in dimension {d} "
                                     f"does not fit the padded shape {wanted}; enlarge it or use None.")
                target[d] = int(size)
    fill = 0 if padding_value is None else padding_value
    out = torch.full([len(leaves)] + target, fill, dtype=leaves[0].dtype)
    for row, leaf in enumerate(leaves):
        out[(row,) + tuple(slice(0, int(s)) for s in leaf.shape)] = leaf
    return out


class UnbatchDataset(UnaryDataset):
    def _iterate_elements(self) -> Iterator[Any]:
        for element in self._input._iterate():
            if isinstance(element, torch.Tensor):
                if element.dim() == 0:
                    raise ValueError("Dataset.unbatch: elements must have at least one dimension, got a scalar.")
                yield from element.unbind(0)
                continue
            leaves = _structure.flatten(element)
            sizes = {int(leaf.shape[0]) if getattr(leaf, "ndim", 0) else -1 for leaf in leaves}
            if len(sizes) != 1 or -1 in sizes:
                raise ValueError(f"Dataset.unbatch: every component needs the same size in dimension 0, got "
                                 f"shapes {[tuple(getattr(leaf, 'shape', ())) for leaf in leaves]}.")
            columns = [leaf.unbind(0) if isinstance(leaf, torch.Tensor) else list(leaf) for leaf in leaves]
            if type(element) is tuple and all(isinstance(item, (torch.Tensor, np.ndarray)) for item in element):
                yield from zip(*columns)
            else:
                for row in zip(*columns):
                    yield _structure.pack_as(element, row)

    def _cardinality(self) -> int:
        count = self._input._cardinality()
        spec = self._input._spec()
        if count < 0 or spec is None:
            return count if count < 0 else UNKNOWN_CARDINALITY
        sizes = {_structure.leading_dim(leaf) for leaf in _structure.flatten(spec)}
        size = sizes.pop() if len(sizes) == 1 else None
        return UNKNOWN_CARDINALITY if size is None else count * size

    def _spec(self, peek: bool = False) -> Any:
        return _structure.map_specs(_structure.unbatched_spec, self._input._spec(peek))


class CacheDataset(UnaryDataset):
    """Replays elements after one complete pass. A pass cut short stores nothing, so the cache is
    never truncated; with a filename the elements are written once (atomically) and reloaded later.

    Its state says whether it is filled and its input's state when that fill began: restoring a filled
    state into a fresh pipeline refills it from that input state (same elements), then puts the input
    back to its restored state. A file cache trusts its file when the file exists."""

    def __init__(self, input_dataset: Dataset, filename: str):
        super().__init__(input_dataset)
        self._path = f"{filename}.cache.pt" if filename else ""
        self._elements: Optional[list] = None
        self._fill_state: Optional[dict] = None  # the input's state when the stored fill began
        self._refill_state: Optional[dict] = None  # set by a restore for _state.prepare's refill step

    def _load(self) -> Optional[list]:
        if self._elements is None and self._path and os.path.exists(self._path):
            self._elements = torch.load(self._path, weights_only=True)
        return self._elements

    def _store(self, elements: list, fill_state: dict) -> None:
        if self._elements is not None:
            return
        if self._path:
            temporary = f"{self._path}.tmp{os.getpid()}.{threading.get_ident()}"
            torch.save(elements, temporary)
            os.replace(temporary, self._path)
        self._elements, self._fill_state = elements, fill_state

    def _iterate_elements(self) -> Iterator[Any]:
        cached = self._load()
        if cached is not None:
            yield from cached
            return
        fill_state = _state.capture(self._input)
        filled: list = []
        for element in self._input._iterate():
            filled.append(element)
            yield element
        self._store(filled, fill_state)

    def _op_state(self) -> Optional[dict]:
        return {"filled": self._elements is not None, "fill_state": self._fill_state}

    def _op_state_loader(self, state: Any, where: str) -> Any:
        if not isinstance(state, dict) or not isinstance(state.get("filled"), bool):
            raise ValueError(f"{where}: the state has no fill flag for a CacheDataset; it comes from a different "
                             f"pipeline or is damaged.")
        filled, fill_state = state["filled"], state.get("fill_state")
        if fill_state is not None:
            _state.prepare(self._input, fill_state, where)  # checked now, applied after the other ops

        def apply() -> None:
            if self._path and os.path.exists(self._path):
                return  # the file is the cache
            if filled and self._elements is not None and self._fill_state == fill_state:
                return  # already holds exactly that fill
            self._elements, self._fill_state = None, None
            if filled and fill_state is not None:
                self._refill_state = fill_state
        return apply

    def _refill(self) -> None:
        """Fills the cache from its input as it was when the saved fill began, then restores the input."""
        fill_state, self._refill_state = self._refill_state, None
        current = _state.capture(self._input)
        _state.restore(self._input, fill_state)
        for _ in self._iterate_elements():
            pass
        _state.restore(self._input, current)
