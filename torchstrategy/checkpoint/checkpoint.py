"""`tf.train.Checkpoint`: groups objects with state, writes them from the chief in one atomic,
checksummed file (or, under a sharded strategy, one shard per rank in a directory), restores them on every rank."""
from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Callable, ContextManager, Optional

import torch

from torchstrategy import _context
from torchstrategy.checkpoint import _io, _objects, _sharded, _tf_restore, _tf_write, options as _options
from torchstrategy.checkpoint._sync import Coordinator
from torchstrategy.formats.tf_bundle import is_bundle
from torchstrategy.variables import Variable

_FORMAT = "torchstrategy.train.Checkpoint"


class _Status:
    """Common part of the restore status objects (TF's `assert_*` methods return the status)."""

    def expect_partial(self) -> "_Status":
        """Silences the warning about checkpoint values that matched nothing."""
        self._silenced = True
        return self

    def run_restore_ops(self, session: Any = None) -> None:
        """Graph-mode TF API; restores already happened eagerly."""

    def initialize_or_restore(self, session: Any = None) -> None:
        """Graph-mode TF API; restores already happened eagerly."""


class InitializationOnlyStatus(_Status):
    """What `restore(None)` returns: nothing was restored, objects keep their initial values."""

    def __init__(self) -> None:
        self._silenced = False
        self.metadata: Optional[dict] = None

    def _fail(self) -> None:
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_consumed(self) -> "InitializationOnlyStatus":
        self._fail()
        return self

    def assert_existing_objects_matched(self) -> "InitializationOnlyStatus":
        self._fail()
        return self

    def assert_nontrivial_match(self) -> "InitializationOnlyStatus":
        self._fail()
        return self


class CheckpointLoadStatus(_Status):
    """What `restore(path)`/`read(path)` return. `metadata` says what wrote the file: library
    version, world size, strategy class name, and the time (seconds since the epoch)."""

    def __init__(self, save_path: str, plan: _objects.RestorePlan, metadata: dict) -> None:
        self.save_path = save_path
        self.metadata = metadata
        self._plan = plan
        self._silenced = False

    def _pending(self) -> list:
        return [entry["path"] for entry in self._plan.deferred if not entry["done"]]

    def assert_consumed(self) -> "CheckpointLoadStatus":
        """AssertionError unless every saved object matched one here and every object here was saved."""
        problems = []
        if self._plan.unmatched_in_file:
            problems.append(f"in the checkpoint but matched nothing here: {_objects.describe(self._plan.unmatched_in_file)}")
        if self._plan.unmatched_objects:
            problems.append(f"objects here that are not in the checkpoint: {_objects.describe(self._plan.unmatched_objects)}")
        if self._pending():
            problems.append(f"waiting for their variables to be created (first call): {_objects.describe(self._pending())}")
        if problems:
            raise AssertionError(f"Restore of '{self.save_path}' is not complete; " + "; ".join(problems) + ".")
        return self

    def assert_existing_objects_matched(self) -> "CheckpointLoadStatus":
        """AssertionError if an object here had no value in the checkpoint (extra saved values are fine)."""
        if self._plan.unmatched_objects:
            raise AssertionError(f"Restore of '{self.save_path}': objects here that are not in the checkpoint: "
                                 f"{_objects.describe(self._plan.unmatched_objects)}.")
        return self

    def assert_nontrivial_match(self) -> "CheckpointLoadStatus":
        """AssertionError if nothing but the Checkpoint itself (and its save counter) matched."""
        if not [path for path in self._plan.matched if path not in ("", "save_counter")]:
            raise AssertionError(f"Nothing in '{self.save_path}' matched an object of this Checkpoint.")
        return self

    def __del__(self) -> None:
        unmatched = getattr(getattr(self, "_plan", None), "unmatched_in_file", None)
        if unmatched and not self._silenced:
            _objects.warn_unrestored(self.save_path, unmatched)


