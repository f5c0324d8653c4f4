"""Closures shipped to parameter-server workers: pickled by value (cloudpickle) with references in place
of what the cluster holds (variables, the strategy, per-worker datasets), and run on a worker."""
from __future__ import annotations

import io
import pickle
import sys
import threading
import traceback
import types
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Optional

import torch
from torch import nn

from torchstrategy import _context
from torchstrategy.distribute.parts.rpc_group import RpcError
from torchstrategy.distribute.parts.variable_store import optimizer_blueprint

#: Modules found by import on every task (their functions and classes are pickled by name); anything
#: else (the user's script, test files) is pickled by value, since a worker may not be able to import it.
_IMPORTABLE_ROOTS = frozenset({"torchstrategy", "torch", "numpy", "builtins", "collections", "functools", "math",
                               "operator", "itertools", "typing", "copy", "abc", "enum", "dataclasses", "re",
                               "random", "cloudpickle", "lightning_utilities", "torchvision"})


class PerWorkerReference:
    """Base of coordinator-side handles to per-worker values (datasets, iterators): a closure that takes
    one receives the value of the worker it runs on."""

    _per_worker_key: str


@dataclass(frozen=True)
class ClosureFailure:
    """What a worker reports when a closure raised: the error (when it could be pickled) and its traceback."""

    type_name: str
    message: str
    traceback: str
    error: Optional[BaseException] = None
    failed_task: Optional[str] = None  # a ps task the closure could not reach (the job cannot go on)

    def exception(self) -> BaseException:
        """The closure's error, with the worker's traceback in its message's notes."""
        error = self.error if self.error is not None else RuntimeError(f"{self.type_name}: {self.message}")
        error.add_note(f"Raised on a parameter-server worker:\n{self.traceback}")
        return error


# ----- packing (coordinator) ------------------------------------------------------------------------
def _pickle_by_value(module_name: Optional[str]) -> bool:
    if not module_name or module_name == "__main__":
        return True
    return module_name.split(".")[0] not in _IMPORTABLE_ROOTS and module_name.split(".")[0] not in \
        sys.stdlib_module_names


#: Exact types that are never a variable, the strategy, a per-worker handle, a module or a metric: most of the
#: objects a closure's pickle walks, which `persistent_id` sees one by one
_PLAIN_TYPES = frozenset({str, int, float, complex, bool, type(None), bytes, bytearray, tuple, list, dict, set,
                          frozenset, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                          types.CodeType, types.CellType, types.ModuleType, torch.dtype, torch.device, torch.Size})


