"""tf.math.sobol_sample against TF 2.21's points (tests/math/special_reference.json): the sequence without its
zero point, skip, dtype, and the argument checks."""
from __future__ import annotations

import os

import pytest
import torch

import torchstrategy as tf
from tests._reference_arrays import Reference

REF = Reference(os.path.join(os.path.dirname(__file__), "special_reference.json"))


def test_sobol_sample_matches_tf():
    points = tf.math.sobol_sample(5, 6)
    assert points.dtype == torch.float32
    REF.close(points, "sobol", atol=0)
    REF.close(tf.math.sobol_sample(3, 4, skip=7, dtype=tf.float64), "sobol_skip", atol=0)
    with pytest.raises(ValueError, match="dim"):
        tf.math.sobol_sample(0, 3)
