"""`tf.train.Coordinator`: lets threads ask each other to stop, reports the first exception that stopped
them, and joins them with a grace period (threading only; nothing here is TF-graph specific)."""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Any, Iterable, Iterator, List, Optional

from torchstrategy.errors import OutOfRangeError

__all__ = ["Coordinator"]


class Coordinator:
    """Stop flag and first-error record shared by worker threads.

    >>> coord = Coordinator()
    >>> threads = [threading.Thread(target=work, args=(coord,)) for _ in range(2)]  # doctest: +SKIP
    >>> for t in threads: t.start()                                                 # doctest: +SKIP
    >>> coord.join(threads)   # re-raises the exception a thread passed to request_stop  # doctest: +SKIP
    """

    def __init__(self, clean_stop_exception_types: Optional[Iterable[type]] = None):
        self._clean = tuple(clean_stop_exception_types) if clean_stop_exception_types is not None else (
            OutOfRangeError,)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._exc_info: Any = None
        self._threads: List[threading.Thread] = []
        self._joined = False

    def request_stop(self, ex: Any = None) -> None:
        """Asks every thread to stop. `ex` (an exception or sys.exc_info() triple) is kept, the first one only,
        for join() to re-raise; a clean-stop exception type (OutOfRangeError by default) is not an error."""
        with self._lock:
            if ex is not None and self._exc_info is None and not self._joined:
                info = (type(ex), ex, ex.__traceback__) if isinstance(ex, BaseException) else tuple(ex)
                if not issubclass(info[0], self._clean):
                    self._exc_info = info
            self._stop.set()

    def clear_stop(self) -> None:
        """Clears the stop request and the recorded exception (the coordinator can be used again)."""
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop.clear()

    def should_stop(self) -> bool:
        """True once a stop was requested."""
        return self._stop.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """A block whose exception (not SystemExit... any) is passed to request_stop instead of propagating."""
        try:
            yield
        except Exception:  # noqa: BLE001 - recorded for join(), as TF does
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout: Optional[float] = None) -> bool:
        """Waits until a stop is requested (or `timeout` seconds pass); True if it was requested."""
        return self._stop.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        """Adds `thread` to those join() waits for."""
        with self._lock:
            self._threads.append(thread)

    def join(self, threads: Optional[Iterable[threading.Thread]] = None, stop_grace_period_secs: float = 120,
             ignore_live_threads: bool = False) -> None:
        """Waits for a stop request, then gives the threads (registered + `threads`) stop_grace_period_secs to
        finish; re-raises the recorded exception, else raises RuntimeError naming threads still alive (unless
        ignore_live_threads)."""
        with self._lock:
            waiting = list(self._threads) + [t for t in (threads or []) if t not in self._threads]
        while any(t.is_alive() for t in waiting) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in waiting:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in waiting if t.is_alive()]
        with self._lock:
            self._joined = True
            self._threads = []
            info = self._exc_info
        if info is not None:
            raise info[1].with_traceback(info[2])
        if alive and not ignore_live_threads:
            raise RuntimeError(f"Coordinator.join: threads still running after the grace period "
                               f"({stop_grace_period_secs} s): {alive}. Make them check coord.should_stop().")

    @property
    def joined(self) -> bool:
        """True once join() has finished."""
        return self._joined

    def raise_requested_exception(self) -> None:
        """Re-raises the exception passed to request_stop, if any."""
        with self._lock:
            info = self._exc_info
        if info is not None:
            raise info[1].with_traceback(info[2])
