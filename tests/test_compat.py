"""tf.compat's top-level helpers against TF 2.21's behaviour (values and messages frozen from tensorflow-cpu 2.21.0),
and tf.compat.v1 / v2 still refused with the clear not-provided error."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import torchstrategy as tf


def test_as_bytes():
    assert tf.compat.as_bytes("héllo") == b"h\xc3\xa9llo"
    assert tf.compat.as_bytes(b"x") == b"x"
    assert tf.compat.as_bytes(bytearray(b"ab")) == b"ab" and type(tf.compat.as_bytes(bytearray(b"ab"))) is bytes
    assert tf.compat.as_bytes("é", "latin-1") == b"\xe9"
    for bad in (1, None):
        with pytest.raises(TypeError, match=f"^Expected binary or unicode string, got {bad!r}$"):
            tf.compat.as_bytes(bad)


def test_as_text_as_str_and_as_str_any():
    assert tf.compat.as_text(b"h\xc3\xa9") == "hé" and tf.compat.as_str(b"h\xc3\xa9") == "hé"
    assert tf.compat.as_text("x") == "x"
    with pytest.raises(TypeError, match="^Expected binary or unicode string, got 3$"):
        tf.compat.as_text(3)
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_text(bytearray(b"a"))  # TF 2.21 decodes bytes only
    assert tf.compat.as_str_any(b"ab") == "ab" and tf.compat.as_str_any(3) == "3"
    assert tf.compat.as_str_any(b"\xe9", "latin-1") == "é"
    with pytest.raises(LookupError):
        tf.compat.as_bytes("x", "no-such-codec")


def test_path_to_str():
    assert tf.compat.path_to_str(pathlib.Path("/a/b")) == "/a/b"
    assert tf.compat.path_to_str("x") == "x"
    assert tf.compat.path_to_str(b"x") == b"x"  # not path-like: unchanged, as in TF
    assert tf.compat.path_to_str(3) == 3


def test_forward_compatible_and_its_horizon():
    """TF 2.21's horizon is 2026-01-16: before it forward_compatible is True, after it False."""
    assert tf.compat.forward_compatible(2020, 1, 1)
    assert tf.compat.forward_compatible(2026, 1, 15)
    assert not tf.compat.forward_compatible(2026, 1, 16)
    assert not tf.compat.forward_compatible(2030, 1, 1)
    with tf.compat.forward_compatibility_horizon(2031, 1, 1):
        assert tf.compat.forward_compatible(2030, 1, 1)
    assert not tf.compat.forward_compatible(2030, 1, 1)


def test_horizon_blocks_follow_tf_quirks(caplog):
    """TF 2.21: a date before the built-in horizon is ignored with a warning, and leaving an inner block
    restores the built-in horizon, not the outer block's date."""
    with tf.compat.forward_compatibility_horizon(2031, 1, 1):
        with caplog.at_level("WARNING", logger="tensorflow"):
            with tf.compat.forward_compatibility_horizon(2019, 1, 1):
                assert tf.compat.forward_compatible(2030, 1, 1)  # still 2031
        assert "forward compatibility date to the past date 2019-01-01" in caplog.text
        assert not tf.compat.forward_compatible(2030, 1, 1)  # back to 2026-01-16 inside the outer block
    with pytest.raises(ValueError):
        with tf.compat.forward_compatibility_horizon(2031, 2, 30):
            pass


def test_dimension_helpers():
    shape = tf.TensorShape([3, None])
    assert tf.compat.dimension_value(shape[0]) == 3 and tf.compat.dimension_value(shape[1]) is None
    assert tf.compat.dimension_value(5) == 5 and tf.compat.dimension_value(None) is None
    known, unknown = tf.compat.dimension_at_index(shape, 0), tf.compat.dimension_at_index(shape, 1)
    # TF 2.21: Dimension(3) 3 Dimension(None) ? 3 None True False None 3 Dimension(4)
    assert (repr(known), str(known), repr(unknown), str(unknown)) == ("Dimension(3)", "3", "Dimension(None)", "?")
    assert known.value == 3 and unknown.value is None
    assert (known == 3) is True and (known == 4) is False and (unknown == 3) is None and (known != 3) is False
    assert int(known) == 3 and [0, 1, 2, 3][known] == 3 and repr(known + 1) == "Dimension(4)"
    assert tf.compat.dimension_value(known) == 3 and tf.compat.dimension_value(unknown) is None
    with pytest.raises(TypeError):
        hash(known)  # unhashable, as TF's Dimension
    with pytest.raises(TypeError):
        int(unknown)
    assert tf.compat.dimension_at_index(tf.TensorShape(None), 2).value is None  # unknown rank: unknown dimension
    with pytest.raises(IndexError):
        tf.compat.dimension_at_index(tf.TensorShape([3]), 5)
    with pytest.raises(TypeError, match="expects a tf.TensorShape"):
        tf.compat.dimension_at_index([4, 5], 1)


def test_type_tuples():
    assert tf.compat.bytes_or_text_types == (bytes, str)
    assert isinstance(np.int8(1), tf.compat.integral_types) and not isinstance(1.5, tf.compat.integral_types)
    assert isinstance(np.float16(1), tf.compat.real_types) and isinstance(2, tf.compat.real_types)
    assert isinstance(1j, tf.compat.complex_types) and isinstance(np.complex64(1), tf.compat.complex_types)


def test_v1_and_v2_stay_refused():
    assert hasattr(tf, "compat")
    assert not hasattr(tf.compat, "v1") and not hasattr(tf.compat, "v2")
    with pytest.raises(AttributeError, match=r"^tf\.compat\.v1 is TensorFlow API \(namespace\) that torchstrategy "
                                             r"does not provide.*instead use: eager TF2 code"):
        tf.compat.v1.disable_eager_execution()
    with pytest.raises(AttributeError, match=r"^tf\.compat\.v2 is TensorFlow API \(namespace\).*tf\.X"):
        tf.compat.v2.constant(1)


@pytest.mark.parametrize("name, signature", [
    ("as_bytes", "(bytes_or_text, encoding='utf-8')"), ("as_str", "(bytes_or_text, encoding='utf-8')"),
    ("as_text", "(bytes_or_text, encoding='utf-8')"), ("as_str_any", "(value, encoding='utf-8')"),
    ("path_to_str", "(path)"), ("forward_compatible", "(year, month, day)"),
    ("forward_compatibility_horizon", "(year, month, day)"), ("dimension_value", "(dimension)"),
    ("dimension_at_index", "(shape, index)"),
])
def test_signatures_are_tfs(name, signature):
    """The manifest holds tf.compat's names only, so TF 2.21's signatures are frozen here."""
    from torchstrategy._machinery import api_manifest

    assert api_manifest.signature_text(getattr(tf.compat, name)) == signature
