"""keras.quantizers against Keras 3.15 / TF 2.21 numbers, configs and errors frozen in
keras_quantizers_reference.json by tools/tf_reference/keras_quantizers_reference.py."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras import quantizers as q

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_quantizers_reference.json")))
X = np.asarray(REF["X"], dtype="float32")
W = np.asarray(REF["W"], dtype="float32")
F = np.asarray(REF["F"], dtype="float32")


def plain(value):
    """Our config in the reference's JSON form (tuples marked)."""
    if isinstance(value, tuple):
        return {"__tuple__": [plain(v) for v in value]}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def same(tensor, ref, exact=True):
    got = tensor.detach().numpy() if isinstance(tensor, torch.Tensor) else np.asarray(tensor)
    want = np.asarray(ref["value"], dtype=ref["dtype"]) if isinstance(ref, dict) else np.asarray(ref)
    assert str(got.dtype) == str(want.dtype), (got.dtype, want.dtype)
    assert got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_reference_versions():
    assert REF["keras_version"].startswith("3.15") and REF["tf_version"].startswith("2.21")


def test_names_reached_through_keras():
    assert tf.keras.quantizers.AbsMaxQuantizer is q.AbsMaxQuantizer
    assert tf.keras.Quantizer is q.Quantizer


@pytest.mark.parametrize("key", ["last", "first", "both", "int4_range", "numpy"])
def test_abs_max_quantize(key):
    kwargs = {"last": {"axis": -1}, "first": {"axis": 0}, "both": {"axis": (0, 1)},
              "int4_range": {"axis": -1, "value_range": (-8, 7)}, "numpy": {"axis": 0, "to_numpy": True}}[key]
    values, scale = q.abs_max_quantize(X, **kwargs)
    same(values, REF["abs_max"][key]["values"])
    same(scale, REF["abs_max"][key]["scale"], exact=False)


def test_abs_max_quantizer_call_config_and_serialize():
    quantizer = q.AbsMaxQuantizer()
    values, scale = quantizer(X)
    ref = REF["quantizer_default"]
    same(values, ref["values"])
    same(scale, ref["scale"], exact=False)
    assert plain(quantizer.get_config()) == ref["config"]
    assert plain(q.serialize(quantizer)) == ref["serialized"]
    values, scale = q.AbsMaxQuantizer(axis=0, value_range=(-100, 100))(X)
    same(values, REF["quantizer_axis0"]["values"])
    assert plain(q.AbsMaxQuantizer(axis=0).get_config()) == REF["quantizer_axis0"]["config"]
    with pytest.raises(ValueError) as info:
        q.AbsMaxQuantizer(value_range=(-200, 100))
    assert str(info.value) == REF["quantizer_bad_range"]["message"]
    back = q.deserialize(q.serialize(quantizer))
    assert isinstance(back, q.AbsMaxQuantizer) and back.get_config() == quantizer.get_config()


@pytest.mark.parametrize("key", ["tensor_2", "numpy_2", "tensor_8", "numpy_8", "tensor_5"])
def test_grouped_with_zero_point(key):
    kwargs = {"block_size": int(key.split("_")[1]), "to_numpy": key.startswith("numpy")}
    values, scale, zero = q.abs_max_quantize_grouped_with_zero_point(W, **kwargs)
    ref = REF["grouped"][key]
    same(values, ref["values"])
    same(scale, ref["scale"], exact=False)
    same(zero, ref["zero"])


@pytest.mark.parametrize("key", ["tensor8", "tensor4_narrow", "positive_min", "negative_max", "channel_axis0",
                                 "channel_last"])
def test_fake_quant_values_and_gradients(key):
    ref = REF["fake_quant"][key]
    x = torch.tensor(F, requires_grad=True)
    low = torch.tensor(np.asarray(ref["min"], "float32"), requires_grad=True)
    high = torch.tensor(np.asarray(ref["max"], "float32"), requires_grad=True)
    y = q.fake_quant_with_min_max_vars(x, low, high, **ref["kwargs"])
    same(y, ref["y"], exact=False)
    (y * torch.arange(12, dtype=torch.float32).reshape(3, 4)).sum().backward()
    same(x.grad, ref["dx"], exact=False)
    same(low.grad, ref["dmin"], exact=False)
    same(high.grad, ref["dmax"], exact=False)


