"""`tf.train.checkpoints_iterator`: yields each new checkpoint that appears in a directory (as an evaluator
following a training job does), waiting between polls, with an optional timeout."""
from __future__ import annotations

import time
from typing import Callable, Iterator, Optional

from torchstrategy.checkpoint.manager import latest_checkpoint

_POLL_SECONDS = 1.0


def _next_checkpoint(directory: str, last: Optional[str], timeout: Optional[float]) -> Optional[str]:
    """The newest checkpoint in `directory` once it differs from `last`; None when `timeout` seconds pass."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        path = latest_checkpoint(directory)
        if path is not None and path != last:
            return path
        if deadline is not None and time.monotonic() + _POLL_SECONDS > deadline:
            remaining = deadline - time.monotonic()
            if remaining > 0:
                time.sleep(remaining)
                path = latest_checkpoint(directory)
                if path is not None and path != last:
                    return path
            return None
        time.sleep(_POLL_SECONDS)


def checkpoints_iterator(checkpoint_dir: str, min_interval_secs: float = 0, timeout: Optional[float] = None,
                         timeout_fn: Optional[Callable[[], bool]] = None) -> Iterator[str]:
    """Yields the path of the newest checkpoint of `checkpoint_dir` each time it changes (the one there at the
    start first), at most once per `min_interval_secs`.

    With `timeout`, waiting longer than that for a new checkpoint ends the iteration, unless `timeout_fn` is
    given: then it is called and the iteration ends when it returns True, else waiting goes on.

    >>> for path in checkpoints_iterator("/tmp/train", timeout=60):  # doctest: +SKIP
    ...     evaluate(path)
    """
    last: Optional[str] = None
    while True:
        path = _next_checkpoint(checkpoint_dir, last, timeout)
        if path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        started = time.monotonic()
        last = path
        yield path
        wait = started + min_interval_secs - time.monotonic()
        if wait > 0:
            time.sleep(wait)
