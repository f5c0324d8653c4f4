"""The tf.data-like `Dataset`: its public API (sources as static methods, ops returning new
datasets, get_state/set_state), cardinality constants and AUTOTUNE. Ops live in _ops/_sources/_batching."""
from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np
import torch

from torchstrategy.data import _state, _structure
from torchstrategy.data._iterator import DatasetIterator
from torchstrategy.data._state import IndexPlan
from torchstrategy.data.options import Options

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class Cardinality(int):
    """An int (as tf's int64 scalar) that also answers `.numpy()`, so both script styles work."""

    def numpy(self) -> np.int64:
        return np.int64(self)


def _check_int(value: Any, op: str, name: str, minimum: int, hint: str, allow: Sequence[int] = ()) -> int:
    """`value` as an int >= minimum (or one of `allow`), else a ValueError naming op, value and fix."""
    try:
        number = int(value)
        if number != value:
            raise ValueError
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"Dataset.{op}: {name} must be an integer, got {value!r}. {hint}") from None
    if number < minimum and number not in allow:
        also = "".join(f" or {value}" for value in allow)
        raise ValueError(f"Dataset.{op}: {name} must be >= {minimum}{also}, got {number}. {hint}")
    return number


def _count_or_all(value: Any, op: str, hint: str) -> int:
    """A take/skip/repeat count as an int; every negative count means "all"/"forever" (-1), as in tf.data
    (TF 2.21: take(-2) yields everything, repeat(-5) repeats forever with INFINITE cardinality)."""
    number = _check_int(value, op, "count", -(2**63), hint)
    return -1 if number < 0 else number


