"""The coordinator's side of the variables on parameter servers: which of its tensors are variables, where
each lives, and keeping its copies and the ps values in step (its writes sent, the ps values read back)."""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional, Sequence

import torch

from torchstrategy.distribute.partitioners import shard_bounds
from torchstrategy.distribute.parts.variable_store import Shard, VariableClient, VariableSpec, optimizer_blueprint


_EMPTY_OPTIMIZER = (0, ())


def _local_kind(tensor: torch.Tensor) -> Optional[tuple]:
    """What a worker's copy of a non-trainable `tensor` must be besides its values: the tensor subclass it is
    (one of ours, which every task imports, e.g. a Keras metric state with `assign_add`) and its plain attributes
    (name, path, aggregation); None for a plain tensor or a Parameter."""
    kind = type(tensor)
    if kind is torch.Tensor or isinstance(tensor, torch.nn.Parameter) \
            or not kind.__module__.startswith("torchstrategy."):
        return None
    attributes = tuple(sorted((key, value) for key, value in tensor.__dict__.items()
                              if isinstance(value, (str, int, float, bool))))
    return kind, attributes


def _optimizer_signature(optimizer: Any) -> tuple:
    slots = tuple((id(t), t._version) for state in optimizer.state.values() for t in state.values()
                  if isinstance(t, torch.Tensor))
    return int(optimizer.iterations), slots


