"""CRC-32C (Castagnoli) for TF's table and tensor-bundle files: the C kernel (the CPU's CRC instruction) when
the kernels are built, else a table loop for small inputs and NumPy chunks joined by GF(2) algebra for large."""
from __future__ import annotations

import numpy as np

from torchstrategy._machinery import kernel_build


def _make_table() -> np.ndarray:
    polynomial = 0x82F63B78  # the reversed Castagnoli polynomial
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ polynomial if crc & 1 else crc >> 1
        table.append(crc)
    return np.array(table, dtype=np.uint32)


_TABLE = _make_table()
_TABLE_LIST = [int(value) for value in _TABLE]
_SMALL = 1 << 14
_NATIVE = 64  # from this many bytes the C kernel (one ctypes call) beats the Python loop
_MASK_DELTA = 0xA282EAD8


def _advance(register: int, data: bytes) -> int:
    table = _TABLE_LIST
    for byte in data:
        register = table[(register ^ byte) & 0xFF] ^ (register >> 8)
    return register


def _advance_chunks(registers: np.ndarray, chunks: np.ndarray) -> np.ndarray:
    """Runs the CRC register of every row over its row of `chunks` (rows side by side)."""
    registers = registers.copy()
    for column in range(chunks.shape[1]):
        registers = _TABLE[(registers ^ chunks[:, column]) & 0xFF] ^ (registers >> 8)
    return registers


def extend(crc: int, data: bytes) -> int:
    """The CRC-32C of the bytes that gave `crc` followed by `data` (`extend(0, data)` is the CRC of `data`)."""
    view = memoryview(data).cast("B")
    register = crc ^ 0xFFFFFFFF
    size = len(view)
    library = kernel_build.library() if size >= _NATIVE else None
    if library is not None:
        array = np.frombuffer(view, dtype=np.uint8)
        return library.ts_crc32c_extend(register, array.ctypes.data, size) ^ 0xFFFFFFFF
    return _extend_numpy(register, view, size)


def _extend_numpy(register: int, view: memoryview, size: int) -> int:
    """`extend` without the C kernel, from the complemented register (also the kernel's test reference)."""
    if size < _SMALL:
        return _advance(register, bytes(view)) ^ 0xFFFFFFFF
    count = min(16384, size // 256)
    length = size // count
    body = np.frombuffer(view[:count * length], dtype=np.uint8).reshape(count, length)
    # rows 0..count-1: the chunks from a zero register; the last 32 rows: unit registers over zero bytes,
    # which give the matrix of "advance over `length` zero bytes" (the CRC register is linear over GF(2))
    rows = np.concatenate([body, np.zeros((32, length), dtype=np.uint8)])
    start = np.concatenate([np.zeros(count, dtype=np.uint32), (np.uint32(1) << np.arange(32, dtype=np.uint32))])
    result = _advance_chunks(start, rows)
    chunk_crcs = [int(value) for value in result[:count]]
    columns = [int(value) for value in result[count:]]
    for chunk in chunk_crcs:
        shifted, bits, bit = 0, register, 0
        while bits:
            if bits & 1:
                shifted ^= columns[bit]
            bits >>= 1
            bit += 1
        register = shifted ^ chunk
    register = _advance(register, bytes(view[count * length:]))
    return register ^ 0xFFFFFFFF


def value(data: bytes) -> int:
    """The CRC-32C of `data`, e.g. value(b"123456789") == 0xE3069283."""
    return extend(0, data)


def mask(crc: int) -> int:
    """TF's stored ("masked") form of a CRC: rotated right 15 bits plus a constant."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    """The CRC a `mask()`ed value came from."""
    rotated = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rotated >> 17) | (rotated << 15)) & 0xFFFFFFFF
