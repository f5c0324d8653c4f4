"""Element-wise and counting Dataset ops: map, filter, take_while, flat_map, interleave, enumerate,
repeat, take, skip, shard, with_options. Counting ops also transform index plans (the fast path)."""
from __future__ import annotations

import itertools
from typing import Any, Callable, Iterator, Optional

import numpy as np
import torch

from torchstrategy.data import _state, _structure
from torchstrategy.data._structure import TensorSpec
from torchstrategy.data.dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, IndexPlan)
from torchstrategy.data.options import Options


def call_unpacked(fn: Callable, element: Any) -> Any:
    """tf.data calling convention: a tuple element is spread into positional arguments."""
    return fn(*element) if type(element) is tuple else fn(element)


def closing(iterator: Iterator) -> None:
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


def normalize_map_output(value: Any) -> Any:
    try:
        return _structure.normalize_element(value)
    except TypeError as error:
        raise TypeError(f"Dataset.map: {error}") from None


class UnaryDataset(Dataset):
    """An op with one input whose cardinality and element spec default to the input's."""

    def __init__(self, input_dataset: Dataset):
        super().__init__((input_dataset,))
        self._input = input_dataset

    def _cardinality(self) -> int:
        return self._input._cardinality()

    def _spec(self, peek: bool = False) -> Any:
        return self._input._spec(peek)


class MapDataset(UnaryDataset):
    def __init__(self, input_dataset: Dataset, map_func: Callable, num_parallel_calls: Optional[int]):
        super().__init__(input_dataset)
        if not callable(map_func):
            raise TypeError(f"Dataset.map: map_func must be callable, got {type(map_func).__name__}.")
        self._fn, self._parallel = map_func, num_parallel_calls

    def _apply(self, element: Any) -> Any:
        return normalize_map_output(call_unpacked(self._fn, element))

    def _iterate_elements(self) -> Iterator[Any]:
        if self._parallel is not None:
            from torchstrategy.data import _threads

            workers = self._parallel
            if workers == AUTOTUNE:
                workers = self._options.threading.private_threadpool_size or _threads.default_workers()
            return _threads.parallel_map(self._input._iterate(), self._apply, workers)
        return self._sequential()

    def _sequential(self) -> Iterator[Any]:
        fn, normalize = self._fn, _structure.normalize_element
        for element in self._input._iterate():
            result = fn(*element) if type(element) is tuple else fn(element)
            if result is None:
                normalize_map_output(None)
            yield normalize(result)

    def _spec(self, peek: bool = False) -> Any:
        return self._peek() if peek else None


def _truth(value: Any, op: str) -> bool:
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.dtype != torch.bool:
            raise TypeError(f"Dataset.{op}: the predicate must return a scalar boolean, got a tensor of "
                            f"dtype {value.dtype} and shape {tuple(value.shape)}. Return e.g. `x > 0`.")
        return bool(value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"Dataset.{op}: the predicate must return a scalar boolean, got {value!r}.")


class FilterDataset(UnaryDataset):
    def __init__(self, input_dataset: Dataset, predicate: Callable):
        super().__init__(input_dataset)
        self._predicate = predicate

    def _iterate_elements(self) -> Iterator[Any]:
        predicate = self._predicate
        for element in self._input._iterate():
            if _truth(call_unpacked(predicate, element), "filter"):
                yield element

    def _cardinality(self) -> int:
        count = self._input._cardinality()
        return count if count == 0 else UNKNOWN_CARDINALITY


class TakeWhileDataset(FilterDataset):
    def _iterate_elements(self) -> Iterator[Any]:
        iterator = self._input._iterate()
        try:
            for element in iterator:
                if not _truth(call_unpacked(self._predicate, element), "take_while"):
                    return
                yield element
        finally:
            closing(iterator)


def _dataset_from(fn: Callable, element: Any, op: str) -> Dataset:
    result = call_unpacked(fn, element)
    if not isinstance(result, Dataset):
        raise TypeError(f"Dataset.{op}: map_func must return a Dataset, got {type(result).__name__}.")
    return result


class FlatMapDataset(UnaryDataset):
    def __init__(self, input_dataset: Dataset, map_func: Callable):
        super().__init__(input_dataset)
        self._fn = map_func

    def _iterate_elements(self) -> Iterator[Any]:
        for element in self._input._iterate():
            yield from _dataset_from(self._fn, element, "flat_map")._iterate()

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self, peek: bool = False) -> Any:
        return self._peek() if peek else None


