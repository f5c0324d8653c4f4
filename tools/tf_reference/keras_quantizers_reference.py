"""Freezes keras.quantizers' numbers, configs and errors (run under the TF reference env, TF 2.21 / Keras 3.15):
/work/tf-venv/bin/python tools/tf_reference/keras_quantizers_reference.py -> tests/keras/keras_quantizers_reference.json"""
import json
import os

import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(7)
X = rng.normal(size=(3, 4)).astype("float32") * 3
W = rng.normal(size=(5, 3)).astype("float32")
F = np.array([[-1.5, -0.31, 0.0, 0.26], [0.7, 1.01, 2.2, 2.6], [-2.0, 0.05, 1.49, -0.9]], dtype="float32")


def arr(t):
    a = np.asarray(t)
    return {"value": a.tolist(), "dtype": str(a.dtype)}


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


q = keras.quantizers
out = {"keras_version": keras.__version__, "tf_version": tf.__version__,
       "X": X.tolist(), "W": W.tolist(), "F": F.tolist()}
out["abs_max"] = {}
for key, kwargs in {"last": {"axis": -1}, "first": {"axis": 0}, "both": {"axis": (0, 1)},
                    "int4_range": {"axis": -1, "value_range": (-8, 7)},
                    "numpy": {"axis": 0, "to_numpy": True}}.items():
    values, scale = q.abs_max_quantize(X, **kwargs)
    out["abs_max"][key] = {"values": arr(values), "scale": arr(scale)}
quantizer = q.AbsMaxQuantizer()
values, scale = quantizer(X)
out["quantizer_default"] = {"values": arr(values), "scale": arr(scale), "config": quantizer.get_config(),
                            "serialized": q.serialize(quantizer)}
values, scale = q.AbsMaxQuantizer(axis=0, value_range=(-100, 100))(X)
out["quantizer_axis0"] = {"values": arr(values), "scale": arr(scale),
                          "config": q.AbsMaxQuantizer(axis=0).get_config()}
out["quantizer_bad_range"] = raises(lambda: q.AbsMaxQuantizer(value_range=(-200, 100)))
out["grouped"] = {}
for key, kwargs in {"tensor_2": {"block_size": 2}, "numpy_2": {"block_size": 2, "to_numpy": True},
                    "tensor_8": {"block_size": 8}, "numpy_8": {"block_size": 8, "to_numpy": True},
                    "tensor_5": {"block_size": 5}}.items():
    values, scale, zero = q.abs_max_quantize_grouped_with_zero_point(W, **kwargs)
    out["grouped"][key] = {"values": arr(values), "scale": arr(scale), "zero": arr(zero)}
out["fake_quant"] = {}
for key, (mins, maxs, kwargs) in {
        "tensor8": (-1.2, 2.3, {}), "tensor4_narrow": (-1.2, 2.3, {"num_bits": 4, "narrow_range": True}),
        "positive_min": (0.3, 2.0, {}), "negative_max": (-2.0, -0.5, {"num_bits": 3}),
        "channel_axis0": ([-1.0, -0.5, -2.0], [1.0, 2.5, 0.4], {"axis": 0, "num_bits": 4}),
        "channel_last": ([-1.0, -0.5, -2.0, 0.0], [1.0, 2.5, 0.4, 3.0], {"axis": -1})}.items():
    mins_t, maxs_t = tf.constant(np.asarray(mins, "float32")), tf.constant(np.asarray(maxs, "float32"))
    x_t = tf.constant(F)
    with tf.GradientTape() as tape:
        tape.watch([x_t, mins_t, maxs_t])
        y = q.fake_quant_with_min_max_vars(x_t, mins_t, maxs_t, **kwargs)
        loss = tf.reduce_sum(y * np.arange(12, dtype="float32").reshape(3, 4))
    dx, dmin, dmax = tape.gradient(loss, [x_t, mins_t, maxs_t])
    out["fake_quant"][key] = {"min": mins, "max": maxs, "kwargs": kwargs, "y": arr(y), "dx": arr(dx),
                              "dmin": arr(dmin), "dmax": arr(dmax)}
