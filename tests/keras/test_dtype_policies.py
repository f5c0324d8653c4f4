"""torchstrategy.keras.dtype_policies: policy parsing (names, dtypes, the error for unknown names), the compute
context's nesting rules, and cast-on-read weights whose gradients reach the float32 originals."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torchstrategy import _context
from torchstrategy.keras import dtype_policies as precision

# name -> (compute dtype, variable dtype), as TF 2.21's keras.mixed_precision.Policy reports them
EXPECTED = {
    "float32": (torch.float32, torch.float32),
    "mixed_float16": (torch.float16, torch.float32),
    "mixed_bfloat16": (torch.bfloat16, torch.float32),
    "float16": (torch.float16, torch.float16),
    "bfloat16": (torch.bfloat16, torch.bfloat16),
    "float64": (torch.float64, torch.float64),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_policy_name_gives_its_compute_and_variable_dtypes(name):
    policy = precision.parse_policy(name)
    assert (policy.torch_compute_dtype, policy.torch_variable_dtype) == EXPECTED[name]
    assert (policy.compute_dtype, policy.variable_dtype) == tuple(precision.dtype_name(d) for d in EXPECTED[name])
    assert policy.name == name and policy.is_floating
    assert policy.is_mixed == name.startswith("mixed_")
    assert policy.is_low_precision == (EXPECTED[name][0] in (torch.float16, torch.bfloat16))
    assert precision.parse_policy(policy) is policy


def test_dtypes_and_integer_names_parse_and_integers_are_not_floating():
    assert precision.parse_policy(torch.float64).name == "float64"
    assert precision.parse_policy(np.float32).name == "float32"
    assert precision.parse_policy("half").name == "float16"
    ints = precision.parse_policy("int32")
    assert ints.torch_compute_dtype == ints.torch_variable_dtype == torch.int32 and not ints.is_floating


@pytest.mark.parametrize("bad", ["mixed_float32", "foo", "complex64", None, 5])
def test_unknown_policy_names_list_the_valid_ones(bad):
    with pytest.raises(ValueError) as error:
        precision.parse_policy(bad)
    message = str(error.value)
    assert repr(bad) in message
    for name in precision.POLICY_NAMES:
        assert repr(name) in message


def test_mixed_context_reads_weights_in_compute_dtype_and_gradients_reach_float32():
    weight = torch.nn.Parameter(torch.tensor([1.5, -2.0]))
    assert precision.cast_on_read(weight) is weight  # no scope: as stored
    with precision.compute_context(precision.parse_policy("mixed_bfloat16")):
        read = precision.cast_on_read(weight)
        loss = (read * torch.tensor([3.0, 4.0], dtype=torch.bfloat16)).sum()
    assert read.dtype == torch.bfloat16 and loss.dtype == torch.bfloat16
    loss.backward()
    assert weight.grad.dtype == torch.float32 and weight.grad.tolist() == [3.0, 4.0]
    assert _context.autocast_dtype() is None  # the scope is left behind


def test_nested_contexts_follow_keras_rules():
    mixed16, mixed_bf16 = precision.parse_policy("mixed_float16"), precision.parse_policy("mixed_bfloat16")
    float32, ints = precision.parse_policy("float32"), precision.parse_policy("int32")
    with precision.compute_context(float32):  # no scope opened, none open: weights as stored
        assert _context.autocast_dtype() is None
    with precision.compute_context(mixed16):
        assert _context.autocast_dtype() == torch.float16
        with precision.compute_context(float32):  # a float32 layer inside a mixed one: float32 reads
            assert _context.autocast_dtype() == torch.float32
        with precision.compute_context(mixed_bf16):
            assert _context.autocast_dtype() == torch.bfloat16
        with precision.compute_context(mixed16, autocast=False):
            assert _context.autocast_dtype() is None
        with precision.compute_context(ints):
            assert _context.autocast_dtype() is None
        with precision.no_autocast():
            assert _context.autocast_dtype() is None
        assert _context.autocast_dtype() == torch.float16
    assert _context.autocast_dtype() is None


def test_cast_on_read_leaves_integers_and_matching_dtypes_alone():
    counter = torch.zeros((), dtype=torch.int64)
    half = torch.ones(2, dtype=torch.float16)
    with precision.compute_context(precision.parse_policy("mixed_float16")):
        assert precision.cast_on_read(counter) is counter
        assert precision.cast_on_read(half) is half
        assert precision.cast_on_read(torch.ones(2, dtype=torch.float64)).dtype == torch.float16


def test_the_scope_is_per_thread():
    import threading

    seen = []
    with precision.compute_context(precision.parse_policy("mixed_float16")):
        thread = threading.Thread(target=lambda: seen.append(_context.autocast_dtype()))
        thread.start()
        thread.join()
    assert seen == [None]


def test_cpu_supports_both_low_precision_policies():
    for name in ("mixed_float16", "mixed_bfloat16"):
        assert precision.check_device_support(precision.parse_policy(name), "cpu") is None


def test_one_policy_class_behind_keras_dtype_policies_and_mixed_precision():
    from torchstrategy import keras

    assert keras.mixed_precision.Policy is keras.mixed_precision.DTypePolicy is keras.dtype_policies.DTypePolicy
    assert keras.DTypePolicy is precision.DTypePolicy is precision.FloatDTypePolicy
    policy = keras.dtype_policies.get("mixed_bfloat16")
    assert (policy.compute_dtype, policy.variable_dtype, policy.quantization_mode) == ("bfloat16", "float32", None)
    # Keras 3.15 (TF 2.21) serializes a policy as this dict
    assert keras.dtype_policies.serialize(policy) == {
        "module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_bfloat16"}, "registered_name": None}
    assert keras.dtype_policies.deserialize(keras.dtype_policies.serialize(policy)) == policy
    assert keras.dtype_policies.get(None) == keras.mixed_precision.global_policy()
    layer = keras.layers.Dense(2, dtype=keras.dtype_policies.serialize(policy))
    assert layer.dtype_policy == policy and layer.compute_dtype == "bfloat16"