class InterleaveDataset(FlatMapDataset):
    """tf's interleave order: visit cycle slots in turn, `block` elements per visit; an empty slot is
    filled from the next input element when visited; an exhausted one is emptied and skipped."""

    def __init__(self, input_dataset: Dataset, map_func: Callable, cycle_length: int, block_length: int):
        super().__init__(input_dataset, map_func)
        self._cycle, self._block = cycle_length, block_length

    def _iterate_elements(self) -> Iterator[Any]:
        inputs = self._input._iterate()
        slots: list = [None] * self._cycle
        index = block_index = open_count = 0
        end_of_input = False
        while not end_of_input or open_count:
            current = slots[index]
            if current is not None:
                try:
                    value = next(current)
                except StopIteration:
                    slots[index], open_count, block_index = None, open_count - 1, 0
                    index = (index + 1) % self._cycle
                    continue
                yield value
                block_index += 1
                if block_index == self._block:
                    block_index, index = 0, (index + 1) % self._cycle
            elif not end_of_input:
                try:
                    element = next(inputs)
                except StopIteration:
                    end_of_input = True
                    continue
                slots[index] = _dataset_from(self._fn, element, "interleave")._iterate()
                open_count += 1
            else:
                block_index, index = 0, (index + 1) % self._cycle


class EnumerateDataset(UnaryDataset):
    def __init__(self, input_dataset: Dataset, start: int):
        super().__init__(input_dataset)
        self._start = start

    def _iterate_elements(self) -> Iterator[Any]:
        yield from self._numbered(self._input._iterate(), self._start)

    def _elements_from(self, skip: int) -> Iterator[Any]:
        return self._numbered(self._input._iterate_from(skip), self._start + skip)

    @staticmethod
    def _numbered(elements: Iterator, start: int) -> Iterator[Any]:
        try:
            for position, element in enumerate(elements, start):
                yield torch.tensor(position, dtype=torch.int64), element
        finally:
            closing(elements)

    def _spec(self, peek: bool = False) -> Any:
        spec = self._input._spec(peek)
        return None if spec is None else (TensorSpec((), torch.int64), spec)


def _repeated(start_pass: Callable[[], Iterator], count: int, done: int = 0,
              current: Optional[Iterator] = None) -> Iterator:
    """Passes of `start_pass()` until `count` (-1: forever) passes are done; a resumed run starts with
    `done` passes finished and the rest of pass `done` in `current`."""
    passes = done
    while count < 0 or passes < count:
        produced = current is not None
        for item in current if current is not None else start_pass():
            produced = True
            yield item
        current = None
        if not produced and count < 0:
            return  # as tf: repeating an empty dataset forever ends instead of spinning
        passes += 1


