"""More Dataset ops: window (datasets of datasets), scan, unique, ignore_errors, group_by_window and
bucket_by_sequence_length, with the Dataset methods that delegate to them (attached in dataset.py)."""
from __future__ import annotations

from typing import Any, Callable, Iterator, List, Optional, Sequence

import numpy as np
import torch

from torchstrategy.data import _structure
from torchstrategy.data._ops import FilterDataset, MapDataset, UnaryDataset, call_unpacked, closing
from torchstrategy.data._structure import TensorSpec
from torchstrategy.data.dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, _check_int

_STRING = np.dtype(object)


def _seed_or_draw(seed: Optional[int]) -> int:
    # as shuffle: no seed draws one from torch's global RNG, so torch.manual_seed makes runs repeatable
    return int(seed) if seed is not None else int(torch.randint(0, 2**62, (1,)).item())


class ElementsDataset(Dataset):
    """A dataset over a list of elements held in memory (a window, a group, a loaded dataset)."""

    def __init__(self, elements: List[Any], spec: Any = None):
        super().__init__()
        self._elements, self._known_spec = elements, spec

    def _iterate_elements(self) -> Iterator[Any]:
        return iter(list(self._elements))

    def _elements_from(self, skip: int) -> Iterator[Any]:
        return iter(self._elements[skip:])

    def _cardinality(self) -> int:
        return len(self._elements)

    def _spec(self, peek: bool = False) -> Any:
        if self._known_spec is not None:
            return self._known_spec
        return _structure.spec_of(self._elements[0]) if peek and self._elements else None


# ---------------------------------------------------------------- window


class DatasetSpec:
    """The spec of an element that is itself a dataset (as tf.data.DatasetSpec); `dataset_shape` is () for one
    dataset, or the shape of a batch of datasets."""

    def __init__(self, element_spec: Any, dataset_shape: Any = ()):
        self._element_spec, self._dataset_shape = element_spec, tuple(dataset_shape)

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    @property
    def value_type(self) -> type:
        return Dataset

    @staticmethod
    def from_value(value: Any) -> "DatasetSpec":
        """The spec of a dataset."""
        return DatasetSpec(value.element_spec)

    def is_subtype_of(self, other: Any) -> bool:
        """True when `other` is this same spec (specs here have no wider supertypes)."""
        return self == other

    def most_specific_common_supertype(self, others: Any) -> Any:
        """This spec when every one of `others` equals it, else None."""
        return self if all(self == other for other in others) else None

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, DatasetSpec) and (other._element_spec, other._dataset_shape) == (
            self._element_spec, self._dataset_shape)

    def __repr__(self) -> str:
        return f"DatasetSpec({self._element_spec!r}, dataset_shape={self._dataset_shape})"