class ClosurePickler:
    """cloudpickle with persistent ids: registered variables, the strategy and per-worker handles travel
    as references; Keras optimizers travel without their slots (those live on the ps tasks)."""

    def __init__(self, registry: Any, strategy: Any) -> None:
        import cloudpickle

        registry_ref, strategy_ref = registry, strategy

        class Pickler(cloudpickle.Pickler):
            def persistent_id(self, obj: Any) -> Any:
                if type(obj) in _PLAIN_TYPES:
                    return None
                if obj is strategy_ref:
                    return ("strategy",)
                if isinstance(obj, PerWorkerReference):
                    return ("per_worker", obj._per_worker_key)
                if isinstance(obj, torch.Tensor):
                    spec = registry_ref.spec_of(obj, register=isinstance(obj, nn.Parameter))
                    if spec is None:
                        return None
                    self.variables[spec.key] = spec
                    return ("var", spec.key)
                if isinstance(obj, nn.Module):
                    if id(obj) not in self.modules_seen:  # a module's registration covers the modules inside it
                        _check_built(obj)
                        registry_ref.register_module(obj)
                        self.modules_seen.update(id(module) for module in obj.modules())
                elif hasattr(type(obj), "_state_tensors") and hasattr(obj, "reset_state"):  # a Keras metric
                    registry_ref.register_tensors(obj.variables, getattr(obj, "name", type(obj).__name__))
                return None

            def reducer_override(self, obj: Any) -> Any:
                if isinstance(obj, torch.optim.Optimizer) and hasattr(obj, "get_config"):
                    if not getattr(obj, "built", True) and getattr(obj, "_pending_state", None) is not None:
                        raise ValueError(
                            f"Optimizer '{obj.name}' holds restored state (slots) but has no variables yet, so the "
                            f"state cannot be placed on the parameter servers. Build it before restoring or "
                            f"scheduling: optimizer.build(model.trainable_variables) (fit() does this itself).")
                    state = dict(obj.__getstate__())
                    state["state"] = defaultdict(dict)  # slots live on the ps tasks
                    return _worker_optimizer, (type(obj), state, registry_ref.optimizer_key(obj))
                module = getattr(obj, "__module__", None) if isinstance(obj, type) or callable(obj) else None
                if isinstance(module, str) and _pickle_by_value(module) and module in sys.modules \
                        and module != "__main__":
                    cloudpickle.register_pickle_by_value(sys.modules[module])
                return super().reducer_override(obj)

        self._pickler_class = Pickler

    def dumps(self, value: Any) -> tuple:
        """(bytes, {key: VariableSpec} of the variables it references)."""
        buffer = io.BytesIO()
        pickler = self._pickler_class(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        pickler.variables = {}
        pickler.modules_seen = set()
        pickler.dump(value)
        return buffer.getvalue(), pickler.variables


def _check_built(module: nn.Module) -> None:
    layers = getattr(module, "_flatten_layers", None)
    if layers is None:
        return
    unbuilt = [layer.name for layer in layers() if not getattr(layer, "built", True) and layer is not module]
    if unbuilt or getattr(module, "built", True) is False:
        raise ValueError(
            f"Model '{getattr(module, 'name', type(module).__name__)}' is not built (layers {unbuilt or 'all'}), so "
            f"its variables do not exist yet and cannot be placed on the parameter servers. Build it on the "
            f"coordinator before scheduling: give it a keras.Input or input_shape=, or call model.build(shape).")


def _worker_optimizer(cls: type, state: dict, key: str) -> Any:
    optimizer = cls.__new__(cls)
    optimizer.__setstate__(state)
    optimizer._ps_key = key
    return optimizer


# ----- running (worker) -----------------------------------------------------------------------------
class _ClosureUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, service: "WorkerService") -> None:
        super().__init__(io.BytesIO(data))
        self._service = service

    def persistent_load(self, pid: Any) -> Any:
        kind = pid[0]
        if kind == "var":
            return self._service.local(pid[1])
        if kind == "strategy":
            return self._service.strategy
        if kind == "per_worker":
            try:
                return self._service.per_worker[pid[1]]
            except KeyError:
                raise RuntimeError(f"this worker has no per-worker value {pid[1]!r}: create per-worker datasets with "
                                   f"coordinator.create_per_worker_dataset and iter() before scheduling") from None
        raise pickle.UnpicklingError(f"unknown reference {pid!r}")


