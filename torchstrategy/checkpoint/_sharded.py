"""Sharded checkpoints: a directory where every rank wrote its own shards of the weights and optimizer slots
(torch.distributed.checkpoint) next to a small structure file from the chief, installed by one rename."""
from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import shutil
import tempfile
from typing import Any, Callable, ContextManager, Iterator, Optional

import torch

from torchstrategy.checkpoint import _io
from torchstrategy.checkpoint._format import CheckpointCorruptedError

#: the chief's file in a sharded checkpoint directory: everything but the sharded tensors
STRUCTURE_FILE = "structure.tsckpt"
_PLACEHOLDER = "__torchstrategy_dcp_tensor__"
_RENAME_EXCHANGE = 2  # renameat2 flag (Linux): swap two paths atomically
_AT_FDCWD = -100


def is_sharded_checkpoint(path: str) -> bool:
    """True when `path` is a directory holding a sharded checkpoint (its structure file is there)."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, STRUCTURE_FILE))


def exists(path: str) -> bool:
    """A checkpoint is at `path`: a checkpoint file, or a sharded checkpoint directory."""
    return os.path.isfile(path) or is_sharded_checkpoint(path)


# ----- splitting tensors out of a state ---------------------------------------------------------
class TensorSplit:
    """Collects the tensors that go to DCP (weights, optimizer slots) under unique keys, leaving small
    placeholders (key, shape, dtype) in the structure; the same calls on every rank give the same keys."""

    def __init__(self) -> None:
        self.tensors: dict = {}

    def _placeholder(self, key: str, tensor: torch.Tensor) -> dict:
        if key in self.tensors:
            raise RuntimeError(f"Two tensors of the checkpoint have the key '{key}'.")
        self.tensors[key] = tensor.detach()
        return {_PLACEHOLDER: key, "shape": list(tensor.shape), "dtype": str(tensor.dtype).replace("torch.", "")}

    def module_state(self, prefix: str, state: dict) -> dict:
        """A module's state dict with every tensor replaced by a placeholder."""
        return type(state)((key, self._placeholder(f"{prefix}::{key}", value) if isinstance(value, torch.Tensor)
                            else value) for key, value in state.items())

    def optimizer_state(self, prefix: str, state: dict) -> dict:
        """An optimizer's state dict with its per-parameter slots replaced by placeholders (param_groups,
        iterations and the learning rate stay in the structure)."""
        out = dict(state)
        slots = state.get("state")
        if isinstance(slots, dict):
            out["state"] = {index: {name: self._placeholder(f"{prefix}::state/{index}/{name}", value)
                                    if isinstance(value, torch.Tensor) and value.dim() > 0 else value
                                    for name, value in per_param.items()}
                            for index, per_param in slots.items()}
        return out

    def nodes(self, node: dict, path: str = "") -> dict:
        """A Checkpoint's captured node tree with module and optimizer tensors split out (in place)."""
        where = path or "<root>"
        if node.get("kind") == "module" and isinstance(node.get("state"), dict):
            node["state"] = self.module_state(where, node["state"])
        elif node.get("kind") == "optimizer" and isinstance(node.get("state"), dict):
            node["state"] = self.optimizer_state(where, node["state"])
        for name, child in node.get("children", {}).items():
            self.nodes(child, f"{path}/{name}" if path else name)
        return node


