"""The index path's bulk pieces in data/_batching.py: a shuffle whose buffer holds the whole pass drawn in
bulk (bit for bit the one-draw-per-element order), index runs handed to batch as slices, consecutive rows
gathered as slices."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from torchstrategy.data import Dataset
from torchstrategy.data import _state
from torchstrategy.data._batching import _random_doubles, _whole_pass, shuffle_stream


def _plain_shuffle(items, buffer_size, rng):
    """tf.data's buffer shuffle, one rng.random() per output element, written out without shortcuts."""
    items = list(items)
    buffer, rest, out = items[:buffer_size], items[buffer_size:], []
    for item in rest:
        slot = int(rng.random() * buffer_size)
        out.append(buffer[slot])
        buffer[slot] = item
    while buffer:
        slot = int(rng.random() * len(buffer))
        out.append(buffer[slot])
        buffer[slot] = buffer[-1]
        buffer.pop()
    return out


@pytest.mark.parametrize("seed", [0, 1, "x/3/7", 2**40 + 5])
@pytest.mark.parametrize("count", [0, 1, 2, 623, 624, 625, 2047, 2048, 2049, 2495, 2496, 2497, 5000])  # both sides of
# _BULK_DRAWS (2048; below it the doubles are drawn one by one), and MT19937 block edges (624 words) on both
def test_bulk_doubles_are_the_one_by_one_doubles_and_leave_the_same_state(seed, count):
    one_by_one, bulk = random.Random(seed), random.Random(seed)
    for _ in range(seed.__hash__() % 5 if isinstance(seed, int) else 3):  # start mid-state too
        one_by_one.random(), bulk.random()
    expected = [one_by_one.random() for _ in range(count)]
    drawn = _random_doubles(bulk, count)
    assert drawn.dtype == np.float64 and drawn.tolist() == expected
    assert bulk.getstate() == one_by_one.getstate()
    assert bulk.random() == one_by_one.random()


@pytest.mark.parametrize("count,buffer_size", [(0, 1), (1, 1), (2, 2), (7, 7), (7, 100), (256, 256), (257, 257),
                                               (1000, 1000), (4097, 5000)])
@pytest.mark.parametrize("seed", [0, 5, "torchstrategy.shuffle/12/3"])
def test_whole_pass_order_is_the_streaming_order(count, buffer_size, seed):
    order = _whole_pass(iter(range(count)), buffer_size, random.Random(seed))
    assert order.dtype == np.int64
    expected = _plain_shuffle(range(count), buffer_size, random.Random(seed))
    assert order.tolist() == expected
    assert list(shuffle_stream(iter(range(count)), buffer_size, random.Random(seed))) == expected


def test_whole_pass_of_a_stream_longer_than_the_buffer_falls_back_to_the_streaming_order():
    # (an input whose cardinality undercounts: the order still equals the streaming algorithm's)
    order = _whole_pass(iter(range(50)), 20, random.Random(4))
    assert order.tolist() == _plain_shuffle(range(50), 20, random.Random(4))


def _reference_passes(count, buffer_size, seed, passes):
    """The orders of successive passes of Dataset.range(count).shuffle(buffer_size, seed), one draw per element."""
    return [_plain_shuffle(range(count), buffer_size, random.Random(f"torchstrategy.shuffle/{seed}/{p}"))
            for p in range(passes)]


@pytest.mark.parametrize("count,buffer_size,batch", [(0, 4, 3), (1, 1, 1), (10, 10, 3), (53, 53, 8), (53, 60, 53),
                                                     (300, 1000, 64), (300, 299, 64)])
@pytest.mark.parametrize("seed", [1, 77])
def test_batches_of_a_whole_pass_shuffle_follow_the_one_draw_per_element_order(count, buffer_size, batch, seed):
    x = torch.arange(count * 3, dtype=torch.float32).reshape(count, 3)
    dataset = Dataset.from_tensor_slices((x, torch.arange(count))).shuffle(buffer_size, seed=seed).batch(batch)
    for expected in _reference_passes(count, buffer_size, seed, 3):
        batches = list(dataset)
        got = [int(v) for _, ys in batches for v in ys]
        assert got == expected
        assert all(torch.equal(xs, x[ys]) for xs, ys in batches)
        assert [len(ys) for _, ys in batches] == [min(batch, count - k) for k in range(0, count, batch)]


