"""CRC-32C of formats/_crc32c.py: the C kernel (CRC instruction where the CPU has one) and its slicing-by-8
table fallback give the NumPy/Python reference's values for every length and alignment."""
from __future__ import annotations

import ctypes
import platform
import subprocess

import numpy as np
import pytest

from torchstrategy._machinery import kernel_build
from torchstrategy.formats import _crc32c

needs_kernels = pytest.mark.skipif(kernel_build.library() is None, reason="no C compiler to build the kernels")
_REFERENCE = 0xE3069283  # CRC-32C of b"123456789" (the check value of the Castagnoli CRC)


def _reference(crc: int, data: bytes) -> int:
    view = memoryview(data)
    return _crc32c._extend_numpy(crc ^ 0xFFFFFFFF, view, len(view))


def _cases():
    rng = np.random.default_rng(3)
    for size in (64, 65, 71, 72, 1000, 16_383, 16_384, 300_001):
        data = rng.integers(0, 256, size + 8, dtype=np.uint8).tobytes()
        for offset in (0, 1, 3, 7):  # every start alignment the kernel's head loop handles
            yield memoryview(data)[offset:offset + size]


@needs_kernels
def test_the_kernel_gives_the_reference_values_for_every_length_and_alignment():
    assert _crc32c.value(b"123456789" * 8) == _reference(0, b"123456789" * 8)
    assert _reference(0, b"123456789") == _REFERENCE
    for view in _cases():
        assert _crc32c.extend(0x1234ABCD, view) == _reference(0x1234ABCD, view.tobytes()), len(view)
    whole = np.arange(100_000, dtype=np.float32)  # what a bundle checksums: a tensor's buffer
    assert _crc32c.value(memoryview(whole)) == _reference(0, whole.tobytes())


def test_without_the_kernel_the_numpy_path_gives_the_same_values(monkeypatch):
    monkeypatch.setattr(kernel_build, "library", lambda: None)
    assert _crc32c.value(b"123456789") == _REFERENCE
    data = np.random.default_rng(0).integers(0, 256, 70_001, dtype=np.uint8).tobytes()
    assert _crc32c.value(data) == _crc32c._advance(0xFFFFFFFF, data) ^ 0xFFFFFFFF
    assert _crc32c.extend(_crc32c.value(data[:1000]), data[1000:]) == _crc32c.value(data)


@pytest.mark.slow  # runs the C compiler
@needs_kernels
def test_the_table_fallback_built_without_cpu_flags_gives_the_same_values(tmp_path):
    """The library as a compiler without -march=native builds it (x86-64 baseline: no SSE4.2 CRC instruction)."""
    target = tmp_path / "plain.so"
    done = subprocess.run([kernel_build._compiler(), "-O3", "-fopenmp", "-shared", "-fPIC", "-o", str(target),
                           *map(str, kernel_build.SOURCES)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lib = ctypes.CDLL(str(target))
    lib.ts_crc32c_extend.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
    lib.ts_crc32c_extend.restype = ctypes.c_uint32
    if platform.machine() == "x86_64":
        assert lib.ts_crc32c_hardware() == 0
    for view in _cases():
        array = np.frombuffer(view, dtype=np.uint8)
        got = lib.ts_crc32c_extend(0x1234ABCD ^ 0xFFFFFFFF, array.ctypes.data, len(view)) ^ 0xFFFFFFFF
        assert got == _reference(0x1234ABCD, view.tobytes()), len(view)
