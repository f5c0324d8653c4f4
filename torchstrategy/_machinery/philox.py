"""Philox-4x32-10 as TF's counter-based random ops use it (NumPy uint64 lanes): seed scrambling, raw blocks, and
TF's conversions of the raw bits to uniform, normal and truncated-normal numbers, so stateless draws match TF's."""
from __future__ import annotations

import math

import numpy as np

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_MASK = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
#: Blocks of 4 words each group of 4 truncated-normal outputs may use (TF reserves 256 samples per output).
_TRUNCATED_GROUP_BLOCKS = 256


def blocks(key: tuple, counter: tuple, count: int, skip: int = 0, offsets: "np.ndarray | None" = None
           ) -> np.ndarray:
    """[count, 4] uint32 words: Philox rounds over the 128-bit counters counter + skip, ..., + skip + count - 1
    (or counter + each of `offsets`, when given)."""
    step = (np.arange(count, dtype=np.uint64) + np.uint64(skip)) if offsets is None else offsets.astype(np.uint64)
    lanes = []
    carry = step
    for word in counter:
        total = np.uint64(word) + (carry & _MASK)
        lanes.append(total & _MASK)
        carry = (total >> _SHIFT) + (carry >> _SHIFT)
    x0, x1, x2, x3 = lanes
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0, p1 = _M0 * x0, _M1 * x2
            x0, x1, x2, x3 = (p1 >> _SHIFT) ^ x1 ^ k0, p1 & _MASK, (p0 >> _SHIFT) ^ x3 ^ k1, p0 & _MASK
            k0, k1 = (k0 + _W0) & _MASK, (k1 + _W1) & _MASK
    return np.stack([x0, x1, x2, x3], axis=-1).astype(np.uint32)


def key_counter(seed0: int, seed1: int) -> tuple:
    """TF's (key, counter) for a stateless seed pair: the seeds go through one Philox block so that either half
    of the pair may be weak."""
    s0, s1 = seed0 % 2**64, seed1 % 2**64
    start = (s0 & 0xFFFFFFFF, s0 >> 32, s1 & 0xFFFFFFFF, s1 >> 32)
    mix = blocks((0x3EC8F720, 0x02461E29), start, 1)[0].tolist()
    return (mix[0], mix[1]), (0, 0, mix[2], mix[3])


