"""keras.dtype_policies.DTypePolicyMap against Keras 3.15 (TF 2.21): lookup rules (exact key, one full-match
pattern, default), its dtypes and name, config round trip, errors, and a layer given a map, frozen in
keras_quantize_reference.json by tools/tf_reference/keras_quantize_reference.py."""
from __future__ import annotations

import json
import os

import pytest
import torch

from torchstrategy.keras import dtype_policies as dp
from torchstrategy.keras import layers

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_quantize_reference.json")))


def _keras_map():
    policies = dp.DTypePolicyMap(default_policy="mixed_bfloat16")
    policies["encoder/dense"] = "float32"
    policies["encoder/.*"] = dp.QuantizedDTypePolicy("int8", "mixed_bfloat16")
    policies["decoder"] = "bfloat16"
    return policies


def test_policy_map_lookups_dtypes_and_config_match_keras():
    want, policies = REF["map"], _keras_map()
    assert isinstance(policies, dp.DTypePolicy)
    assert (policies.name, policies.compute_dtype, policies.variable_dtype, policies.quantization_mode) == \
        (want["name"], want["compute_dtype"], want["variable_dtype"], want["quantization_mode"])
    assert len(policies) == want["len"] and list(policies.keys()) == want["keys"]
    assert {key: policies[key].name for key in want["lookups"]} == want["lookups"]
    assert ("encoder/dense" in policies) == want["contains_exact"]
    assert ("encoder/attention" in policies) == want["contains_pattern_match"]
    assert policies.get_config() == want["config"]
    assert dp.serialize(policies) == want["serialized"]
    assert policies.pop("decoder").name == want["pop"] and len(policies) == want["len_after_pop"]


def test_policy_map_round_trips_through_its_serialized_form():
    want = REF["map"]["round_trip"]
    again = dp.get(REF["map"]["serialized"])
    assert type(again).__name__ == want["class"] and again.name == want["name"]
    assert {key: again[key].name for key in want["lookups"]} == want["lookups"]
    assert again == _keras_map()


@pytest.mark.parametrize("key", ["duplicate", "bad_value"])
def test_policy_map_refuses_what_keras_refuses(key):
    policies = _keras_map()
    value = "float32" if key == "duplicate" else 3.5
    with pytest.raises(ValueError) as error:
        policies["decoder" if key == "duplicate" else "x"] = value
    assert str(error.value) == REF["map"][key]["message"]


def test_policy_map_without_default_and_its_constructor_errors():
    want = REF["map"]
    policies = dp.DTypePolicyMap()
    policies["a.*"] = "float32"
    policies["ab.*"] = "bfloat16"
    with pytest.raises(ValueError) as error:
        policies["abc"]
    assert str(error.value) == want["ambiguous"]["message"]
    assert policies.name == want["no_default_name"] and policies.get_config() == want["no_default_config"]
    with pytest.raises(ValueError) as error:
        dp.DTypePolicyMap(dp.DTypePolicyMap())
    assert str(error.value) == want["default_map"]["message"]
    with pytest.raises(TypeError) as error:
        dp.DTypePolicyMap("float32", [("a", "float32")])
    assert str(error.value) == want["bad_map"]["message"]


def test_a_layer_given_a_policy_map_uses_its_entry_for_the_layer_name():
    policies = dp.DTypePolicyMap("float32")
    policies["dd"] = "bfloat16"
    dense = layers.Dense(3, dtype=policies, name="dd")
    assert dense.dtype_policy is policies and dense.compute_dtype == "bfloat16"
    assert dense(torch.ones(2, 4)).dtype == torch.bfloat16 and dense.kernel.dtype == torch.bfloat16
    assert dense.get_config()["dtype"] == dp.serialize(policies)
    other = layers.Dense(3, dtype=policies, name="other")
    assert other.compute_dtype == "float32"


def test_an_empty_map_stays_the_layers_policy_and_a_mapped_layer_quantizes_its_own_entry():
    policies = dp.DTypePolicyMap("float32")
    dense = layers.Dense(3, dtype=policies, name="q")
    assert dense.dtype_policy is policies
    dense.build((None, 4))
    dense.quantize("int8")
    assert dense.quantization_mode == "int8" and dense.kernel.dtype == torch.int8
    assert dense(torch.ones(2, 4)).shape == (2, 3)
