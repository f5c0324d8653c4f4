"""`keras.preprocessing.sequence` / `keras.utils.pad_sequences`: lists of variable-length sequences
padded or truncated into one NumPy array, with Keras's arguments, defaults and errors."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np


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
