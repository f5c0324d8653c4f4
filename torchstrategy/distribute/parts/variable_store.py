"""Variables kept on parameter servers: where each one (or each row shard of it) lives, the store a ps task
serves (read, assign, add, apply an optimizer update), and the client calls coordinator and workers make."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import torch

from torchstrategy import _context
from torchstrategy.distribute.partitioners import shard_bounds


@dataclass(frozen=True)
class Shard:
    """Rows [start, stop) of a variable, stored on ps task `task` under `key` (the whole variable when
    start and stop are None)."""

    task: str
    key: str
    start: Optional[int] = None
    stop: Optional[int] = None


@dataclass(frozen=True)
class VariableSpec:
    """What a task needs to hold a local copy of a variable: its key, shape, dtype, kind and shards."""

    key: str
    shape: tuple
    dtype: torch.dtype
    parameter: bool
    requires_grad: bool
    shards: tuple
    #: read by rows when a layer looks rows up (an Embedding table), never copied whole to a worker
    on_demand: bool = False

    @property
    def partitioned(self) -> bool:
        return self.shards[0].start is not None

    def pieces(self, value: torch.Tensor) -> list:
        """`value` cut into this variable's shards (rows along axis 0)."""
        if not self.partitioned:
            return [value]
        return [value[shard.start:shard.stop] for shard in self.shards]

    def joined(self, pieces: Sequence[torch.Tensor]) -> torch.Tensor:
        return pieces[0] if not self.partitioned else torch.cat(list(pieces), dim=0)

    def make_local(self) -> torch.Tensor:
        """An empty local copy (a Parameter for trainable weights), to be filled by a read."""
        tensor = torch.empty(self.shape, dtype=self.dtype)
        return torch.nn.Parameter(tensor, requires_grad=self.requires_grad) if self.parameter else tensor


# ----- the ps side ----------------------------------------------------------------------------------
class ParameterServerService:
    """The variables of one ps task and the optimizers that update them (one lock: updates from different
    workers are applied one at a time, each to the values left by the previous one)."""

    def __init__(self) -> None:
        self.values: dict = {}
        self.optimizers: dict = {}
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.served: dict = {}  # key -> elements sent out (reads and row reads)

    def assign(self, entries: list) -> None:
        with self.lock:
            for key, value in entries:
                current = self.values.get(key)
                if current is None or current.shape != value.shape or current.dtype != value.dtype:
                    self.values[key] = value.detach().clone()
                else:
                    current.copy_(value)

    def add(self, entries: list) -> None:
        with self.lock:
            for key, delta in entries:
                self.values[key].add_(delta.to(self.values[key].dtype))

    def read(self, keys: list) -> list:
        with self.lock:
            for key in keys:
                self.served[key] = self.served.get(key, 0) + self.values[key].numel()
            return [self.values[key].clone() for key in keys]

    def read_rows(self, key: str, rows: torch.Tensor) -> torch.Tensor:
        with self.lock:
            picked = self.values[key].index_select(0, rows)
            self.served[key] = self.served.get(key, 0) + picked.numel()
            return picked

    def traffic(self) -> dict:
        """{key: elements sent out so far} (what the tests and benchmarks read)."""
        with self.lock:
            return dict(self.served)

    def _optimizer(self, okey: str, blueprint: tuple, keys: Sequence[str]) -> Any:
        """The optimizer `okey` of this task, made from (class, config) on first use, holding `keys`."""
        optimizer = self.optimizers.get(okey)
        tensors = [self.values[key] for key in keys]
        if optimizer is None:
            cls, config = blueprint
            optimizer = cls.from_config(dict(config))
            optimizer.build(tensors)
            self.optimizers[okey] = optimizer
            return optimizer
        known = {id(p) for group in optimizer.param_groups for p in group["params"]}
        new = [t for t in tensors if id(t) not in known]
        if new:
            optimizer.add_param_group({"params": new})
        return optimizer

    def apply(self, okey: str, blueprint: tuple, learning_rate: Any, entries: list) -> None:
        """One optimizer step over the given (key, gradient) pairs, with the worker's current learning rate."""
        with self.lock:
            optimizer = self._optimizer(okey, blueprint, [key for key, _ in entries])
            optimizer.learning_rate = learning_rate
            params = [self.values[key] for key, _ in entries]
            try:
                for param, (_, grad) in zip(params, entries):
                    param.grad = _dense_gradient(grad, param)
                optimizer.step()
            finally:
                for param in params:
                    param.grad = None

    def optimizer_state(self, okey: str) -> Optional[tuple]:
        """(iterations, {key: {slot: tensor}}) of optimizer `okey`, or None when it never stepped here."""
        with self.lock:
            optimizer = self.optimizers.get(okey)
            if optimizer is None:
                return None
            by_id = {id(value): key for key, value in self.values.items()}
            slots = {by_id[id(p)]: {name: t.clone() for name, t in optimizer.state[p].items()}
                     for group in optimizer.param_groups for p in group["params"] if p in optimizer.state}
            return int(optimizer.iterations), slots

    def load_optimizer_state(self, okey: str, blueprint: tuple, iterations: int, slots: dict) -> None:
        with self.lock:
            optimizer = self._optimizer(okey, blueprint, list(slots))
            optimizer.iterations = iterations
            for key, state in slots.items():
                optimizer.state[self.values[key]] = {name: t.clone() for name, t in state.items()}