class WindowDataset(UnaryDataset):
    """`window(size, shift, stride, drop_remainder)`: each element is the input's structure with every
    component a dataset of `size` elements taken every `stride` input elements; windows start `shift` apart."""

    def __init__(self, input_dataset: Dataset, size: int, shift: Optional[int], stride: int, drop_remainder: bool):
        super().__init__(input_dataset)
        hint = "Pass a positive count."
        self._size = _check_int(size, "window", "size", 1, hint)
        self._shift = self._size if shift is None else _check_int(shift, "window", "shift", 1, hint)
        self._stride = _check_int(stride, "window", "stride", 1, hint)
        self._drop = bool(drop_remainder)

    def _iterate_elements(self) -> Iterator[Any]:
        iterator = self._input._iterate()
        buffer: list = []  # input elements from the current window's start on
        span = (self._size - 1) * self._stride + 1
        exhausted = False
        try:
            while True:
                while not exhausted and len(buffer) < span:
                    try:
                        buffer.append(next(iterator))
                    except StopIteration:
                        exhausted = True
                if not buffer or (self._drop and len(buffer) < span):
                    return
                yield self._pack(buffer[:span:self._stride])
                if exhausted and len(buffer) <= self._shift:
                    return
                skip = self._shift - len(buffer)
                buffer = buffer[self._shift:]
                while skip > 0 and not exhausted:  # shift > span: drop the inputs between windows
                    try:
                        next(iterator)
                        skip -= 1
                    except StopIteration:
                        exhausted = True
        finally:
            closing(iterator)

    def _pack(self, elements: list) -> Any:
        first = elements[0]
        specs = self._input._spec()
        spec_leaves = _structure.flatten(specs) if specs is not None else None
        columns = zip(*[_structure.flatten(element) for element in elements])
        datasets = [ElementsDataset(list(column), None if spec_leaves is None else spec_leaves[i])
                    for i, column in enumerate(columns)]
        return _structure.pack_as(first, datasets)

    def _cardinality(self) -> int:
        count = self._input._cardinality()
        if count < 0:
            return count
        if self._drop:
            span = (self._size - 1) * self._stride + 1
            return 0 if count < span else (count - span) // self._shift + 1
        return -(-count // self._shift)

    def _spec(self, peek: bool = False) -> Any:
        spec = self._input._spec(peek)
        return None if spec is None else _structure.map_structure(DatasetSpec, spec)


# ---------------------------------------------------------------- scan, unique


class ScanDataset(UnaryDataset):
    """`scan(initial_state, scan_func)`: `state, output = scan_func(state, element)`; outputs are the elements."""

    def __init__(self, input_dataset: Dataset, initial_state: Any, scan_func: Callable):
        super().__init__(input_dataset)
        if not callable(scan_func):
            raise TypeError(f"Dataset.scan: scan_func must be callable, got {type(scan_func).__name__}.")
        self._initial, self._fn = _structure.normalize_element(initial_state), scan_func

    def _iterate_elements(self) -> Iterator[Any]:
        state = self._initial
        for element in self._input._iterate():
            result = self._fn(state, element)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError(f"Dataset.scan: scan_func must return (new_state, output_element), got {result!r}.")
            new_state = _structure.normalize_element(result[0])
            if not _structure.same_structure(new_state, state):
                raise TypeError(f"Dataset.scan: the new state {new_state!r} does not have the structure of the "
                                f"initial state {state!r}; return a state of the same structure.")
            state = new_state
            yield _structure.normalize_element(result[1])

    def _spec(self, peek: bool = False) -> Any:
        return self._peek() if peek else None


def _unique_key(element: Any) -> Any:
    if isinstance(element, torch.Tensor) and element.dim() == 0 and not element.is_floating_point() \
            and not element.is_complex():
        return element.item()
    if isinstance(element, np.ndarray) and element.ndim == 0 and element.dtype == _STRING:
        return element.item()
    if isinstance(element, (bytes, str)):
        return element
    raise TypeError(f"Dataset.unique: elements must be scalar integers or strings (as in TF), got {element!r}. "
                    f"Map the elements to such a key first.")


class UniqueDataset(UnaryDataset):
    """`unique()`: each distinct element once, at its first occurrence."""

    def _iterate_elements(self) -> Iterator[Any]:
        seen: set = set()
        for element in self._input._iterate():
            key = _unique_key(element)
            if key not in seen:
                seen.add(key)
                yield element

    def _cardinality(self) -> int:
        count = self._input._cardinality()
        return count if count in (0, INFINITE_CARDINALITY) else UNKNOWN_CARDINALITY


# ---------------------------------------------------------------- ignore_errors


def _tolerant(dataset: Dataset) -> Iterator[Any]:
    """The elements of `dataset`, leaving out those whose computation raised. Python generators end at
    their first error, so map/filter chains (the usual source of errors) and CSV files are re-driven
    element by element; elsewhere the first error ends the input (TF would go on)."""
    if isinstance(dataset, MapDataset):
        for element in _tolerant(dataset._input):
            try:
                yield dataset._apply(element)
            except Exception:  # noqa: BLE001 - skipping failing elements is this op's contract
                continue
        return
    if type(dataset) is FilterDataset:
        from torchstrategy.data._ops import _truth

        for element in _tolerant(dataset._input):
            try:
                keep = _truth(call_unpacked(dataset._predicate, element), "filter")
            except Exception:  # noqa: BLE001
                continue
            if keep:
                yield element
        return
    skip_bad = getattr(dataset, "_tolerant_elements", None)
    iterator = skip_bad() if skip_bad is not None else dataset._iterate()
    try:
        while True:
            try:
                element = next(iterator)
            except StopIteration:
                return
            except Exception:  # noqa: BLE001
                return
            yield element
    finally:
        closing(iterator)


class IgnoreErrorsDataset(UnaryDataset):
    def _iterate_elements(self) -> Iterator[Any]:
        return _tolerant(self._input)

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY


# ---------------------------------------------------------------- group_by_window, bucketing


def _int_key(value: Any, op: str) -> int:
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.dtype in (torch.int64, torch.int32):
        return int(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise TypeError(f"Dataset.{op}: key_func must return an int64 scalar, got {value!r}.")


class GroupByWindowDataset(UnaryDataset):
    """Groups elements by `key_func`; a group of `window_size` elements (or `window_size_func(key)`) goes to
    `reduce_func(key, dataset_of_group)`, whose elements are yielded. At the end, the remaining groups are
    reduced in increasing key order (as TF)."""

    def __init__(self, input_dataset: Dataset, key_func: Callable, reduce_func: Callable,
                 window_size_func: Callable[[int], int], op: str = "group_by_window", spec: Any = None):
        super().__init__(input_dataset)
        self._known_spec = spec
        if not callable(key_func) or not callable(reduce_func):
            raise TypeError(f"Dataset.{op}: key_func and reduce_func must be callables.")
        self._key_func, self._reduce, self._size_of, self._op = key_func, reduce_func, window_size_func, op

    def _reduced(self, key: int, elements: list) -> Iterator[Any]:
        result = self._reduce(torch.tensor(key, dtype=torch.int64), ElementsDataset(elements, self._input._spec()))
        if not isinstance(result, Dataset):
            raise TypeError(f"Dataset.{self._op}: reduce_func must return a Dataset, got {type(result).__name__}.")
        return result._iterate()

    def _iterate_elements(self) -> Iterator[Any]:
        groups: dict = {}
        for element in self._input._iterate():
            key = _int_key(call_unpacked(self._key_func, element), self._op)
            group = groups.setdefault(key, [])
            group.append(element)
            if len(group) >= self._size_of(key):
                del groups[key]
                yield from self._reduced(key, group)
        for key in sorted(groups):
            yield from self._reduced(key, groups[key])

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self, peek: bool = False) -> Any:
        if self._known_spec is not None:
            return self._known_spec
        return self._peek() if peek else None


def bucket_by_sequence_length(self: Dataset, element_length_func: Callable, bucket_boundaries: Sequence[int],
                              bucket_batch_sizes: Sequence[int], padded_shapes: Any = None,
                              padding_values: Any = None, pad_to_bucket_boundary: bool = False,
                              no_padding: bool = False, drop_remainder: bool = False,
                              name: Optional[str] = None) -> Dataset:
    """Batches elements of similar length: bucket i holds lengths in [boundaries[i-1], boundaries[i]) and is
    batched (padded to the batch's longest, or to boundary - 1 with pad_to_bucket_boundary) by
    bucket_batch_sizes[i]."""
    op = "bucket_by_sequence_length"
    boundaries, sizes = [int(b) for b in bucket_boundaries], [int(s) for s in bucket_batch_sizes]
    if boundaries != sorted(boundaries) or len(set(boundaries)) != len(boundaries):
        raise ValueError(f"Dataset.{op}: bucket_boundaries must be increasing, got {boundaries}.")
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(f"Dataset.{op}: need len(bucket_batch_sizes) == len(bucket_boundaries) + 1, got "
                         f"{len(sizes)} batch sizes for {len(boundaries)} boundaries.")

    def bucket_of(*element: Any) -> torch.Tensor:
        length = _int_key(element_length_func(*element), op)
        if pad_to_bucket_boundary and length >= boundaries[-1]:
            raise ValueError(f"Dataset.{op}: with pad_to_bucket_boundary=True every element must be shorter "
                             f"than max(bucket_boundaries) = {boundaries[-1]}, got length {length}.")
        return torch.tensor(sum(length >= b for b in boundaries), dtype=torch.int64)

    def batch_bucket(key: torch.Tensor, group: Dataset) -> Dataset:
        size = sizes[int(key)]
        if no_padding:
            return group.batch(size, drop_remainder=drop_remainder)
        shapes = padded_shapes
        if pad_to_bucket_boundary:
            boundary = boundaries[int(key)] - 1
            spec = group._spec(peek=True)
            shapes = _structure.map_structure(
                lambda s: [boundary if d is None else d for d in s.shape], spec) if shapes is None else \
                _structure.map_structure(lambda s: [boundary if d is None else d for d in s], shapes)
        return group.padded_batch(size, shapes, padding_values, drop_remainder=drop_remainder)

    # as TF's spec: batch sizes vary, and padded sizes differ from batch to batch
    spec = _structure.map_specs(lambda s: TensorSpec(None, s.dtype) if s.shape.rank is None else TensorSpec(
        (None,) + tuple(s.shape if no_padding else [None] * s.shape.rank), s.dtype), self._spec())
    return GroupByWindowDataset(self, bucket_of, batch_bucket, lambda key: sizes[key], op, spec)




# ---------------------------------------------------------------- Dataset methods (attached in dataset.py)


def window(self: Dataset, size: int, shift: Optional[int] = None, stride: int = 1, drop_remainder: bool = False,
           name: Optional[str] = None) -> Dataset:
    """Windows of `size` elements (every `stride`-th input element), starting `shift` (default `size`)
    apart; each element has the input's structure with Datasets as components (as tf.data).

    >>> [[int(x) for x in w] for w in Dataset.range(5).window(2, shift=2)]
    [[0, 1], [2, 3], [4]]
    """
    return WindowDataset(self, size, shift, stride, drop_remainder)


def scan(self: Dataset, initial_state: Any, scan_func: Callable, name: Optional[str] = None) -> Dataset:
    """`state, output = scan_func(state, element)` from `initial_state`; the outputs are the elements.

    >>> [int(x) for x in Dataset.range(4).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s + x))]
    [0, 1, 3, 6]
    """
    return ScanDataset(self, initial_state, scan_func)


def unique(self: Dataset, name: Optional[str] = None) -> Dataset:
    """Each distinct element (integer or string scalars) once, in order of first occurrence."""
    return UniqueDataset(self)


def ignore_errors(self: Dataset, log_warning: bool = False, name: Optional[str] = None) -> Dataset:
    """Leaves out the elements whose computation raised (in map/filter functions, bad CSV records)."""
    return IgnoreErrorsDataset(self)


def group_by_window(self: Dataset, key_func: Callable, reduce_func: Callable, window_size: Optional[int] = None,
                    window_size_func: Optional[Callable] = None, name: Optional[str] = None) -> Dataset:
    """Groups elements by `key_func` (int64 scalars); every `window_size` elements of a group (and, at the
    end, what is left of each group, by increasing key) go to `reduce_func(key, dataset)`, whose elements
    are yielded."""
    if (window_size is None) == (window_size_func is None):
        raise ValueError("Dataset.group_by_window: pass exactly one of window_size and window_size_func.")
    if window_size is not None:
        size = _check_int(window_size, "group_by_window", "window_size", 1, "Pass a positive size.")
        return GroupByWindowDataset(self, key_func, reduce_func, lambda key: size)

    def size_of(key: int) -> int:
        value = window_size_func(torch.tensor(key, dtype=torch.int64))
        return _check_int(value, "group_by_window", "window_size_func(key)", 1, "Return a positive size.")
    return GroupByWindowDataset(self, key_func, reduce_func, size_of)