class VariableRegistry:
    """The coordinator's map from its tensors to the variables on the ps tasks.

    A tensor is registered the first time a closure (or fit) uses it: it gets a key and a place, round
    robin over the ps tasks in registration order (TF's placement), or row shards when the partitioner
    splits it. `flush()` sends the coordinator's own writes (new variables, restored checkpoints, reset
    metrics; seen through torch's in-place version counters) before closures run; `refresh()` copies the
    ps values back after `join()`, so the coordinator's model, metrics and optimizer read what training made.
    """

    def __init__(self, client: VariableClient, ps_tasks: Sequence[str], partitioner: Optional[Callable] = None) -> None:
        self._client = client
        self._ps_tasks = tuple(ps_tasks)
        self._partitioner = partitioner
        self._entries: dict = {}  # id(tensor) -> (tensor, spec)
        self._synced: dict = {}  # key -> tensor version at the last flush/refresh
        self._optimizers: dict = {}  # id(optimizer) -> (optimizer, key, signature at last sync)
        self._next_place = 0
        self._lock = threading.Lock()

    def spec_of(self, tensor: torch.Tensor, register: bool = False, name: str = "") -> Optional[VariableSpec]:
        entry = self._entries.get(id(tensor))
        if entry is not None and entry[0] is tensor:
            return entry[1]
        return self._register(tensor, name) if register else None

    def register_module(self, module: Any) -> None:
        for name, tensor in list(module.named_parameters()) + list(module.named_buffers()):
            self.spec_of(tensor, register=True, name=name)

    def register_tensors(self, tensors: Sequence[torch.Tensor], name: str) -> None:
        for tensor in tensors:
            self.spec_of(tensor, register=True, name=name)

    def _place(self, tensor: torch.Tensor, key: str) -> tuple:
        parts = self._partitioner(tuple(tensor.shape), tensor.dtype) if self._partitioner and tensor.dim() else None
        count = int(parts[0]) if parts else 1
        if any(int(p) != 1 for p in (parts or [])[1:]):
            raise ValueError(f"the variable partitioner returned {list(parts)} for shape {tuple(tensor.shape)}: "
                             f"only axis 0 may be split.")
        if count <= 1:
            task = self._ps_tasks[self._next_place % len(self._ps_tasks)]
            self._next_place += 1
            return (Shard(task, key),)
        shards = []
        for index, (start, stop) in enumerate(shard_bounds(tensor.shape[0], count)):
            task = self._ps_tasks[self._next_place % len(self._ps_tasks)]
            self._next_place += 1
            shards.append(Shard(task, f"{key}/part_{index}", start, stop))
        return tuple(shards)

    def _register(self, tensor: torch.Tensor, name: str) -> VariableSpec:
        # a layer that only reads rows of a weight (Embedding) marks it so: workers then read just those rows
        on_demand = bool(getattr(tensor, "_rows_read_on_demand", False))
        with self._lock:
            key = f"v{len(self._entries)}" + (f":{name}" if name else "")
            spec = VariableSpec(key, tuple(tensor.shape), tensor.dtype, isinstance(tensor, torch.nn.Parameter),
                                bool(tensor.requires_grad), self._place(tensor, key), on_demand and tensor.dim() == 2,
                                _local_kind(tensor))
            self._entries[id(tensor)] = (tensor, spec)
            return spec

    def optimizer_key(self, optimizer: Any) -> str:
        entry = self._optimizers.get(id(optimizer))
        if entry is None or entry[0] is not optimizer:
            # "never synced" looks like a fresh optimizer: one already holding state (a restored checkpoint)
            # differs from it, so the next flush sends that state to the ps tasks
            entry = (optimizer, f"opt{len(self._optimizers)}", _EMPTY_OPTIMIZER)
            self._optimizers[id(optimizer)] = entry
        return entry[1]

    def read(self, spec: VariableSpec) -> torch.Tensor:
        """The ps value of one registered variable (shards joined)."""
        return self._client.read([spec])[0]

    def flush(self) -> None:
        """Sends what changed on the coordinator since the last sync (and every new variable) to the ps tasks."""
        changed = [(tensor, spec) for tensor, spec in self._entries.values() if self._synced.get(spec.key) != tensor._version]
        if changed:
            self._client.assign([spec for _, spec in changed], [tensor.detach() for tensor, _ in changed])
            for tensor, spec in changed:
                self._synced[spec.key] = tensor._version
        for optimizer, key, signature in list(self._optimizers.values()):
            if _optimizer_signature(optimizer) != signature:
                self._push_optimizer(optimizer, key)

    def refresh(self) -> None:
        """Copies every variable's ps value (and the optimizers' slots and iterations) into the coordinator's tensors."""
        entries = list(self._entries.values())
        values = self._client.read([spec for _, spec in entries])
        with torch.no_grad():
            for (tensor, spec), value in zip(entries, values):
                tensor.copy_(value)
                self._synced[spec.key] = tensor._version
        for optimizer, key, _ in list(self._optimizers.values()):
            self._pull_optimizer(optimizer, key)

    def _by_shard_key(self) -> dict:
        return {shard.key: (tensor, spec) for tensor, spec in self._entries.values() for shard in spec.shards}

    def _pull_optimizer(self, optimizer: Any, key: str) -> None:
        answers = [a for a in self._client.optimizer_state(key, self._ps_tasks) if a is not None]
        if not answers:
            return
        pieces: dict = {}  # variable key -> {shard key: slots}
        by_shard = self._by_shard_key()
        for _, slots in answers:
            for shard_key, state in slots.items():
                pieces.setdefault(by_shard[shard_key][1].key, {})[shard_key] = state
        tensors = {spec.key: (tensor, spec) for tensor, spec in self._entries.values()}
        params = [tensor for tensor, spec in self._entries.values() if spec.key in pieces]  # registration order
        if not getattr(optimizer, "built", True):
            optimizer.build(params)
        for variable_key, shard_states in pieces.items():
            tensor, spec = tensors[variable_key]
            per_shard = [shard_states.get(shard.key, {}) for shard in spec.shards]
            names = per_shard[0].keys()
            optimizer.state[tensor] = {name: spec.joined([state[name] for state in per_shard]) for name in names}
        optimizer.iterations = max(iterations for iterations, _ in answers)
        self._optimizers[id(optimizer)] = (optimizer, key, _optimizer_signature(optimizer))

    def _push_optimizer(self, optimizer: Any, key: str) -> None:
        per_task: dict = {task: (int(optimizer.iterations), {}) for task in self._ps_tasks}
        for param, state in optimizer.state.items():
            spec = self.spec_of(param)
            if spec is None or not state:
                continue
            for shard_index, shard in enumerate(spec.shards):
                per_task[shard.task][1][shard.key] = {
                    name: spec.pieces(value)[shard_index].contiguous() for name, value in state.items()}
        self._client.load_optimizer_state(key, optimizer_blueprint(optimizer), per_task)
        self._optimizers[id(optimizer)] = (optimizer, key, _optimizer_signature(optimizer))