amax = np.array([2.0, 0.0, np.inf, 0.5], "float32")
scale = np.array([0.5, 2.0, 4.0, 1.0], "float32")
out["float8_scale"] = {"margin0": arr(q.compute_float8_scale(amax, scale, 448.0)),
                       "margin2": arr(q.compute_float8_scale(amax, scale, 57344.0, margin=2))}
out["amax_history"] = arr(q.compute_float8_amax_history(X, np.array([1.0, 2.0, 3.0, 4.0], "float32")))
out["quant_dequant"] = {name: arr(q.quantize_and_dequantize(X * 40, np.float32(0.5), name, "float32"))
                        for name in ("float8_e4m3fn", "float8_e5m2")}
I4 = np.array([[-3, 7, 2], [2, -8, 1], [1, 0, -1]], dtype="int8")
out["I4"] = I4.tolist()
out["pack"] = {}
for axis in (0, 1, -1):
    packed, shape, length = q.pack_int4(I4, axis=axis)
    out["pack"][str(axis)] = {"packed": arr(packed), "shape": list(shape), "length": length,
                              "unpacked": arr(q.unpack_int4(packed, length, axis=axis))}
U4 = np.array([[3, 15, 0], [9, 4, 12]], dtype="uint8")
packed, shape, length = q.pack_int4(U4, axis=0, dtype="uint8")
out["pack_uint8"] = {"U4": U4.tolist(), "packed": arr(packed), "shape": list(shape), "length": length,
                     "unpacked": arr(q.unpack_int4(packed, length, axis=0, dtype="uint8"))}
out["pack_wrong_dtype"] = raises(lambda: q.pack_int4(I4.astype("int32")))
out["pack_bad_dtype"] = raises(lambda: q.pack_int4(I4, dtype="int4"))
got = q.get("AbsMaxQuantizer")
out["get_by_name"] = {"type": type(got).__name__, "config": got.get_config()}
got = q.get("abs_max_quantizer")
out["get_by_snake_name"] = {"type": type(got).__name__}
got = q.get({"class_name": "AbsMaxQuantizer", "config": {"axis": [1], "value_range": [-7, 7]},
             "module": "keras.quantizers", "registered_name": None})
out["get_by_dict"] = {"type": type(got).__name__, "config": got.get_config()}
out["get_unknown"] = raises(lambda: q.get("NoSuchQuantizer"))
out["configs"] = {
    "int8": q.serialize(q.Int8QuantizationConfig()),
    "int8_weights_only": q.Int8QuantizationConfig(activation_quantizer=None).get_config(),
    "int4": q.serialize(q.Int4QuantizationConfig(block_size=64)),
    "float8": q.serialize(q.Float8QuantizationConfig()),
    "modes": [q.Int8QuantizationConfig().mode, q.Int4QuantizationConfig().mode, q.Float8QuantizationConfig().mode],
    "int4_bad_block": raises(lambda: q.Int4QuantizationConfig(block_size=0)),
    "int4_bad_range": raises(lambda: q.Int4QuantizationConfig(weight_quantizer=q.AbsMaxQuantizer())),
    "int8_bad_dtype": raises(lambda: q.Int8QuantizationConfig(
        weight_quantizer=q.AbsMaxQuantizer(output_dtype="int16"))),
    "base_mode": raises(lambda: q.QuantizationConfig().mode),
}
back = q.deserialize(q.serialize(q.Int4QuantizationConfig(block_size=32)))
out["int4_round_trip"] = {"type": type(back).__name__, "block_size": back.block_size,
                          "activation": repr(back.activation_quantizer)}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_quantizers_reference.json")


def plain(value):
    if isinstance(value, tuple):
        return {"__tuple__": [plain(v) for v in value]}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


with open(path, "w") as f:
    json.dump(plain(out), f)
print("ok")
