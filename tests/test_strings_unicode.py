"""tf.strings' Unicode ops against TF 2.21 (tests/random_strings_reference.json): decoding with invalid bytes
replaced or ignored, control characters replaced, offsets, encoding to UTF-16-BE and transcoding to UTF-32-BE; and
unicode_script against every code point's value in TF (tests/unicode_script_reference.json)."""
from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests._reference_arrays import Reference

REF = Reference(os.path.join(os.path.dirname(__file__), "random_strings_reference.json"))
BAD = np.array([b"h\xc3\xa9llo", b"a\xffb\xe2\x82", b"\x01x"], dtype=object)


@pytest.mark.parametrize("errors", ["replace", "ignore"])
def test_decode_matches_tf(errors):
    out = tf.strings.unicode_decode(BAD, "UTF-8", errors=errors, replace_control_characters=True)
    REF.close(out.flat_values, f"decode_{errors}_values")
    REF.close(out.row_splits, f"decode_{errors}_splits")
    assert out.flat_values.dtype == torch.int32


def test_offsets_encode_and_transcode_match_tf():
    _, offsets = tf.strings.unicode_decode_with_offsets(BAD, "UTF-8")
    REF.close(offsets.flat_values, "decode_offsets")
    encoded = tf.strings.unicode_encode(tf.ragged.constant([[104, 233], [0x1F600, 65]]), "UTF-16-BE")
    REF.close(encoded, "encode")
    REF.close(tf.strings.unicode_transcode(BAD, "UTF-8", "UTF-32-BE"), "transcode")


def test_split_round_trips_and_strict_errors_raise():
    chars = tf.strings.unicode_split("héllo", "UTF-8")
    assert chars.tolist() == [b"h", "é".encode(), b"l", b"l", b"o"]
    assert tf.strings.unicode_encode(tf.strings.unicode_decode("héllo", "UTF-8"), "UTF-8").item() == "héllo".encode()
    pieces, offsets = tf.strings.unicode_split_with_offsets(["ab", "é"], "UTF-8")
    assert pieces.to_list() == [[b"a", b"b"], ["é".encode()]] and offsets.to_list() == [[0, 1], [0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="strict"):
        tf.strings.unicode_decode(BAD, "UTF-8", errors="strict")
    with pytest.raises(ValueError, match="encoding"):
        tf.strings.unicode_decode(BAD, "latin-1")


# ----- unicode_script: ICU's UScriptCode per code point, frozen from TF 2.21 (tensorflow-cpu 2.21.0) by
# tools/tf_reference/unicode_script_reference.py
with open(os.path.join(os.path.dirname(__file__), "unicode_script_reference.json")) as _handle:
    SCRIPTS = json.load(_handle)


def test_unicode_script_matches_tf_on_every_code_point():
    every = np.arange(0, 0x110000, dtype=np.int32)
    ours = tf.strings.unicode_script(every)
    assert ours.dtype == torch.int32 and ours.shape == (0x110000,)
    values = ours.numpy().astype("<i4")
    assert int((np.diff(values) != 0).sum()) + 1 == SCRIPTS["runs"]
    np.testing.assert_array_equal(values[SCRIPTS["sample_code_points"]], SCRIPTS["sample_scripts"])
    assert hashlib.sha256(values.tobytes()).hexdigest() == SCRIPTS["sha256_all_code_points"]


def test_unicode_script_invalid_code_points_ragged_and_shapes_as_tf():
    edges = tf.strings.unicode_script(np.array(SCRIPTS["edge_inputs"], np.int32))
    assert edges.tolist() == SCRIPTS["edge_scripts"]  # -1 outside 0..U+10FFFF, 103 (Unknown) for surrogates
    words = tf.strings.unicode_script(tf.strings.unicode_decode(SCRIPTS["words"], "UTF-8"))
    assert words.to_list() == SCRIPTS["words_scripts"]
    assert tf.strings.unicode_script(SCRIPTS["matrix"]).tolist() == SCRIPTS["matrix_scripts"]
    scalar = tf.strings.unicode_script(65)
    assert scalar.shape == () and int(scalar) == 25
    assert tf.strings.unicode_script(np.array([], np.int32)).shape == (0,)


@pytest.mark.parametrize("value", [torch.tensor([65], dtype=torch.int64), torch.tensor([65.0]),
                                   np.array(["a"], dtype=object)])
def test_unicode_script_refuses_non_int32_tensors_as_tf(value):
    # TF 2.21: InvalidArgumentError "cannot compute UnicodeScript as input #0(zero-based) was expected to be a
    # int32 tensor but is a int64 tensor"
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a int32 tensor"):
        tf.strings.unicode_script(value)
