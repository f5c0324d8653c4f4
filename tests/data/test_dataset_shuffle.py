"""Shuffle semantics (tf.data's buffer algorithm, seeds, reshuffling per epoch) and the batch
fast path (shuffle on indices + one gather per batch) agreeing exactly with the general path."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torchstrategy.data import Dataset


def order(ds):
    return [int(v) for v in ds]


def test_shuffle_is_a_permutation_and_seeded_runs_agree():
    n = 100
    first = order(Dataset.range(n).shuffle(10, seed=7))
    second = order(Dataset.range(n).shuffle(10, seed=7))
    assert sorted(first) == list(range(n))
    assert first == second
    assert first != list(range(n))
    assert order(Dataset.range(n).shuffle(10, seed=8)) != first


def test_reshuffle_each_iteration_changes_order_per_epoch_unless_disabled():
    reshuffling = Dataset.range(50).shuffle(50, seed=3)
    epochs = [order(reshuffling) for _ in range(3)]
    assert all(sorted(e) == list(range(50)) for e in epochs)
    assert epochs[0] != epochs[1] and epochs[1] != epochs[2]
    # A fresh pipeline with the same seed replays the same sequence of epochs.
    again = Dataset.range(50).shuffle(50, seed=3)
    assert [order(again) for _ in range(3)] == epochs
    fixed = Dataset.range(50).shuffle(50, seed=3, reshuffle_each_iteration=False)
    assert order(fixed) == order(fixed)


def test_shuffle_then_repeat_keeps_epochs_apart_repeat_then_shuffle_mixes_them():
    n = 6
    separated = order(Dataset.range(n).shuffle(n, seed=1).repeat(3))
    for epoch in range(3):
        assert sorted(separated[epoch * n:(epoch + 1) * n]) == list(range(n))
    assert separated[:n] != separated[n:2 * n]
    mixed_somewhere = False
    for seed in range(20):
        out = order(Dataset.range(n).repeat(2).shuffle(2 * n, seed=seed))
        assert sorted(out) == sorted(list(range(n)) * 2)
        mixed_somewhere |= sorted(out[:n]) != list(range(n))
    assert mixed_somewhere


def test_buffer_size_one_keeps_order():
    assert order(Dataset.range(30).shuffle(1, seed=5)) == list(range(30))


@pytest.mark.parametrize("buffer_size", [2, 3, 8])
def test_small_buffer_bounds_how_far_an_element_moves_forward(buffer_size):
    # Output p is drawn from the buffer after p refills, which holds only inputs 0 .. p + buffer_size - 1,
    # so input i can never appear at an output position p < i - buffer_size + 1.
    n = 40
    reached_bound = False
    for seed in range(30):
        out = order(Dataset.range(n).shuffle(buffer_size, seed=seed))
        for position, element in enumerate(out):
            assert position >= element - buffer_size + 1
            reached_bound |= position == element - buffer_size + 1
    assert reached_bound


def test_first_output_is_uniform_over_the_first_buffer():
    buffer_size, trials = 4, 2000
    counts = np.zeros(buffer_size)
    for seed in range(trials):
        counts[order(Dataset.range(10).shuffle(buffer_size, seed=seed).take(1))[0]] += 1
    # Each of the first `buffer_size` inputs is first with probability 1/buffer_size: 500 +- ~5 sigma (19).
    assert np.all(np.abs(counts - trials / buffer_size) < 100)


def test_unseeded_shuffle_follows_torch_manual_seed():
    torch.manual_seed(123)
    first = order(Dataset.range(64).shuffle(64))
    torch.manual_seed(123)
    second = order(Dataset.range(64).shuffle(64))
    torch.manual_seed(124)
    third = order(Dataset.range(64).shuffle(64))
    assert first == second and first != third


@pytest.mark.parametrize("bad", [0, -1])
def test_shuffle_buffer_must_be_positive(bad):
    with pytest.raises(ValueError, match=rf"Dataset.shuffle: buffer_size must be >= 1, got {bad}"):
        Dataset.range(5).shuffle(bad)


def _pipelines(transform):
    """The same pipeline twice: straight from slices (fast path) and behind an identity map (general)."""
    x = np.arange(53 * 6, dtype=np.float32).reshape(53, 2, 3)
    y = np.arange(53, dtype=np.int64) * 10
    fast_source = Dataset.from_tensor_slices((x, y))
    general_source = Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a, b))
    return transform(fast_source), transform(general_source)


@pytest.mark.parametrize("transform", [
    lambda ds: ds.shuffle(16, seed=11).batch(8),
    lambda ds: ds.shuffle(16, seed=11).repeat(3).batch(7, drop_remainder=True),
    lambda ds: ds.repeat(2).shuffle(30, seed=4).skip(5).take(60).batch(9),
    lambda ds: ds.shard(3, 1).shuffle(5, seed=2).batch(4),
    lambda ds: ds.shuffle(53, seed=9, reshuffle_each_iteration=False).batch(10),
])
def test_fast_path_gives_the_same_batches_as_the_general_path(transform):
    fast, general = _pipelines(transform)
    assert fast._input._index_plan() is not None and general._input._index_plan() is None
    for _ in range(2):  # two epochs: reshuffling must advance identically
        fast_batches, general_batches = list(fast), list(general)
        assert len(fast_batches) == len(general_batches) > 0
        for (fx, fy), (gx, gy) in zip(fast_batches, general_batches):
            assert torch.equal(fx, gx) and torch.equal(fy, gy)


def test_fast_path_unbatched_iteration_matches_general_path():
    fast, general = _pipelines(lambda ds: ds.shuffle(10, seed=1).take(20))
    for (fx, fy), (gx, gy) in zip(fast, general):
        assert torch.equal(fx, gx) and int(fy) == int(gy)


def test_element_spec_does_not_advance_the_shuffle():
    peeked = Dataset.range(20).shuffle(20, seed=5).map(lambda x: x)
    plain = Dataset.range(20).shuffle(20, seed=5).map(lambda x: x)
    assert peeked.element_spec.shape == ()
    assert order(peeked) == order(plain)


def _one_at_a_time(items, buffer_size, rng):
    """tf.data's shuffle written plainly, one draw per element (the reference for shuffle_stream's runs)."""
    iterator = iter(items)
    buffer = [item for _, item in zip(range(buffer_size), iterator)]
    for item in iterator:
        slot = int(rng.random() * buffer_size)
        yield buffer[slot]
        buffer[slot] = item
    while buffer:
        slot = int(rng.random() * len(buffer))
        yield buffer[slot]
        buffer[slot] = buffer[-1]
        buffer.pop()


@pytest.mark.parametrize("count,buffer_size", [(0, 4), (1, 1), (5, 2), (255, 300), (256, 256), (257, 1000),
                                               (1000, 1000), (1000, 7), (3000, 5000)])
def test_the_end_of_a_pass_drawn_in_runs_keeps_the_one_at_a_time_order(count, buffer_size):
    import random

    from torchstrategy.data._batching import shuffle_stream

    seed = f"test/{count}/{buffer_size}"
    expected = list(_one_at_a_time(range(count), buffer_size, random.Random(seed)))
    assert list(shuffle_stream(range(count), buffer_size, random.Random(seed))) == expected
    partial = shuffle_stream(range(count), buffer_size, random.Random(seed))
    assert [next(partial) for _ in range(min(count, 3))] == expected[:3]  # a consumer may stop early
    partial.close()