def words(key: tuple, counter: tuple, count: int) -> np.ndarray:
    """The first `count` uint32 words of the stream, in TF's fill order."""
    return blocks(key, counter, -(-count // 4)).reshape(-1)[:count]


def _word_pairs(key: tuple, counter: tuple, count: int) -> tuple:
    """(first, second) uint32 words of `count` pairs: TF's 64-bit conversions take two words per output, two
    outputs per block."""
    raw = blocks(key, counter, -(-count // 2)).reshape(-1, 2)[:count]
    return raw[:, 0].astype(np.uint64), raw[:, 1].astype(np.uint64)


def uniform_unit(key: tuple, counter: tuple, count: int, kind: str) -> np.ndarray:
    """`count` numbers in [0, 1) built from the mantissa bits as TF does; kind is 'float16', 'bfloat16',
    'float32' or 'float64'."""
    if kind == "float64":
        high, low = _word_pairs(key, counter, count)
        bits = (((high & np.uint64(0xFFFFF)) << _SHIFT) | low) | (np.uint64(1023) << np.uint64(52))
        return bits.view(np.float64) - 1.0
    raw = words(key, counter, count)
    if kind == "float32":
        return ((raw & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1.0)
    if kind == "float16":
        half = ((raw & np.uint32(0x3FF)) | np.uint32(15 << 10)).astype(np.uint16).view(np.float16)
        return half - np.float16(1.0)
    if kind == "bfloat16":
        bits = ((raw & np.uint32(0x7F)) | np.uint32(127 << 7)).astype(np.uint32) << np.uint32(16)
        return bits.view(np.float32) - np.float32(1.0)  # exact in bfloat16
    raise ValueError(f"no uniform conversion for {kind}")


def uniform_int(key: tuple, counter: tuple, count: int, low: int, high: int, bits64: bool) -> np.ndarray:
    """`count` integers low + (bits % (high - low)) (TF's stateless integer uniform; int64 uses two words)."""
    span = high - low
    if bits64:
        first, second = _word_pairs(key, counter, count)
        raw = first | (second << _SHIFT)
        return (raw % np.uint64(span)).astype(np.int64) + low
    raw = words(key, counter, count).astype(np.uint64)
    return (raw % np.uint64(span)).astype(np.int64) + low


def full_int(key: tuple, counter: tuple, count: int, bits64: bool) -> np.ndarray:
    """`count` integers over the dtype's whole range (the raw words, bit-cast)."""
    if bits64:
        first, second = _word_pairs(key, counter, count)
        return (first | (second << _SHIFT)).view(np.int64)
    return words(key, counter, count).view(np.int32)


def _box_muller32(x0: np.ndarray, x1: np.ndarray) -> tuple:
    u1 = ((x0 & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1.0)
    u1 = np.maximum(u1, np.float32(1.0e-7))
    unit = ((x1 & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1.0)
    v1 = np.float32(2.0 * math.pi) * unit
    u2 = np.sqrt(np.float32(-2.0) * np.log(u1))
    return np.sin(v1) * u2, np.cos(v1) * u2


def normal(key: tuple, counter: tuple, count: int, kind: str) -> np.ndarray:
    """`count` standard normal numbers by TF's Box-Muller over the stream (float32 math unless kind is
    'float64'); half types are rounded from float32 by the caller."""
    if kind == "float64":
        raw = blocks(key, counter, -(-count // 2)).astype(np.uint64)
        mant = np.uint64(0xFFFFF)
        u1 = ((((raw[:, 0] & mant) << _SHIFT) | raw[:, 1]) | (np.uint64(1023) << np.uint64(52))).view(np.float64) - 1
        u2 = ((((raw[:, 2] & mant) << _SHIFT) | raw[:, 3]) | (np.uint64(1023) << np.uint64(52))).view(np.float64) - 1
        u1 = np.maximum(u1, 1.0e-7)
        radius, angle = np.sqrt(-2.0 * np.log(u1)), 2 * math.pi * u2
        return np.stack([np.sin(angle) * radius, np.cos(angle) * radius], axis=-1).reshape(-1)[:count]
    raw = blocks(key, counter, -(-count // 4))
    first = _box_muller32(raw[:, 0], raw[:, 1])
    second = _box_muller32(raw[:, 2], raw[:, 3])
    return np.stack([first[0], first[1], second[0], second[1]], axis=-1).reshape(-1)[:count]


def truncated_normal(key: tuple, counter: tuple, count: int) -> np.ndarray:
    """`count` float32 standard normals within (-2, 2): each group of 4 outputs reads its own stretch of the
    stream (256 blocks apart), drawing Box-Muller pairs and keeping those inside the bounds, as TF does. The first
    4 blocks of every group are drawn at once; the rare group they leave short reads on one block at a time."""
    groups = -(-count // 4)
    first = 4
    offsets = (np.arange(groups, dtype=np.uint64)[:, None] * np.uint64(_TRUNCATED_GROUP_BLOCKS)
               + np.arange(first, dtype=np.uint64)[None, :]).reshape(-1)
    raw = blocks(key, counter, len(offsets), offsets=offsets).reshape(groups, first * 4)
    pairs = raw.reshape(groups, -1, 2)
    values = np.stack(_box_muller32(pairs[..., 0], pairs[..., 1]), axis=-1).reshape(groups, -1)
    inside = np.abs(values) < 2.0
    ranks = np.cumsum(inside, axis=1)
    enough = ranks[:, -1] >= 4
    out = np.empty((groups, 4), np.float32)
    keep = inside & (ranks <= 4) & enough[:, None]
    out[enough] = values[keep].reshape(-1, 4)
    for group in np.flatnonzero(~enough).tolist():
        found = values[group][inside[group]][:4].tolist()
        used = first
        while len(found) < 4:
            more = blocks(key, counter, 1, skip=group * _TRUNCATED_GROUP_BLOCKS + used).reshape(-1, 2)
            used += 1
            extra = np.stack(_box_muller32(more[:, 0], more[:, 1]), axis=-1).reshape(-1)
            found += extra[np.abs(extra) < 2.0][:4 - len(found)].tolist()
        out[group] = found
    return out.reshape(-1)[:count]
