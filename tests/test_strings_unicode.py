"""tf.strings' Unicode ops against TF 2.21 (tests/random_strings_reference.json): decoding with invalid bytes
replaced or ignored, control characters replaced, offsets, encoding to UTF-16-BE and transcoding to UTF-32-BE."""
from __future__ import annotations

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