def test_float8_helpers():
    amax = np.array([2.0, 0.0, np.inf, 0.5], "float32")
    scale = np.array([0.5, 2.0, 4.0, 1.0], "float32")
    same(q.compute_float8_scale(amax, scale, 448.0), REF["float8_scale"]["margin0"], exact=False)
    same(q.compute_float8_scale(amax, scale, 57344.0, margin=2), REF["float8_scale"]["margin2"], exact=False)
    same(q.compute_float8_amax_history(X, np.array([1.0, 2.0, 3.0, 4.0], "float32")), REF["amax_history"])
    for name in ("float8_e4m3fn", "float8_e5m2"):
        same(q.quantize_and_dequantize(X * 40, np.float32(0.5), name, "float32"), REF["quant_dequant"][name])
    with pytest.raises(ValueError, match="float8"):
        q.quantize_and_dequantize(X, 1.0, "int8", "float32")


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_pack_and_unpack_int4(axis):
    ref = REF["pack"][str(axis)]
    packed, shape, length = q.pack_int4(np.asarray(REF["I4"], dtype="int8"), axis=axis)
    same(packed, ref["packed"])
    assert list(shape) == ref["shape"] and length == ref["length"]
    same(q.unpack_int4(packed, length, axis=axis), ref["unpacked"])


def test_pack_uint8_and_errors():
    ref = REF["pack_uint8"]
    packed, shape, length = q.pack_int4(torch.tensor(ref["U4"], dtype=torch.uint8), axis=0, dtype="uint8")
    same(packed, ref["packed"])
    same(q.unpack_int4(packed, length, axis=0, dtype="uint8"), ref["unpacked"])
    with pytest.raises(TypeError) as info:
        q.pack_int4(np.asarray(REF["I4"], dtype="int32"))
    assert str(info.value) == REF["pack_wrong_dtype"]["message"]
    with pytest.raises(ValueError) as info:
        q.pack_int4(np.asarray(REF["I4"], dtype="int8"), dtype="int4")
    assert str(info.value) == REF["pack_bad_dtype"]["message"]


def test_get():
    got = q.get("AbsMaxQuantizer")
    assert type(got).__name__ == REF["get_by_name"]["type"]
    assert plain(got.get_config()) == REF["get_by_name"]["config"]
    assert type(q.get("abs_max_quantizer")).__name__ == REF["get_by_snake_name"]["type"]
    got = q.get({"class_name": "AbsMaxQuantizer", "config": {"axis": [1], "value_range": [-7, 7]},
                 "module": "keras.quantizers", "registered_name": None})
    assert plain(got.get_config()) == REF["get_by_dict"]["config"]
    with pytest.raises(ValueError) as info:
        q.get("NoSuchQuantizer")
    assert str(info.value) == REF["get_unknown"]["message"]
    assert q.get(None) is None


def test_quantization_configs():
    ref = REF["configs"]
    assert plain(q.serialize(q.Int8QuantizationConfig())) == ref["int8"]
    assert plain(q.Int8QuantizationConfig(activation_quantizer=None).get_config()) == ref["int8_weights_only"]
    assert plain(q.serialize(q.Int4QuantizationConfig(block_size=64))) == ref["int4"]
    assert plain(q.serialize(q.Float8QuantizationConfig())) == ref["float8"]
    assert [q.Int8QuantizationConfig().mode, q.Int4QuantizationConfig().mode,
            q.Float8QuantizationConfig().mode] == ref["modes"]
    for key, make in {"int4_bad_block": lambda: q.Int4QuantizationConfig(block_size=0),
                      "int4_bad_range": lambda: q.Int4QuantizationConfig(weight_quantizer=q.AbsMaxQuantizer()),
                      "int8_bad_dtype": lambda: q.Int8QuantizationConfig(
                          weight_quantizer=q.AbsMaxQuantizer(output_dtype="int16")),
                      "base_mode": lambda: q.QuantizationConfig().mode}.items():
        with pytest.raises(Exception) as info:
            make()
        assert type(info.value).__name__ == ref[key]["raises"] and str(info.value) == ref[key]["message"], key
    back = q.deserialize(q.serialize(q.Int4QuantizationConfig(block_size=32)))
    assert type(back).__name__ == REF["int4_round_trip"]["type"]
    assert back.block_size == REF["int4_round_trip"]["block_size"]
    assert repr(back.activation_quantizer) == REF["int4_round_trip"]["activation"]
