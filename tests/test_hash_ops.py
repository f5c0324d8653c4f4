"""tf.fingerprint against TF 2.21's bytes (tools/tf_reference/tensors_reference.py)."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf


def test_fingerprint_matches_tf_for_numbers_and_strings():
    out = tf.fingerprint(tf.constant([[1, 2], [3, 4]]))
    assert out.dtype == torch.uint8 and out.tolist() == [[76, 18, 253, 133, 168, 204, 240, 10],
                                                         [254, 162, 60, 240, 103, 244, 53, 255]]
    assert tf.fingerprint(tf.constant([1.5, -2.0])).tolist() == [[64, 181, 56, 72, 223, 224, 189, 72],
                                                                [204, 185, 213, 68, 114, 142, 202, 62]]
    assert tf.fingerprint(tf.constant(["ab", "c"])).tolist() == [[30, 165, 173, 66, 82, 110, 141, 170],
                                                                [40, 123, 203, 224, 169, 24, 161, 158]]
    assert tf.fingerprint(tf.constant([["ab", "c"]])).tolist() == [[65, 83, 39, 149, 164, 245, 170, 22]]
    with pytest.raises(ValueError, match="farmhash64"):
        tf.fingerprint(tf.constant([1]), method="md5")
