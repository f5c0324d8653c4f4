"""tf.random's stateless family against TF 2.21's numbers (tests/random_strings_reference.json, from
tools/tf_reference/nn2_reference.py): uniform floats and ints, full-range ints, normal and truncated normal, split
and fold_in reproduce TF's Philox streams; the other samplers are checked for determinism and distribution."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests._reference_arrays import Reference

REF = Reference(os.path.join(os.path.dirname(__file__), "random_strings_reference.json"))
SEEDS = [([1, 2], "1_2"), ([-5, 2**40], f"-5_{2**40 % 1000}")]


@pytest.mark.parametrize("seed,tag", SEEDS)
def test_uniform_is_tfs_stream(seed, tag):
    for dt in ("float32", "float64", "float16", "bfloat16"):
        got = tf.random.stateless_uniform([7], seed, dtype=getattr(torch, dt)).to(torch.float64)
        REF.close(got, f"uniform_{dt}_{tag}", atol=0, rtol=0)
    REF.close(tf.random.stateless_uniform([5], seed, minval=-2.0, maxval=3.0), f"uniform_range_{tag}", atol=1e-6)
    REF.close(tf.random.stateless_uniform([7], seed, minval=-3, maxval=11, dtype=tf.int32), f"int32_{tag}")
    REF.close(tf.random.stateless_uniform([7], seed, minval=-3, maxval=2**40, dtype=tf.int64), f"int64_{tag}")
    REF.close(tf.random.stateless_uniform([5], seed, minval=None, maxval=None, dtype=tf.int32), f"full32_{tag}")
    REF.close(tf.random.stateless_uniform([5], seed, minval=None, maxval=None, dtype=tf.int64), f"full64_{tag}")


@pytest.mark.parametrize("seed,tag", SEEDS)
def test_normal_and_truncated_normal_are_tfs_streams(seed, tag):
    REF.close(tf.random.stateless_normal([7], seed, mean=1.0, stddev=2.0), f"normal32_{tag}", atol=1e-5)
    REF.close(tf.random.stateless_normal([5], seed, dtype=tf.float64), f"normal64_{tag}", atol=1e-12)
    REF.close(tf.random.stateless_truncated_normal([9], seed), f"trunc32_{tag}", atol=1e-5)


def test_split_and_fold_in_are_tfs():
    REF.close(tf.random.split([3, 4], 3), "split")
    REF.close(tf.random.split(np.array([3, 4], np.int64)), "split64")
    REF.close(tf.random.fold_in([3, 4], 7), "fold_in")
    assert torch.equal(tf.random.experimental.stateless_split([3, 4], 3), tf.random.split([3, 4], 3))


def test_large_draws_keep_their_distribution():
    draws = tf.random.stateless_truncated_normal([4000], [9, 9])
    assert draws.abs().max() < 2.0 and abs(draws.std().item() - 0.880) < 0.03
    normal = tf.random.stateless_normal([20000], [1, 1])
    assert abs(normal.mean().item()) < 0.03 and abs(normal.std().item() - 1.0) < 0.03


def test_seeded_samplers_repeat_and_follow_their_laws():
    for fn, args in ((tf.random.stateless_gamma, ([4000], [1, 2], 3.0)),
                     (tf.random.stateless_poisson, ([4000], [1, 2], 3.0)),
                     (tf.random.stateless_binomial, ([4000], [1, 2], 10.0, 0.3)),
                     (tf.random.stateless_parameterized_truncated_normal, ([4000], [1, 2]))):
        first, second = fn(*args), fn(*args)
        assert torch.equal(first, second)
    assert abs(tf.random.stateless_gamma([4000], [1, 2], 3.0).mean().item() - 3.0) < 0.15
    assert abs(tf.random.stateless_binomial([4000], [1, 2], 10.0, 0.3).float().mean().item() - 3.0) < 0.1
    cut = tf.random.stateless_parameterized_truncated_normal([4000], [1, 2], 1.0, 2.0, 0.0, 3.0)
    assert cut.min() >= 0.0 and cut.max() <= 3.0
    shuffled = tf.random.experimental.stateless_shuffle(torch.arange(10), [5, 6])
    assert sorted(shuffled.tolist()) == list(range(10))
    index = tf.random.experimental.index_shuffle(torch.arange(8), [1, 2, 3], 7)
    assert sorted(index.tolist()) == list(range(8))


def test_bad_seeds_and_algorithms_are_explained():
    with pytest.raises(ValueError, match="pair of ints"):
        tf.random.stateless_uniform([2], seed=1)
    with pytest.raises(NotImplementedError, match="ThreeFry"):
        tf.random.stateless_uniform([2], [1, 2], alg="threefry")
    with pytest.raises(ValueError, match="needs maxval"):
        tf.random.stateless_uniform([2], [1, 2], dtype=tf.int32)
