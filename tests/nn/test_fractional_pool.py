"""tf.nn.fractional_max_pool / fractional_avg_pool: TF 2.21's numbers where its regions are fixed (sizes that
divide evenly), and for random regions the sizes, the sequences' rules, seeding and the region maxima/means."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests._reference_arrays import Reference
from tests.nn._reference import arr

REF = Reference(os.path.join(os.path.dirname(__file__), "nn2_reference.json"))
X = arr(2, 6, 8, 3)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("pseudo", [False, True])
@pytest.mark.parametrize("overlap", [False, True])
def test_even_ratios_match_tf(kind, pseudo, overlap):
    fn = getattr(tf.nn, f"fractional_{kind}_pool")
    out, rows, cols = fn(X, [1.0, 2.0, 2.0, 1.0], pseudo_random=pseudo, overlapping=overlap, seed=5)
    key = f"frac_{kind}_{pseudo}_{overlap}"
    REF.close(out, key)
    REF.close(rows, key + "_rows")
    REF.close(cols, key + "_cols")


@pytest.mark.parametrize("pseudo", [False, True])
@pytest.mark.parametrize("overlap", [False, True])
def test_random_regions_follow_tfs_rules(pseudo, overlap):
    x = torch.tensor(arr(1, 11, 9, 2))
    out, rows, cols = tf.nn.fractional_max_pool(x, 1.6, pseudo_random=pseudo, overlapping=overlap, seed=7)
    assert out.shape == (1, 6, 5, 2)  # floor(11 / 1.6), floor(9 / 1.6)
    for seq, size, n in ((rows.tolist(), 11, 6), (cols.tolist(), 9, 5)):
        steps = np.diff(seq)
        assert seq[0] == 0 and seq[-1] == size and len(seq) == n + 1
        assert set(steps.tolist()) <= {size // n, size // n + 1}
    extra = 1 if overlap else 0
    for i in range(6):
        for j in range(5):
            region = x[0, rows[i]:min(rows[i + 1] + extra, 11), cols[j]:min(cols[j + 1] + extra, 9)]
            torch.testing.assert_close(out[0, i, j], region.amax(dim=(0, 1)))
    again = tf.nn.fractional_max_pool(x, 1.6, pseudo_random=pseudo, overlapping=overlap, seed=7)
    assert torch.equal(again[1], rows) and torch.equal(again[2], cols)
    avg, rows, cols = tf.nn.fractional_avg_pool(x, [1.0, 1.6, 1.6, 1.0], pseudo_random=pseudo, seed=3)
    torch.testing.assert_close(avg[0, 0, 0], x[0, :rows[1], :cols[1]].mean(dim=(0, 1)))


def test_bad_ratios_are_explained():
    with pytest.raises(ValueError, match="batch and channel"):
        tf.nn.fractional_max_pool(X, [2.0, 2.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="no output"):
        tf.nn.fractional_avg_pool(X, 10.0)
