"""tf.random: dtypes and argument rules as in TF 2.21, distribution checks, and determinism of seeds,
stateless seed pairs and tf.random.Generator (TF's own numbers are checked in test_stateless_random.py and
test_random_generator.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_uniform_float_and_int() -> None:
    draws = tf.random.uniform([20000], minval=-2.0, maxval=3.0, seed=3)
    assert draws.dtype == torch.float32 and draws.min() >= -2.0 and draws.max() < 3.0
    assert abs(draws.mean().item() - 0.5) < 0.05
    ints = tf.random.uniform([5000], maxval=5, dtype=tf.int32, seed=1)
    assert ints.dtype == torch.int32 and set(ints.tolist()) == {0, 1, 2, 3, 4}
    assert tf.random.uniform([2], dtype=tf.float64).dtype == torch.float64
    assert tf.random.uniform([3], dtype=tf.float16).dtype == torch.float16
    with pytest.raises(ValueError, match="needs maxval"):
        tf.random.uniform([2], dtype=tf.int32)  # TF 2.21: "Must specify maxval for integer dtype"
    assert torch.equal(tf.random.uniform([4], seed=7), tf.random.uniform([4], seed=7))


def test_normal_truncated_normal() -> None:
    draws = tf.random.normal([20000], mean=1.0, stddev=2.0, seed=0)
    assert abs(draws.mean().item() - 1.0) < 0.06 and abs(draws.std().item() - 2.0) < 0.06
    cut = tf.random.truncated_normal([20000], mean=0.0, stddev=1.5, seed=0)
    assert cut.abs().max().item() <= 3.0 + 1e-6 and cut.dtype == torch.float32
    # A normal truncated at 2 sigma has standard deviation ~0.880 sigma.
    assert abs(cut.std().item() - 0.880 * 1.5) < 0.04
    with pytest.raises(ValueError, match="float dtype"):
        tf.random.normal([2], dtype=tf.int32)


def test_set_seed_repeats_global_draws() -> None:
    tf.random.set_seed(5)
    first = tf.random.normal([3])
    tf.random.set_seed(5)
    assert torch.equal(first, tf.random.normal([3]))


def _draws() -> tuple:
    import random

    return random.random(), float(np.random.rand()), float(torch.rand(()))


def test_rng_fingerprint_reads_every_generator_without_drawing() -> None:
    import random

    tf.random.set_seed(3)
    fingerprint = tf.random.rng_fingerprint()
    assert fingerprint == tf.random.rng_fingerprint() and 0 <= fingerprint < 2**63
    after_reading = _draws()
    tf.random.set_seed(3)
    assert _draws() == after_reading  # reading the fingerprint drew nothing
    tf.random.set_seed(3)
    seen = {tf.random.rng_fingerprint()}
    for draw in (random.random, np.random.rand, torch.rand):  # a draw from any one generator changes it
        draw(1) if draw is torch.rand else draw()
        seen.add(tf.random.rng_fingerprint())
    assert len(seen) == 4


def test_set_derived_seed_gives_the_same_streams_for_the_same_keys() -> None:
    tf.random.set_derived_seed(123, 9, 0)
    first = _draws()
    torch.rand(5)
    tf.random.set_derived_seed(123, 9, 0)
    assert _draws() == first
    others = set()
    for keys in ((9, 1), (10, 0)):  # another replica, another step
        tf.random.set_derived_seed(123, *keys)
        others.add(_draws())
    tf.random.set_derived_seed(124, 9, 0)  # another job seed
    others.add(_draws())
    assert first not in others and len(others) == 3


def test_categorical_shuffle_gamma_poisson() -> None:
    logits = tf.math.log([[0.1, 0.9], [0.9, 0.1]])
    samples = tf.random.categorical(logits, 4000, seed=2)
    assert samples.dtype == torch.int64 and samples.shape == (2, 4000)  # TF 2.21 default int64
    assert abs(samples[0].double().mean().item() - 0.9) < 0.03 and abs(samples[1].double().mean().item() - 0.1) < 0.03
    assert tf.random.categorical(logits, 3, dtype=tf.int32).dtype == torch.int32
    data = torch.arange(10)
    assert sorted(tf.random.shuffle(data, seed=1).tolist()) == list(range(10))
    shapes = tf.random.gamma([2], alpha=[1.0, 2.0])
    assert shapes.shape == (2, 2)  # TF 2.21: shape + alpha.shape
    many = tf.random.gamma([20000], alpha=3.0, beta=2.0, seed=4)
    assert abs(many.mean().item() - 1.5) < 0.05  # mean alpha / beta
    assert torch.equal(tf.random.gamma([5], alpha=2.0, seed=9), tf.random.gamma([5], alpha=2.0, seed=9))
    assert tf.random.poisson([3], lam=[1.0, 2.0]).shape == (3, 2)  # TF 2.21
    counts = tf.random.poisson([20000], lam=4.0, dtype=tf.int32, seed=1)
    assert counts.dtype == torch.int32 and abs(counts.double().mean().item() - 4.0) < 0.08


def test_seeded_sampling_leaves_the_global_stream_alone() -> None:
    tf.random.set_seed(11)
    expected = torch.rand(3)
    tf.random.set_seed(11)
    tf.random.gamma([4], alpha=1.0, seed=123)
    assert torch.equal(torch.rand(3), expected)


def test_stateless_ops_are_deterministic_per_seed_pair() -> None:
    for fn in (tf.random.stateless_uniform, tf.random.stateless_normal, tf.random.stateless_truncated_normal):
        first = fn([6], seed=[1, 2])
        assert torch.equal(first, fn([6], seed=[1, 2]))
        assert not torch.equal(first, fn([6], seed=[1, 3]))
        assert not torch.equal(first, fn([6], seed=[2, 2]))
    ints = tf.random.stateless_uniform([1000], seed=[1, 2], minval=0, maxval=10, dtype=tf.int32)
    assert ints.dtype == torch.int32 and ints.min() >= 0 and ints.max() < 10
    classes = tf.random.stateless_categorical(tf.zeros([1, 3]), 5, seed=np.array([4, 5]))
    assert torch.equal(classes, tf.random.stateless_categorical(tf.zeros([1, 3]), 5, seed=[4, 5]))
    with pytest.raises(ValueError, match="pair of ints"):
        tf.random.stateless_uniform([2], seed=1)  # TF 2.21 refuses a scalar seed too


def test_generator_streams() -> None:
    first, second = tf.random.Generator.from_seed(1), tf.random.Generator.from_seed(1)
    a = first.normal([4])
    assert torch.equal(a, second.normal([4]))
    assert not torch.equal(a, first.normal([4]))  # the stream moves on
    assert first.uniform([3], maxval=5, dtype=tf.int64).dtype == torch.int64
    assert first.truncated_normal([100]).abs().max() <= 2.0
    seeds = first.make_seeds(3)
    assert seeds.shape == (2, 3) and seeds.dtype == torch.int64
    first.reset_from_seed(1)
    assert torch.equal(first.normal([4]), a)
    children = tf.random.Generator.from_seed(3).split(2)
    assert not torch.equal(children[0].normal([3]), children[1].normal([3]))
    tf.random.set_seed(0)
    g = tf.random.Generator.from_seed(8)
    tf.random.set_seed(99)
    assert torch.equal(g.normal([2]), tf.random.Generator.from_seed(8).normal([2]))  # independent of set_seed
