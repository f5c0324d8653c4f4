"""Sampling and storage ops of tf.data: list_files, sample_from_datasets, choose_from_datasets,
rejection_resample, save/load, and `tf.experimental.Optional` with `get_next_as_optional`."""
from __future__ import annotations

import glob
import os
import random
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np
import torch

from torchstrategy.data import _snapshot, _structure
from torchstrategy.data._more_ops import ElementsDataset, _int_key, _seed_or_draw
from torchstrategy.data._ops import UnaryDataset, call_unpacked, closing
from torchstrategy.data._structure import TensorSpec
from torchstrategy.data.dataset import UNKNOWN_CARDINALITY, Dataset

_STRING = np.dtype(object)


def _scalar_string(data: bytes) -> np.ndarray:
    """A scalar string as TFRecordDataset gives it (a 0-d object array; _records imports dataset, so no import)."""
    scalar = np.empty((), dtype=object)
    scalar[()] = data
    return scalar


# ---------------------------------------------------------------- list_files


def list_files(file_pattern: Any, shuffle: Optional[bool] = None, seed: Optional[int] = None,
               name: Optional[str] = None) -> Dataset:
    """The file names matching `file_pattern` (a glob, or a list of them) as scalar strings, sorted, then
    shuffled unless shuffle=False (the default shuffles, as TF). No match raises ValueError."""
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes, os.PathLike)) else list(file_pattern)
    names: list = []
    for pattern in patterns:
        names.extend(glob.glob(os.fsdecode(pattern)))
    if not names:
        raise ValueError(f"Dataset.list_files: no files matched pattern {file_pattern!r}. Check the path and "
                         f"the wildcards.")
    dataset: Dataset = ElementsDataset([_scalar_string(name.encode()) for name in sorted(set(names))],
                                       TensorSpec((), _STRING))
    if shuffle is None or shuffle:
        dataset = dataset.shuffle(len(names), seed=seed)
    dataset._listed_file_count = len(set(names))  # where AutoShardPolicy.FILE shards the files
    return dataset


# ---------------------------------------------------------------- sample / choose


def _check_datasets(datasets: Any, op: str) -> list:
    datasets = list(datasets) if isinstance(datasets, (list, tuple)) else datasets
    if not isinstance(datasets, list) or not datasets or not all(isinstance(d, Dataset) for d in datasets):
        raise TypeError(f"Dataset.{op}: `datasets` must be a non-empty list of Datasets, got {datasets!r}.")
    return datasets


class SampleDataset(Dataset):
    """`sample_from_datasets`: each element comes from input i with probability weights[i] (renormalized
    over the inputs not yet exhausted, unless stop_on_empty_dataset ends at the first exhausted one)."""

    def __init__(self, datasets: Any, weights: Optional[Sequence[float]], seed: Optional[int], stop: bool,
                 rerandomize: Optional[bool] = None):
        datasets = _check_datasets(datasets, "sample_from_datasets")
        super().__init__(datasets)
        weights = [1.0] * len(datasets) if weights is None else [float(w) for w in np.asarray(weights).reshape(-1)]
        if len(weights) != len(datasets) or min(weights) < 0 or sum(weights) <= 0:
            raise ValueError(f"Dataset.sample_from_datasets: need one non-negative weight per dataset (not all 0), "
                             f"got {weights} for {len(datasets)} datasets.")
        self._weights, self._seed, self._stop, self._passes = weights, _seed_or_draw(seed), bool(stop), 0
        # TF 2.21: with a seed every pass draws the same sequence unless rerandomize_each_iteration=True
        self._rerandomize = seed is None if rerandomize is None else bool(rerandomize)

    def _iterate_elements(self) -> Iterator[Any]:
        rng = random.Random(f"torchstrategy.sample/{self._seed}/{self._passes}")
        if self._rerandomize and not _structure.is_peeking():
            self._passes += 1
        iterators = [dataset._iterate() for dataset in self._inputs]
        weights = list(self._weights)
        try:
            while sum(weights) > 0:
                index = rng.choices(range(len(weights)), weights)[0]
                try:
                    element = next(iterators[index])
                except StopIteration:
                    if self._stop:
                        return
                    weights[index] = 0.0
                    continue
                yield element
        finally:
            for iterator in iterators:
                closing(iterator)

    def _spec(self, peek: bool = False) -> Any:
        return self._inputs[0]._spec(peek)