class _CountingOp(UnaryDataset):
    """An op that only selects/reorders by position, so it carries over to index plans."""

    def _select(self, iterator: Iterator) -> Iterator:  # pragma: no cover - abstract
        raise NotImplementedError

    def _select_from(self, start_from: Callable[[int], Iterator], skip: int) -> Iterator:
        """The selection after its first `skip` outputs, pulling from `start_from(k)` (input after k)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _index_plan(self) -> Optional[IndexPlan]:
        plan = self._input._index_plan()
        if plan is None:
            return None
        start = plan.indices
        return IndexPlan(plan.source, lambda skip=0: self._select_from(start, skip) if skip else self._select(start()))

    def _iterate_elements(self) -> Iterator[Any]:
        iterator = self._input._iterate()
        try:
            yield from self._select(iterator)
        finally:
            closing(iterator)

    def _elements_from(self, skip: int) -> Iterator[Any]:
        selected = self._select_from(self._input._iterate_from, skip)
        return selected if hasattr(selected, "close") else _state.sliced(selected)


class RepeatDataset(_CountingOp):
    def __init__(self, input_dataset: Dataset, count: int):
        super().__init__(input_dataset)
        self._count = count

    def _index_plan(self) -> Optional[IndexPlan]:
        plan = self._input._index_plan()
        if plan is None:
            return None
        start = plan.indices
        return IndexPlan(plan.source, lambda skip=0: self._select_from(start, skip) if skip
                         else _repeated(start, self._count))

    def _iterate_elements(self) -> Iterator[Any]:
        return _repeated(self._input._iterate, self._count)

    def _select_from(self, start_from: Callable[[int], Iterator], skip: int) -> Iterator:
        per_pass = self._input._cardinality()
        if per_pass == INFINITE_CARDINALITY:
            return start_from(skip)  # the first pass never ends
        if per_pass <= 0:  # unknown or empty passes: count them by iterating
            return _state.advanced(_repeated(lambda: start_from(0), self._count), skip)
        # Whole passes are skipped by count (shuffles just take their pass number); the pass holding the
        # last skipped element stays open, as after pulling exactly `skip` elements.
        done, into = divmod(skip - 1, per_pass)
        if 0 <= self._count <= done:
            for _ in range(self._count):
                _state.finish_pass(start_from(per_pass), "a repeated pass")
            return _state.nothing()
        for _ in range(done):
            _state.finish_pass(start_from(per_pass), "a repeated pass")
        return _repeated(lambda: start_from(0), self._count, done, start_from(into + 1))

    def _state_config(self) -> dict:
        return {"count": self._count}

    def _cardinality(self) -> int:
        count = self._input._cardinality()
        if self._count < 0:
            return 0 if count == 0 else INFINITE_CARDINALITY
        if self._count == 0:
            return 0
        return count if count < 0 else count * self._count


class TakeDataset(_CountingOp):
    def __init__(self, input_dataset: Dataset, count: int):
        super().__init__(input_dataset)
        self._count = count

    def _select(self, iterator: Iterator) -> Iterator:
        return iterator if self._count < 0 else itertools.islice(iterator, self._count)

    def _select_from(self, start_from: Callable[[int], Iterator], skip: int) -> Iterator:
        if self._count < 0:
            return start_from(skip)
        skipped = min(skip, self._count)
        source = start_from(skipped)
        if skipped == self._count:
            closing(source)
            return _state.nothing()
        return _state.sliced(source, 0, self._count - skipped)

    def _state_config(self) -> dict:
        return {"count": self._count}

    def _cardinality(self) -> int:
        count = self._input._cardinality()
        if count == UNKNOWN_CARDINALITY:
            return UNKNOWN_CARDINALITY
        if count == INFINITE_CARDINALITY:
            return self._count
        return count if self._count < 0 else min(count, self._count)


class SkipDataset(TakeDataset):
    def _select(self, iterator: Iterator) -> Iterator:
        if self._count < 0:
            return _drain(iterator)
        return itertools.islice(iterator, self._count, None)

    def _select_from(self, start_from: Callable[[int], Iterator], skip: int) -> Iterator:
        if self._count < 0:
            source = start_from(0)
            _state.finish_pass(_drain(source), "skip(-1)")
            return _state.nothing()
        return start_from(self._count + skip)

    def _cardinality(self) -> int:
        count = self._input._cardinality()
        if count < 0:
            return count
        return 0 if self._count < 0 else max(0, count - self._count)


def _drain(iterator: Iterator) -> Iterator:
    for _ in iterator:
        pass
    yield from ()


class ShardDataset(_CountingOp):
    def __init__(self, input_dataset: Dataset, num_shards: int, index: int):
        super().__init__(input_dataset)
        self._num_shards, self._index = num_shards, index

    def _select(self, iterator: Iterator) -> Iterator:
        return itertools.islice(iterator, self._index, None, self._num_shards)

    def _select_from(self, start_from: Callable[[int], Iterator], skip: int) -> Iterator:
        # `skip` outputs pulled the input up to and including position index + (skip - 1) * num_shards.
        source = start_from(self._index + (skip - 1) * self._num_shards + 1)
        return _state.sliced(source, self._num_shards - 1, None, self._num_shards)

    def _cardinality(self) -> int:
        count = self._input._cardinality()
        if count < 0:
            return count
        return count // self._num_shards + (1 if self._index < count % self._num_shards else 0)


class OptionsDataset(UnaryDataset):
    """`with_options`: the input unchanged, with merged options."""

    def __init__(self, input_dataset: Dataset, options: Options):
        super().__init__(input_dataset)
        self._options = input_dataset._options._merge(options)

    def _index_plan(self) -> Optional[IndexPlan]:
        return self._input._index_plan()

    def _iterate_elements(self) -> Iterator[Any]:
        return self._input._iterate()

    def _elements_from(self, skip: int) -> Iterator[Any]:
        return self._input._iterate_from(skip)
