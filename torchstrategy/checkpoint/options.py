"""`tf.train.CheckpointOptions`: TF's options for Checkpoint.save/write/restore/read, plus this library's format
switch `experimental_write_format` ("torchstrategy", the default, or "tf" for TF's tensor-bundle format)."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Optional, Sequence

WRITE_FORMATS = ("torchstrategy", "tf")


class CheckpointOptions:
    """Options for `tf.train.Checkpoint` (TF's fields and defaults).

    `experimental_io_device` is accepted (files are read and written by this process either way);
    async checkpointing (`enable_async`, `experimental_enable_async_checkpoint`) is accepted and the write
    completes before `save` returns; `experimental_write_callbacks` are called with the saved path after
    each write; `experimental_skip_slot_variables=True` restores a TF-written checkpoint without the
    optimizer slots. `experimental_sharding_callback` is not supported.

    The format of what `save`/`write` produce is chosen by the attribute `experimental_write_format`
    (a torchstrategy extension; TF's CheckpointOptions has no such field): "torchstrategy" (default: one
    atomic, checksummed file, or a sharded directory under FSDP) or "tf" (TF's `.index` + `.data-*`
    bundle that TF restores)::

        options = tf.train.CheckpointOptions()
        options.experimental_write_format = "tf"
        ckpt.save("/tmp/run/ckpt", options=options)
    """

    def __init__(self, experimental_io_device: Optional[str] = None, experimental_enable_async_checkpoint: bool = False,
                 experimental_write_callbacks: Optional[Sequence[Callable[..., Any]]] = None,
                 enable_async: bool = False, experimental_skip_slot_variables: bool = False,
                 experimental_sharding_callback: Any = None) -> None:
        if experimental_sharding_callback is not None:
            raise NotImplementedError("CheckpointOptions(experimental_sharding_callback=...) is not supported; "
                                      "leave it None (FSDPStrategy shards checkpoints by itself).")
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = bool(experimental_enable_async_checkpoint)
        self.enable_async = bool(enable_async)
        self.experimental_write_callbacks = list(experimental_write_callbacks or [])
        self.experimental_skip_slot_variables = bool(experimental_skip_slot_variables)
        self.experimental_sharding_callback = experimental_sharding_callback
        self._write_format = "torchstrategy"

    @property
    def experimental_write_format(self) -> str:
        """What save/write produce: "torchstrategy" (default) or "tf" (TF's tensor bundle)."""
        return self._write_format

    @experimental_write_format.setter
    def experimental_write_format(self, value: str) -> None:
        if value not in WRITE_FORMATS:
            raise ValueError(f"experimental_write_format must be one of {WRITE_FORMATS}; got {value!r}.")
        self._write_format = value

    def __repr__(self) -> str:
        return f"CheckpointOptions(experimental_write_format={self._write_format!r})"


def write_format(options: Any) -> str:
    """The format `options` (a CheckpointOptions or None) asks for."""
    if options is None:
        return "torchstrategy"
    if not isinstance(options, CheckpointOptions):
        raise TypeError(f"options must be a tf.train.CheckpointOptions; got {type(options).__name__}.")
    return options.experimental_write_format


def run_write_callbacks(options: Any, save_path: str) -> None:
    """Calls each of `options.experimental_write_callbacks` with the saved path (or with nothing)."""
    for callback in getattr(options, "experimental_write_callbacks", None) or ():
        try:
            takes_path = bool(inspect.signature(callback).parameters)
        except (TypeError, ValueError):
            takes_path = True
        if takes_path:
            callback(save_path)
        else:
            callback()
