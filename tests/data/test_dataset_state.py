"""Exact resume of tf.data pipelines: get_state/set_state into a freshly built pipeline (as in a
restarted process), _iterate_from == islice, iterator state_dict/load_state_dict mid-epoch (also
through prefetch), errors for foreign states, and DistributedDataset.iterate_from/get_state."""
from __future__ import annotations

import copy
import itertools
import json
import threading
import time

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

from torchstrategy.data import Dataset
from torchstrategy.data.distribute import DistributedDataset
from torchstrategy.distribute.values import InputContext

X = np.arange(26 * 3, dtype=np.float32).reshape(26, 3)
Y = np.arange(26, dtype=np.int64) * 10


def values(element):
    """An element as nested Python lists/numbers, so whole epochs compare with ==."""
    if isinstance(element, torch.Tensor):
        return element.tolist()
    if isinstance(element, (tuple, list)):
        return [values(item) for item in element]
    if isinstance(element, dict):
        return {key: values(item) for key, item in element.items()}
    return element


def epoch(ds):
    return [values(element) for element in ds]


# Construction code only: a restarted process runs the same code after the same torch.manual_seed.
PIPELINES = {
    "slices_shuffle_seed_batch": lambda: Dataset.from_tensor_slices((X, Y)).shuffle(16, seed=3).batch(5),
    "unseeded_shuffle": lambda: Dataset.range(40).shuffle(40).batch(8),
    "shuffle_reshuffle_repeat": lambda: Dataset.range(12).shuffle(12, seed=5, reshuffle_each_iteration=True)
    .repeat(3).batch(5),
    "repeat_then_shuffle": lambda: Dataset.range(12).repeat(2).shuffle(7, seed=6),
    "map_prefetch": lambda: Dataset.from_tensor_slices(np.arange(30.0)).shuffle(10, seed=7)
    .map(lambda v: v * v, num_parallel_calls=2).batch(4).prefetch(2),
    "zip": lambda: Dataset.zip((Dataset.range(9).shuffle(9, seed=1),
                                Dataset.range(100, 112).shuffle(4, seed=2))).batch(2),
    "concatenate": lambda: Dataset.range(5).shuffle(5, seed=1).concatenate(Dataset.range(10, 17).shuffle(3)),
    "filter": lambda: Dataset.range(30).shuffle(8, seed=6).filter(lambda v: v % 3 == 0).batch(2),
}


def build(name, torch_seed=77):
    torch.manual_seed(torch_seed)
    return PIPELINES[name]()


# ---------------------------------------------------------------- get_state / set_state


@pytest.mark.parametrize("name", sorted(PIPELINES))
@pytest.mark.parametrize("epochs_before", [1, 3])
def test_set_state_on_a_fresh_pipeline_replays_the_next_epochs(name, epochs_before):
    original = build(name)
    for _ in range(epochs_before):
        epoch(original)
    state = original.get_state()
    assert json.loads(json.dumps(state)) == state  # plain data, fit for a checkpoint
    expected = [epoch(original) for _ in range(2)]

    assert epoch(build(name)) != expected[0]  # without the state a restart would replay epoch 0
    fresh = build(name)
    fresh.set_state(json.loads(json.dumps(state)))
    assert [epoch(fresh) for _ in range(2)] == expected
    assert fresh.get_state() == original.get_state()


def test_state_carries_the_seed_of_an_unseeded_shuffle():
    original = build("unseeded_shuffle", torch_seed=1)
    epoch(original)
    state = original.get_state()
    expected = epoch(original)
    other_seed = build("unseeded_shuffle", torch_seed=2)  # a restart that forgot the same global seed
    other_seed.set_state(state)
    assert epoch(other_seed) == expected


