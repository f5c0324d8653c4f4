"""tf.random.Generator against TF 2.21's numbers (tests/random_strings_reference.json): from_seed streams, the
state after each draw, make_seeds, skip and split; create_rng_state; the global generator."""
from __future__ import annotations

import os

import pytest
import torch

import torchstrategy as tf
from tests._reference_arrays import Reference

REF = Reference(os.path.join(os.path.dirname(__file__), "random_strings_reference.json"))


def test_create_rng_state_is_tfs():
    REF.close(tf.random.create_rng_state(1, "philox"), "rng_state_1")
    REF.close(tf.random.create_rng_state(2**70 + 5, "philox"), "rng_state_big")
    REF.close(tf.random.create_rng_state([7, 8], "philox"), "rng_state_list")


def test_generator_stream_and_state_are_tfs():
    g = tf.random.Generator.from_seed(7)
    REF.close(g.uniform([5]), "gen_uniform", atol=0)
    REF.close(g.state, "gen_state_after_uniform")
    REF.close(g.normal([3]), "gen_normal", atol=1e-5)
    REF.close(g.state, "gen_state_after_normal")
    REF.close(g.uniform_full_int([2], dtype=tf.int64), "gen_full")
    REF.close(g.make_seeds(2), "gen_seeds")
    g.skip(10)
    REF.close(g.state, "gen_state_after_skip")
    REF.close(torch.stack([c.state for c in g.split(2)]), "gen_split_keys")
    REF.close(g.truncated_normal([5]), "gen_trunc", atol=1e-5)


def test_copies_resets_and_global_generator():
    g = tf.random.Generator.from_seed(3)
    copy = tf.random.Generator(copy_from=g)
    assert torch.equal(g.normal([4]), copy.normal([4]))
    g.reset_from_seed(3)
    assert torch.equal(g.normal([4]), tf.random.Generator.from_seed(3).normal([4]))
    keyed = tf.random.Generator.from_key_counter(5, [0, 0], tf.random.Algorithm.PHILOX)
    assert keyed.key.item() == 5 and keyed.algorithm == 1
    tf.random.set_global_generator(tf.random.Generator.from_seed(11))
    assert torch.equal(tf.random.get_global_generator().uniform([2]), tf.random.Generator.from_seed(11).uniform([2]))
    with pytest.raises(TypeError, match="Generator"):
        tf.random.set_global_generator(3)
    with pytest.raises(ValueError, match="copy_from or state"):
        tf.random.Generator()
