"""`keras.utils.PyDataset` (and its Keras 2 name `Sequence`): batches made by Python code, read in order or
shuffled, by threads or worker processes, plus `PyDatasetBatches`, the per-epoch iterable `fit` reads."""
from __future__ import annotations

import concurrent.futures
import itertools
import warnings
from collections import deque
from typing import Any, Iterator, Optional

import numpy as np
import torch


class PyDataset:
    """Base class of datasets written in Python: define `__len__` (or `num_batches`) and `__getitem__(index)`
    returning `(x,)`, `(x, y)` or `(x, y, sample_weight)` for batch `index`; optionally `on_epoch_begin` /
    `on_epoch_end`. `workers` > 1 reads batches in parallel: threads, or processes with `use_multiprocessing`;
    at most `max_queue_size` batches are read ahead. Subclasses pass these through `super().__init__(**kwargs)`.

    >>> class Squares(PyDataset):
    ...     def __len__(self):
    ...         return 2
    ...     def __getitem__(self, index):
    ...         x = np.arange(3.0) + 3 * index
    ...         return x, x ** 2
    >>> [y.tolist() for _, y in Squares()]
    [[0.0, 1.0, 4.0], [9.0, 16.0, 25.0]]
    """

    def __init__(self, workers: int = 1, use_multiprocessing: bool = False, max_queue_size: int = 10) -> None:
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    def _warn_if_super_not_called(self) -> None:
        missing = False
        for attr, default in (("_workers", 1), ("_use_multiprocessing", False), ("_max_queue_size", 10)):
            if not hasattr(self, attr):
                setattr(self, attr, default)
                missing = True
        if missing:
            warnings.warn("Your `PyDataset` class should call `super().__init__(**kwargs)` in its constructor. "
                          "`**kwargs` can include `workers`, `use_multiprocessing`, `max_queue_size`. Do not pass "
                          "these arguments to `fit()`, as they will be ignored.", stacklevel=3)

    @property
    def workers(self) -> int:
        """How many threads or processes read batches (1: the training thread reads them)."""
        self._warn_if_super_not_called()
        return self._workers

    @workers.setter
    def workers(self, value: int) -> None:
        self._workers = value

    @property
    def use_multiprocessing(self) -> bool:
        """Whether the workers are processes (else threads)."""
        self._warn_if_super_not_called()
        return self._use_multiprocessing

    @use_multiprocessing.setter
    def use_multiprocessing(self, value: bool) -> None:
        self._use_multiprocessing = value

    @property
    def max_queue_size(self) -> int:
        """How many batches the workers may read ahead."""
        self._warn_if_super_not_called()
        return self._max_queue_size

    @max_queue_size.setter
    def max_queue_size(self, value: int) -> None:
        self._max_queue_size = value

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__(index).")

    def __iter__(self) -> Iterator[Any]:
        try:
            count = self.num_batches
        except NotImplementedError:
            count = None
        for index in (range(count) if count is not None else itertools.count()):
            yield self[index]

    @property
    def num_batches(self) -> Optional[int]:
        """The number of batches (`len(self)`), or None for an endless dataset."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError("You need to implement the `num_batches` property:\n\n"
                                  "@property\ndef num_batches(self):\n  return ...")

    def on_epoch_begin(self) -> None:
        """Called at the start of every epoch."""

    def on_epoch_end(self) -> None:
        """Called at the end of every epoch."""


Sequence = PyDataset


def standardize_batch(batch: Any) -> Any:
    """A batch as `fit` reads it: an array alone becomes `(x,)`, a list a tuple; anything else of 1-3 items."""
    if isinstance(batch, dict):
        return batch
    if isinstance(batch, (np.ndarray, torch.Tensor)):
        return (batch,)
    if isinstance(batch, list):
        batch = tuple(batch)
    if not isinstance(batch, tuple) or len(batch) not in (1, 2, 3):
        raise ValueError("PyDataset.__getitem__() must return a tuple or a dict. If a tuple, it must be ordered "
                         "either (input,) or (inputs, targets) or (inputs, targets, sample_weights). "
                         f"Received: {str(batch)[:100]}... of type {type(batch)}")
    return batch


class _ByIndex(torch.utils.data.Dataset):
    """The PyDataset seen by torch's worker processes: item i is batch i."""

    def __init__(self, dataset: PyDataset) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return int(self.dataset.num_batches)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[index]


class PyDatasetBatches(torch.utils.data.IterableDataset):
    """One epoch of a PyDataset's batches per iteration, in index order or (with `shuffle`) in an order drawn
    from `seed` and the epoch number, read as the dataset's `workers` / `use_multiprocessing` /
    `max_queue_size` ask; `on_epoch_begin` / `on_epoch_end` are called around each epoch."""

    def __init__(self, dataset: PyDataset, shuffle: bool = False, seed: Optional[int] = None) -> None:
        self.dataset = dataset
        self.shuffle = bool(shuffle) and dataset.num_batches is not None
        self.seed = int(torch.randint(0, 2**62, (), dtype=torch.int64)) if seed is None else int(seed)
        self._epoch = 0

    def __len__(self) -> int:
        count = self.dataset.num_batches
        if count is None:
            raise TypeError("This PyDataset is endless (num_batches is None): it has no length.")
        return int(count)

    def _order(self) -> Any:
        count = self.dataset.num_batches
        if count is None:
            return itertools.count()
        if not self.shuffle:
            return range(count)
        generator = torch.Generator().manual_seed(self.seed + self._epoch)
        return torch.randperm(count, generator=generator).tolist()

    def __iter__(self) -> Iterator[Any]:
        order = self._order()
        remaining = len(order) if isinstance(order, (list, range)) else None
        self._epoch += 1
        self.dataset.on_epoch_begin()
        ended = False
        try:
            for batch in self._read(order):
                batch = standardize_batch(batch)
                if remaining is not None:
                    remaining -= 1
                    if remaining == 0:  # the epoch's last batch is read: the epoch ends now, not when (or
                        ended = True    # whether) the loop asks for one more
                        self.dataset.on_epoch_end()
                yield batch
        finally:
            if not ended:
                self.dataset.on_epoch_end()

    def _read(self, order: Any) -> Iterator[Any]:
        workers, ahead = int(self.dataset.workers), max(1, int(self.dataset.max_queue_size))
        if workers > 0 and self.dataset.use_multiprocessing and self.dataset.num_batches is not None:
            loader = torch.utils.data.DataLoader(
                _ByIndex(self.dataset), batch_size=None, sampler=list(order), num_workers=workers,
                prefetch_factor=max(1, ahead // workers), collate_fn=_as_is)
            yield from loader
        elif workers > 1:
            with concurrent.futures.ThreadPoolExecutor(workers) as pool:
                pending: deque = deque()
                indices = iter(order)
                for index in itertools.islice(indices, ahead):
                    pending.append(pool.submit(self.dataset.__getitem__, index))
                while pending:
                    batch = pending.popleft().result()
                    for index in itertools.islice(indices, 1):
                        pending.append(pool.submit(self.dataset.__getitem__, index))
                    yield batch
        else:
            for index in order:
                yield self.dataset[index]


def _as_is(batch: Any) -> Any:
    return batch
