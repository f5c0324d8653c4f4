"""tf.summary's writers and recording state: `SummaryWriter`, file and no-op writers (TensorBoard event files
through the tensorboard package), the default writer, step, `record_if`, and `write` of one tensor summary."""
from __future__ import annotations

import contextlib
import os
import time
import weakref
from typing import Any, Callable, Iterator, Optional, Union

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy.cluster import environment
from torchstrategy.errors import FailedPreconditionError, NotFoundError, PermissionDeniedError


def _tensorboard() -> Any:
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        from tensorboard.util import tensor_util
    except ImportError as error:
        raise ImportError("tf.summary writes TensorBoard event files through the `tensorboard` package, which is "
                          "not installed. Install it with `pip install torchstrategy[tensorboard]` "
                          "(or `pip install tensorboard`).") from error
    return event_pb2, summary_pb2, EventFileWriter, tensor_util


def _state() -> Any:
    return _context.summary_state()


class SummaryWriter:
    """A writer of summaries (`tf.summary.SummaryWriter`): made by `tf.summary.create_file_writer` or
    `create_noop_writer`; `as_default()` / `set_as_default()` make it the one summary ops write to."""

    def set_as_default(self, step: Any = None) -> None:
        """Makes this writer the default for this thread (and sets the default step when `step` is given)."""
        _state().writer = self
        if step is not None:
            _state().step = step

    @contextlib.contextmanager
    def as_default(self, step: Any = None) -> Iterator["SummaryWriter"]:
        """Context manager: this writer (and `step`, if given) is the default inside; flushed on exit."""
        state = _state()
        old_writer, old_step = state.writer, state.step
        state.writer = self
        if step is not None:
            state.step = step
        try:
            yield self
        finally:
            self.flush()
            state.writer = old_writer
            if step is not None:
                state.step = old_step

    def init(self) -> None:
        """Opens the writer's resources (created writers are already open)."""

    def flush(self) -> None:
        """Writes pending summaries out."""

    def close(self) -> None:
        """Flushes and closes the writer; later writes are refused."""

    def _write_summary(self, summary: Any, step: int) -> bool:
        return False


class _NoopWriter(SummaryWriter):
    """Records nothing: `create_noop_writer()`, and the writer of every process but the chief."""


class _FileWriter(SummaryWriter):
    """Appends summaries to one TensorBoard event file in `logdir`."""

    def __init__(self, logdir: str, max_queue: int, flush_millis: int, filename_suffix: str) -> None:
        event_pb2, _, event_file_writer, _ = _tensorboard()
        self._event_pb2 = event_pb2
        self._logdir = logdir
        try:
            os.makedirs(logdir, exist_ok=True)
            if not os.access(logdir, os.W_OK | os.X_OK):
                raise PermissionError(13, "Permission denied", logdir)
            self._writer = event_file_writer(logdir, max_queue_size=max_queue,
                                             flush_secs=max(flush_millis / 1000.0, 0.001),
                                             filename_suffix=filename_suffix)
        except PermissionError as error:
            raise PermissionDeniedError(None, None, f"tf.summary.create_file_writer cannot write to {logdir!r} "
                                        f"({error.strerror}); choose a log directory this process may create "
                                        "files in.") from error
        except (FileExistsError, NotADirectoryError) as error:
            raise FailedPreconditionError(None, None, f"tf.summary.create_file_writer: {logdir!r} is not a "
                                          f"directory ({error.strerror}); give a directory path as logdir.") from error
        except OSError as error:
            raise NotFoundError(None, None, f"tf.summary.create_file_writer cannot create {logdir!r} "
                                f"({error.strerror}); choose a log directory on a writable file system.") from error
        self._closed = False
        # flushed and closed when dropped or at interpreter exit, as TF's writer resource is
        self._finalizer = weakref.finalize(self, self._writer.close)

    @property
    def logdir(self) -> str:
        """The directory of the event file."""
        return self._logdir

    def _write_summary(self, summary: Any, step: int) -> bool:
        if self._closed:
            raise RuntimeError(f"This tf.summary writer for {self._logdir!r} is closed; create a new one with "
                               "tf.summary.create_file_writer to write more summaries.")
        event = self._event_pb2.Event(wall_time=time.time(), step=int(step), summary=summary)
        self._writer.add_event(event)
        return True

    def flush(self) -> None:
        """Writes the queued summaries to the event file."""
        if not self._closed:
            self._writer.flush()

    def close(self) -> None:
        """Flushes and closes the event file (and stops being the default writer)."""
        if not self._closed:
            self._finalizer()
            self._closed = True
        if _state().writer is self:
            _state().writer = None


