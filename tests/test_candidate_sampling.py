"""The candidate samplers and compute_accidental_hits against TF 2.21 (tests/nn/nn2_reference.json, from
tools/tf_reference/nn2_reference.py): TF's expected-count formulas exactly, and the draws' shapes, ranges,
uniqueness and distributions (TF's Philox draws themselves are not reproduced)."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests._reference_arrays import Reference

REF = Reference(os.path.join(os.path.dirname(__file__), "nn", "nn2_reference.json"))
TRUE = np.array([[1, 5], [3, 0], [7, 7]], np.int64)
SAMPLERS = ["uniform_candidate_sampler", "log_uniform_candidate_sampler", "learned_unigram_candidate_sampler"]


def _probability(fn: str, ids: np.ndarray) -> np.ndarray:
    if fn == "log_uniform_candidate_sampler":
        return np.log((ids + 2.0) / (ids + 1.0)) / math.log(11)
    return np.full(ids.shape, 0.1)


@pytest.mark.parametrize("fn", SAMPLERS)
def test_expected_counts_match_tf_without_unique(fn):
    # The learned sampler keeps counts per configuration (seed included): a seed no other test uses.
    seed = 1003 if fn.startswith("learned") else 3
    sampled, true_count, sampled_count = getattr(tf.random, fn)(TRUE, 2, 4, False, 10, seed=seed)
    REF.close(true_count, f"{fn}_true", atol=1e-7)
    assert sampled.dtype == torch.int64 and sampled.shape == (4,) and true_count.dtype == torch.float32
    assert bool(((sampled >= 0) & (sampled < 10)).all())
    # For TF's own draws, our formula gives TF's sampled counts.
    tf_ids = REF.ref(f"{fn}_ids")
    np.testing.assert_allclose(_probability(fn, tf_ids) * 4, REF.ref(f"{fn}_sampled"), rtol=1e-6)
    np.testing.assert_allclose(sampled_count.numpy(), _probability(fn, sampled.numpy()) * 4, rtol=1e-6)


@pytest.mark.parametrize("fn", SAMPLERS)
def test_unique_draws_are_distinct_and_counts_follow_tfs_formula(fn):
    seed = 1004 if fn.startswith("learned") else 3
    sampled, true_count, sampled_count = getattr(tf.random, fn)(TRUE, 2, 4, True, 10, seed=seed)
    assert len(set(sampled.tolist())) == 4
    # 1 - (1 - p) ** tries for one integer number of tries >= 4, as TF reports (its own numbers say the same).
    for ids, trues, counts in ((sampled.numpy(), true_count.numpy(), sampled_count.numpy()),
                               (REF.ref(f"{fn}_unique_ids"), REF.ref(f"{fn}_unique_true"),
                                REF.ref(f"{fn}_unique_sampled"))):
        p = _probability(fn, ids)
        if np.allclose(counts, p * 4, rtol=1e-6):  # the first 4 draws were distinct: TF reports p * n
            np.testing.assert_allclose(trues, _probability(fn, TRUE) * 4, rtol=1e-6)
            continue
        tries = math.log1p(-float(counts[0])) / math.log1p(-float(p[0]))
        assert abs(tries - round(tries)) < 1e-3 and round(tries) > 4
        np.testing.assert_allclose(counts, -np.expm1(round(tries) * np.log1p(-p)), rtol=1e-5)
        np.testing.assert_allclose(trues, -np.expm1(round(tries) * np.log1p(-_probability(fn, TRUE))), rtol=1e-5)


def test_learned_unigram_counts_carry_over_between_equal_calls():
    # TF 2.21 eager: a second call with equal attributes sees the first call's true classes counted.
    first = tf.random.learned_unigram_candidate_sampler(TRUE, 2, 4, False, 10, seed=1005)
    REF.close(first[1], "learned_unigram_candidate_sampler_true", atol=1e-7)
    second = tf.random.learned_unigram_candidate_sampler(TRUE, 2, 4, False, 10, seed=1005)
    REF.close(second[1], "learned_second_true", atol=1e-7)
    other = tf.random.learned_unigram_candidate_sampler(TRUE, 2, 3, False, 10, seed=1005)  # another configuration
    np.testing.assert_allclose(other[1].numpy(), 0.3, rtol=1e-6)


def test_fixed_unigram_matches_tf_with_reserved_ids_and_shards():
    uni = [1.0, 2.0, 3.0, 4.0, 0.5, 6.0, 7.0, 2.5]
    _, true_count, sampled_count = tf.random.fixed_unigram_candidate_sampler(
        np.array([[0, 1], [2, 3]], np.int64), 2, 3, False, 5, distortion=0.75, num_reserved_ids=2, num_shards=2,
        shard=1, unigrams=uni, seed=2)
    REF.close(true_count, "fixed_true", atol=1e-7)
    _, true_count, _ = tf.nn.fixed_unigram_candidate_sampler(np.array([[0], [7]], np.int64), 1, 3, False, 8,
                                                             unigrams=uni, seed=2)
    REF.close(true_count, "fixed_plain_true", atol=1e-7)


def test_fixed_unigram_reads_a_vocab_file_and_rejects_bad_input(tmp_path):
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("the,4\nof,1\nzero,0\n")
    sampled, true_count, _ = tf.random.fixed_unigram_candidate_sampler(np.array([[0]], np.int64), 1, 500, False, 3,
                                                                        vocab_file=str(vocab), seed=1)
    assert 2 not in sampled.tolist() and true_count.item() == pytest.approx(0.8 * 500)
    assert abs((sampled == 0).float().mean().item() - 0.8) < 0.06
    with pytest.raises(ValueError, match="range_max is 4"):
        tf.random.fixed_unigram_candidate_sampler(np.array([[0]], np.int64), 1, 2, False, 4, vocab_file=str(vocab))
    with pytest.raises(ValueError, match="exactly one of vocab_file and unigrams"):
        tf.random.fixed_unigram_candidate_sampler(np.array([[0]], np.int64), 1, 2, False, 4)


def test_samplers_follow_their_distributions():
    big = np.zeros((1, 1), np.int64)
    ids = tf.random.log_uniform_candidate_sampler(big, 1, 20000, False, 5, seed=1)[0].numpy()
    expected = np.log((np.arange(5) + 2.0) / (np.arange(5) + 1.0)) / math.log(6)
    np.testing.assert_allclose(np.bincount(ids, minlength=5) / 20000, expected, atol=0.015)
    ids = tf.random.uniform_candidate_sampler(big, 1, 20000, False, 4, seed=1)[0].numpy()
    np.testing.assert_allclose(np.bincount(ids, minlength=4) / 20000, 0.25, atol=0.015)
    first = tf.random.uniform_candidate_sampler(big, 1, 6, True, 50, seed=9)[0]
    assert torch.equal(first, tf.random.uniform_candidate_sampler(big, 1, 6, True, 50, seed=9)[0])


def test_all_candidate_sampler_and_accidental_hits_match_tf():
    sampled, true_count, sampled_count = tf.nn.all_candidate_sampler(TRUE, 2, 8, True)
    REF.close(sampled, "all_ids")
    REF.close(true_count, "all_true")
    REF.close(sampled_count, "all_sampled")
    rows, ids, weights = tf.nn.compute_accidental_hits(TRUE, np.array([5, 7, 2, 1, 7], np.int64), 2)
    REF.close(rows, "hits_indices")
    REF.close(ids, "hits_ids")
    assert rows.dtype == torch.int32 and ids.dtype == torch.int64
    np.testing.assert_array_equal(weights.numpy(), REF.ref("hits_weights"))


def test_bad_arguments_are_explained():
    with pytest.raises(ValueError, match=r"\[batch_size, num_true\]"):
        tf.random.uniform_candidate_sampler([1, 2], 1, 2, False, 5)
    with pytest.raises(ValueError, match="num_sampled"):
        tf.random.uniform_candidate_sampler(TRUE, 2, 11, True, 10)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[0, 6\)"):
        tf.random.all_candidate_sampler(TRUE, 2, 6, True)  # TF 2.21: `true_candidate` out of range [0, 6)
    with pytest.raises(TypeError, match="int64"):
        tf.random.uniform_candidate_sampler(np.zeros((2, 1), np.float32), 1, 2, False, 5)
