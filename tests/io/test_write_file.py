"""tf.io.write_file (and its round trip through read_file)."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf


def test_write_then_read(tmp_path) -> None:
    path = tmp_path / "deep" / "dir" / "blob.bin"
    tf.io.write_file(str(path), b"a\x00b")
    assert path.read_bytes() == b"a\x00b"
    assert tf.io.read_file(str(path)).item() == b"a\x00b"
    scalar = np.empty((), dtype=object)
    scalar[()] = "héllo"
    tf.io.write_file(np.array(str(path).encode(), dtype=object), scalar)
    assert path.read_bytes() == "héllo".encode()
    tf.io.write_file(path, tf.io.read_file(path))  # a read result writes back unchanged
    assert path.read_bytes() == "héllo".encode()


def test_write_file_refuses_non_strings(tmp_path) -> None:
    with pytest.raises(TypeError, match="contents must be a string"):
        tf.io.write_file(str(tmp_path / "x"), 3)
    with pytest.raises(ValueError, match="scalar"):
        tf.io.write_file(str(tmp_path / "x"), np.array([b"a", b"b"], dtype=object))
