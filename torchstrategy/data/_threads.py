"""Background work for torchstrategy.data: `prefetch` (a producer thread feeding a bounded queue)
and `map(num_parallel_calls=...)` (a thread pool whose results come back in input order)."""
from __future__ import annotations

import collections
import itertools
import os
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

from torchstrategy.data import _structure
from torchstrategy.data._ops import UnaryDataset, closing
from torchstrategy.data.dataset import Dataset

_POLL_S = 0.05
_TASK_S = 0.002  # target duration of one parallel-map task
_MAX_CHUNK = 64


class _Failure:
    """An exception travelling from a worker/producer thread to the consumer."""

    def __init__(self, error: BaseException):
        self.error = error


def default_workers() -> int:
    """Threads for AUTOTUNE'd parallel map: the usable CPU count, at least 2."""
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        count = os.cpu_count() or 2
    return max(2, count)


def parallel_map(elements: Iterator, fn: Callable[[Any], Any], workers: int) -> Iterator:
    """`fn` over `elements` on `workers` threads, results in input order.

    Work goes out in chunks sized so that one task takes ~2 ms: cheap functions then cost no more than
    a sequential map (one future per element would dominate), slow ones still get one thread each."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tsdata-map")
    pending: collections.deque = collections.deque()
    timing = [0.0, 0]  # seconds spent in fn, elements done (updated by workers; rough is fine)

    def run(chunk: list) -> list:
        start = time.perf_counter()
        results: list = []
        for element in chunk:
            try:
                results.append(fn(element))
            except Exception as error:  # delivered in order: earlier results first, then the error
                results.append(_Failure(error))
                break
        timing[0] += time.perf_counter() - start
        timing[1] += len(results)
        return results

    iterator = iter(elements)
    chunk_size = 1
    try:
        while True:
            chunk = list(itertools.islice(iterator, chunk_size))
            if not chunk:
                break
            pending.append(pool.submit(run, chunk))
            if len(pending) >= 2 * workers:
                yield from _unpack(pending.popleft().result())
            if timing[1]:
                per_element = timing[0] / timing[1]
                chunk_size = max(1, min(_MAX_CHUNK, int(_TASK_S / per_element) if per_element > 0 else _MAX_CHUNK))
        while pending:
            yield from _unpack(pending.popleft().result())
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        closing(iterator)


def _unpack(results: list) -> Iterator:
    for result in results:
        if isinstance(result, _Failure):
            raise result.error
        yield result


_END = object()


class _Prefetcher:
    """Runs the upstream iterator on a daemon thread, `buffer_size` elements ahead of the consumer."""

    def __init__(self, start: Callable[[], Iterator], buffer_size: int):
        self._queue: queue.Queue = queue.Queue(maxsize=buffer_size)
        self._stop = threading.Event()
        self._peeking = _structure.is_peeking()  # an element_spec peek covers the producer thread too
        self._thread = threading.Thread(target=self._produce, args=(start,), name="tsdata-prefetch", daemon=True)
        self._thread.start()

    def _put(self, item: Any) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self, start: Callable[[], Iterator]) -> None:
        upstream = None
        _structure._peeking.active = self._peeking
        try:
            upstream = start()
            for element in upstream:
                if not self._put(element) or self._stop.is_set():
                    return  # stopped: pull nothing more from upstream
            self._put(_END)
        except BaseException as error:  # handed to the consumer, which re-raises it
            self._put(_Failure(error))
        finally:
            if upstream is not None:
                closing(upstream)

    def get(self) -> Any:
        while True:
            try:
                return self._queue.get(timeout=_POLL_S)
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    return _END

    def stop(self) -> None:
        self._stop.set()
        try:
            while True:
                self._queue.get_nowait()  # unblock a producer waiting on a full queue
        except queue.Empty:
            pass
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)


class PrefetchDataset(UnaryDataset):
    def __init__(self, input_dataset: Dataset, buffer_size: int):
        super().__init__(input_dataset)
        self._buffer_size = buffer_size

    def _iterate_elements(self) -> Iterator[Any]:
        if self._buffer_size == 0 or self._gathered_in_memory():
            return self._input._iterate()
        return self._prefetched(self._input._iterate)

    def _elements_from(self, skip: int) -> Iterator[Any]:
        # The skip runs here, in the caller's thread (cheap on the index path); the producer continues.
        upstream = self._input._iterate_from(skip)
        return upstream if self._buffer_size == 0 or self._gathered_in_memory() else self._prefetched(lambda: upstream)

    def _gathered_in_memory(self) -> bool:
        """True when each element is one fancy-index gather of in-memory tensors (slices [-> shuffle/repeat/...]
        [-> batch], no map): there is nothing worth overlapping, and a Python producer thread would only
        contend with the training step for the GIL and the cores (fit measured 10-18% slower with it)."""
        from torchstrategy.data._batching import BatchDataset

        upstream = self._input
        if isinstance(upstream, BatchDataset) and type(upstream)._combine is BatchDataset._combine:
            upstream = upstream._input
        return upstream._index_plan() is not None

    def _prefetched(self, start: Callable[[], Iterator]) -> Iterator[Any]:
        prefetcher = _Prefetcher(start, self._buffer_size)
        try:
            while True:
                item = prefetcher.get()
                if item is _END:
                    return
                if isinstance(item, _Failure):
                    raise item.error
                yield item
        finally:
            prefetcher.stop()
