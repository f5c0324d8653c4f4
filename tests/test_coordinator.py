"""tf.train.Coordinator with real threads: request_stop stops the others, join re-raises the first error,
clean-stop exceptions are not errors, a thread that ignores the stop is reported after the grace period."""
from __future__ import annotations

import threading
import time

import pytest

import torchstrategy as tf


def _worker(coord, counter, fail_at=None):
    with coord.stop_on_exception():
        while not coord.should_stop():
            counter.append(1)
            if fail_at is not None and len(counter) >= fail_at:
                raise ValueError("worker failed")
            time.sleep(0.005)


def test_an_error_stops_every_thread_and_join_reraises_it():
    coord = tf.train.Coordinator()
    counters = [[], []]
    threads = [threading.Thread(target=_worker, args=(coord, counters[0], 5)),
               threading.Thread(target=_worker, args=(coord, counters[1]))]
    for thread in threads:
        thread.start()
    with pytest.raises(ValueError, match="worker failed"):
        coord.join(threads, stop_grace_period_secs=5)
    assert coord.should_stop() and coord.joined
    assert not any(thread.is_alive() for thread in threads)


def test_clean_stop_request_and_reuse():
    coord = tf.train.Coordinator()
    counter = []
    thread = threading.Thread(target=_worker, args=(coord, counter))
    coord.register_thread(thread)
    thread.start()
    time.sleep(0.05)
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "end of data"))
    coord.join()
    assert counter and not thread.is_alive()
    coord.raise_requested_exception()  # OutOfRangeError is a clean stop: nothing to raise
    coord.clear_stop()
    assert not coord.should_stop() and not coord.wait_for_stop(0.01)


def test_a_thread_ignoring_the_stop_is_reported():
    coord = tf.train.Coordinator()
    release = threading.Event()
    thread = threading.Thread(target=release.wait, name="stubborn")
    thread.start()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="stubborn"):
        coord.join([thread], stop_grace_period_secs=0.1)
    release.set()
    thread.join()