class WorkerService:
    """A worker's side of the cluster: local copies of the variables, per-worker values, and `run`,
    which refreshes the copies a closure uses, runs it, and sends its direct variable changes back."""

    def __init__(self, strategy: Any, client: Any, name: str) -> None:
        self.strategy = strategy
        self.client = client
        self.name = name
        self.stopped = threading.Event()
        self.per_worker: dict = {}
        self._locals: dict = {}
        self._specs: dict = {}
        self._specs_by_id: dict = {}

    def local(self, key: str) -> torch.Tensor:
        return self._locals[key]

    def spec_of(self, tensor: torch.Tensor) -> Any:
        return self._specs_by_id.get(id(tensor))

    def _hold(self, specs: dict) -> list:
        held = []
        for key, spec in specs.items():
            if key not in self._locals:
                self._locals[key] = spec.make_local()
                self._specs[key] = spec
                self._specs_by_id[id(self._locals[key])] = spec
            held.append((spec, self._locals[key]))
        return held

    def run(self, payload: bytes, specs: dict) -> tuple:
        try:
            return "ok", self._run(payload, specs)
        except BaseException as error:  # noqa: BLE001 - reported to the coordinator, which re-raises it
            failed = error.task if isinstance(error, RpcError) and error.task.startswith("ps:") else None
            try:  # the coordinator unpickles it: an error whose __init__ needs arguments pickles but cannot come back
                pickle.loads(pickle.dumps(error))
                kept: Optional[BaseException] = error
            except Exception:  # noqa: BLE001 - an error that cannot travel is described instead
                kept = None
            return "error", ClosureFailure(type(error).__name__, str(error), traceback.format_exc(), kept, failed)

    def _run(self, payload: bytes, specs: dict) -> Any:
        held = [(spec, local) for spec, local in self._hold(specs) if not spec.on_demand]  # tables: rows on demand
        values = self.client.read([spec for spec, _ in held])
        versions = []
        with torch.no_grad():
            for (_, local), value in zip(held, values):
                local.copy_(value)
                versions.append(local._version)
        fn, args, kwargs = _ClosureUnpickler(payload, self).load()
        with _context.enter_strategy(self.strategy):
            result = fn(*args, **kwargs)
        changed = [(spec, local.detach() - value) for (spec, local), value, version in zip(held, values, versions)
                   if local._version != version]
        if changed:  # direct writes (metric states, moving statistics) are added to the ps copy
            self.client.add([spec for spec, _ in changed], [delta for _, delta in changed])
        return _detached(result)

    def create_per_worker(self, key: str, payload: bytes) -> bool:
        (source,) = _ClosureUnpickler(payload, self).load()
        with _context.enter_strategy(self.strategy):
            self.per_worker[key] = source() if callable(source) else source
        return True

    def make_iterator(self, dataset_key: str, iterator_key: str) -> bool:
        self.per_worker[iterator_key] = iter(self.per_worker[dataset_key])
        return True

    def lookup_rows(self, table: torch.Tensor, ids: torch.Tensor) -> Optional[torch.Tensor]:
        """`table[ids]` with only those rows read from the ps tasks (None for a table read whole); its gradient
        reaches `table` as a sparse tensor of those rows."""
        spec = self.spec_of(table)
        if spec is None or not spec.on_demand:
            return None
        flat = ids.reshape(-1)
        if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= spec.shape[0]):
            raise IndexError(f"Embedding lookup: index {int(flat.max()) if int(flat.max()) >= spec.shape[0] else int(flat.min())} "
                             f"is out of range for a table of {spec.shape[0]} rows.")
        unique, inverse = torch.unique(flat, sorted=True, return_inverse=True)
        rows = self.client.read_rows(spec, unique)
        return _RowsOnDemand.apply(table, rows, unique, inverse).reshape(tuple(ids.shape) + tuple(spec.shape[1:]))

    def apply_updates(self, optimizer: Any, params: list, grads: list) -> None:
        """Sends an optimizer's (already clipped) gradients to the ps tasks holding its variables."""
        specs = [self.spec_of(p) for p in params]
        if any(spec is None for spec in specs):
            raise ValueError("an optimizer on a parameter-server worker can only update variables created on the "
                             "coordinator (in strategy.scope()); this one was made on the worker.")
        self.client.apply(optimizer._ps_key, optimizer_blueprint(optimizer), getattr(optimizer, "_learning_rate", None),
                          specs, grads)


class _RowsOnDemand(torch.autograd.Function):
    """Rows read from the ps tasks, as if indexed out of `table`: the backward gives `table` a sparse gradient
    holding just those rows (summed over repeated indices)."""

    @staticmethod
    def forward(ctx: Any, table: torch.Tensor, rows: torch.Tensor, unique: torch.Tensor,  # type: ignore[override]
                inverse: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(unique, inverse)
        ctx.table_shape = tuple(table.shape)
        return rows.index_select(0, inverse)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple:  # type: ignore[override]
        unique, inverse = ctx.saved_tensors
        values = torch.zeros((unique.numel(),) + tuple(grad.shape[1:]), dtype=grad.dtype).index_add_(0, inverse, grad)
        grad_table = torch.sparse_coo_tensor(unique.unsqueeze(0), values, ctx.table_shape, is_coalesced=True,
                                             check_invariants=False)  # distinct sorted rows by construction
        return grad_table, None, None, None


def _detached(value: Any) -> Any:
    from torchstrategy.nest import map_structure

    return map_structure(lambda v: v.detach().cpu() if isinstance(v, torch.Tensor) else v, value)


def worker_entry(method: str, *args: Any) -> Any:
    """The entry point of every call a worker task receives."""
    return getattr(_context.task_service(), method)(*args)
