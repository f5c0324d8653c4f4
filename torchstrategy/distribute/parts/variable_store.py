"""Variables kept on parameter servers: the placement of each one (or of each row shard), the store a ps
task serves (read, assign, add, apply an optimizer update), and the client calls coordinator and workers make
(the coordinator's registry of its tensors is in variable_registry.py)."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import torch

from torchstrategy import _context


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
    #: (tensor subclass, its attributes as (name, value) pairs) of a non-trainable variable that is more than
    #: a plain tensor (a Keras variable with `assign_add`, a name and a path): a worker's copy is one too
    local_kind: Optional[tuple] = None

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
        """An empty local copy (a Parameter for trainable weights, the coordinator's tensor kind for the others),
        to be filled by a read."""
        tensor = torch.empty(self.shape, dtype=self.dtype)
        if self.parameter:
            return torch.nn.Parameter(tensor, requires_grad=self.requires_grad)
        if self.local_kind is None:
            return tensor
        kind, attributes = self.local_kind
        local = torch.Tensor._make_subclass(kind, tensor, False)
        local.__dict__.update(dict(attributes))
        return local


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


def optimizer_blueprint(optimizer: Any) -> tuple:
    """(class, config) a ps task builds its copy of `optimizer` from; gradient clipping and loss scaling
    are left out, since workers apply them before the gradients leave (they need every gradient)."""
    config = dict(optimizer.get_config())
    for option in ("clipnorm", "clipvalue", "global_clipnorm", "loss_scale_factor"):
        if option in config:
            config[option] = None
    return type(optimizer), config


def _ps(method: str, *args: Any) -> Any:
    """The entry point of every call a ps task receives."""
    return getattr(_context.task_service(), method)(*args)


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
