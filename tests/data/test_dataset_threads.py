"""Background work in torchstrategy.data: prefetch overlaps producer and consumer, forwards
errors and stops its thread; parallel map keeps order; generators stream without materialising."""
from __future__ import annotations

import random
import threading
import time

import pytest

from torchstrategy.data import AUTOTUNE, Dataset

DELAY_S = 0.02


def _prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "tsdata-prefetch"]


def _wait_for(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_prefetch_overlaps_a_slow_producer_with_a_slow_consumer():
    n = 12

    def slow_source():
        for i in range(n):
            time.sleep(DELAY_S)
            yield i

    ds = Dataset.from_generator(slow_source).prefetch(2)
    start = time.perf_counter()
    seen = []
    for element in ds:
        time.sleep(DELAY_S)
        seen.append(int(element))
    elapsed = time.perf_counter() - start
    serial = 2 * n * DELAY_S  # 0.48 s without overlap; overlapped ~ (n + 1) * DELAY_S = 0.26 s
    assert seen == list(range(n))
    assert elapsed < 0.8 * serial, f"prefetch did not overlap: {elapsed:.3f}s vs serial {serial:.3f}s"


def test_prefetch_reraises_producer_errors_in_the_consumer():
    def failing():
        yield 1
        yield 2
        raise RuntimeError("producer broke at element 3")

    iterator = iter(Dataset.from_generator(failing).prefetch(AUTOTUNE))
    assert [int(next(iterator)), int(next(iterator))] == [1, 2]
    with pytest.raises(RuntimeError, match="producer broke at element 3"):
        next(iterator)


def test_closing_a_prefetching_iterator_stops_its_thread():
    before = len(_prefetch_threads())
    iterator = iter(Dataset.range(10**9).map(lambda v: v + 1).prefetch(4))  # a map: real work to overlap
    next(iterator)
    assert len(_prefetch_threads()) == before + 1
    iterator.close()
    assert _wait_for(lambda: len(_prefetch_threads()) == before)
    abandoned = iter(Dataset.range(10**9).map(lambda v: v + 1).prefetch(4))
    next(abandoned)
    del abandoned
    assert _wait_for(lambda: len(_prefetch_threads()) == before)


def test_in_memory_gathers_are_not_prefetched_on_a_thread():
    # slices [-> shuffle] -> batch: each batch is one gather; a producer thread would only contend for the GIL
    import numpy as np

    before = len(_prefetch_threads())
    data = np.arange(50)
    plain = Dataset.from_tensor_slices(data).shuffle(50, seed=4).batch(8)
    prefetched = Dataset.from_tensor_slices(data).shuffle(50, seed=4).batch(8).prefetch(2)
    iterator = iter(prefetched)
    first = next(iterator)
    assert len(_prefetch_threads()) == before
    assert [b.tolist() for b in plain] == [first.tolist()] + [b.tolist() for b in iterator]


def test_parallel_map_keeps_order_and_runs_concurrently():
    rng = random.Random(0)
    delays = [rng.uniform(0.0, 0.01) for _ in range(40)]

    def jittery(x):
        time.sleep(delays[int(x)])
        return x * 3

    assert [int(v) for v in Dataset.range(40).map(jittery, num_parallel_calls=4)] == [3 * i for i in range(40)]
    assert [int(v) for v in Dataset.range(40).map(jittery, num_parallel_calls=AUTOTUNE)] == [3 * i for i in range(40)]

    # Cheap functions are sent out in growing chunks; order must survive that too.
    squares = [int(v) for v in Dataset.range(3000).map(lambda x: x * x, num_parallel_calls=3)]
    assert squares == [i * i for i in range(3000)]

    def slow(x):
        time.sleep(DELAY_S)
        return x

    start = time.perf_counter()
    assert len(list(Dataset.range(16).map(slow, num_parallel_calls=4))) == 16
    assert time.perf_counter() - start < 0.6 * 16 * DELAY_S


def test_parallel_map_errors_reach_the_consumer():
    def fail_on_three(x):
        if int(x) == 3:
            raise ValueError("bad element 3")
        return x

    delivered = []
    with pytest.raises(ValueError, match="bad element 3"):
        for value in Dataset.range(10).map(fail_on_three, num_parallel_calls=2):
            delivered.append(int(value))
    assert delivered == [0, 1, 2]
    with pytest.raises(ValueError, match="num_parallel_calls must be >= 1"):
        Dataset.range(3).map(lambda x: x, num_parallel_calls=0)


def test_from_generator_streams_a_huge_source_without_materialising_it():
    pulled = {"count": 0}

    def huge():
        for i in range(10**6):
            pulled["count"] += 1
            yield i

    start = time.perf_counter()
    out = [int(v) for v in Dataset.from_generator(huge).map(lambda x: x + 1).take(5)]
    assert out == [1, 2, 3, 4, 5]
    assert pulled["count"] == 5
    prefetched = [int(v) for v in Dataset.from_generator(huge).prefetch(3).take(5)]
    assert prefetched == [0, 1, 2, 3, 4]
    assert time.perf_counter() - start < 2.0
    # At most the 5 taken, the 3 buffered and one in hand beyond the first pass's 5.
    assert pulled["count"] <= 5 + 5 + 3 + 1
