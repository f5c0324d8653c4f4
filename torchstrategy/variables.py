"""`tf.Variable`: a real torch tensor (an `nn.Parameter` subclass) with TF's in-place `assign*`,
`numpy()`, `read_value()`, `name` and `trainable`; arithmetic on it gives tensors that convert to NumPy."""
from __future__ import annotations

import copy
import enum
from typing import Any, Callable, Optional

import numpy as np
import torch
from torch import nn

from torchstrategy import _context, ops
from torchstrategy._machinery.eager import NUMPY_OPERATORS, eager_outputs
from torchstrategy.array_ops import gather_nd as _gather_nd
from torchstrategy.array_ops import tensor_scatter_nd_update
from torchstrategy.errors import OutOfRangeError
from torchstrategy.indexed_slices import IndexedSlices, scatter_rows
from torchstrategy.scatter_ops import tensor_scatter_nd_add, tensor_scatter_nd_sub

_DATA_GET = torch.Tensor.data.__get__  # type: ignore[attr-defined]


def _initial_tensor(initial_value: Any, dtype: Any, shape: Any) -> torch.Tensor:
    if initial_value is None:
        raise ValueError("tf.Variable needs an initial_value (a number, array, tensor or a callable returning one).")
    if callable(initial_value) and not isinstance(initial_value, torch.Tensor):
        initial_value = initial_value()
    if isinstance(initial_value, torch.Tensor):
        value = initial_value.detach()
        if dtype is not None:
            value = value.to(ops._dtype(dtype))
        value = value.clone()
    else:
        value = ops.constant(initial_value, dtype=dtype)
    if shape is not None and tuple(value.shape) != tuple(shape):
        raise ValueError(f"tf.Variable: initial_value has shape {tuple(value.shape)}, but shape={tuple(shape)} "
                         f"was given. Pass a value of that shape, or leave shape out.")
    return value


def assignable(value: Any, variable: torch.Tensor, op: str, label: str) -> torch.Tensor:
    """`value` as a tensor of `variable`'s shape, device and dtype for an in-place `op` ('assign', ...);
    a ValueError naming `label` when the shapes differ (TF does not broadcast in assign*, nor do we)."""
    tensor = value.detach() if isinstance(value, torch.Tensor) else torch.as_tensor(np.asarray(value))
    if tuple(tensor.shape) != tuple(variable.shape):
        raise ValueError(f"Cannot {op} a value of shape {tuple(tensor.shape)} to variable '{label}' of shape "
                         f"{tuple(variable.shape)}: the shapes must be equal.")
    return tensor.to(device=variable.device, dtype=variable.dtype)


