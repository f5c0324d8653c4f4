"""keras.dtype_policies' quantized policies against Keras 3.15 (TF 2.21) names, dtypes, configs, equality and
error messages frozen in keras_quantize_reference.json by tools/tf_reference/keras_quantize_reference.py."""
from __future__ import annotations

import json
import os

import pytest

from torchstrategy.keras import dtype_policies as dp

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_quantize_reference.json")))

MAKERS = {
    "int8_from_float32": lambda: dp.QuantizedDTypePolicy("int8", "float32"),
    "int8_from_mixed_bfloat16": lambda: dp.QuantizedDTypePolicy("int8", "mixed_bfloat16"),
    "int4_from_float32": lambda: dp.QuantizedDTypePolicy("int4", "float32"),
    "int8_default_source": lambda: dp.QuantizedDTypePolicy("int8"),
    "float8_from_mixed_float16": lambda: dp.QuantizedFloat8DTypePolicy("float8", "mixed_float16"),
    "float8_history": lambda: dp.QuantizedFloat8DTypePolicy("float8", "float32", amax_history_length=16),
    "int4_block": lambda: dp.Int4DTypePolicy("int4/128", "float32"),
    "int4_channel": lambda: dp.Int4DTypePolicy("int4/-1", "bfloat16"),
    "gptq": lambda: dp.GPTQDTypePolicy("gptq/4/128", "float32"),
    "awq": lambda: dp.AWQDTypePolicy("awq/4/-1", "float32"),
    "get_int8": lambda: dp.get("int8_from_float32"),
    "get_int4_block": lambda: dp.get("int4/64_from_float32"),
    "get_float8": lambda: dp.get("float8_from_bfloat16"),
    "get_gptq": lambda: dp.get("gptq/8/-1_from_float32"),
}
ERRORS = {
    "bad_mode": lambda: dp.QuantizedDTypePolicy("int2", "float32"),
    "int8_float16": lambda: dp.QuantizedDTypePolicy("int8", "float16"),
    "float8_history_type": lambda: dp.QuantizedFloat8DTypePolicy("float8", "float32", 1.5),
    "int4_format": lambda: dp.Int4DTypePolicy("int4", "float32"),
    "int4_block_int": lambda: dp.Int4DTypePolicy("int4/x", "float32"),
    "int4_block_zero": lambda: dp.Int4DTypePolicy("int4/0", "float32"),
    "gptq_format": lambda: dp.GPTQDTypePolicy("gptq/4", "float32"),
    "gptq_ints": lambda: dp.GPTQDTypePolicy("gptq/a/b", "float32"),
    "gptq_bits": lambda: dp.GPTQDTypePolicy("gptq/5/128", "float32"),
    "gptq_group": lambda: dp.GPTQDTypePolicy("gptq/4/0", "float32"),
    "awq_format": lambda: dp.AWQDTypePolicy("awq/4", "float32"),
    "awq_bits": lambda: dp.AWQDTypePolicy("awq/8/128", "float32"),
    "awq_group": lambda: dp.AWQDTypePolicy("awq/4/-2", "float32"),
    "get_no_source": lambda: dp.get("int8_"),
}


@pytest.mark.parametrize("key", sorted(MAKERS))
def test_quantized_policy_matches_keras(key):
    want, policy = REF["policies"][key], MAKERS[key]()
    assert type(policy).__name__ == want["class"]
    assert (policy.name, policy.compute_dtype, policy.variable_dtype, policy.quantization_mode) == \
        (want["name"], want["compute_dtype"], want["variable_dtype"], want["quantization_mode"])
    assert policy.get_config() == want["config"] and repr(policy) == want["repr"]
    assert dp.serialize(policy) == want["serialized"]
    again = dp.deserialize(want["serialized"])
    assert type(again) is type(policy) and again == policy and again.get_config() == want["config"]


@pytest.mark.parametrize("key", sorted(ERRORS))
def test_quantized_policy_errors_match_keras(key):
    want = REF["policy_errors"][key]
    with pytest.raises(Exception) as error:
        ERRORS[key]()
    assert type(error.value).__name__ == want["raises"]
    if key == "get_no_source":  # Keras's `get('int8')` refuses; here bare 'int8' stays the integer dtype
        assert str(error.value) == want["message"].replace("policy=int8", "policy=int8_")
    else:
        assert str(error.value) == want["message"]


def test_quantized_policy_equality_follows_keras():
    want = REF["policy_equality"]
    assert (dp.QuantizedDTypePolicy("int8", "float32") == dp.QuantizedDTypePolicy("int8", "float32")) == want["same"]
    assert (dp.QuantizedDTypePolicy("int8", "float32") == dp.QuantizedDTypePolicy("int8", "bfloat16")) == \
        want["other_source"]
    assert (dp.DTypePolicy("float32") == dp.QuantizedDTypePolicy("int8", "float32")) == want["float_vs_quant"]
    assert (dp.QuantizedFloat8DTypePolicy("float8", "float32", 16)
            == dp.QuantizedFloat8DTypePolicy("float8", "float32", 32)) == want["float8_history"]
    assert dp.get("int8").name == "int8" and not dp.get("int8").is_floating  # an Input's integer dtype
