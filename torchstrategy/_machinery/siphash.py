"""SipHash-2-4 (the keyed hash TF's `tf.strings.to_hash_bucket_strong` uses) and TF's FingerprintCat64
(how `tf.sparse.cross_hashed` combines feature fingerprints), in plain Python."""
from __future__ import annotations

_MASK = (1 << 64) - 1


def _rotl(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (64 - shift))) & _MASK


def siphash24(key: tuple[int, int], data: bytes) -> int:
    """SipHash-2-4 of `data` with the 128-bit key (k0, k1) given as two unsigned 64-bit ints."""
    k0, k1 = key[0] & _MASK, key[1] & _MASK
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(count: int) -> None:
        for _ in range(count):
            v[0] = (v[0] + v[1]) & _MASK
            v[1] = _rotl(v[1], 13) ^ v[0]
            v[0] = _rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & _MASK
            v[3] = _rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & _MASK
            v[3] = _rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & _MASK
            v[1] = _rotl(v[1], 17) ^ v[2]
            v[2] = _rotl(v[2], 32)

    length = len(data)
    full = length - length % 8
    for at in range(0, full, 8):
        m = int.from_bytes(data[at:at + 8], "little")
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    last = int.from_bytes(data[full:], "little") | ((length & 0xFF) << 56)
    v[3] ^= last
    rounds(2)
    v[0] ^= last
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def fingerprint_cat64(first: int, second: int) -> int:
    """TF's FingerprintCat64: an order-dependent combination of two 64-bit fingerprints."""
    mul = 0xC6A4A7935BD1E995

    def shift_mix(value: int) -> int:
        return value ^ (value >> 47)

    result = (first ^ mul) & _MASK
    result ^= (shift_mix((second * mul) & _MASK) * mul) & _MASK
    result = (result * mul) & _MASK
    result = (shift_mix(result) * mul) & _MASK
    return shift_mix(result)
