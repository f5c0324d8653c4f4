"""keras.callbacks.OrbaxCheckpoint: Keras 3.15's callback that writes Orbax (JAX) checkpoints. Orbax is a JAX
library, so the class keeps Keras's signature and raises NotImplementedError pointing to ModelCheckpoint."""
from __future__ import annotations

from typing import Any, Optional, Union

from torchstrategy.keras.callbacks.base import Callback


class OrbaxCheckpoint(Callback):
    """Keras's Orbax checkpoint callback; not available here: constructing it raises NotImplementedError
    (use keras.callbacks.ModelCheckpoint, or BackupAndRestore / tf.train.CheckpointManager)."""

    def __init__(self, directory: str, monitor: str = "val_loss", verbose: int = 0, save_best_only: bool = False,
                 mode: str = "auto", save_freq: Union[str, int] = "epoch",
                 initial_value_threshold: Optional[float] = None, max_to_keep: int = 1, save_on_background: bool = True, save_weights_only: bool = False) -> None:
        raise NotImplementedError(
            "keras.callbacks.OrbaxCheckpoint writes Orbax checkpoints, and Orbax (a JAX library) is not part of "
            "torchstrategy. Use keras.callbacks.ModelCheckpoint(filepath, monitor=..., save_best_only=..., "
            "save_weights_only=..., save_freq=...) for model files, or keras.callbacks.BackupAndRestore / "
            "tf.train.CheckpointManager (max_to_keep) to resume training.")
