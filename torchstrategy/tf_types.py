"""`tf.types.experimental`: TF's abstract type names for functions, trace types and distributed values, as
ABCs. As in TF, tf.distribute's abstract DistributedValues/DistributedDataset/DistributedIterator live here too;
tf.distribute's PerReplica and tf.data's distributed dataset classes derive from them."""
from __future__ import annotations

import abc
import inspect
import numbers
import types
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np
import torch


#: what TF accepts where a tensor is expected (tensors, arrays, Python numbers, strings and their lists)
TensorLike = Union[torch.Tensor, np.ndarray, np.number, numbers.Number, bool, str, bytes, list, tuple]


class Callable(abc.ABC):
    """Base of TF's callable function types: something called with tensors that has a FunctionType."""

    @property
    @abc.abstractmethod
    def function_type(self) -> "FunctionType":
        """The parameters this function is called with."""

    @abc.abstractmethod
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the function."""


class AtomicFunction(Callable):
    """A single traced graph function (TF's lowest-level callable)."""

    @abc.abstractmethod
    def call_with_captures(self, args: Any, kwargs: Any, captures: Any) -> Any:
        """Calls the graph with its captured tensors given explicitly."""


class ConcreteFunction(Callable):
    """One traced specialisation of a tf.function for fixed input types."""

    @property
    @abc.abstractmethod
    def inference_fn(self) -> AtomicFunction:
        """The AtomicFunction that runs the forward pass."""


class GenericFunction(Callable):
    """A function that traces ConcreteFunctions for the types it is called with (tf.function's result)."""

    @abc.abstractmethod
    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """The ConcreteFunction for these argument types."""

    @abc.abstractmethod
    def experimental_get_compiler_ir(self, *args: Any, **kwargs: Any) -> Any:
        """The compiler IR of the function for these arguments."""


PolymorphicFunction = GenericFunction  # TF 2.21 names the same class twice


class FunctionType(inspect.Signature):
    """The parameters (and return annotation) of a traced function: an inspect.Signature, as TF's is."""

    @classmethod
    def from_callable(cls, obj: Any, *, follow_wrapped: bool = True) -> "FunctionType":
        """The FunctionType of a Python callable."""
        return super().from_callable(obj, follow_wrapped=follow_wrapped)


class TraceType(abc.ABC):
    """The type of a value as tracing sees it: what decides whether a traced function can be reused."""

    @abc.abstractmethod
    def is_subtype_of(self, other: "TraceType") -> bool:
        """Whether every value of this type is also of `other`."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others: Any) -> Any:
        """The narrowest type covering this one and `others`, or None."""

    @abc.abstractmethod
    def placeholder_value(self, placeholder_context: Any) -> Any:
        """A value of this type to trace with."""

    def to_tensors(self, value: Any) -> list:
        """The tensors `value` (of this type) is made of."""
        return []

    def from_tensors(self, tensors: Any) -> Any:
        """A value of this type rebuilt from `to_tensors`' output."""
        return None

    def flatten(self) -> list:
        """The types of `to_tensors`' tensors."""
        return []

    def cast(self, value: Any, cast_context: Any) -> Any:
        """`value` converted to this type."""
        return value


@runtime_checkable
class SupportsTracingProtocol(Protocol):
    """Objects that say their own TraceType (`__tf_tracing_type__`)."""

    def __tf_tracing_type__(self, context: Any) -> TraceType:
        """This object's TraceType."""


class DistributedValues:
    """Base of values distributed over replicas (tf.distribute.DistributedValues): `values` holds one per local
    replica; read them with `strategy.experimental_local_results(value)`."""

    values: tuple = ()


class DistributedDatasetInterface(abc.ABC):
    """tf.distribute.DistributedDataset: what `strategy.experimental_distribute_dataset` returns (iterable of
    per-replica batches)."""

    @abc.abstractmethod
    def __iter__(self) -> Any:
        """A DistributedIterator over the per-replica batches."""

    @property
    @abc.abstractmethod
    def element_spec(self) -> Any:
        """The type specification of an element."""

    @abc.abstractmethod
    def reduce(self, initial_state: Any, reduce_func: Any) -> Any:
        """Folds the batches into `initial_state` with `reduce_func(state, batch)`."""


class DistributedIteratorInterface(abc.ABC):
    """tf.distribute.DistributedIterator: the iterator of a DistributedDataset."""

    @abc.abstractmethod
    def get_next(self) -> Any:
        """The next per-replica batch; OutOfRangeError at the end."""

    @abc.abstractmethod
    def get_next_as_optional(self) -> Any:
        """The next per-replica batch as an Optional (empty at the end)."""

    @property
    @abc.abstractmethod
    def element_spec(self) -> Any:
        """The type specification of an element."""


class DistributedPerReplica(DistributedValues, abc.ABC):
    """A value with one component per replica (what strategy.run returns with several local replicas)."""


class DistributedMirrored(DistributedValues, abc.ABC):
    """A value every replica holds an equal copy of."""



experimental = types.SimpleNamespace(
    AtomicFunction=AtomicFunction, Callable=Callable, ConcreteFunction=ConcreteFunction, FunctionType=FunctionType,
    GenericFunction=GenericFunction, PolymorphicFunction=PolymorphicFunction,
    SupportsTracingProtocol=SupportsTracingProtocol, TensorLike=TensorLike, TraceType=TraceType,
    distributed=types.SimpleNamespace(Mirrored=DistributedMirrored, PerReplica=DistributedPerReplica),
)

__all__ = ["experimental"]
