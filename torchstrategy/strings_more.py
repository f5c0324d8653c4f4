"""More tf.strings ops over NumPy object arrays of bytes: ngrams, format, bytes_split, unsorted_segment_join and
the legacy/keyed hash buckets (to_hash_bucket: TF's Hash64; to_hash_bucket_strong: SipHash-2-4)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._machinery.print_format import format_value
from torchstrategy._machinery.siphash import siphash24
from torchstrategy._tensor_convert import as_bytes, byte_strings as _strings, to_tensor
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.ragged import RaggedTensor

_MASK64 = 2**64 - 1


def _hash64(data: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TF's legacy Hash64 (a MurmurHash64A variant)."""
    m, r = 0xC6A4A7935BD1E995, 47
    n = len(data)
    h = (seed ^ (n * m)) & _MASK64
    full = n - n % 8
    for start in range(0, full, 8):
        k = int.from_bytes(data[start:start + 8], "little")
        k = (k * m) & _MASK64
        k ^= k >> r
        k = (k * m) & _MASK64
        h ^= k
        h = (h * m) & _MASK64
    tail = data[full:]
    if tail:
        for i in reversed(range(len(tail))):
            h ^= tail[i] << (8 * i)
        h = (h * m) & _MASK64
    h ^= h >> r
    h = (h * m) & _MASK64
    h ^= h >> r
    return h


def _buckets(num_buckets: Any, op: str) -> int:
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, (int, np.integer)) or num_buckets < 1:
        raise ValueError(f"{op}: num_buckets must be a positive integer, got {num_buckets!r}.")
    return int(num_buckets)


def to_hash_bucket(input: Any, num_buckets: int, name: Optional[str] = None) -> torch.Tensor:  # noqa: A002
    """Each string's legacy TF Hash64 mod num_buckets (int64); prefer to_hash_bucket_fast, as TF says."""
    op = "tf.strings.to_hash_bucket"
    buckets = _buckets(num_buckets, op)
    array = _strings(input, op)
    return torch.tensor([_hash64(item) % buckets for item in array.reshape(-1)], dtype=torch.int64).reshape(
        array.shape)


def to_hash_bucket_strong(input: Any, num_buckets: int, key: Any,  # noqa: A002
                          name: Optional[str] = None) -> torch.Tensor:
    """Each string's SipHash-2-4 under the two-int `key`, mod num_buckets (int64)."""
    op = "tf.strings.to_hash_bucket_strong"
    buckets = _buckets(num_buckets, op)
    words = list(key)
    if len(words) != 2:
        raise ValueError(f"{op}: key must be a list of two ints, got {key!r}.")
    pair = (int(words[0]) & _MASK64, int(words[1]) & _MASK64)
    array = _strings(input, op)
    return torch.tensor([siphash24(pair, item) % buckets for item in array.reshape(-1)], dtype=torch.int64).reshape(
        array.shape)