# ----- writing ---------------------------------------------------------------------------------
def write(path: str, structure: Any, tensors: dict, coordinator: Any,
          after_write: Optional[Callable[[str], None]] = None,
          guard: Optional[Callable[[], ContextManager[Any]]] = None) -> str:
    """Writes a sharded checkpoint at directory `path`, called on every rank together.

    The chief makes a temp directory next to `path` and tells everyone its name; every rank writes its
    shards of `tensors` there with `torch.distributed.checkpoint.save`; once all succeeded the chief adds
    the structure file, renames the directory into place (an existing checkpoint at `path` is swapped
    out atomically where the OS can) and runs `after_write(path)`, all inside `guard()`. On a failure
    anywhere the temp directory is removed, `path` keeps what it had, and every rank raises.
    """
    import torch.distributed.checkpoint as dcp

    given = os.fspath(path)  # returned and passed on as given (the manager's index compares paths as strings)
    path = os.path.abspath(given)
    if os.path.isdir(path) and not is_sharded_checkpoint(path) and os.listdir(path):
        raise IsADirectoryError(f"Cannot write checkpoint '{path}': it is a directory that is not a checkpoint. "
                                f"Pass a file prefix such as '{os.path.join(path, 'ckpt')}'.")
    with contextlib.ExitStack() as held:
        temp, error = None, None
        if coordinator.is_writer:
            try:
                if guard is not None:
                    held.enter_context(guard())
                temp = _make_temp_dir(path)
            except BaseException as caught:  # noqa: BLE001 - told to the other ranks, then re-raised
                error = caught
        temp = _share_or_raise(coordinator, temp, error, "prepare")
        try:
            dcp.save(tensors, storage_writer=dcp.FileSystemWriter(temp), no_dist=_single_process())
        except BaseException as caught:  # noqa: BLE001 - DCP's CheckpointException is a BaseException
            error = caught
        failed = coordinator.gather(_describe(error))
        if any(message is not None for message in failed):
            if coordinator.is_writer:
                shutil.rmtree(temp, ignore_errors=True)
            if coordinator.processes > 1:
                coordinator.broadcast(None)  # everyone returns once the temp directory is gone
            if error is not None and not _is_checkpoint_exception(error) and not isinstance(error, Exception):
                raise error  # KeyboardInterrupt, SystemExit: as they are
            ranks = [rank for rank, message in enumerate(failed) if message is not None]
            raise RuntimeError(f"Could not write the sharded checkpoint '{given}': replica(s) {ranks} failed to "
                               f"write their shards ({next(m for m in failed if m is not None)}). Nothing was "
                               f"installed: '{given}' keeps what it had.") from error
        if coordinator.is_writer:
            try:
                _io.save_state(structure, os.path.join(temp, STRUCTURE_FILE))
                _fsync_directory(temp)
                _install(temp, path)
                if after_write is not None:
                    after_write(given)
            except BaseException as caught:  # noqa: BLE001
                error = caught
                shutil.rmtree(temp, ignore_errors=True)
        _share_or_raise(coordinator, None, error, "install")
    return given


def _single_process() -> bool:
    """No process group: DCP reads and writes locally (a plain one-process program)."""
    import torch.distributed as dist

    return not (dist.is_available() and dist.is_initialized())


def _is_checkpoint_exception(error: BaseException) -> bool:
    from torch.distributed.checkpoint.api import CheckpointException

    return isinstance(error, CheckpointException)


def _describe(error: Optional[BaseException]) -> Optional[str]:
    return None if error is None else f"{type(error).__name__}: {error}"


def _share_or_raise(coordinator: Any, value: Any, error: Optional[BaseException], step: str) -> Any:
    """The chief's `value` (or its failure) on every rank; a failure is raised everywhere."""
    if coordinator.processes > 1:
        outcome = coordinator.broadcast((value, _describe(error)))
        value, message = outcome
        if error is None and message is not None:
            raise RuntimeError(f"The chief failed to write the checkpoint ({message}).")
    if error is not None:
        raise error
    return value


def _temp_prefix(path: str) -> str:
    return "." + os.path.basename(path) + "."  # as _io's temp files: the same cleanups find both


def _make_temp_dir(path: str) -> str:
    parent = os.path.dirname(path)
    _io.check_directory_path(parent, "checkpoint directory")
    os.makedirs(parent, exist_ok=True)
    remove_stale_temps(path)
    return tempfile.mkdtemp(prefix=_temp_prefix(path), suffix=".tmp", dir=parent)


def remove_stale_temps(path: str) -> None:
    """Deletes temp files and directories that interrupted writes of `path` left (one writer per path)."""
    parent = os.path.dirname(os.path.abspath(path)) or "."
    for stale in glob.glob(os.path.join(glob.escape(parent), glob.escape(_temp_prefix(path)) + "*.tmp")):
        remove_entry(stale)


def remove_entry(path: str) -> bool:
    """Deletes a file or a directory tree; True if something was removed."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def remove_checkpoint(path: str) -> Optional[str]:
    """Deletes a checkpoint file or directory and the temps of its unfinished writes; the path if removed."""
    remove_stale_temps(path)
    return path if remove_entry(path) else None


def _exchange(first: str, second: str) -> bool:
    """Swaps two existing paths in one atomic step (Linux renameat2); False where that is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0