def create_file_writer(logdir: Union[str, os.PathLike], max_queue: Optional[int] = None,
                       flush_millis: Optional[int] = None, filename_suffix: Optional[str] = None,
                       name: Optional[str] = None, experimental_trackable: bool = False,
                       experimental_mesh: Any = None) -> SummaryWriter:
    """A writer of TensorBoard event files in `logdir` (`events.out.tfevents.<time>.<host>.<pid>.<n>` +
    `filename_suffix`, '.v2' by default), queueing up to `max_queue` (10) summaries and flushing every
    `flush_millis` (120000) ms. In a job of several processes only the chief (rank 0) writes: the others get a
    writer that records nothing, as Keras's callbacks do, so replicas do not race on one directory. To write on
    every process, as TF does, set TORCHSTRATEGY_SUMMARIES_EVERY_PROCESS=1 (and give each its own logdir).

    >>> import torchstrategy as tf
    >>> writer = tf.summary.create_file_writer("/tmp/logs")  # doctest: +SKIP
    >>> with writer.as_default(step=1):  # doctest: +SKIP
    ...     tf.summary.scalar("loss", 0.5)
    """
    if experimental_trackable:
        raise NotImplementedError("tf.summary.create_file_writer: experimental_trackable=True (a writer tracked by "
                                  "tf.Module/checkpoints) is not supported; leave it False.")
    if experimental_mesh is not None:
        raise NotImplementedError("tf.summary.create_file_writer: experimental_mesh (DTensor) is not supported; "
                                  "leave it None.")
    if logdir is None:
        raise ValueError("tf.summary.create_file_writer needs a logdir (a directory path), got None.")
    logdir = os.fspath(logdir)
    if not isinstance(logdir, str) or not logdir:
        raise ValueError(f"tf.summary.create_file_writer needs a non-empty directory path, got {logdir!r}.")
    if not environment.is_chief_process() and not environment.summaries_on_every_process():
        return _NoopWriter()
    return _FileWriter(logdir, 10 if max_queue is None else int(max_queue),
                       120000 if flush_millis is None else int(flush_millis),
                       ".v2" if filename_suffix is None else str(filename_suffix))


def create_noop_writer() -> SummaryWriter:
    """A writer that records nothing (summary ops under it return False)."""
    return _NoopWriter()


def flush(writer: Optional[SummaryWriter] = None, name: Optional[str] = None) -> None:
    """Flushes `writer`, or the default writer when None (nothing happens without one)."""
    writer = writer if writer is not None else _state().writer
    if writer is not None:
        writer.flush()


@contextlib.contextmanager
def record_if(condition: Union[bool, Any, Callable[[], Any]]) -> Iterator[None]:
    """Inside, summaries are written only when `condition` (a bool, a boolean tensor, or a callable returning
    one, evaluated at each summary) holds."""
    state = _state()
    old = state.condition
    state.condition = condition
    try:
        yield
    finally:
        state.condition = old


def _truth(value: Any) -> bool:
    if callable(value):
        value = value()
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return bool(value.item())
    return bool(value)


def should_record_summaries() -> bool:
    """Whether summary ops write now: a default writer is set and the `record_if` condition holds."""
    state = _state()
    return state.writer is not None and _truth(state.condition)


def get_step() -> Any:
    """The default step of summary ops (`tf.summary.experimental.get_step`), or None when unset."""
    return _state().step


def set_step(step: Any) -> None:
    """Sets the default step of summary ops (an int, a tensor or a tf.Variable read at each write)."""
    _state().step = step