def bytes_split(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Each string cut into single bytes: a 1-D array for a scalar string, a RaggedTensor for a 1-D input."""
    array = _strings(input, "tf.strings.bytes_split")

    def pieces(item: bytes) -> list:
        return [item[i:i + 1] for i in range(len(item))]

    if array.ndim == 0:
        out = np.empty(len(array.item()), dtype=object)
        out[:] = pieces(array.item())
        return out
    if array.ndim != 1:
        raise ValueError(f"tf.strings.bytes_split: supports scalar or 1-D inputs here, got shape {array.shape}.")
    rows = [pieces(item) for item in array]
    flat = np.empty(sum(len(row) for row in rows), dtype=object)
    flat[:] = [piece for row in rows for piece in row]
    return RaggedTensor.from_row_lengths(flat, [len(row) for row in rows], validate=False)


def format(template: str, inputs: Any, placeholder: str = "{}", summarize: int = 3,  # noqa: A001
           name: Optional[str] = None) -> np.ndarray:
    """A scalar string: `template` with each `placeholder` replaced by the next input shown as tf.print shows it
    (summarize edge items per axis; -1 shows everything)."""
    op = "tf.strings.format"
    values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    parts = str(template).split(placeholder)
    if len(parts) - 1 != len(values):
        raise ValueError(f"{op}: {len(values)} inputs but the template has {len(parts) - 1} placeholders "
                         f"{placeholder!r}; give one input per placeholder.")
    shown = [format_value(v, None if summarize is None or summarize < 0 else int(summarize)) for v in values]
    text = parts[0] + "".join(value + rest for value, rest in zip(shown, parts[1:]))
    return np.array(text.encode("utf-8"), dtype=object)


def ngrams(data: Any, ngram_width: Any, separator: str = " ", pad_values: Any = None, padding_width: Any = None,
           preserve_short_sequences: bool = False, name: Optional[str] = None) -> Any:
    """The ngrams of each row of strings, joined by `separator`, for every width in `ngram_width` in turn; with
    pad_values (one string, or a (left, right) pair) each row is padded by padding_width (default width - 1)."""
    op = "tf.strings.ngrams"
    widths = [int(w) for w in (ngram_width if isinstance(ngram_width, (list, tuple)) else [ngram_width])]
    if any(w < 1 for w in widths):
        raise ValueError(f"{op}: ngram_width must be positive, got {ngram_width!r}.")
    if pad_values is None:
        left = right = None
        if padding_width is not None:
            raise ValueError(f"{op}: padding_width needs pad_values.")
    elif isinstance(pad_values, (list, tuple)):
        if len(pad_values) != 2:
            raise ValueError(f"{op}: pad_values must be a string or a (left, right) pair, got {pad_values!r}.")
        left, right = as_bytes(pad_values[0], op), as_bytes(pad_values[1], op)
    else:
        left = right = as_bytes(pad_values, op)
    if padding_width is not None and int(padding_width) < 1:
        raise ValueError(f"{op}: padding_width must be positive, got {padding_width!r}.")
    sep = as_bytes(separator, op)

    def row_ngrams(row: list) -> list:
        out: list = []
        for width in widths:
            pad = 0 if left is None else (width - 1 if padding_width is None else int(padding_width))
            padded = [left] * pad + row + [right] * pad
            out += [sep.join(padded[i:i + width]) for i in range(len(padded) - width + 1)]
        if not out and preserve_short_sequences and row:
            pad = 0 if left is None else (widths[0] - 1 if padding_width is None else int(padding_width))
            out = [sep.join([left] * pad + row + [right] * pad)]
        return out

    if isinstance(data, RaggedTensor):
        rows = [[as_bytes(v, op) for v in row] for row in data.to_list()]
        results = [row_ngrams(row) for row in rows]
        flat = np.empty(sum(len(r) for r in results), dtype=object)
        flat[:] = [g for r in results for g in r]
        return RaggedTensor.from_row_lengths(flat, [len(r) for r in results], validate=False)
    array = _strings(data, op)
    if array.ndim == 1:
        grams = row_ngrams(list(array))
        out = np.empty(len(grams), dtype=object)
        out[:] = grams
        return out
    if array.ndim != 2:
        raise ValueError(f"{op}: data must be 1-D, 2-D or a RaggedTensor, got shape {array.shape}.")
    results = [row_ngrams(list(row)) for row in array]
    out = np.empty((len(results), len(results[0]) if results else 0), dtype=object)
    for i, grams in enumerate(results):
        out[i, :] = grams
    return out


def unsorted_segment_join(inputs: Any, segment_ids: Any, num_segments: Any, separator: str = "",
                          name: Optional[str] = None) -> np.ndarray:
    """Strings joined by segment: output[s] joins (in input order, with `separator`) the inputs whose leading
    index has segment id s; segments nobody maps to are empty strings. Ids must lie in [0, num_segments)."""
    op = "tf.strings.unsorted_segment_join"
    array = _strings(inputs, op)
    ids = to_tensor(segment_ids, op=op)
    if ids.is_floating_point():
        raise TypeError(f"{op}: segment_ids must be integers, got {ids.dtype}.")
    count = int(num_segments.item() if isinstance(num_segments, torch.Tensor) else num_segments)
    if tuple(ids.shape) != array.shape[:ids.dim()]:
        raise ValueError(f"{op}: segment_ids shape {tuple(ids.shape)} must be a prefix of the input shape "
                         f"{array.shape}.")
    flat_ids = ids.reshape(-1).tolist()
    if any(i >= count or i < 0 for i in flat_ids):
        raise InvalidArgumentError(None, None,
                                   f"{op}: segment ids must lie in [0, num_segments={count}), got {flat_ids}.")
    inner = array.shape[ids.dim():]
    rows = array.reshape((len(flat_ids),) + inner)
    sep = as_bytes(separator, op)
    pieces: list = [[[] for _ in range(int(np.prod(inner)) if inner else 1)] for _ in range(count)]
    for row, seg in zip(rows, flat_ids):
        for j, item in enumerate(np.asarray(row, dtype=object).reshape(-1)):
            pieces[seg][j].append(item)
    out = np.empty((count,) + inner, dtype=object)
    flat_out = out.reshape(count, -1)
    for seg in range(count):
        for j, parts in enumerate(pieces[seg]):
            flat_out[seg, j] = sep.join(parts)
    return flat_out.reshape((count,) + inner)