def _dense_gradient(grad: Any, param: torch.Tensor) -> torch.Tensor:
    """A gradient as the optimizer takes it: (rows, values) of a row lookup become a dense gradient with zeros
    elsewhere (TF's optimizers update a ShardedVariable so: slots of untouched rows decay as well)."""
    if isinstance(grad, tuple):
        rows, values = grad
        return torch.zeros_like(param).index_add_(0, rows, values.to(param.dtype))
    return grad.to(param.dtype)


def _row_pieces(spec: VariableSpec, grad: torch.Tensor) -> list:
    """A sparse (row) gradient of `spec` as one (rows, values) pair per shard, rows counted within the shard."""
    grad = grad.coalesce()
    rows, values = grad.indices()[0], grad.values()
    if not spec.partitioned:
        return [(rows, values)]
    pieces = []
    for shard in spec.shards:
        inside = (rows >= shard.start) & (rows < shard.stop)
        pieces.append((rows[inside] - shard.start, values[inside]))
    return pieces


def _ps(method: str, *args: Any) -> Any:
    """The entry point of every call a ps task receives."""
    return getattr(_context._get_task_service(), method)(*args)


# ----- the client side (coordinator and workers) ----------------------------------------------------
class VariableClient:
    """Reads and writes variables on the ps tasks through an RpcGroup: one concurrent call per task."""

    def __init__(self, group: Any) -> None:
        self._group = group
        self._ready = threading.Event()
        if group is not None:
            self._ready.set()

    def attach(self, group: Any) -> None:
        """Gives a client made before its task joined the group (calls may arrive as soon as it joins) the group."""
        self._group = group
        self._ready.set()

    def _per_task(self, specs: Sequence[VariableSpec], values: Optional[Sequence[torch.Tensor]] = None) -> dict:
        """{task: [(shard key, piece or None)]} for the shards of `specs` (cut from `values` when given)."""
        tasks: dict = {}
        for index, spec in enumerate(specs):
            value = None if values is None else values[index].detach()
            pieces = [None] * len(spec.shards) if value is None else (
                _row_pieces(spec, value) if value.is_sparse else spec.pieces(value))
            for shard, piece in zip(spec.shards, pieces):
                tasks.setdefault(shard.task, []).append((shard.key, piece))
        return tasks

    def _each(self, method: str, tasks: dict, make_args: Callable[[list], tuple]) -> dict:
        self._ready.wait()
        names = list(tasks)
        results = self._group.call_each([(task, _ps, (method, *make_args(tasks[task]))) for task in names])
        return dict(zip(names, results))

    def read(self, specs: Sequence[VariableSpec]) -> list:
        """The current values of `specs` (shards joined)."""
        if not specs:
            return []
        tasks = self._per_task(specs)
        answers = self._each("read", tasks, lambda entries: ([key for key, _ in entries],))
        by_key = {key: value for task, entries in tasks.items() for (key, _), value in zip(entries, answers[task])}
        return [spec.joined([by_key[shard.key] for shard in spec.shards]) for spec in specs]

    def read_rows(self, spec: VariableSpec, rows: torch.Tensor) -> torch.Tensor:
        """Rows `rows` (distinct, sorted) of `spec`, read from the shards holding them only."""
        self._ready.wait()
        if not spec.partitioned:
            return self._group.call(spec.shards[0].task, _ps, ("read_rows", spec.shards[0].key, rows))
        calls, picks = [], []
        for shard in spec.shards:
            inside = (rows >= shard.start) & (rows < shard.stop)
            if bool(inside.any()):
                calls.append((shard.task, _ps, ("read_rows", shard.key, rows[inside] - shard.start)))
                picks.append(inside)
        parts = self._group.call_each(calls)
        out = torch.empty((rows.numel(),) + tuple(spec.shape[1:]), dtype=spec.dtype)
        for inside, part in zip(picks, parts):
            out[inside] = part
        return out

    def assign(self, specs: Sequence[VariableSpec], values: Sequence[torch.Tensor]) -> None:
        if specs:
            self._each("assign", self._per_task(specs, [v.contiguous() for v in values]),
                       lambda entries: ([(k, p.contiguous()) for k, p in entries],))

    def add(self, specs: Sequence[VariableSpec], deltas: Sequence[torch.Tensor]) -> None:
        if specs:
            self._each("add", self._per_task(specs, deltas), lambda entries: ([(k, p.contiguous()) for k, p in entries],))

    def apply(self, okey: str, blueprint: tuple, learning_rate: Any, specs: Sequence[VariableSpec],
              grads: Sequence[torch.Tensor]) -> None:
        """Sends each gradient (cut like its variable) to the task holding it, which runs the optimizer step."""
        self._each("apply", self._per_task(specs, grads),
                   lambda entries: (okey, blueprint, learning_rate, [(k, _contiguous(p)) for k, p in entries]))

    def optimizer_state(self, okey: str, tasks: Sequence[str]) -> list:
        """(iterations, slots) of optimizer `okey` from each task (None where it never stepped)."""
        self._ready.wait()
        return self._group.call_each([(task, _ps, ("optimizer_state", okey)) for task in tasks])

    def load_optimizer_state(self, okey: str, blueprint: tuple, per_task: dict) -> None:
        """Installs {task: (iterations, slots)} on the tasks."""
        self._ready.wait()
        self._group.call_each([(task, _ps, ("load_optimizer_state", okey, blueprint, iterations, slots))
                               for task, (iterations, slots) in per_task.items()])


def _contiguous(piece: Any) -> Any:
    return tuple(t.contiguous() for t in piece) if isinstance(piece, tuple) else piece.contiguous()


# ----- the coordinator's registry ------------------------------------------------------------------
def optimizer_blueprint(optimizer: Any) -> tuple:
    """(class, config) a ps task builds its copy of `optimizer` from; gradient clipping and loss scaling
    are left out, since workers apply them before the gradients leave (they need every gradient)."""
    config = dict(optimizer.get_config())
    for option in ("clipnorm", "clipvalue", "global_clipnorm", "loss_scale_factor"):
        if option in config:
            config[option] = None
    return type(optimizer), config


_EMPTY_OPTIMIZER = (0, ())


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
                                bool(tensor.requires_grad), self._place(tensor, key), on_demand and tensor.dim() == 2)
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