@pytest.mark.parametrize("skip", [0, 1, 3, 6, 7, 8, 20])
def test_resumed_whole_pass_shuffle_continues_the_same_order(skip):
    count, size, seed = 50, 8, 3  # 7 batches a pass; skips inside the first pass, at its end and beyond
    expected = [row for order in _reference_passes(count, count, seed, 4) for row in order]
    dataset = Dataset.range(count).shuffle(count, seed=seed).repeat(3).batch(size)
    rows = [int(v) for batch in dataset._iterate_from(skip) for v in batch]
    assert rows == expected[skip * size:3 * count]  # batches run across passes: batch k holds rows 8k .. 8k+7
    again = iter(dataset)  # the pipeline keeps its pass counter: the next run is passes 3 .. 5 from the start
    assert [int(v) for v in next(again)] == _reference_passes(count, count, seed, 4)[3][:size]


def test_saved_state_mid_epoch_restores_the_same_later_passes():
    dataset = Dataset.range(40).shuffle(40, seed=9).batch(16)
    first = [b.tolist() for b in dataset]
    state = dataset.get_state()
    later = [[b.tolist() for b in dataset] for _ in range(2)]
    again = Dataset.range(40).shuffle(40, seed=9).batch(16)
    again.set_state(state)
    assert [[b.tolist() for b in again] for _ in range(2)] == later
    assert first != later[0]
    assert [v for b in later[0] for v in b] == _reference_passes(40, 40, 9, 2)[1]


def test_index_run_takes_slices_and_iterates_ints():
    made = []
    run = _state.IndexRun(lambda: made.append(1) or np.arange(10, dtype=np.int64) * 2)
    assert made == []  # nothing is made before the first pull
    assert next(run) == 0 and type(next(iter(run))) is int and made == [1]
    assert run.take(3).tolist() == [4, 6, 8]
    assert _state.advanced(run, 2) is run
    assert list(run) == [14, 16, 18]
    assert len(run.take(5)) == 0
    closed = _state.IndexRun(lambda: made.append(2) or range(4))
    closed.close()
    assert list(closed) == [] and made == [1]


def test_consecutive_rows_are_gathered_as_slices_and_every_batch_is_a_copy():
    x = torch.arange(40, dtype=torch.float32).reshape(20, 2)
    y = np.arange(20) * 3
    plain = list(Dataset.from_tensor_slices((x, y)).batch(6))
    assert [tuple(a.shape) for a, _ in plain] == [(6, 2), (6, 2), (6, 2), (2, 2)]
    for k, (a, b) in enumerate(plain):
        assert torch.equal(a, x[6 * k:6 * k + 6]) and b.tolist() == (y[6 * k:6 * k + 6]).tolist()
        assert a.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    # TF's batches are values: dividing one in place (what `a /= 255.` does to a torch tensor) leaves the data alone
    dataset = Dataset.from_tensor_slices((x, y)).batch(6)
    for a, b in dataset:
        a /= 255.0
        b *= 0
    again = list(dataset)
    assert all(torch.equal(a, p) and torch.equal(torch.as_tensor(b), torch.as_tensor(q))
               for (a, b), (p, q) in zip(again, plain))
    assert torch.equal(x, torch.arange(40, dtype=torch.float32).reshape(20, 2)) and (y == np.arange(20) * 3).all()
    shuffled = next(iter(Dataset.from_tensor_slices(x).shuffle(20, seed=2).batch(20)))
    assert shuffled.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert sorted(shuffled[:, 0].tolist()) == x[:, 0].tolist()
    ranged = list(Dataset.range(3, 30, 4).batch(3))
    assert [r.tolist() for r in ranged] == [[3, 7, 11], [15, 19, 23], [27]]


def test_only_a_shuffle_whose_buffer_holds_the_pass_is_held_whole():
    assert isinstance(Dataset.range(10).shuffle(10, seed=1)._index_plan().indices(), _state.IndexRun)
    assert isinstance(Dataset.range(10).shuffle(10, seed=1)._index_plan().indices(4), _state.IndexRun)
    assert not isinstance(Dataset.range(10).shuffle(9, seed=1)._index_plan().indices(), _state.IndexRun)
    assert not isinstance(Dataset.range(10).repeat().shuffle(10, seed=1)._index_plan().indices(), _state.IndexRun)


@pytest.mark.parametrize("transform", [
    lambda ds: ds.shuffle(40, seed=1).shuffle(40, seed=2).batch(6),  # a held pass read whole by another
    lambda ds: ds.shuffle(40, seed=1).take(30).shuffle(40, seed=2).batch(7),
    lambda ds: ds.skip(3).shuffle(37, seed=5).batch(8, drop_remainder=True),
    lambda ds: ds.shuffle(40, seed=3).repeat(2).batch(9),
])
def test_held_passes_agree_with_the_element_path(transform):
    fast = transform(Dataset.range(40))
    general = transform(Dataset.range(40).map(lambda v: v))
    assert fast._input._index_plan() is not None and general._input._index_plan() is None
    for _ in range(2):
        assert [b.tolist() for b in fast] == [b.tolist() for b in general]
