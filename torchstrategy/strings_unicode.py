"""tf.strings' Unicode ops over the project's string tensors (NumPy object arrays of bytes): decode to int32 code
points (ragged per string), encode, split into characters, transcode between UTF-8, UTF-16-BE and UTF-32-BE, and
each code point's script (ICU's codes, from the table in unicode_scripts.txt)."""
from __future__ import annotations

import functools
import os
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._tensor_convert import byte_strings as _strings, to_tensor
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.ragged import RaggedTensor

_CODECS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
_WIDTH = {"UTF-8": 1, "UTF-16-BE": 2, "UTF-32-BE": 4}
_MAX_CODE_POINT = 0x10FFFF


def _codec(encoding: str, op: str) -> str:
    key = str(encoding).upper()
    if key not in _CODECS:
        raise ValueError(f"{op}: encoding must be one of {sorted(_CODECS)}, got {encoding!r}.")
    return key


def _check_errors(errors: str, op: str) -> None:
    if errors not in ("strict", "replace", "ignore"):
        raise ValueError(f"{op}: errors must be 'strict', 'replace' or 'ignore', got {errors!r}.")


def _is_control(code: int) -> bool:
    return code < 0x20  # the C0 controls, as TF documents


def _decode_one(item: bytes, encoding: str, errors: str, replacement: int, replace_control: bool,
                op: str) -> tuple:
    """(code points, start byte offsets) of one string; invalid sequences follow `errors`."""
    codec, width = _CODECS[encoding], _WIDTH[encoding]
    codes: list = []
    offsets: list = []
    position = 0
    while position < len(item):
        step = width
        if encoding == "UTF-8":
            lead = item[position]
            step = 1 if lead < 0x80 else 2 if lead >> 5 == 0x6 else 3 if lead >> 4 == 0xE else 4 if lead >> 3 == 0x1E \
                else 1
        elif encoding == "UTF-16-BE" and position + 1 < len(item) and 0xD8 <= item[position] <= 0xDB:
            step = 4
        chunk = item[position:position + step]
        try:
            text = chunk.decode(codec)
            if len(text) != 1:
                raise UnicodeDecodeError(codec, chunk, 0, len(chunk), "not one character")
            code = ord(text)
            advance = step
        except UnicodeDecodeError:
            if errors == "strict":
                raise InvalidArgumentError(None, None, f"{op}: invalid {encoding} data at byte {position} of {item!r} "
                                           "(errors='strict').") from None
            # Skip one unit, or the longest valid-looking prefix of a UTF-8 sequence, as one error.
            advance = width if encoding != "UTF-8" else _utf8_error_span(item, position)
            code = None if errors == "ignore" else int(replacement)
        if code is not None and replace_control and _is_control(code):
            # TF treats a control character like an invalid sequence: replaced, or dropped under 'ignore'.
            code = None if errors == "ignore" else int(replacement)
        if code is not None:
            codes.append(code)
            offsets.append(position)
        position += advance
    return codes, offsets


def _utf8_error_span(item: bytes, position: int) -> int:
    """Bytes one invalid UTF-8 sequence spans: the lead byte and the continuation bytes that could still belong
    to it (the Unicode 'maximal subpart' rule)."""
    lead = item[position]
    need = 1 if lead >> 5 == 0x6 else 2 if lead >> 4 == 0xE else 3 if lead >> 3 == 0x1E else 0
    span = 1
    while span <= need and position + span < len(item) and item[position + span] >> 6 == 0x2:
        span += 1
    return span


def _decode(input: Any, input_encoding: str, errors: str, replacement_char: int,  # noqa: A002
            replace_control_characters: bool, op: str) -> tuple:
    encoding = _codec(input_encoding, op)
    _check_errors(errors, op)
    array = _strings(input, op)
    rows = [_decode_one(item, encoding, errors, replacement_char, replace_control_characters, op)
            for item in array.reshape(-1)]
    return array, rows


