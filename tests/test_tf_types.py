"""tf.types.experimental: TF's abstract type names (ABCs), with our PerReplica values instances of
tf.types.experimental.distributed.PerReplica and TF's FunctionType an inspect.Signature."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import torchstrategy as tf

types = tf.types.experimental


def test_function_abcs_cannot_be_made_without_their_methods():
    for abstract in (types.Callable, types.ConcreteFunction, types.GenericFunction, types.AtomicFunction,
                     types.TraceType):
        with pytest.raises(TypeError):
            abstract()
    assert types.PolymorphicFunction is types.GenericFunction
    assert issubclass(types.ConcreteFunction, types.Callable) and issubclass(types.AtomicFunction, types.Callable)


def test_function_type_is_a_signature_made_from_callables():
    def f(x, y=2):
        return x + y

    function_type = types.FunctionType.from_callable(f)
    assert isinstance(function_type, types.FunctionType) and isinstance(function_type, inspect.Signature)
    assert list(function_type.parameters) == ["x", "y"] and function_type.bind(1).arguments == {"x": 1}


def test_per_replica_values_are_tfs_distributed_per_replica():
    strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
    try:
        values = strategy.run(lambda: torch.tensor(1.0))
        assert isinstance(values, types.distributed.PerReplica)
        assert isinstance(values, tf.distribute.DistributedValues)
        assert not isinstance(values, types.distributed.Mirrored)
    finally:
        strategy.teardown()


def test_tensor_like_covers_tensors_arrays_and_python_values():
    for value in (torch.zeros(2), np.zeros(2), np.float32(1), 3, 2.5, True, "s", b"b", [1], (1,)):
        assert isinstance(value, types.TensorLike), value
    assert not isinstance(object(), types.TensorLike)

    class Traced:
        def __tf_tracing_type__(self, context):
            return None

    assert isinstance(Traced(), types.SupportsTracingProtocol) and not isinstance(1, types.SupportsTracingProtocol)