def test_state_reaches_shuffles_inside_nested_and_shared_inputs():
    def make():
        inner = Dataset.range(6).shuffle(6, seed=1)
        outer = Dataset.range(20, 23).shuffle(3, seed=2).repeat(2)
        return Dataset.zip((inner, inner.map(lambda v: v + 100), outer)).concatenate(
            Dataset.zip((inner, inner, inner)))

    original = make()
    epoch(original)
    state = original.get_state()
    shuffles = [op for op in state["ops"] if op["op"] == "ShuffleDataset"]
    assert len(shuffles) == 2  # the shared `inner` is recorded once
    assert sorted(op["state"]["passes"] for op in shuffles) == [2, 5]  # outer repeats twice; inner used 5 times
    expected = epoch(original)
    fresh = make()
    fresh.set_state(state)
    assert epoch(fresh) == expected


def test_a_cache_filled_on_a_later_pass_is_refilled_with_the_same_elements():
    def make():
        base = Dataset.range(10).shuffle(10, seed=4)
        return base, base.cache().repeat(2)

    base, original = make()
    first_pass = epoch(base)  # the cache below is then filled from the input's second pass
    filled = epoch(original)
    assert filled[:10] == filled[10:] and filled[:10] != first_pass
    state = original.get_state()
    expected = epoch(original)
    assert expected == filled

    _, fresh = make()
    assert epoch(make()[1])[:10] == first_pass  # a fresh cache alone would hold the first pass
    fresh.set_state(state)
    assert epoch(fresh) == expected
    assert fresh.get_state() == original.get_state()  # the cache's input is back where it was


# ---------------------------------------------------------------- _iterate_from


SKIP_PIPELINES = {
    "fast_shuffle_batch": lambda: Dataset.from_tensor_slices((X, Y)).shuffle(7, seed=1).batch(4),
    "repeat_across_epochs": lambda: Dataset.range(7).shuffle(5, seed=2).repeat(3),
    "repeat_forever_take": lambda: Dataset.range(7).shuffle(5, seed=2).repeat().take(40),
    "batch_repeat_prefetch": lambda: Dataset.range(10).shuffle(10, seed=3).batch(3).repeat(3).prefetch(2),
    "map_prefetch": lambda: Dataset.range(15).shuffle(6, seed=5).map(lambda v: v * 2).batch(4).prefetch(3),
    "parallel_map_repeat": lambda: Dataset.range(15).shuffle(6, seed=5).map(lambda v: v * 2, num_parallel_calls=2)
    .repeat(2),
    "zip": lambda: Dataset.zip((Dataset.range(9).shuffle(9, seed=1),
                                Dataset.range(12).shuffle(4, seed=2).repeat(2))).batch(2),
    "concatenate_repeat": lambda: Dataset.range(5).shuffle(5, seed=1).concatenate(
        Dataset.range(10, 17).shuffle(3, seed=9)).repeat(2),
    "filter_repeat": lambda: Dataset.range(30).shuffle(8, seed=6).filter(lambda v: v % 3 == 0).batch(2).repeat(2),
    "skip_take_shard": lambda: Dataset.range(40).repeat(2).shuffle(11, seed=7).skip(3).take(60).shard(3, 1).batch(4),
    "shard_general_path": lambda: Dataset.range(40).map(lambda v: v).shuffle(11, seed=7).shard(4, 3).repeat(3),
    "nested_repeats": lambda: Dataset.range(4).shuffle(4, seed=8).repeat(2).shuffle(3, seed=9).repeat(3),
    "enumerate": lambda: Dataset.range(9).shuffle(9, seed=3).enumerate(5).repeat(2),
    "padded_batch": lambda: Dataset.range(1, 9).shuffle(4, seed=1).map(lambda n: torch.arange(n)).padded_batch(3)
    .repeat(2),
    "unbatch": lambda: Dataset.range(10).shuffle(10, seed=1).batch(3).unbatch().repeat(2),
    "cache": lambda: Dataset.range(8).shuffle(8, seed=2).cache().repeat(3),
    "dict_drop_remainder": lambda: Dataset.from_tensor_slices({"a": np.arange(11)}).shuffle(5, seed=1).repeat(2)
    .batch(4, drop_remainder=True),
}