def _shape_rows(array: np.ndarray, rows: list, dtype: torch.dtype) -> Any:
    """One row per string: a tensor for a scalar input, a RaggedTensor (ragged last axis) otherwise."""
    if array.ndim == 0:
        return torch.tensor(rows[0], dtype=dtype)
    if array.ndim != 1:
        raise ValueError(f"tf.strings.unicode_*: supports scalar or 1-D inputs here, got shape {array.shape}.")
    flat = torch.tensor([v for row in rows for v in row], dtype=dtype)
    return RaggedTensor.from_row_lengths(flat, [len(row) for row in rows], validate=False)


def unicode_decode(input: Any, input_encoding: str, errors: str = "replace", replacement_char: int = 65533,  # noqa: A002
                   replace_control_characters: bool = False, name: Optional[str] = None) -> Any:
    """Each string's int32 code points: a 1-D tensor for a scalar string, a RaggedTensor with one row per string
    otherwise. Invalid bytes raise (errors='strict'), become replacement_char ('replace') or vanish ('ignore')."""
    array, rows = _decode(input, input_encoding, errors, replacement_char, replace_control_characters,
                          "tf.strings.unicode_decode")
    return _shape_rows(array, [codes for codes, _ in rows], torch.int32)


def unicode_decode_with_offsets(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                                replacement_char: int = 65533, replace_control_characters: bool = False,
                                name: Optional[str] = None) -> tuple:
    """(code points, int64 start byte offset of each character), shaped as `unicode_decode`."""
    array, rows = _decode(input, input_encoding, errors, replacement_char, replace_control_characters,
                          "tf.strings.unicode_decode_with_offsets")
    return (_shape_rows(array, [codes for codes, _ in rows], torch.int32),
            _shape_rows(array, [offsets for _, offsets in rows], torch.int64))


def _encode_codes(codes: list, encoding: str, errors: str, replacement: int, op: str) -> bytes:
    out = []
    for code in codes:
        code = int(code)
        if not 0 <= code <= _MAX_CODE_POINT or 0xD800 <= code <= 0xDFFF:
            if errors == "strict":
                raise InvalidArgumentError(None, None, f"{op}: {code} is not a valid code point (errors='strict').")
            if errors == "ignore":
                continue
            code = int(replacement)
        out.append(chr(code))
    return "".join(out).encode(_CODECS[encoding])


def unicode_encode(input: Any, output_encoding: str, errors: str = "replace", replacement_char: int = 65533,  # noqa: A002
                   name: Optional[str] = None) -> np.ndarray:
    """Strings from int32 code points along the last (possibly ragged) axis: a 1-D input gives a scalar string."""
    op = "tf.strings.unicode_encode"
    encoding = _codec(output_encoding, op)
    _check_errors(errors, op)
    if isinstance(input, RaggedTensor):
        rows = input.to_list()
    else:
        tensor = to_tensor(input, op=op)
        if tensor.dim() == 0:
            raise ValueError(f"{op}: input must have rank >= 1 (code points along the last axis).")
        rows = tensor.tolist()
    if not rows or not isinstance(rows[0], list):
        return np.array(_encode_codes(rows, encoding, errors, replacement_char, op), dtype=object)
    if any(row and isinstance(row[0], list) for row in rows):
        raise ValueError(f"{op}: supports 1-D or 2-D (or ragged 2-D) code points here.")
    out = np.empty(len(rows), dtype=object)
    out[:] = [_encode_codes(row, encoding, errors, replacement_char, op) for row in rows]
    return out


def unicode_split(input: Any, input_encoding: str, errors: str = "replace", replacement_char: int = 65533,  # noqa: A002
                  name: Optional[str] = None) -> Any:
    """Each string cut into its characters (as strings in input_encoding), shaped as `unicode_decode`."""
    pieces, _ = unicode_split_with_offsets(input, input_encoding, errors, replacement_char)
    return pieces