class ChooseDataset(Dataset):
    """`choose_from_datasets`: element k is the next element of datasets[choice k]."""

    def __init__(self, datasets: Any, choice_dataset: Dataset, stop: bool):
        datasets = _check_datasets(datasets, "choose_from_datasets")
        if not isinstance(choice_dataset, Dataset):
            raise TypeError(f"Dataset.choose_from_datasets: choice_dataset must be a Dataset of int64 scalars, "
                            f"got {type(choice_dataset).__name__}.")
        super().__init__(datasets + [choice_dataset])
        self._datasets, self._choices, self._stop = datasets, choice_dataset, bool(stop)

    def _iterate_elements(self) -> Iterator[Any]:
        iterators: list = [dataset._iterate() for dataset in self._datasets]
        choices = self._choices._iterate()
        try:
            for choice in choices:
                if not isinstance(choice, torch.Tensor) or choice.dim() != 0 or choice.dtype != torch.int64:
                    raise TypeError(f"Dataset.choose_from_datasets: choice_dataset must yield int64 scalars, got "
                                    f"{choice!r}. Use e.g. Dataset.range or tf.constant(..., tf.int64).")
                index = int(choice)
                if not 0 <= index < len(iterators):
                    raise ValueError(f"Dataset.choose_from_datasets: choice {index} is out of range for "
                                     f"{len(iterators)} datasets.")
                if iterators[index] is None:
                    continue
                try:
                    yield next(iterators[index])
                except StopIteration:
                    if self._stop:
                        return
                    iterators[index] = None
        finally:
            closing(choices)
            for iterator in iterators:
                if iterator is not None:
                    closing(iterator)

    def _spec(self, peek: bool = False) -> Any:
        return self._datasets[0]._spec(peek)


# ---------------------------------------------------------------- rejection_resample


class RejectionResampleDataset(UnaryDataset):
    """`rejection_resample`: `(class, element)` pairs whose classes follow `target_dist`, by keeping an
    element of class c with probability ratio[c] / max(ratio), ratio = target / initial (the initial
    distribution estimated from the classes seen so far when not given)."""

    def __init__(self, input_dataset: Dataset, class_func: Callable, target_dist: Any,
                 initial_dist: Any, seed: Optional[int]):
        super().__init__(input_dataset)
        self._class_func = class_func
        self._target = np.asarray(target_dist, dtype=np.float64).reshape(-1)
        if self._target.min() < 0 or not np.isclose(self._target.sum(), 1.0):
            raise ValueError(f"Dataset.rejection_resample: target_dist must be probabilities summing to 1, "
                             f"got {self._target.tolist()}.")
        self._initial = None if initial_dist is None else np.asarray(initial_dist, dtype=np.float64).reshape(-1)
        self._seed, self._passes, self._unseeded = _seed_or_draw(seed), 0, seed is None

    def _iterate_elements(self) -> Iterator[Any]:
        # seeded: the same draws every pass (TF 2.21); unseeded: new ones each pass
        rng = random.Random(f"torchstrategy.rejection_resample/{self._seed}/{self._passes}")
        if self._unseeded and not _structure.is_peeking():
            self._passes += 1
        counts = np.zeros(len(self._target))
        for element in self._input._iterate():
            label = _int_key(call_unpacked(self._class_func, element), "rejection_resample")
            if not 0 <= label < len(self._target):
                raise ValueError(f"Dataset.rejection_resample: class {label} is outside target_dist's "
                                 f"{len(self._target)} classes.")
            counts[label] += 1
            initial = self._initial if self._initial is not None else counts / counts.sum()
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(initial > 0, self._target / initial, 0.0)
            if rng.random() < ratio[label] / ratio.max():
                yield torch.tensor(label, dtype=torch.int64), element

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self, peek: bool = False) -> Any:
        spec = self._input._spec(peek)
        return None if spec is None else (TensorSpec((), torch.int64), spec)