@pytest.mark.parametrize("name", sorted(SKIP_PIPELINES))
def test_iterate_from_equals_islice_and_consumes_the_same_state(name):
    make = SKIP_PIPELINES[name]
    total = len(epoch(make()))
    for skip in sorted({1, 2, 3, total // 2, total - 1, total, total + 3}):
        reference, resumed = make(), make()
        epoch(reference), epoch(resumed)  # start from a later epoch: reshuffling state is in play
        expected = [values(e) for e in itertools.islice(iter(reference), skip, None)]
        assert [values(e) for e in resumed._iterate_from(skip)] == expected
        assert resumed.get_state() == reference.get_state()  # one iteration's worth of state, as iter()
        assert epoch(resumed) == epoch(reference)


class _CountGathers(TorchFunctionMode):
    """Counts row gathers (index_select) and row views (select) made in this thread."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in ("index_select", "select"):
            self.count += 1
        return func(*args, **(kwargs or {}))


def _slices():
    return Dataset.from_tensor_slices((torch.zeros(1000, 3), torch.arange(1000))).shuffle(100, seed=1)


@pytest.mark.parametrize("make", [lambda: _slices().repeat(3).batch(10), lambda: _slices().batch(10).repeat(3)],
                         ids=["repeat_then_batch", "batch_then_repeat"])
def test_iterate_from_on_the_index_path_gathers_no_skipped_rows(make):
    with _CountGathers() as counter:
        resumed = make()._iterate_from(150)
    assert counter.count == 0  # the skip ran in this thread, in index space
    batch = next(resumed)
    resumed.close()
    reference = _slices()
    reference_epochs = [epoch(reference) for _ in range(2)]
    expected_rows = [row[1] for row in reference_epochs[1][500:510]]  # batch 150 = rows 500..509 of pass 1
    assert batch[1].tolist() == expected_rows


def test_the_index_path_gathers_only_the_produced_batch():
    resumed = _slices().repeat(3).batch(10)._iterate_from(150)
    with _CountGathers() as counter:
        next(resumed)
    assert counter.count == 2  # one gather per component, no per-row views


@pytest.mark.parametrize("make", [lambda: Dataset.range(20000).shuffle(20000, seed=1).repeat().batch(100),
                                  lambda: Dataset.range(20000).shuffle(20000, seed=1).batch(100).repeat().prefetch(2)],
                         ids=["repeat_then_batch", "batch_repeat_prefetch"])
def test_iterate_from_skips_whole_repeated_passes_without_generating_them(make):
    ds = make()
    start = time.perf_counter()
    resumed = ds._iterate_from(100_000)  # 500 passes of 20000 shuffled indices
    batches = list(itertools.islice(resumed, 200))  # exactly pass 500
    elapsed = time.perf_counter() - start
    resumed.close()
    assert elapsed < 2.0  # generating the skipped passes element by element takes far longer
    assert sorted(torch.cat(batches).tolist()) == list(range(20000))
    shuffle_state = next(op["state"] for op in ds.get_state()["ops"] if op["op"] == "ShuffleDataset")
    # pass 500 is the current one; a prefetch thread may already have started pass 501
    assert shuffle_state["passes"] == 501 or (isinstance(ds, type(Dataset.range(1).prefetch(1)))
                                              and shuffle_state["passes"] == 502)


# ---------------------------------------------------------------- iterator state_dict / load_state_dict


def _prefetch_threads():
    return {t for t in threading.enumerate() if t.name == "tsdata-prefetch" and t.is_alive()}


@pytest.mark.parametrize("name,consumed", [("slices_shuffle_seed_batch", 2), ("map_prefetch", 3),
                                           ("shuffle_reshuffle_repeat", 4), ("zip", 1), ("filter", 2),
                                           ("unseeded_shuffle", 0)])
def test_iterator_state_resumes_mid_epoch_in_a_fresh_pipeline(name, consumed):
    original = build(name)
    epoch(original)
    iterator = iter(original)
    for _ in range(consumed):
        next(iterator)
    saved = json.loads(json.dumps(iterator.state_dict()))
    assert saved["produced"] == consumed
    rest = [values(e) for e in iterator]
    following_epoch = epoch(original)

    resumed_dataset = build(name)
    resumed = iter(resumed_dataset)
    next(resumed)
    resumed.load_state_dict(saved)
    assert [values(e) for e in resumed] == rest
    assert resumed.produced == consumed + len(rest)
    assert epoch(resumed_dataset) == following_epoch


def test_iterator_state_through_prefetch_counts_what_the_consumer_received():
    def make():
        return Dataset.from_tensor_slices(np.arange(40)).shuffle(40, seed=2).map(lambda v: v + 1).prefetch(16)

    original = make()
    iterator = iter(original)
    taken = [int(next(iterator)) for _ in range(5)]
    time.sleep(0.1)  # the producer runs up to 16 elements ahead of the consumer meanwhile
    saved = iterator.state_dict()
    assert saved["produced"] == 5
    rest = [int(v) for v in iterator]
    assert sorted(taken + rest) == list(range(1, 41))

    threads_before = _prefetch_threads()
    other = iter(make())
    next(other)
    producer = (_prefetch_threads() - threads_before).pop()
    other.load_state_dict(saved)
    producer.join(timeout=5)
    assert not producer.is_alive()  # the replaced iterator's prefetch thread was stopped
    assert [int(v) for v in other] == rest

    # Saving again after a resume continues the same sequence.
    again = iter(make())
    again.load_state_dict(saved)
    next(again), next(again)
    third = iter(make())
    third.load_state_dict(again.state_dict())
    assert [int(v) for v in third] == rest[2:]


def test_load_state_dict_rewinds_the_same_iterator():
    ds = Dataset.range(10).shuffle(10, seed=3).batch(3)
    iterator = iter(ds)
    next(iterator)
    saved = copy.deepcopy(iterator.state_dict())
    rest = [values(e) for e in iterator]
    iterator.load_state_dict(saved)
    assert [values(e) for e in iterator] == rest


# ---------------------------------------------------------------- errors


def test_state_from_a_different_pipeline_is_refused_and_changes_nothing():
    source = Dataset.range(20).shuffle(20, seed=1).batch(4)
    epoch(source)
    state = source.get_state()
    target = Dataset.range(20).shuffle(20, seed=9).batch(5)
    before = target.get_state()
    with pytest.raises(ValueError, match=r"different pipeline.*BatchDataset\(batch_size=5.*batch_size=4"):
        target.set_state(state)
    assert target.get_state() == before
    with pytest.raises(ValueError, match=r"different pipeline.*MapDataset"):
        Dataset.range(20).shuffle(20, seed=1).map(lambda v: v).batch(4).set_state(state)
    with pytest.raises(ValueError, match=r"different pipeline.*buffer_size=10"):
        Dataset.range(20).shuffle(10, seed=1).batch(4).set_state(state)
    with pytest.raises(ValueError, match=r"different pipeline.*RangeDataset\(\) in this dataset but ShuffleDataset"):
        Dataset.range(20).batch(4).set_state(state)


@pytest.mark.parametrize("bad", [None, "state", {}, {"format": "other", "ops": []}])
def test_set_state_refuses_what_get_state_did_not_make(bad):
    with pytest.raises(ValueError, match=r"expected the dict returned by Dataset.get_state\(\)"):
        Dataset.range(4).set_state(bad)


def test_damaged_shuffle_state_is_refused():
    state = Dataset.range(4).shuffle(4, seed=1).get_state()
    state["ops"][0]["state"]["passes"] = -3
    with pytest.raises(ValueError, match="shuffle pass counter must be >= 0"):
        Dataset.range(4).shuffle(4, seed=1).set_state(state)


def test_load_state_dict_errors_leave_the_iterator_running():
    saved = iter(Dataset.range(8).batch(2)).state_dict()
    iterator = iter(Dataset.range(8).batch(4))
    first = next(iterator)
    with pytest.raises(ValueError, match="different pipeline"):
        iterator.load_state_dict(saved)
    with pytest.raises(ValueError, match=r"'produced' must be an integer >= 0"):
        iterator.load_state_dict({**iter(Dataset.range(8).batch(4)).state_dict(), "produced": "3"})
    with pytest.raises(ValueError, match=r"expected the dict returned by DatasetIterator.state_dict\(\)"):
        iterator.load_state_dict({"produced": 1})
    assert values(first) == [0, 1, 2, 3] and values(next(iterator)) == [4, 5, 6, 7]


def test_iterate_from_refuses_a_negative_skip():
    with pytest.raises(ValueError, match="skip must be >= 0"):
        Dataset.range(4)._iterate_from(-1)


# ---------------------------------------------------------------- DistributedDataset


def _distributed(dataset, replica_id, verify=None):
    context = InputContext(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=2)
    return DistributedDataset(dataset, context, torch.device("cpu"), replica_id=replica_id, verify=verify)


@pytest.mark.parametrize("replica_id", [0, 1])
def test_distributed_iterate_from_skips_global_batches_before_slicing(replica_id):
    def make():
        return Dataset.from_tensor_slices(np.arange(22)).shuffle(22, seed=5).batch(4)

    global_batches = epoch(make())
    for skip in range(len(global_batches) + 2):
        seen = []
        resumed = list(_distributed(make(), replica_id, verify=seen.append).iterate_from(skip))
        expected = list(itertools.islice(iter(_distributed(make(), replica_id)), skip, None))
        assert [values(b) for b in resumed] == [values(b) for b in expected]
        half = [b[:len(b) // 2] if replica_id == 0 else b[len(b) // 2:] for b in global_batches[skip:]]
        assert [values(b) for b in resumed] == half
        # verify runs once, on the first global batch this iteration produced
        assert [values(b) for b in seen] == global_batches[skip:skip + 1]


def test_distributed_iterate_from_keeps_the_divisibility_check():
    odd = _distributed(Dataset.range(15).batch(5), 0)
    with pytest.raises(ValueError, match="global batch size 5 is not divisible by the 2 replicas"):
        next(odd.iterate_from(1))
    # 9 rows in batches of 4: the last batch (1 row) is a remainder, allowed when resuming right at it
    remainder = _distributed(Dataset.range(9).batch(4), 1)
    assert [values(b) for b in remainder.iterate_from(2)] == [[]]
    assert [values(b) for b in _distributed(Dataset.range(9).batch(4), 0).iterate_from(2)] == [[8]]
    with pytest.raises(ValueError, match="skip_batches must be an integer >= 0"):
        odd.iterate_from(-1)


def test_distributed_state_delegates_to_the_dataset():
    def make():
        return Dataset.range(12).shuffle(12, seed=8).batch(4)

    original = _distributed(make(), 0)
    epoch(original)
    state = original.get_state()
    assert state == original.dataset.get_state()
    expected = epoch(original)
    fresh = _distributed(make(), 0)
    fresh.set_state(state)
    assert epoch(fresh) == expected


def test_distributed_dataloader_has_no_state_and_skips_by_iterating():
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(16)), batch_size=4)
    distributed = _distributed(loader, 1)
    assert distributed.get_state() is None
    distributed.set_state(None)
    with pytest.raises(ValueError, match="DataLoader, which has no pipeline state"):
        distributed.set_state({"format": "x"})
    assert [values(b) for b in distributed.iterate_from(2)] == [[[10, 11]], [[14, 15]]]
