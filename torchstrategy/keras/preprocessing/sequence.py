"""`keras.preprocessing.sequence` / `keras.utils.pad_sequences`: variable-length sequences padded into one
NumPy array, and Keras's legacy skipgrams, sampling table and TimeseriesGenerator, with Keras's arguments."""
from __future__ import annotations

import json
import random
from typing import Any, Optional

import numpy as np

from torchstrategy.keras.py_dataset import PyDataset


def pad_sequences(sequences: Any, maxlen: Optional[int] = None, dtype: Any = "int32", padding: str = "pre",
                  truncating: str = "pre", value: Any = 0.0) -> np.ndarray:
    """Pads (or truncates) each sequence to `maxlen` (default: the longest) and stacks them.

    'pre' pads/truncates at the start, 'post' at the end; elements may themselves be arrays, all of one shape.

    >>> pad_sequences([[1, 2], [3]]).tolist()
    [[1, 2], [0, 3]]
    >>> pad_sequences([[1, 2, 3], [4]], maxlen=2, padding="post", truncating="post").tolist()
    [[1, 2], [4, 0]]
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError(f"`sequences` must be iterable (a list of sequences); got {type(sequences).__name__}.")
    if padding not in ("pre", "post"):
        raise ValueError(f'Padding type "{padding}" not understood: pass padding="pre" or "post".')
    if truncating not in ("pre", "post"):
        raise ValueError(f'Truncating type "{truncating}" not understood: pass truncating="pre" or "post".')
    lengths, sample_shape, found_shape = [], (), False
    for item in sequences:
        try:
            lengths.append(len(item))
        except TypeError:
            raise ValueError(f"`sequences` must be a list of iterables; found a non-iterable element: {item!r}.") from None
        if not found_shape and len(item):
            sample_shape, found_shape = np.asarray(item).shape[1:], True
    if maxlen is None:
        maxlen = max(lengths, default=0)
    maxlen = int(maxlen)
    string_dtype = np.issubdtype(np.dtype(dtype), np.str_) or np.dtype(dtype) == np.dtype(object)
    if isinstance(value, str) and dtype != object and not string_dtype:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type {type(value).__name__}: pass "
                         "dtype=object (or a string dtype) to pad with a string.")
    out = np.full((len(lengths), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for row, item in enumerate(sequences):
        if not len(item) or maxlen == 0:
            continue
        kept = item[-maxlen:] if truncating == "pre" else item[:maxlen]
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != tuple(sample_shape):
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {row} differs from the "
                             f"expected shape {tuple(sample_shape)}; every element must have the same shape.")
        if padding == "post":
            out[row, :len(kept)] = kept
        else:
            out[row, -len(kept):] = kept
    return out


def make_sampling_table(size: int, sampling_factor: float = 1e-5) -> np.ndarray:
    """Keep-probabilities for words ranked by frequency (Zipf's law approximation), for `skipgrams`:
    `min(1, f / sqrt(f))` with `f = sampling_factor * rank * (log(rank) + 0.577) + ...`."""
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence: Any, vocabulary_size: int, window_size: int = 4, negative_samples: float = 1.0,
              shuffle: bool = True, categorical: bool = False, sampling_table: Any = None,
              seed: Optional[int] = None) -> tuple:
    """(couples, labels): every (word, neighbour within `window_size`) pair labelled 1, plus
    `negative_samples` times as many (word, random word) pairs labelled 0; index 0 is skipped. Uses Python's
    `random` module as Keras does (seed it for repeatable negatives); `seed` fixes the final shuffle."""
    couples: list = []
    labels: list = []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        count = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)] for i in range(count)]
        labels += [[1, 0] if categorical else 0] * count
    if shuffle:
        if seed is None:
            seed = random.randint(0, 10e6)
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels


class TimeseriesGenerator(PyDataset):
    """Batches of (windows of `length` steps ending before each row, the row's target) over `data`, every
    `sampling_rate` steps, rows `stride` apart, between `start_index + length` and `end_index`."""

    def __init__(self, data: Any, targets: Any, length: int, sampling_rate: int = 1, stride: int = 1,
                 start_index: int = 0, end_index: Optional[int] = None, shuffle: bool = False,
                 reverse: bool = False, batch_size: int = 128, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if len(data) != len(targets):
            raise ValueError(f"Data and targets have to be of same length. Data length is {len(data)} while "
                             f"target length is {len(targets)}")
        self.data, self.targets, self.length = data, targets, length
        self.sampling_rate, self.stride = sampling_rate, stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse, self.batch_size = shuffle, reverse, batch_size
        if self.start_index > self.end_index:
            raise ValueError(f"`start_index+length={self.start_index} > end_index={self.end_index}` is "
                             "disallowed, as no part of the sequence would be left to be used as current step.")

    def __len__(self) -> int:
        span = self.batch_size * self.stride
        return (self.end_index - self.start_index + span) // span

    def __getitem__(self, index: int) -> tuple:
        if self.shuffle:
            rows = np.random.randint(self.start_index, self.end_index + 1, size=self.batch_size)
        else:
            first = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(first, min(first + self.batch_size * self.stride, self.end_index + 1), self.stride)
        samples = np.array([self.data[row - self.length:row:self.sampling_rate] for row in rows])
        targets = np.array([self.targets[row] for row in rows])
        return (samples[:, ::-1, ...], targets) if self.reverse else (samples, targets)

    def get_config(self) -> dict:
        """The generator's settings, with data and targets as JSON strings (Keras 3.15's own get_config fails:
        it asks PyDataset, which has none, for a base config)."""
        def as_json(value: Any, what: str) -> str:
            value = value.tolist() if type(value).__module__ == np.__name__ else value
            try:
                return json.dumps(value)
            except TypeError as error:
                raise TypeError(f"{what} not JSON Serializable: {value}") from error

        return {"data": as_json(self.data, "Data"), "targets": as_json(self.targets, "Targets"),
                "length": self.length, "sampling_rate": self.sampling_rate, "stride": self.stride,
                "start_index": self.start_index, "end_index": self.end_index, "shuffle": self.shuffle,
                "reverse": self.reverse, "batch_size": self.batch_size}

    def to_json(self, **kwargs: Any) -> str:
        """{'class_name': 'TimeseriesGenerator', 'config': get_config()} as JSON."""
        return json.dumps({"class_name": self.__class__.__name__, "config": self.get_config()}, **kwargs)