class Dataset:
    """A lazy, streaming pipeline of elements with tf.data semantics.

    Elements are torch tensors (or tuples/dicts of them); nothing is computed until iterated.

    >>> ds = Dataset.range(10).map(lambda x: x * 2).batch(4)
    >>> [b.tolist() for b in ds]
    [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]
    """

    def __init__(self, inputs: Sequence["Dataset"] = ()):
        self._inputs = tuple(inputs)
        if len(self._inputs) == 1:  # the input's options, shared: nothing changes a pipeline's options in place
            self._options = self._inputs[0]._options
            return
        options = Options()
        for source in self._inputs:
            options = options._merge(source._options)
        self._options = options

    # ------------------------------------------------------------ what subclasses provide
    def _iterate_elements(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _index_plan(self) -> Optional[IndexPlan]:
        """An IndexPlan when elements come straight from a random-access source; else None."""
        return None

    def _content_key(self) -> str:
        """What a source holds (its values, range or file names) as text, for fingerprints; '' for ops."""
        return ""

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self, peek: bool = False) -> Any:
        """The element spec from the pipeline; where unknown, from a first element if `peek`, else None."""
        return self._peek() if peek else None

    def _peek(self) -> Any:
        was_peeking = _structure.is_peeking()
        _structure._peeking.active = True  # peeking must not advance shuffle epochs
        try:
            iterator = self._iterate()
            try:
                first = next(iterator)
            except StopIteration:
                raise ValueError("Dataset.element_spec: the dataset is empty, so its element structure is "
                                 "unknown. Give from_generator an output_signature.") from None
            finally:
                iterator.close()
        finally:
            _structure._peeking.active = was_peeking
        return _structure.spec_of(first)

    def _iterate(self) -> Iterator[Any]:
        plan = self._index_plan()
        if plan is not None:
            return plan.source.elements(plan.indices())
        return self._iterate_elements()

    def _iterate_from(self, skip: int) -> Iterator[Any]:
        """Exactly `itertools.islice(self._iterate(), skip, None)` (batches for a batched dataset), with the
        same effect on the pipeline state. The skip happens now: in index space on the index path (nothing
        gathered, whole repeated passes skipped by count), by iterating and dropping elsewhere."""
        count = _check_int(skip, "_iterate_from", "skip", 0, "Pass how many elements to skip (>= 0).")
        if count == 0:
            return self._iterate()
        plan = self._index_plan()
        if plan is not None:
            return plan.source.elements(plan.indices(count))
        return self._elements_from(count)

    def _elements_from(self, skip: int) -> Iterator[Any]:
        """`_iterate_from` off the index path (skip > 0): iterate and drop; ops that can do better override."""
        return _state.advanced(self._iterate_elements(), skip)

    # ------------------------------------------------------------ pipeline state (overridden by ops with state)
    def _state_config(self) -> dict:
        """Arguments that fix this op's element order/grouping, checked by set_state (plain data)."""
        return {}

    def _op_state(self) -> Optional[dict]:
        """What changes in this op from one pass to the next (plain data), or None."""
        return None

    def _op_state_loader(self, state: Any, where: str) -> Optional[Callable[[], None]]:
        """Validates `state` (from `_op_state`) and returns the function that applies it."""
        if state is not None:
            raise ValueError(f"{where}: the state gives {type(self).__name__}, which has none, a state; it is damaged.")
        return None

    def get_state(self) -> dict:
        """The pipeline's between-iterations state, as plain data for a checkpoint.

        It holds the state of every op that changes from one pass to the next (shuffle seeds and pass
        counters, cache fills; through zipped/concatenated/nested inputs) and the pipeline's structure.
        After `set_state(state)` the next `iter(dataset)` yields what it would have yielded right after
        the state was taken. Not covered: randomness inside user functions (map, generators) and
        datasets made by flat_map/interleave functions.

        >>> ds = Dataset.range(8).shuffle(8, seed=1)
        >>> state = ds.get_state(); epoch = list(ds)
        >>> ds.set_state(state); [int(x) for x in ds] == [int(x) for x in epoch]
        True
        """
        return _state.capture(self)

    def set_state(self, state: dict) -> None:
        """Restores a `get_state()` result into this (identically built) pipeline.

        Raises ValueError, changing nothing, when the state comes from a pipeline with other ops or other
        batch/shuffle/repeat/take/skip arguments. Close running iterators first (a prefetch thread could
        start another pass after the restore)."""
        _state.restore(self, state)

    # ------------------------------------------------------------ sources
    @staticmethod
    def from_tensor_slices(tensors: Any, name: Optional[str] = None) -> "Dataset":
        """Elements are slices of `tensors` along dimension 0 (tuples/dicts give tuple/dict elements).

        >>> [int(x) for x in Dataset.from_tensor_slices([1, 2, 3])]
        [1, 2, 3]
        """
        return _sources.TensorSlicesDataset(tensors)

    @staticmethod
    def from_tensors(tensors: Any, name: Optional[str] = None) -> "Dataset":
        """A dataset with one element, `tensors`."""
        return _sources.TensorSlicesDataset(tensors, single=True)

    @staticmethod
    def from_generator(generator: Callable[..., Any], output_types: Any = None, output_shapes: Any = None,
                       args: Optional[Sequence] = None, output_signature: Any = None,
                       name: Optional[str] = None) -> "Dataset":
        """Elements of `generator(*args)`, called anew for each pass; streamed, never stored.

        `output_signature` (TensorSpecs) or `output_types`/`output_shapes` set dtypes and check shapes.
        """
        return _sources.GeneratorDataset(generator, output_types, output_shapes, args, output_signature)

    @staticmethod
    def range(*args: int, **kwargs: Any) -> "Dataset":
        """`range(stop)`, `range(start, stop)` or `range(start, stop, step)` as scalars; keywords (TF's, taken
        through **kwargs as in TF's signature): `output_type` (default int64) and `name`."""
        unknown = sorted(set(kwargs) - {"output_type", "name"})
        if unknown:
            raise TypeError(f"Dataset.range got unexpected keyword arguments {unknown}; it takes start/stop/step "
                            "positionally and the keywords output_type and name.")
        return _sources.RangeDataset(args, _structure.as_torch_dtype(kwargs.get("output_type", torch.int64)))

    @staticmethod
    def zip(*args: Any, datasets: Any = None, name: Optional[str] = None) -> "Dataset":
        """Elements are tuples (or dicts) of the inputs' elements; ends with the shortest input.

        Accepts `zip((a, b))`, `zip({'x': a, 'y': b})`, `zip(a, b)` or `zip(datasets=(a, b))`.
        """
        if datasets is not None:
            if args:
                raise TypeError("Dataset.zip: pass the datasets either positionally or as `datasets=`, not both.")
            return _sources.ZipDataset(datasets)
        if len(args) == 1 and not isinstance(args[0], Dataset):
            return _sources.ZipDataset(args[0])
        return _sources.ZipDataset(args)

    def concatenate(self, dataset: "Dataset", name: Optional[str] = None) -> "Dataset":
        """This dataset's elements followed by `dataset`'s. Both need the same structure and dtypes (shapes
        may differ); otherwise a TypeError naming both element specs, as tf.data raises."""
        return _sources.ConcatenateDataset(self, dataset)

    # ------------------------------------------------------------ element-wise ops
    def map(self, map_func: Callable, num_parallel_calls: Optional[int] = None,
            deterministic: Optional[bool] = None, synchronous: Optional[bool] = None,
            use_unbounded_threadpool: bool = False, name: Optional[str] = None) -> "Dataset":
        """Applies `map_func` to each element (a tuple element is passed as positional arguments).

        `num_parallel_calls` runs it on a thread pool; output order is kept.
        """
        if num_parallel_calls is not None:
            num_parallel_calls = _check_int(num_parallel_calls, "map", "num_parallel_calls", 1,
                                            "Pass a positive count or tf.data.AUTOTUNE.", allow=(AUTOTUNE,))
        return _ops.MapDataset(self, map_func, num_parallel_calls)

    def filter(self, predicate: Callable, name: Optional[str] = None) -> "Dataset":
        """Keeps the elements for which `predicate` returns True."""
        return _ops.FilterDataset(self, predicate)

    def take_while(self, predicate: Callable, name: Optional[str] = None) -> "Dataset":
        """Elements up to (not including) the first for which `predicate` is False."""
        return _ops.TakeWhileDataset(self, predicate)

    def flat_map(self, map_func: Callable, name: Optional[str] = None) -> "Dataset":
        """`map_func` returns a Dataset per element; their elements are chained."""
        return _ops.FlatMapDataset(self, map_func)

    def interleave(self, map_func: Callable, cycle_length: Optional[int] = None, block_length: Optional[int] = None,
                   num_parallel_calls: Optional[int] = None, deterministic: Optional[bool] = None,
                   name: Optional[str] = None) -> "Dataset":
        """Cycles over `cycle_length` datasets made by `map_func`, `block_length` elements from each."""
        cycle = 4 if cycle_length in (None, AUTOTUNE) else _check_int(
            cycle_length, "interleave", "cycle_length", 1, "Pass a positive count or AUTOTUNE.")
        block = 1 if block_length is None else _check_int(
            block_length, "interleave", "block_length", 1, "Pass a positive count.")
        return _ops.InterleaveDataset(self, map_func, cycle, block)

    def enumerate(self, start: int = 0, name: Optional[str] = None) -> "Dataset":
        """Elements become `(index, element)` with int64 indices counting from `start`."""
        return _ops.EnumerateDataset(self, int(start))

    def apply(self, transformation_func: Callable[["Dataset"], "Dataset"]) -> "Dataset":
        """`transformation_func(self)`, for chaining custom transformations."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError(f"Dataset.apply: the transformation must return a Dataset, got {type(result).__name__}.")
        return result

    # ------------------------------------------------------------ reordering / grouping
    def shuffle(self, buffer_size: int, seed: Optional[int] = None, reshuffle_each_iteration: bool = True,
                name: Optional[str] = None) -> "Dataset":
        """Randomly shuffles with a buffer of `buffer_size` elements, exactly as tf.data does.

        A seed makes the order reproducible; with `reshuffle_each_iteration` (default True) every
        pass gets a new order. Without a seed the order follows torch's global RNG (torch.manual_seed).
        """
        size = _check_int(buffer_size, "shuffle", "buffer_size", 1,
                          "Pass a positive buffer size (the dataset size gives a full shuffle).")
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return _batching.ShuffleDataset(self, size, seed, reshuffle)

    def batch(self, batch_size: int, drop_remainder: bool = False, num_parallel_calls: Optional[int] = None,
              deterministic: Optional[bool] = None, name: Optional[str] = None) -> "Dataset":
        """Stacks `batch_size` consecutive elements; the last smaller batch is kept unless `drop_remainder`."""
        size = _check_int(batch_size, "batch", "batch_size", 1, "Pass a positive batch size.")
        return _batching.BatchDataset(self, size, bool(drop_remainder))

    def padded_batch(self, batch_size: int, padded_shapes: Any = None, padding_values: Any = None,
                     drop_remainder: bool = False, name: Optional[str] = None) -> "Dataset":
        """Like `batch`, padding each component to `padded_shapes` (None sizes: the batch's largest)."""
        size = _check_int(batch_size, "padded_batch", "batch_size", 1, "Pass a positive batch size.")
        return _batching.PaddedBatchDataset(self, size, bool(drop_remainder), padded_shapes, padding_values)

    def unbatch(self, name: Optional[str] = None) -> "Dataset":
        """Splits each element along dimension 0 into separate elements."""
        return _batching.UnbatchDataset(self)

    # ------------------------------------------------------------ counting ops
    def repeat(self, count: Optional[int] = None, name: Optional[str] = None) -> "Dataset":
        """Repeats the dataset `count` times (None or any negative count: forever); each pass re-iterates
        the input."""
        times = -1 if count is None else _count_or_all(count, "repeat",
                                                       "Pass a count >= 0, or None/-1 to repeat forever.")
        return _ops.RepeatDataset(self, times)

    def take(self, count: int, name: Optional[str] = None) -> "Dataset":
        """At most the first `count` elements (-1, or any negative count: all)."""
        number = _count_or_all(count, "take", "Pass a count >= 0, or -1 for all elements.")
        return _ops.TakeDataset(self, number)

    def skip(self, count: int, name: Optional[str] = None) -> "Dataset":
        """All but the first `count` elements (-1, or any negative count: skip everything)."""
        number = _count_or_all(count, "skip", "Pass a count >= 0, or -1 to skip every element.")
        return _ops.SkipDataset(self, number)

    def shard(self, num_shards: int, index: int, name: Optional[str] = None) -> "Dataset":
        """Every `num_shards`-th element starting at `index` (the elements i with i % num_shards == index)."""
        shards = _check_int(num_shards, "shard", "num_shards", 1, "Pass the number of shards (>= 1).")
        position = _check_int(index, "shard", "index", 0, "Pass the shard index, 0 <= index < num_shards.")
        if position >= shards:
            raise ValueError(f"Dataset.shard: index must be < num_shards, got index={position} with "
                             f"num_shards={shards}. Pass 0 <= index < num_shards.")
        return _ops.ShardDataset(self, shards, position)

    # ------------------------------------------------------------ performance ops
    def cache(self, filename: str = "", name: Optional[str] = None) -> "Dataset":
        """Keeps the elements after the first complete pass (in memory, or in `filename`) and replays them."""
        return _batching.CacheDataset(self, str(filename))

    def prefetch(self, buffer_size: int, name: Optional[str] = None) -> "Dataset":
        """Produces up to `buffer_size` elements ahead on a background thread (AUTOTUNE: 2)."""
        size = _check_int(buffer_size, "prefetch", "buffer_size", 0,
                          "Pass a buffer size >= 0 or tf.data.AUTOTUNE.", allow=(AUTOTUNE,))
        return _threads.PrefetchDataset(self, 2 if size == AUTOTUNE else size)

    # ------------------------------------------------------------ options
    def with_options(self, options: Options, name: Optional[str] = None) -> "Dataset":
        """The same dataset with `options` merged over the current ones (newly set values win)."""
        if not isinstance(options, Options):
            raise TypeError(f"Dataset.with_options: expected a tf.data.Options, got {type(options).__name__}.")
        return _ops.OptionsDataset(self, options)

    def options(self) -> Options:
        """The options in effect for this dataset (a copy; change it and pass it to `with_options`)."""
        return Options()._merge(self._options)

    # ------------------------------------------------------------ inspection
    def cardinality(self) -> Cardinality:
        """Number of elements, or INFINITE_CARDINALITY (-1) / UNKNOWN_CARDINALITY (-2)."""
        return Cardinality(self._cardinality())

    def __len__(self) -> int:
        count = self._cardinality()
        if count == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if count == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return count

    def __bool__(self) -> bool:
        return True  # without this, bool() would call __len__, which raises for unknown sizes

    @property
    def element_spec(self) -> Any:
        """The structure of TensorSpecs of one element (from the pipeline, or from a first element)."""
        return self._spec(peek=True)

    def __iter__(self) -> DatasetIterator:
        return DatasetIterator(self)

    def as_numpy_iterator(self) -> Iterator[Any]:
        """A NumpyIterator: the elements with NumPy leaves (0-d tensors become NumPy scalars)."""
        from torchstrategy.data._iterator import NumpyIterator

        return NumpyIterator(self)

    def reduce(self, initial_state: Any, reduce_func: Callable[[Any, Any], Any], name: Optional[str] = None) -> Any:
        """Folds the elements: `state = reduce_func(state, element)` from `initial_state`."""
        state = _structure.normalize_element(initial_state)
        for element in self:
            state = _structure.normalize_element(reduce_func(state, element))
        return state

    def get_single_element(self, name: Optional[str] = None) -> Any:
        """The only element; an error if the dataset has zero or several elements."""
        iterator = iter(self)
        try:
            element = next(iterator)
        except StopIteration:
            raise ValueError("Dataset.get_single_element: the dataset is empty; it must have exactly one element.") from None
        try:
            next(iterator)
        except StopIteration:
            return element
        finally:
            iterator.close()
        raise ValueError("Dataset.get_single_element: the dataset has more than one element; use take(1) first.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} cardinality={self._cardinality()}>"


def batch_cardinality(count: int, batch_size: int, drop_remainder: bool) -> int:
    if count < 0:
        return count
    return count // batch_size if drop_remainder else math.ceil(count / batch_size)


# The op modules subclass Dataset, so they are imported once Dataset exists.
from torchstrategy.data import _batching, _ops, _sources, _threads  # noqa: E402
from torchstrategy.data import _more_ops, _sampling  # noqa: E402
from torchstrategy.data import _ragged_batch  # noqa: E402

# More ops, written (with their docstrings) in _more_ops/_sampling to keep this file small.
Dataset.window = _more_ops.window
Dataset.scan = _more_ops.scan
Dataset.unique = _more_ops.unique
Dataset.ignore_errors = _more_ops.ignore_errors
Dataset.group_by_window = _more_ops.group_by_window
Dataset.bucket_by_sequence_length = _more_ops.bucket_by_sequence_length
Dataset.rejection_resample = _sampling.rejection_resample
Dataset.save = _sampling.save
Dataset.load = staticmethod(_sampling.load)
Dataset.list_files = staticmethod(_sampling.list_files)
Dataset.sample_from_datasets = staticmethod(_sampling.sample_from_datasets)
Dataset.choose_from_datasets = staticmethod(_sampling.choose_from_datasets)
Dataset.ragged_batch = _ragged_batch.ragged_batch

from torchstrategy.data import _generated, _regroup, _snapshot  # noqa: E402

Dataset.rebatch = _regroup.rebatch
Dataset.sparse_batch = _regroup.sparse_batch
Dataset.snapshot = _snapshot.snapshot
Dataset.fingerprint = _snapshot.fingerprint
Dataset.random = staticmethod(_generated.random_dataset)
Dataset.counter = staticmethod(_generated.counter)