class VariableSynchronization(enum.Enum):
    """When a distributed variable's copies agree (tf.VariableSynchronization): AUTO and ON_WRITE keep one
    value in sync on every write (mirrored), NONE keeps one copy, ON_READ keeps one copy per replica and
    combines them by the variable's aggregation when read outside `strategy.run` (Keras metrics' totals)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How replicas' values of a variable combine (tf.VariableAggregation)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


def _as_enum(kind: Any, value: Any, label: str) -> Any:
    if isinstance(value, kind):
        return value
    if isinstance(value, enum.Enum) and value.name in kind.__members__:  # another module's copy of the enum
        return kind[value.name]
    raise ValueError(f"tf.Variable: {label} must be a {kind.__name__} (e.g. {kind.__name__}."
                     f"{list(kind.__members__)[0]}), got {value!r}.")


class Variable(nn.Parameter):
    """A mutable tensor, as `tf.Variable`: usable wherever a torch tensor is (arithmetic, torch ops,
    `nn.Module` attributes, torch optimizers when trainable), updated in place by `assign*`.

    Floating trainable variables require grad, so GradientTape and torch autograd see them;
    results of arithmetic are plain tensors, never Variables.

    >>> step = Variable(0, trainable=False, name="step")
    >>> step.assign_add(1)
    <tf.Variable 'step:0' shape=() dtype=int32, numpy=1>
    >>> int(step * 10)
    10
    """

    def __new__(
        cls,
        initial_value: Any = None,
        trainable: Optional[bool] = None,
        validate_shape: bool = True,
        caching_device: Any = None,
        name: Optional[str] = None,
        variable_def: Any = None,
        dtype: Any = None,
        import_scope: Any = None,
        constraint: Optional[Callable[[torch.Tensor], torch.Tensor]] = None,
        synchronization: Any = VariableSynchronization.AUTO,
        aggregation: Any = VariableAggregation.NONE,
        shape: Any = None,
        experimental_enable_variable_lifting: bool = True,
    ) -> "Variable":
        if constraint is not None and not callable(constraint):
            raise ValueError(f"The `constraint` argument must be a callable; got {constraint!r}.")
        synchronization = _as_enum(VariableSynchronization, synchronization, "synchronization")
        aggregation = _as_enum(VariableAggregation, aggregation, "aggregation")
        on_read = synchronization is VariableSynchronization.ON_READ
        if on_read and trainable:
            raise ValueError("tf.Variable: synchronization=VariableSynchronization.ON_READ is only for "
                             "non-trainable variables; pass trainable=False (the default for ON_READ).")
        value = _initial_tensor(initial_value, dtype, None if not validate_shape else shape)
        trainable = (not on_read) if trainable is None else bool(trainable)
        differentiable = trainable and (value.is_floating_point() or value.is_complex())
        variable = torch.Tensor._make_subclass(cls, value, differentiable)
        scope = _context.current_name_scope()  # tf.name_scope prefixes the name, as in TF
        variable._variable_name = f"{scope}/{name or 'Variable'}" if scope else (name or "Variable")
        variable._trainable = trainable
        variable._constraint = constraint
        variable._synchronization, variable._aggregation = synchronization, aggregation
        variable._on_read = None
        if on_read:  # one copy per local replica; the variable's own storage is the first replica's
            strategy = _context.get_strategy()
            copies = [value.clone() for _ in range(strategy.num_local_replicas - 1)]
            variable._on_read = (strategy, copies)
        return variable

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # all done in __new__ (nn.Parameter has no __init__)
        pass

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        # Results are plain tensors inside replica functions; in user code they are EagerTensors, which
        # convert to NumPy even when autograd recorded them (as `(v * 2).numpy()` does in TF).
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **(kwargs or {}))
        return out if func is _DATA_GET else eager_outputs(out)

    # ----- TF attributes ---------------------------------------------------------------------
    @property
    def name(self) -> str:  # type: ignore[override]
        """TF's variable name, with the ':0' output suffix (e.g. 'step:0')."""
        return f"{self._variable_name}:0"

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self) -> Optional[Callable]:
        return self._constraint

    @property
    def synchronization(self) -> VariableSynchronization:
        return self._synchronization

    @property
    def aggregation(self) -> VariableAggregation:
        return self._aggregation

    def numpy(self) -> np.ndarray:  # type: ignore[override]
        """A NumPy copy of the current value (later assignments do not change it)."""
        return self._current().detach().cpu().numpy().copy()

    def read_value(self) -> torch.Tensor:
        """The current value as a new plain tensor (differentiable when the variable is); for an ON_READ
        variable outside `strategy.run`, the replicas' copies combined by its aggregation."""
        return torch.Tensor.clone(self._current())

    # ----- per-replica copies (synchronization=ON_READ) ---------------------------------------
    def _replica_slot(self) -> Optional[torch.Tensor]:
        """The running replica's copy of an ON_READ variable; None in cross-replica context or for others."""
        replica = _context.current_replica()
        if self._on_read is None or replica is None:
            return None
        strategy, copies = self._on_read
        index = list(strategy.local_replica_ids).index(replica.replica_id_in_sync_group)
        return self if index == 0 else copies[index - 1]

    def _slots(self) -> list:
        return [self] + (self._on_read[1] if self._on_read is not None else [])

    def _current(self) -> torch.Tensor:
        if self._on_read is None:
            return self
        slot = self._replica_slot()
        if slot is not None:
            return slot
        strategy, copies = self._on_read
        local = [torch.Tensor.detach(self)] + copies
        if self._aggregation is VariableAggregation.ONLY_FIRST_REPLICA:
            return local[0]
        if self._aggregation is VariableAggregation.NONE and len(local) * strategy.num_processes > 1:
            raise ValueError(f"Cannot read ON_READ variable '{self.name}' outside strategy.run: its aggregation "
                             "is NONE. Create it with aggregation=tf.VariableAggregation.SUM or MEAN.")
        total = local[0].clone()
        for part in local[1:]:
            total += part
        if strategy.num_processes > 1:  # strategy.reduce's MEAN divides by num_replicas_in_sync
            return strategy.reduce(self._aggregation.name, total)
        return total / len(local) if self._aggregation is VariableAggregation.MEAN else total

    def _targets(self, op: str, value: torch.Tensor) -> list:
        """(slot, value) pairs an assignment writes: the replica's copy inside strategy.run; outside, every
        copy of an ON_READ variable (a SUM variable's value split over the copies, as TF does)."""
        slot = self._replica_slot()
        if slot is not None or self._on_read is None:
            return [(self if slot is None else slot, value)]
        slots = self._slots()
        if self._aggregation is VariableAggregation.SUM and len(slots) > 1:
            if op != "assign":
                raise ValueError(f"Cannot {op} ON_READ variable '{self.name}' with SUM aggregation outside "
                                 "strategy.run: which replica's copy would change is ambiguous. Use assign.")
            value = value / len(slots)
        return [(s, value.to(self.dtype)) for s in slots]

    def value(self) -> torch.Tensor:
        """Same as `read_value()`."""
        return self.read_value()

    def get_shape(self) -> torch.Size:
        return self.shape

    # ----- assignment ------------------------------------------------------------------------
    def _coerce(self, value: Any, op: str) -> torch.Tensor:
        return assignable(value, self, op, self.name)

    def _finish(self, read_value: bool) -> Optional["Variable"]:
        if self._constraint is not None:
            with torch.no_grad():
                torch.Tensor.copy_(self, self._constraint(self.detach()))
        return self if read_value else None

    def assign(self, value: Any, use_locking: bool = False, name: Optional[str] = None,
               read_value: bool = True) -> Optional["Variable"]:
        """Sets the value in place (same shape; cast to this dtype); returns the variable."""
        new = self._coerce(value, "assign")
        with torch.no_grad():
            for slot, part in self._targets("assign", new):
                torch.Tensor.copy_(slot, part)
        return self._finish(read_value)

    def assign_add(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Optional["Variable"]:
        """Adds `delta` in place; returns the variable."""
        step = self._coerce(delta, "assign_add")
        with torch.no_grad():
            for slot, part in self._targets("assign_add", step):
                torch.Tensor.add_(slot, part)
        return self._finish(read_value)

    def assign_sub(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Optional["Variable"]:
        """Subtracts `delta` in place; returns the variable."""
        step = self._coerce(delta, "assign_sub")
        with torch.no_grad():
            for slot, part in self._targets("assign_sub", step):
                torch.Tensor.sub_(slot, part)
        return self._finish(read_value)

    # ----- sparse updates (tf.IndexedSlices rows, scatter_nd index tuples) ----------------------
    def _scatter(self, sparse_delta: Any, mode: str, op: str) -> "Variable":
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"Argument `sparse_delta` must be a `tf.IndexedSlices`. Received arg: {sparse_delta!r}")
        current = self._current().detach()
        return self.assign(scatter_rows(current, sparse_delta, mode, f"Variable.{op}"), read_value=True)

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
        """Adds the rows of an IndexedSlices at their indices (repeated indices add up); returns the variable.
        Called torch's way (`scatter_add(dim, index, src)`, positionally) it is torch.Tensor.scatter_add."""
        if isinstance(sparse_delta, int) and isinstance(use_locking, torch.Tensor):
            return torch.Tensor.scatter_add(self, sparse_delta, use_locking, name)
        return self._scatter(sparse_delta, "add", "scatter_add")

    def scatter_sub(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> "Variable":
        """Subtracts the rows of an IndexedSlices at their indices; returns the variable."""
        return self._scatter(sparse_delta, "sub", "scatter_sub")

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> "Variable":
        """Sets the rows of an IndexedSlices at their indices (the last of repeated indices wins)."""
        return self._scatter(sparse_delta, "update", "scatter_update")

    def scatter_mul(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> "Variable":
        """Multiplies the rows at the IndexedSlices' indices by its rows."""
        return self._scatter(sparse_delta, "mul", "scatter_mul")

    def scatter_div(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> "Variable":
        """Divides the rows at the IndexedSlices' indices by its rows."""
        return self._scatter(sparse_delta, "div", "scatter_div")

    def scatter_max(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> "Variable":
        """The larger of each row and the IndexedSlices' row at its index."""
        return self._scatter(sparse_delta, "max", "scatter_max")

    def scatter_min(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> "Variable":
        """The smaller of each row and the IndexedSlices' row at its index."""
        return self._scatter(sparse_delta, "min", "scatter_min")

    def batch_scatter_update(self, sparse_delta: Any, use_locking: bool = False,
                             name: Optional[str] = None) -> "Variable":
        """Sets, in each batch row, the values at the IndexedSlices' per-row indices ([batch, k] indices,
        [batch, k, ...] values) along the axis after the batch axes."""
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"Argument `sparse_delta` must be a `tf.IndexedSlices`. Received arg: {sparse_delta!r}")
        current = self._current().detach().clone()
        index = sparse_delta.indices.to(torch.int64)
        values = sparse_delta.values.to(current.device)
        batch = index.dim() - 1
        if tuple(current.shape[:batch]) != tuple(index.shape[:batch]) or values.shape[:index.dim()] != index.shape:
            raise ValueError(f"Variable.batch_scatter_update: indices of shape {list(index.shape)} and values of "
                             f"shape {list(values.shape)} do not match the variable's shape {list(current.shape)}.")
        expanded = index.reshape(index.shape + (1,) * (current.dim() - index.dim())).expand(values.shape)
        return self.assign(current.scatter(batch, expanded.to(current.device), values.to(current.dtype)))

    def _scatter_nd(self, indices: Any, updates: Any, op: str) -> "Variable":
        scatter = {"scatter_nd_add": tensor_scatter_nd_add, "scatter_nd_sub": tensor_scatter_nd_sub,
                   "scatter_nd_update": tensor_scatter_nd_update}[op]
        return self.assign(scatter(self._current().detach(), indices, updates))

    def scatter_nd_add(self, indices: Any, updates: Any, name: Optional[str] = None) -> "Variable":
        """Adds `updates` at the index tuples `indices` (as tf.tensor_scatter_nd_add); returns the variable."""
        return self._scatter_nd(indices, updates, "scatter_nd_add")

    def scatter_nd_sub(self, indices: Any, updates: Any, name: Optional[str] = None) -> "Variable":
        """Subtracts `updates` at the index tuples `indices`; returns the variable."""
        return self._scatter_nd(indices, updates, "scatter_nd_sub")

    def scatter_nd_update(self, indices: Any, updates: Any, name: Optional[str] = None) -> "Variable":
        """Sets `updates` at the index tuples `indices`; returns the variable."""
        return self._scatter_nd(indices, updates, "scatter_nd_update")

    def sparse_read(self, indices: Any, name: Optional[str] = None) -> torch.Tensor:
        """The rows at `indices` (tf.gather of the value along axis 0)."""
        index = torch.as_tensor(np.asarray(indices) if not isinstance(indices, torch.Tensor) else indices)
        return torch.Tensor.index_select(self._current(), 0, index.reshape(-1).to(torch.int64).to(self.device)) \
            .reshape(tuple(index.shape) + tuple(self.shape[1:]))

    def gather_nd(self, indices: Any, name: Optional[str] = None) -> torch.Tensor:
        """The values (or slices) at the index tuples `indices` (tf.gather_nd of the value)."""
        return _gather_nd(self._current(), indices)

    def count_up_to(self, limit: int) -> torch.Tensor:
        """Adds 1 and returns the value before it, until the value reaches `limit` (then OutOfRangeError)."""
        before = torch.Tensor.clone(self._current().detach())
        if int(before) >= int(limit):
            raise OutOfRangeError(None, None, f"Reached limit of {int(limit)}")
        self.assign_add(torch.ones_like(before))
        return before

    def ref(self) -> "VariableReference":
        """A hashable reference to this variable (usable as a dict key or in a set); `.deref()` gives it back."""
        return VariableReference(self)

    def experimental_ref(self) -> "VariableReference":
        """The same as `ref()` (TF's older name)."""
        return self.ref()

    def set_shape(self, shape: Any) -> None:
        """Checks that `shape` is compatible with the variable's (None dims match anything)."""
        dims = list(shape) if shape is not None else None
        if dims is not None and (len(dims) != self.dim() or any(
                d is not None and int(d) != s for d, s in zip(dims, self.shape))):
            raise ValueError(f"Shapes {tuple(self.shape)} and {tuple(dims)} are not compatible")

    def load(self, value: Any, session: Any = None) -> None:
        """Assigns `value` (TF's older spelling of `assign`)."""
        self.assign(value)

    @property
    def initializer(self) -> None:
        """None: variables are initialised when created (eager execution, as TF 2)."""
        return None

    # ----- graph-mode members: what TF 2 gives for them under eager execution -----------------
    @property
    def op(self) -> Any:
        raise AttributeError("Variable.op is undefined when eager execution is enabled (as in TF).")

    @property
    def graph(self) -> Any:
        raise AttributeError("Variable.graph is undefined when eager execution is enabled (as in TF).")

    @property
    def initial_value(self) -> Any:
        raise RuntimeError("Variable.initial_value is not supported when eager execution is enabled (as in TF); "
                           "keep the initial value yourself, or use read_value().")

    def initialized_value(self) -> torch.Tensor:
        raise NotImplementedError("Variable.initialized_value is deprecated and not available in eager execution "
                                  "(as in TF 2); use read_value().")

    def eval(self, session: Any = None) -> Any:
        raise RuntimeError("Variable.eval is not supported when eager execution is enabled (as in TF); use "
                           "numpy() or read_value().")

    def to_proto(self, export_scope: Any = None) -> Any:
        raise RuntimeError("Variable.to_proto is not supported when eager execution is enabled (as in TF); save "
                           "variables with tf.train.Checkpoint.")

    @staticmethod
    def from_proto(variable_def: Any, import_scope: Any = None) -> "Variable":
        raise RuntimeError("Variable.from_proto is not supported when eager execution is enabled (as in TF); "
                           "restore variables with tf.train.Checkpoint.")

    # ----- Python protocol -------------------------------------------------------------------
    def __repr__(self) -> str:  # type: ignore[override]
        value = self.numpy()
        shown = np.array2string(value, separator=", ") if value.ndim else str(value)
        dtype = str(self.dtype).replace("torch.", "")
        return f"<tf.Variable '{self.name}' shape={tuple(self.shape)} dtype={dtype}, numpy={shown}>"

    __str__ = __repr__

    def __format__(self, format_spec: str) -> str:
        if self.dim() == 0 and format_spec:
            return format(self.item(), format_spec)
        return format(str(self), format_spec)

    def __float__(self) -> float:
        return float(self._current().detach())

    def __int__(self) -> int:
        return int(self._current().detach())

    def __deepcopy__(self, memo: dict) -> "Variable":
        if id(self) in memo:
            return memo[id(self)]
        result = Variable(self.detach().clone(), trainable=self._trainable, name=self._variable_name,
                          constraint=copy.deepcopy(self._constraint, memo))
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: int) -> tuple:
        return (_rebuild_variable, (self.detach().clone(), self._trainable, self._variable_name))


for _name, _method in NUMPY_OPERATORS.items():  # `np_array - v` gives a tensor, as in TF
    setattr(Variable, _name, _method)


class VariableReference:
    """A hashable handle on a variable (what Variable.ref() returns): equal for the same variable."""

    def __init__(self, variable: Variable):
        self._variable = variable

    def deref(self) -> Variable:
        """The variable this refers to."""
        return self._variable

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, VariableReference) and other._variable is self._variable

    def __hash__(self) -> int:
        return id(self._variable)

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._variable!r}>"


def _rebuild_variable(value: torch.Tensor, trainable: bool, name: str) -> Variable:
    return Variable(value, trainable=trainable, name=name)