def unicode_split_with_offsets(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                               replacement_char: int = 65533, name: Optional[str] = None) -> tuple:
    """(characters as strings, their int64 start byte offsets), shaped as `unicode_decode`."""
    op = "tf.strings.unicode_split_with_offsets"
    array, rows = _decode(input, input_encoding, errors, replacement_char, False, op)
    encoding = _codec(input_encoding, op)
    chars = [[_encode_codes([code], encoding, "replace", replacement_char, op) for code in codes]
             for codes, _ in rows]
    offsets = _shape_rows(array, [o for _, o in rows], torch.int64)
    if array.ndim == 0:
        out = np.empty(len(chars[0]), dtype=object)
        out[:] = chars[0]
        return out, offsets
    flat = np.empty(sum(len(row) for row in chars), dtype=object)
    flat[:] = [c for row in chars for c in row]
    if array.ndim != 1:
        raise ValueError(f"{op}: supports scalar or 1-D inputs here, got shape {array.shape}.")
    return RaggedTensor.from_row_lengths(flat, [len(row) for row in chars], validate=False), offsets


def unicode_transcode(input: Any, input_encoding: str, output_encoding: str, errors: str = "replace",  # noqa: A002
                      replacement_char: int = 65533, replace_control_characters: bool = False,
                      name: Optional[str] = None) -> np.ndarray:
    """Each string decoded from input_encoding and encoded in output_encoding (same shape)."""
    op = "tf.strings.unicode_transcode"
    source = _codec(input_encoding, op)
    target = _codec(output_encoding, op)
    _check_errors(errors, op)
    array = _strings(input, op)
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        codes, _ = _decode_one(item, source, errors, replacement_char, replace_control_characters, op)
        out[index] = _encode_codes(codes, target, errors, replacement_char, op)
    return out


@functools.lru_cache(maxsize=1)
def _script_runs() -> tuple:
    """(first code point of each run, its ICU UScriptCode): the table tools/unicode_script_table.py wrote."""
    starts, codes = [], []
    with open(os.path.join(os.path.dirname(__file__), "unicode_scripts.txt"), encoding="ascii") as handle:
        for line in handle:
            start, code = line.split()
            starts.append(int(start, 16))
            codes.append(int(code))
    return np.array(starts, np.int64), np.array(codes, np.int32)


def _code_points(input: Any) -> np.ndarray:  # noqa: A002
    op = "tf.strings.unicode_script"
    if isinstance(input, torch.Tensor):
        if input.dtype != torch.int32:
            raise InvalidArgumentError(None, None, f"cannot compute UnicodeScript as input #0(zero-based) was expected "
                                                   f"to be a int32 tensor but is a {input.dtype} tensor ({op}).")
        return input.detach().cpu().numpy()
    array = np.asarray(input)
    if array.dtype.kind not in "iu" and array.size:
        raise InvalidArgumentError(None, None, f"cannot compute UnicodeScript as input #0(zero-based) was expected to "
                                               f"be a int32 tensor but is a {array.dtype} tensor ({op}).")
    if array.size and (array.min() < -(1 << 31) or array.max() >= 1 << 31):
        raise ValueError(f"{op}: code points must fit in int32; got values from {array.min()} to {array.max()}.")
    return array.astype(np.int32)


def unicode_script(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """ICU's UScriptCode of each int32 code point (tf.strings.unicode_script): 25 Latin, 8 Cyrillic, 0 Common, 103
    Unknown for unassigned code points, -1 outside 0..U+10FFFF; ICU's Unicode 13.0 data, as TF 2.21 has it. A
    RaggedTensor keeps its row partition.

    >>> unicode_script([72, 0x416, 0x3042]).tolist()
    [25, 8, 20]
    """
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(unicode_script(input.flat_values))
    codes = _code_points(input)
    starts, scripts = _script_runs()
    valid = (codes >= 0) & (codes <= _MAX_CODE_POINT)
    found = scripts[np.searchsorted(starts, np.where(valid, codes, 0), side="right") - 1]
    return torch.from_numpy(np.where(valid, found, -1).astype(np.int32))