# ---------------------------------------------------------------- save / load


def save(self: Dataset, path: str, compression: Any = None, shard_func: Any = None,
         checkpoint_args: Any = None) -> None:
    """Writes every element of the dataset (one pass) under the directory `path`, for `Dataset.load`, in this
    library's format (see data/_snapshot.py; not TF's layout). compression: None or 'GZIP'. shard_func and
    checkpoint_args are accepted and not needed (one file, written atomically at the end of the pass)."""
    kind = _snapshot.compression_of(compression, "Dataset.save")
    elements = list(self._iterate())
    _snapshot.write_elements(os.fspath(path), elements, self._spec(peek=bool(elements)), kind)


def load(path: str, element_spec: Any = None, compression: Any = None, reader_func: Any = None,
         wait: bool = False) -> Dataset:
    """The dataset written by `Dataset.save(path)` (a pickle: load only directories you trust). The file's
    compression is found from its name; `compression` is checked to be a known name."""
    _snapshot.compression_of(compression, "Dataset.load")
    elements, spec = _snapshot.read_elements(os.fspath(path), "Dataset.load")
    return ElementsDataset(elements, element_spec if element_spec is not None else spec)


# ---------------------------------------------------------------- Optional


class Optional_:
    """`tf.experimental.Optional`: a value or nothing (`has_value()`, `get_value()`)."""

    def __init__(self) -> None:  # TF's signature: made empty; from_value / empty are how scripts make one
        self._value, self._has_value, self._element_spec = None, False, None

    @property
    def element_spec(self) -> Any:
        """The spec of the value (the one given to `empty`, or the held value's)."""
        if self._has_value:
            return _structure.spec_of(self._value)
        return self._element_spec

    @staticmethod
    def from_value(value: Any) -> "Optional_":
        """An optional holding `value`."""
        return _holding(_structure.normalize_element(value))

    @staticmethod
    def empty(element_spec: Any) -> "Optional_":
        """An optional with no value."""
        optional = Optional_()
        optional._element_spec = element_spec
        return optional

    def has_value(self, name: Optional[str] = None) -> torch.Tensor:
        return torch.tensor(self._has_value)

    def get_value(self, name: Optional[str] = None) -> Any:
        if not self._has_value:
            raise ValueError("Optional.get_value: the optional has no value (the iterator was at its end); "
                             "check has_value() first.")
        return self._value


def _holding(value: Any) -> Optional_:
    optional = Optional_()
    optional._value, optional._has_value = value, True
    return optional


def get_next_as_optional(iterator: Any) -> Optional_:
    """The iterator's next element as an Optional, empty at the end instead of raising StopIteration."""
    try:
        return _holding(next(iterator))
    except StopIteration:
        return Optional_()


def sample_from_datasets(datasets: Sequence[Dataset], weights: Any = None, seed: Optional[int] = None,
                         stop_on_empty_dataset: bool = False, rerandomize_each_iteration: Any = None) -> Dataset:
    """Elements drawn at random from `datasets`, input i with probability weights[i] (default uniform).

    >>> mixed = Dataset.sample_from_datasets([cats, dogs], weights=[0.3, 0.7], seed=1)
    """
    return SampleDataset(datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration)


def choose_from_datasets(datasets: Sequence[Dataset], choice_dataset: Dataset,
                         stop_on_empty_dataset: bool = True) -> Dataset:
    """Element k is the next element of `datasets[c]`, c the k-th value of `choice_dataset` (int64).

    >>> [int(x) for x in Dataset.choose_from_datasets([Dataset.range(2), Dataset.range(5, 7)],
    ...                                                 Dataset.range(2).repeat(2))]
    [0, 5, 1, 6]
    """
    return ChooseDataset(datasets, choice_dataset, stop_on_empty_dataset)


def rejection_resample(self: Dataset, class_func: Callable, target_dist: Any, initial_dist: Any = None,
                       seed: Optional[int] = None, name: Optional[str] = None) -> Dataset:
    """`(class, element)` pairs, resampled by rejection so that the classes follow `target_dist`."""
    return RejectionResampleDataset(self, class_func, target_dist, initial_dist, seed)