def _install(temp: str, path: str) -> None:
    """Puts the complete directory `temp` at `path`; what was there is removed afterwards. The final name
    only ever shows the old complete checkpoint or the new one (where the swap is not atomic, there is a
    moment where it shows none)."""
    parent = os.path.dirname(path)
    if not os.path.lexists(path):
        os.rename(temp, path)
    elif _exchange(temp, path):
        remove_entry(temp)  # now holds the old checkpoint
    else:
        aside = tempfile.mktemp(prefix=_temp_prefix(path), suffix=".tmp", dir=parent)
        os.rename(path, aside)
        os.rename(temp, path)
        remove_entry(aside)
    _fsync_directory(parent)


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ----- reading ---------------------------------------------------------------------------------
class Structure:
    """A sharded checkpoint's structure with its placeholders turned into meta tensors (shape and dtype,
    no data), so restores can check architectures before loading; `load` then fetches the data."""

    def __init__(self, path: str) -> None:
        self.path = os.fspath(path)
        try:
            self.tree = _io.load_state(os.path.join(self.path, STRUCTURE_FILE))
        except FileNotFoundError:
            raise FileNotFoundError(f"Failed to restore from checkpoint '{self.path}': it is a directory without "
                                    f"the structure file '{STRUCTURE_FILE}' (not a sharded checkpoint, or its "
                                    f"write never finished).") from None
        self._keys: dict = {}  # id(meta tensor) -> its DCP key
        self._slots: dict = {}  # id(meta tensor) -> (container, key in it), for tensors not loaded yet
        self.tree = self._to_meta(self.tree)

    def _to_meta(self, value: Any) -> Any:
        if isinstance(value, dict):
            if _PLACEHOLDER in value:
                meta = torch.empty(tuple(value["shape"]), dtype=getattr(torch, value["dtype"]), device="meta")
                self._keys[id(meta)] = value[_PLACEHOLDER]
                return meta
            for key in list(value):
                value[key] = self._to_meta(value[key])
                self._note(value, key)
            return value
        if isinstance(value, list):
            for index in range(len(value)):
                value[index] = self._to_meta(value[index])
                self._note(value, index)
            return value
        if isinstance(value, tuple):
            return tuple(self._to_meta(item) for item in value)  # placeholders are never inside tuples
        return value

    def _note(self, container: Any, key: Any) -> None:
        item = container[key]
        if is_placeholder(item):
            self._slots[id(item)] = (container, key)

    def metas(self, value: Any) -> Iterator[torch.Tensor]:
        """The meta tensors (still to load) inside `value`."""
        if is_placeholder(value) and id(value) in self._slots:
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from self.metas(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                yield from self.metas(item)

    def load(self, targets: list) -> None:
        """Loads `(meta, template)` pairs with DCP, each into a new tensor laid out like its template (a
        DTensor for a sharded live variable: only this rank's shard is read; a full tensor otherwise), and
        puts the loaded tensors where the meta tensors were. Every rank calls this together."""
        import torch.distributed.checkpoint as dcp

        destinations, places = {}, []
        for meta, template in targets:
            if id(meta) not in self._slots:
                continue  # loaded already (an object reached twice)
            container, key = self._slots.pop(id(meta))
            dcp_key = self._keys[id(meta)]
            destinations[dcp_key] = _like(template, meta)
            places.append((container, key, dcp_key))
        if not destinations:  # the same on every rank: all skip the collective together
            return
        reader = dcp.FileSystemReader(self.path)
        _check_shard_files(self.path, reader)  # the same verdict on every rank, before any collective
        try:
            dcp.load(destinations, storage_reader=reader, no_dist=_single_process())
        except BaseException as error:  # noqa: BLE001 - DCP's CheckpointException is a BaseException
            if not isinstance(error, Exception) and not _is_checkpoint_exception(error):
                raise
            raise CheckpointCorruptedError(f"Could not read the shards of checkpoint '{self.path}': they are missing "
                                           f"or damaged ({_describe_failure(error)}).") from error
        for container, key, dcp_key in places:
            container[key] = destinations[dcp_key]

    def load_all(self) -> None:
        """Loads every tensor as a full plain tensor (for a strategy that does not shard)."""
        self.load([(meta, None) for meta in list(self.metas(self.tree))])


def _check_shard_files(path: str, reader: Any) -> None:
    """Every shard file the checkpoint's metadata lists is there and long enough for what it holds; else a
    CheckpointCorruptedError naming the file and the rank that wrote it (DCP names shards `__<rank>_<n>.distcp`)."""
    try:
        storage = reader.read_metadata().storage_data
    except Exception as error:  # noqa: BLE001 - a missing or unreadable .metadata
        raise CheckpointCorruptedError(f"Could not read checkpoint '{path}': its shard index (.metadata) is missing "
                                       f"or damaged ({type(error).__name__}: {error}).") from error
    needed: dict = {}
    for info in storage.values():
        needed[info.relative_path] = max(needed.get(info.relative_path, 0), info.offset + info.length)
    for name, size in sorted(needed.items()):
        file = os.path.join(path, name)
        rank = name[2:].split("_")[0] if name.startswith("__") else "?"
        if not os.path.isfile(file):
            raise CheckpointCorruptedError(f"Checkpoint '{path}' is missing the shard file '{name}' written by rank "
                                           f"{rank}: it was deleted or never copied. Restore it, or use an older "
                                           "checkpoint (`manager.fallback_to_previous = True` before CheckpointManager.restore_or_initialize()).")
        found = os.path.getsize(file)
        if found < size:
            raise CheckpointCorruptedError(f"Checkpoint '{path}': the shard file '{name}' written by rank {rank} is cut "
                                           f"short ({found} bytes, its tensors need {size}). Restore it, or use an older "
                                           "checkpoint (`manager.fallback_to_previous = True` before CheckpointManager.restore_or_initialize()).")


def _describe_failure(error: BaseException) -> str:
    """DCP's failure per rank ("rank 1: ..."), or the error itself."""
    failures = getattr(error, "failures", None)
    if isinstance(failures, dict) and failures:
        return "; ".join(f"rank {rank}: {failure}" for rank, failure in sorted(failures.items()))
    return f"{type(error).__name__}: {error}"


def is_placeholder(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "meta"


def _like(template: Any, meta: torch.Tensor) -> torch.Tensor:
    from torch.distributed.tensor import DTensor

    if isinstance(template, torch.Tensor) and tuple(template.shape) == tuple(meta.shape):
        if isinstance(template, DTensor):
            return torch.empty_like(template.detach(), dtype=meta.dtype)
        if template.device.type != "meta":
            return torch.empty(tuple(meta.shape), dtype=meta.dtype, device=template.device)
    return torch.empty(tuple(meta.shape), dtype=meta.dtype)


def templates(kind: str, obj: Any, state: Any, structure: Structure, io: Any, deferred: bool = False) -> list:
    """(meta, live template) pairs for the tensors still to load in `state`, the saved state of `obj`: a
    module's live state dict (through the strategy's checkpoint IO) and an optimizer's parameters give the
    layouts; anything else (or a model or optimizer not built yet) loads as full tensors."""
    pairs: list = []
    if kind == "module" and isinstance(state, dict) and not deferred:
        live = io.state_dict(obj)
        pairs = [(value, live.get(key)) for key, value in state.items() if is_placeholder(value)]
    elif kind == "optimizer" and isinstance(state, dict) and isinstance(state.get("state"), dict):
        params = [param for group in getattr(obj, "param_groups", []) for param in group["params"]]
        for index, slots in state["state"].items():
            param = params[index] if isinstance(index, int) and 0 <= index < len(params) else None
            pairs += [(value, param) for value in slots.values() if is_placeholder(value)]
    if kind == "tensor" and is_placeholder(state):
        pairs = [(state, obj)]
    seen = {id(meta) for meta, _ in pairs}
    return pairs + [(meta, None) for meta in structure.metas(state) if id(meta) not in seen]


class PendingState:
    """Saved state of one module or optimizer whose tensors load from a sharded checkpoint only when it is
    put into its owner (laid out like the owner is then: sharded if it is sharded by that time)."""

    def __init__(self, structure: Structure, state: Any, kind: str) -> None:
        self.structure, self.state, self.kind = structure, state, kind

    def materialize(self, owner: Any, io: Any) -> Any:
        """The state with its tensors loaded for `owner` (every rank calls this together)."""
        self.structure.load(templates(self.kind, owner, self.state, self.structure, io))
        return self.state
