"""Preemption for custom loops: tf.distribute.experimental.PreemptionCheckpointHandler and
TerminationConfig. SIGTERM on any replica makes all save at the same step and exit restartably."""
from __future__ import annotations

import signal
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from torchstrategy import _context

#: Exit code after a preemption save; non-zero so torchrun (--max-restarts) or the scheduler restarts.
PREEMPTION_EXIT_CODE = 42


@dataclass(frozen=True)
class TerminationConfig:
    """How preemption is noticed and handled (tf.distribute.experimental.TerminationConfig).

    `termination_watcher_fn` returns True when this worker is about to be preempted (default: a
    SIGTERM was received); `exit_fn` ends the process after the save (default: exit code 42);
    `grace_period` is informational here: the save happens at the next step boundary.
    """

    termination_watcher_fn: Optional[Callable[[], bool]] = None
    exit_fn: Optional[Callable[[], None]] = None
    grace_period: Optional[int] = None
    save_fn: Optional[Callable[[], None]] = None


class PreemptionCheckpointHandler:
    """Wraps each training step: restores the latest checkpoint at start, and when any replica is
    told to stop, every replica saves at the same step and exits.

    >>> # handler = tf.distribute.experimental.PreemptionCheckpointHandler(resolver, checkpoint, "/ckpt")
    >>> # for step in range(handler.total_run_calls, total_steps):
    >>> #     handler.run(distributed_train_step, next(iterator))
    """

    def __init__(self, cluster_resolver: Any, checkpoint_or_checkpoint_manager: Any,
                 checkpoint_dir: Optional[str] = None, termination_config: Optional[TerminationConfig] = None) -> None:
        from torchstrategy.checkpoint import CheckpointManager
        from torchstrategy.variables import Variable

        self._strategy = _context.get_strategy()
        self._config = termination_config or TerminationConfig()
        if isinstance(checkpoint_or_checkpoint_manager, CheckpointManager):
            self._manager = checkpoint_or_checkpoint_manager
        else:
            if checkpoint_dir is None:
                raise ValueError("PreemptionCheckpointHandler needs checkpoint_dir when given a Checkpoint "
                                 "(or pass a CheckpointManager).")
            self._manager = CheckpointManager(checkpoint_or_checkpoint_manager, checkpoint_dir, max_to_keep=1)
        checkpoint = self._manager._checkpoint
        # a public name, so the Checkpoint tracks and saves it with the rest
        if not hasattr(checkpoint, "preemption_run_calls"):
            checkpoint.preemption_run_calls = Variable(0)
        self._run_calls = checkpoint.preemption_run_calls
        if self._manager.latest_checkpoint is not None:
            checkpoint.restore(self._manager.latest_checkpoint).expect_partial()
        self._signalled = threading.Event()
        if self._config.termination_watcher_fn is None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda signum, frame: self._signalled.set())

    @property
    def total_run_calls(self) -> int:
        """How many `run` calls completed, including those before the restart."""
        return int(self._run_calls)

    def _preempted_here(self) -> bool:
        watcher = self._config.termination_watcher_fn
        return bool(watcher()) if watcher is not None else self._signalled.is_set()

    def run(self, distributed_train_function: Callable, *args: Any, **kwargs: Any) -> Any:
        """Runs one step; afterwards, if any replica is being preempted, all save and exit."""
        result = distributed_train_function(*args, **kwargs)
        self._run_calls.assign_add(1)
        if self._strategy.any_replica(self._preempted_here()):
            self.save_and_exit()
        return result

    def save_and_exit(self) -> None:
        """Saves now (every replica must call it at the same step) and ends the process."""
        if self._config.save_fn is not None:
            self._config.save_fn()
        else:
            self._manager.save(checkpoint_number=self.total_run_calls)
        if self._config.exit_fn is not None:
            self._config.exit_fn()
        else:
            sys.exit(PREEMPTION_EXIT_CODE)

    def watch_preemption_scope(self) -> Any:
        """Accepted for TF scripts: preemption is checked after every `run` call."""
        import contextlib

        return contextlib.nullcontext()
