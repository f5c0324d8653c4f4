"""`tf.keras.utils.SidecarEvaluator`: a separate process that watches a training job's checkpoint folder,
restores each new tf.train.Checkpoint into its own model and evaluates it."""
from __future__ import annotations

import logging
import os
import re
import time
from typing import Any, Iterator, Optional

from torchstrategy.checkpoint import Checkpoint, CheckpointCorruptedError, latest_checkpoint

#: Seconds between two looks at the checkpoint folder (TF polls once a second).
POLL_INTERVAL_SECONDS = 1.0
#: After this long without a new checkpoint a hint is logged (TF 2.21: 30 s); waiting goes on.
NO_CHECKPOINT_HINT_SECONDS = 30.0

_log = logging.getLogger(__name__)
_NUMBER_SUFFIX = re.compile(r"-(\d+)$")


class SidecarEvaluator:
    """Evaluates the checkpoints a training job writes, as they appear, on a model of the same architecture.

    The trainer saves `tf.train.Checkpoint(model=model, optimizer=optimizer)` through a
    `tf.train.CheckpointManager` (or `Checkpoint.save`) into `checkpoint_dir`. `start()` waits for each
    new latest checkpoint (ones written while an evaluation runs are skipped, as in TF), restores it
    into `model` and runs `model.evaluate(data, steps=steps, callbacks=callbacks)`. It returns after
    evaluating a checkpoint whose number (the `-N` ending of `ckpt-N`) is at least `max_evaluations`
    (TF's rule: with one save per epoch, pass the number of epochs); a path without such a number
    counts as the next evaluation instead. With `max_evaluations=None` it runs until stopped.

    >>> evaluator = tf.keras.utils.SidecarEvaluator(model, data=val_dataset, checkpoint_dir="/ckpt",
    ...                                             max_evaluations=epochs)  # doctest: +SKIP
    >>> evaluator.start()  # doctest: +SKIP
    """

    def __init__(self, model: Any, data: Any, checkpoint_dir: Any, steps: Optional[int] = None,
                 max_evaluations: Optional[int] = None, callbacks: Any = None) -> None:
        if checkpoint_dir is None or (isinstance(checkpoint_dir, str) and not checkpoint_dir):
            raise ValueError("SidecarEvaluator needs `checkpoint_dir`: the folder where the training job saves "
                             "its checkpoints (the directory of its tf.train.CheckpointManager).")
        if not isinstance(checkpoint_dir, (str, os.PathLike)):
            raise TypeError(f"`checkpoint_dir` must be a path (str or os.PathLike); got "
                            f"{type(checkpoint_dir).__name__}.")
        for name, value in (("steps", steps), ("max_evaluations", max_evaluations)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"`{name}` must be a positive integer or None; got {value!r}.")
        if not callable(getattr(model, "evaluate", None)):
            raise TypeError(f"SidecarEvaluator needs a Keras model (with `evaluate`); got {type(model).__name__}.")
        if getattr(model, "_compiled", None) is None:
            raise ValueError("The model given to SidecarEvaluator is not compiled: call model.compile(loss=..., "
                             "metrics=[...]) first, so that evaluate() has something to compute.")
        self.model = model
        self.data = data
        self.checkpoint_dir = os.fspath(checkpoint_dir)
        self.steps = steps
        self.max_evaluations = max_evaluations
        self.callbacks = callbacks or []

    def start(self) -> None:
        """Evaluates new checkpoints as they appear; returns once the last one (see max_evaluations) is done."""
        checkpoint = self._checkpoint()
        evaluations = 0
        for path in self._new_checkpoints():
            try:
                # the model's (and optimizer's) state only: the trainer's checkpoint may hold more objects
                checkpoint.restore(path).expect_partial()
            except (FileNotFoundError, CheckpointCorruptedError) as error:
                # the trainer's CheckpointManager may have swept this file (max_to_keep) since the index
                # named it: TF skips to the next checkpoint too
                _log.info("Could not load checkpoint %s (%s: %s); waiting for the next one.", path,
                          type(error).__name__, error)
                continue
            _log.info("Evaluation starts: model weights loaded from checkpoint %s", path)
            logs = self.model.evaluate(self.data, steps=self.steps, callbacks=self.callbacks, verbose=2,
                                       return_dict=True)
            evaluations += 1
            _log.info("End of evaluation of %s. Metrics: %s", path,
                      " ".join(f"{name}={value}" for name, value in logs.items()))
            if self.max_evaluations is not None and self._number(path, evaluations) >= self.max_evaluations:
                _log.info("Last checkpoint evaluated. SidecarEvaluator stops.")
                return

    def _checkpoint(self) -> Checkpoint:
        """The same object graph the trainer saved: the model, and its optimizer when it has one (so that
        optimizer.iterations, which callbacks may read, follows the trainer)."""
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None:
            return Checkpoint(model=self.model, optimizer=optimizer)
        return Checkpoint(model=self.model)

    @staticmethod
    def _number(path: str, evaluations: int) -> int:
        match = _NUMBER_SUFFIX.search(path)
        return int(match.group(1)) if match else evaluations

    def _new_checkpoints(self) -> Iterator[str]:
        """Each time the folder's latest checkpoint changes, its path (tf.train.checkpoints_iterator)."""
        last: Optional[str] = None
        waiting_since = time.monotonic()
        hinted = False
        while True:
            try:
                path = latest_checkpoint(self.checkpoint_dir)
            except (CheckpointCorruptedError, ValueError, OSError) as error:
                # the index is rewritten atomically, but a reader on a network file system may still
                # catch a half-copied one: look again at the next poll
                _log.info("Could not read the checkpoint index in %s (%s); trying again.", self.checkpoint_dir,
                          error)
                path = None
            if path is not None and path != last:
                last = path
                yield path
                waiting_since, hinted = time.monotonic(), False
                continue
            if not hinted and time.monotonic() - waiting_since > NO_CHECKPOINT_HINT_SECONDS:
                _log.warning("SidecarEvaluator found no new checkpoint in %s for %.0f s. Make sure the training "
                             "job saves tf.train.Checkpoint(model=..., optimizer=...) there with a "
                             "tf.train.CheckpointManager. Still waiting.", self.checkpoint_dir,
                             NO_CHECKPOINT_HINT_SECONDS)
                hinted = True
            time.sleep(POLL_INTERVAL_SECONDS)
