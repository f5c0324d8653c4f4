"""tf.edit_distance against TF 2.21 (tests/extra_reference.json): normalized and raw distances over a batch of
sequence pairs, positions only one side mentions, and positions neither does."""
from __future__ import annotations

import os

import numpy as np
import pytest

import torchstrategy as tf
from tests._reference_arrays import Reference

REF = Reference(os.path.join(os.path.dirname(__file__), "extra_reference.json"))
HYP = tf.sparse.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 1, 0], [1, 1, 1]], [1, 2, 3, 4, 5], [2, 3, 2])
TRUTH = tf.sparse.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 0, 2], [1, 0, 0], [1, 2, 0]], [1, 3, 2, 3, 6], [2, 3, 3])


def test_edit_distance_matches_tf():
    np.testing.assert_array_equal(tf.edit_distance(HYP, TRUTH).numpy(), REF.ref("edit_norm"))
    np.testing.assert_array_equal(tf.edit_distance(HYP, TRUTH, normalize=False).numpy(), REF.ref("edit_raw"))


def test_rank_mismatch_is_explained():
    with pytest.raises(ValueError, match="same rank"):
        tf.edit_distance(HYP, tf.sparse.SparseTensor([[0, 0]], [1], [1, 1]))