class _DeferredRestore:
    """The saved objects a restore found nothing for (TF's deferred restoration): an object set on the
    Checkpoint later under one of their names is restored then, and the restore's status counts it."""

    def __init__(self, plan: _objects.RestorePlan, root: dict) -> None:
        self._plan = plan
        self._saved = {name: node for name, node in root.get("children", {}).items()
                       if name in plan.unmatched_in_file}

    @property
    def waiting(self) -> bool:
        return bool(self._saved)

    def restore_child(self, name: str, value: Any) -> None:
        node = self._saved.pop(name, None)
        if node is None:
            return
        late = _objects.RestorePlan(self._plan.file_path, self._plan.root_node, io=self._plan.io)
        late.match(node, value, name)
        late.apply()
        self._plan.unmatched_in_file = [p for p in self._plan.unmatched_in_file if p != name]
        self._plan.matched.extend(late.matched)
        self._plan.unmatched_in_file.extend(late.unmatched_in_file)
        self._plan.unmatched_objects.extend(late.unmatched_objects)


class Checkpoint:
    """Groups trackable objects (tf.train.Checkpoint), e.g. `Checkpoint(model=model, optimizer=opt, step=step)`.

    Keyword arguments (and attributes set later) may be models/layers (any `nn.Module`), optimizers,
    tensors and `tf.Variable`s, objects with `state_dict()`/`load_state_dict()`, nested Checkpoints, and
    lists/dicts of these. A compiled Keras model also brings its `model.optimizer`. `root=` is kept
    under the name 'root' in this library's files; restoring a TF-written checkpoint (or a TF SavedModel's
    `variables/variables`) matches it with the saved graph's root object, as TF does.

    Distributed: `save`/`write` capture and write on the chief only, and every rank returns once the
    file is complete; `restore`/`read` read on every rank. Models, optimizers and Variables restore on
    any number of replicas; objects marked `_checkpoint_per_replica = True` only on the world size that
    wrote them. Under a strategy with `sharded_checkpoints` (FSDPStrategy) the checkpoint is a directory:
    every rank writes its shards of the weights and optimizer slots (torch.distributed.checkpoint), the
    chief a small structure file; it restores on any number of replicas, and under any strategy.

    >>> ckpt = Checkpoint(step=Variable(0))
    >>> path = ckpt.save("/tmp/doc_ckpt/ckpt")  # '/tmp/doc_ckpt/ckpt-1', and the 'checkpoint' index
    >>> ckpt.restore(path).assert_consumed()  # doctest: +ELLIPSIS
    <...CheckpointLoadStatus object at ...>
    """

    def __init__(self, root: Any = None, **kwargs: Any) -> None:
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_strategy", _context.get_strategy() if _context.has_strategy() else None)
        self._children["save_counter"] = Variable(0, trainable=False, dtype=torch.int64, name="save_counter")
        if root is not None:
            if isinstance(root, Checkpoint):
                for name, value in root._children.items():
                    if name != "save_counter":
                        setattr(self, name, value)
            else:
                setattr(self, "root", root)
                object.__setattr__(self, "_root_given", True)  # TF-written files: `root` is their graph's root
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        if name == "save_counter":
            raise AttributeError("`save_counter` is managed by the Checkpoint; use a tf.Variable of your own for steps.")
        _objects.check_trackable(value, name)
        self._children[name] = value
        pending = self.__dict__.get("_deferred_restore")
        if pending is not None:
            pending.restore_child(name, value)

    def __getattr__(self, name: str) -> Any:
        children = self.__dict__.get("_children", {})
        if name in children:
            return children[name]
        raise AttributeError(f"'Checkpoint' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._children and name != "save_counter":
            del self._children[name]
        else:
            object.__delattr__(self, name)

    @property
    def save_counter(self) -> Variable:
        """How many times `save()` ran (an int64 tf.Variable saved with the checkpoint)."""
        return self._children["save_counter"]

    # ----- writing ---------------------------------------------------------------------------
    def save(self, file_prefix: str, options: Any = None) -> str:
        """Writes `{file_prefix}-{save_counter}` (counter incremented first) and points the directory's
        'checkpoint' index at it; returns that path (on every rank)."""
        self.save_counter.assign_add(1)
        path = f"{os.fspath(file_prefix)}-{int(self.save_counter)}"

        def update_index(save_path: str) -> None:
            from torchstrategy.checkpoint.manager import update_checkpoint_state

            update_checkpoint_state(os.path.dirname(save_path) or ".", save_path, [save_path])

        return self._write(path, after_write=update_index, options=options, call="Checkpoint.save")

    def write(self, file_prefix: str, options: Any = None) -> str:
        """Writes exactly `file_prefix` (no counter, no index) and returns it. With
        `options.experimental_write_format = "tf"` (see CheckpointOptions) it writes TF's bundle format."""
        return self._write(os.fspath(file_prefix), options=options, with_counter=False, call="Checkpoint.write")

    def _payload(self, coordinator: Coordinator) -> dict:
        from torchstrategy.version import TORCHSTRATEGY_VERSION

        return {
            "format": _FORMAT,
            "metadata": {"library": "torchstrategy", "library_version": TORCHSTRATEGY_VERSION,
                         "world_size": coordinator.world_size, "strategy": coordinator.strategy_name,
                         "time": time.time()},
            "objects": _objects.capture(self, "", {}, coordinator.state_io),
        }

    def _owning_strategy(self) -> Any:
        """The strategy this Checkpoint was created under, else the one a tracked Keras model was built
        under (used when save/restore run outside every scope)."""
        if self._strategy is not None:
            return self._strategy
        pending = list(self._children.values())
        while pending:
            obj = pending.pop(0)
            if isinstance(obj, Checkpoint):
                pending.extend(obj._children.values())
            elif isinstance(obj, (list, tuple, dict)):
                pending.extend(obj.values() if isinstance(obj, dict) else obj)
            elif getattr(obj, "_strategy", None) is not None and isinstance(obj, torch.nn.Module):
                return obj._strategy
        return None

    def _write(self, path: str, after_write: Optional[Callable[[str], None]] = None,
               guard: Optional[Callable[[], ContextManager[Any]]] = None, options: Any = None,
               with_counter: bool = True, call: str = "CheckpointManager.save") -> str:
        """Chief: capture, write atomically, then `after_write(path)`, all inside `guard()` if given (e.g. a
        lock); all ranks wait for the result. `call` names the public call on the strategy's progress beacon
        (every replica must make it: a replica left waiting in it says so)."""
        chosen = _options.write_format(options)
        strategy = self._owning_strategy()
        with strategy.progress.call(call) if strategy is not None else contextlib.nullcontext():
            written = self._write_chosen(path, after_write, guard, chosen, with_counter)
        _options.run_write_callbacks(options, written)
        return written

    def _write_chosen(self, path: str, after_write: Optional[Callable[[str], None]],
                      guard: Optional[Callable[[], ContextManager[Any]]], chosen: str, with_counter: bool) -> str:
        coordinator = Coordinator(self._owning_strategy())
        if chosen == "tf":
            if coordinator.sharded:
                raise NotImplementedError("Writing TF's checkpoint format under a strategy with sharded variables "
                                          "(FSDPStrategy) is not supported; save in this library's format (the "
                                          "default), which any strategy restores.")
            if os.path.isdir(path):
                raise IsADirectoryError(f"Cannot write TF checkpoint '{path}': it is a directory. Pass a file prefix "
                                        f"such as '{os.path.join(path, 'ckpt')}'.")

            def write_tf() -> None:
                with guard() if guard is not None else contextlib.nullcontext():
                    _tf_write.write_tf_checkpoint(self, path, with_counter=with_counter)
                    if after_write is not None:
                        after_write(path)

            coordinator.run_on_writer(write_tf)
            return path
        if coordinator.sharded:  # every rank captures its own shards and writes them
            payload = self._payload(coordinator)
            split = _sharded.TensorSplit()
            split.nodes(payload["objects"])
            return _sharded.write(path, payload, split.tensors, coordinator, after_write=after_write, guard=guard)
        if os.path.isdir(path):
            raise IsADirectoryError(f"Cannot write checkpoint '{path}': it is a directory. Pass a file prefix "
                                    f"such as '{os.path.join(path, 'ckpt')}'.")

        def write() -> None:
            with guard() if guard is not None else contextlib.nullcontext():
                _io.save_state(self._payload(coordinator), path)
                if after_write is not None:
                    after_write(path)

        coordinator.run_on_writer(write)
        return path

    # ----- reading ---------------------------------------------------------------------------
    def restore(self, save_path: Optional[str], options: Any = None) -> Any:
        """Restores every object (save counter included) from `save_path`; `None` restores nothing and
        returns a status whose assertions fail. Raises FileNotFoundError, CheckpointCorruptedError
        (naming the file), or ValueError (another architecture or an incompatible world size)."""
        if save_path is None:
            return InitializationOnlyStatus()
        return self._restore(os.fspath(save_path), skip=(), options=options)

    def read(self, save_path: str, options: Any = None) -> CheckpointLoadStatus:
        """Restores a file made by `write()`: like `restore`, but the save counter is neither read nor expected."""
        return self._restore(os.fspath(save_path), skip=("save_counter",), options=options)

    def _restore(self, save_path: str, skip: tuple, options: Any = None) -> Any:
        if is_bundle(save_path) and not os.path.isfile(save_path):  # TF's format: '{prefix}.index' + data shards
            return self._restore_tf(save_path, skip, options)
        if getattr(options, "experimental_skip_slot_variables", False):
            raise NotImplementedError("CheckpointOptions(experimental_skip_slot_variables=True) applies to TF-written "
                                      "checkpoints only; this library's own checkpoints restore their slots.")
        sharded = _sharded.is_sharded_checkpoint(save_path)
        if not sharded and not os.path.isfile(save_path):
            hint = " It is a directory: pass tf.train.latest_checkpoint(directory)." if os.path.isdir(save_path) else ""
            raise FileNotFoundError(f"Failed to restore from checkpoint '{save_path}': no such file.{hint}")
        structure = _sharded.Structure(save_path) if sharded else None  # tensors as meta tensors until planned
        # tensors are copied straight into their owners
        payload = structure.tree if structure is not None else _io.load_state(save_path, copy=False)
        if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
            raise ValueError(f"'{save_path}' is not a tf.train.Checkpoint file (written by something else, e.g. "
                             f"model.save or save_weights; load those with the Keras loaders).")
        metadata = payload["metadata"]
        plan = _objects.RestorePlan(save_path, payload["objects"], skip=skip,
                                    io=Coordinator(self._owning_strategy()).state_io)
        plan.match(payload["objects"], self, "")
        self._check_world_size(save_path, plan.per_replica, metadata)
        if structure is not None:  # names and shapes matched: load the data, laid out like the live objects
            structure.load([pair for kind, obj, state, deferred in plan.targets
                            for pair in _sharded.templates(kind, obj, state, structure, plan.io, deferred)])
        plan.apply()
        # a saved object with no live counterpart yet is restored when it is added (file checkpoints)
        deferred = _DeferredRestore(plan, payload["objects"]) if structure is None else None
        object.__setattr__(self, "_deferred_restore", deferred if deferred is not None and deferred.waiting else None)
        return CheckpointLoadStatus(save_path, plan, metadata)

    def _restore_tf(self, save_path: str, skip: tuple, options: Any) -> Any:
        """Maps a TF-written checkpoint's object graph onto these objects; every shape is checked and every
        tensor read (CRC-checked) before the first one is copied, so a failure changes nothing."""
        plan = _tf_restore.TFRestorePlan(save_path, skip=skip,
                                         skip_slots=bool(getattr(options, "experimental_skip_slot_variables", False)))
        plan.match_root(self)
        plan.apply()
        if plan.unbuilt:  # Keras layers without weights yet get their values when they are built
            _tf_restore.restore_when_built(plan, self)
        object.__setattr__(self, "_deferred_restore", None)
        return _tf_restore.TFCheckpointLoadStatus(plan, self)

    def _check_world_size(self, save_path: str, per_replica: list, metadata: dict) -> None:
        """Per-replica state only moves between jobs of the same world size; nothing is changed otherwise."""
        written_by, here = int(metadata.get("world_size", 1)), Coordinator(self._owning_strategy()).world_size
        if per_replica and written_by != here:
            raise ValueError(
                f"Checkpoint '{save_path}' was written by {written_by} replica(s), and this job has {here}. "
                f"{_objects.describe(per_replica)} hold per-replica state that cannot be split or merged across "
                f"another number of replicas. Resume with {written_by} replica(s), or restore from a Checkpoint "
                f"without those objects (models, optimizers and Variables restore on any number of replicas).")


def checkpoint_metadata(save_path: str) -> dict:
    """What wrote a checkpoint (a file, or a sharded checkpoint's directory): library/library_version,
    world_size, strategy, time (epoch seconds).

    Reads only the small structure section (verified by its own checksum), not the tensor data.
    """
    save_path = os.fspath(save_path)
    if _sharded.is_sharded_checkpoint(save_path):
        save_path = os.path.join(save_path, _sharded.STRUCTURE_FILE)
    structure = _io.read_structure(save_path)
    if not isinstance(structure, dict) or structure.get("format") != _FORMAT:
        raise ValueError(f"'{save_path}' is not a tf.train.Checkpoint file.")
    return dict(structure["metadata"])