def resolve_step(step: Any) -> int:
    """`step`, else the default step, as an int; a clear error when neither is set."""
    if step is None:
        step = _state().step
    if step is None:
        raise ValueError("No step set. Please specify one of either step= on the summary call, "
                         "tf.summary.experimental.set_step(), or as_default(step=) on the writer.")
    if isinstance(step, (torch.Tensor, np.ndarray)):  # tensors and tf.Variables, read now
        step = step.detach().item() if isinstance(step, torch.Tensor) else step.item()
    return int(step)


@contextlib.contextmanager
def summary_scope(name: str, default_name: str = "summary", values: Any = None) -> Iterator[tuple[str, str]]:
    """Yields (tag, scope) for a summary op named `name` (or `default_name`) inside the enclosing scopes:
    the tag is the scopes and the name joined by '/'."""
    state = _state()
    base = name or default_name
    tag = "/".join(state.scopes + [base])
    state.scopes.append(base)
    try:
        yield tag, tag + "/"
    finally:
        state.scopes.pop()


def tensor_proto(value: Any) -> Any:
    """The TensorProto of a tensor, array, number or string(s)."""
    _, _, _, tensor_util = _tensorboard()
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        value = value.float().numpy() if value.dtype == torch.bfloat16 else value.numpy()
    if isinstance(value, (str, bytes)) or (isinstance(value, (list, tuple)) and value
                                           and isinstance(np.asarray(value).flat[0], (str, bytes))):
        value = np.asarray(value, dtype=object)
        value = np.vectorize(lambda item: item.encode() if isinstance(item, str) else item, otypes=[object])(value) \
            if value.size else value
    return tensor_util.make_tensor_proto(value)


def summary_metadata(plugin_name: str = "", content: bytes = b"", description: Optional[str] = None,
                     data_class: Optional[str] = None) -> Any:
    """A SummaryMetadata naming the TensorBoard plugin that shows the data."""
    _, summary_pb2, _, _ = _tensorboard()
    metadata = summary_pb2.SummaryMetadata()
    if plugin_name:
        metadata.plugin_data.plugin_name = plugin_name
        if content:
            metadata.plugin_data.content = content
    if description:
        metadata.summary_description = description
    if data_class is not None:
        metadata.data_class = getattr(summary_pb2, data_class)
    return metadata


def write_value(tag: str, value: Any, step: Any, metadata: Any) -> bool:
    """Writes one tensor summary value to the default writer if recording; True when written."""
    if not should_record_summaries():
        return False
    _, summary_pb2, _, _ = _tensorboard()
    step = resolve_step(step)
    summary = summary_pb2.Summary()
    entry = summary.value.add(tag=tag)
    entry.tensor.CopyFrom(value if type(value).__name__ == "TensorProto" else tensor_proto(value))
    if metadata is not None:
        entry.metadata.CopyFrom(metadata)
    return _state().writer._write_summary(summary, step)


def write(tag: str, tensor: Any, step: Any = None, metadata: Any = None, name: Optional[str] = None) -> bool:
    """Writes `tensor` (or the result of calling it) under `tag` at `step` to the default writer; `metadata`
    is a SummaryMetadata proto or its serialized bytes. Returns whether it was written."""
    if not should_record_summaries():
        return False
    if isinstance(metadata, (bytes, bytearray)):
        _, summary_pb2, _, _ = _tensorboard()
        metadata = summary_pb2.SummaryMetadata.FromString(bytes(metadata))
    if callable(tensor):
        tensor = tensor()
    return write_value(tag, tensor, step, metadata)


def write_raw_pb(tensor: Any, step: Any = None, name: Optional[str] = None) -> bool:
    """Writes serialized `Summary` protos (bytes, or a list of them) at `step`; returns whether written."""
    if not should_record_summaries():
        return False
    _, summary_pb2, _, _ = _tensorboard()
    step = resolve_step(step)
    items = tensor if isinstance(tensor, (list, tuple, np.ndarray)) else [tensor]
    written = False
    for item in items:
        written = _state().writer._write_summary(summary_pb2.Summary.FromString(bytes(item)), step) or written
    return written
