"""Freezes Keras 3.15's quantized dtype policies, DTypePolicyMap rules and `quantize()` numbers (run under the
TF reference env, TF 2.21 / Keras 3.15):
/work/tf-venv/bin/python tools/tf_reference/keras_quantize_reference.py -> tests/keras/keras_quantize_reference.json"""
import json
import os
import tempfile
import zipfile

import h5py
import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(11)
dp = keras.dtype_policies


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


def describe(policy):
    return {"class": type(policy).__name__, "name": policy.name, "compute_dtype": policy.compute_dtype,
            "variable_dtype": policy.variable_dtype, "quantization_mode": policy.quantization_mode,
            "config": policy.get_config(), "repr": repr(policy) if not isinstance(policy, dp.DTypePolicyMap)
            else None, "serialized": keras.saving.serialize_keras_object(policy)}


out = {"keras_version": keras.__version__, "tf_version": tf.__version__}
# ----- policies ---------------------------------------------------------------------------------
out["policies"] = {}
for key, make in {
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
}.items():
    out["policies"][key] = describe(make())
out["policy_errors"] = {
    "bad_mode": raises(lambda: dp.QuantizedDTypePolicy("int2", "float32")),
    "int8_float16": raises(lambda: dp.QuantizedDTypePolicy("int8", "float16")),
    "float8_history_type": raises(lambda: dp.QuantizedFloat8DTypePolicy("float8", "float32", 1.5)),
    "int4_format": raises(lambda: dp.Int4DTypePolicy("int4", "float32")),
    "int4_block_int": raises(lambda: dp.Int4DTypePolicy("int4/x", "float32")),
    "int4_block_zero": raises(lambda: dp.Int4DTypePolicy("int4/0", "float32")),
    "gptq_format": raises(lambda: dp.GPTQDTypePolicy("gptq/4", "float32")),
    "gptq_ints": raises(lambda: dp.GPTQDTypePolicy("gptq/a/b", "float32")),
    "gptq_bits": raises(lambda: dp.GPTQDTypePolicy("gptq/5/128", "float32")),
    "gptq_group": raises(lambda: dp.GPTQDTypePolicy("gptq/4/0", "float32")),
    "awq_format": raises(lambda: dp.AWQDTypePolicy("awq/4", "float32")),
    "awq_bits": raises(lambda: dp.AWQDTypePolicy("awq/8/128", "float32")),
    "awq_group": raises(lambda: dp.AWQDTypePolicy("awq/4/-2", "float32")),
    "get_no_source": raises(lambda: dp.get("int8")),
}
out["policy_equality"] = {
    "same": dp.QuantizedDTypePolicy("int8", "float32") == dp.QuantizedDTypePolicy("int8", "float32"),
    "other_source": dp.QuantizedDTypePolicy("int8", "float32") == dp.QuantizedDTypePolicy("int8", "bfloat16"),
    "float_vs_quant": dp.DTypePolicy("float32") == dp.QuantizedDTypePolicy("int8", "float32"),
    "float8_history": dp.QuantizedFloat8DTypePolicy("float8", "float32", 16)
    == dp.QuantizedFloat8DTypePolicy("float8", "float32", 32),
}
# ----- DTypePolicyMap ---------------------------------------------------------------------------
m = dp.DTypePolicyMap(default_policy="mixed_bfloat16")
m["encoder/dense"] = "float32"
m["encoder/.*"] = dp.QuantizedDTypePolicy("int8", "mixed_bfloat16")
m["decoder"] = "bfloat16"
out["map"] = {
    "name": m.name, "compute_dtype": m.compute_dtype, "variable_dtype": m.variable_dtype,
    "quantization_mode": m.quantization_mode, "len": len(m), "keys": list(m.keys()),
    "lookups": {k: m[k].name for k in ["encoder/dense", "encoder/attention/query", "decoder",
                                       "decoder/dense", "other"]},
    "contains_exact": "encoder/dense" in m, "contains_pattern_match": "encoder/attention" in m,
    "config": m.get_config(),
    "serialized": keras.saving.serialize_keras_object(m),
    "duplicate": raises(lambda: m.__setitem__("decoder", "float32")),
    "bad_value": raises(lambda: m.__setitem__("x", 3.5)),
}
m2 = dp.DTypePolicyMap()
m2["a.*"] = "float32"
m2["ab.*"] = "bfloat16"
out["map"]["ambiguous"] = raises(lambda: m2["abc"])
out["map"]["no_default_name"] = m2.name
out["map"]["no_default_config"] = m2.get_config()
out["map"]["default_map"] = raises(lambda: dp.DTypePolicyMap(dp.DTypePolicyMap()))
out["map"]["bad_map"] = raises(lambda: dp.DTypePolicyMap("float32", [("a", "float32")]))
out["map"]["pop"] = m.pop("decoder").name
out["map"]["len_after_pop"] = len(m)
rt = dp.deserialize(keras.saving.serialize_keras_object(m))
out["map"]["round_trip"] = {"class": type(rt).__name__, "name": rt.name,
                            "lookups": {k: rt[k].name for k in ["encoder/dense", "encoder/x", "zzz"]}}

# ----- quantize(int8 / int4) on weights set by hand --------------------------------------------
X = rng.normal(size=(3, 4)).astype("float32") * 2
K = rng.normal(size=(4, 5)).astype("float32")
B = rng.normal(size=(5,)).astype("float32")
KE = rng.normal(size=(4, 2, 3)).astype("float32")
BE = rng.normal(size=(2, 3)).astype("float32")
E = rng.normal(size=(7, 4)).astype("float32")
IDS = np.array([[0, 3, 6], [2, 2, 5]], dtype="int32")
out.update({"X": X.tolist(), "K": K.tolist(), "B": B.tolist(), "KE": KE.tolist(), "BE": BE.tolist(),
            "E": E.tolist(), "IDS": IDS.tolist()})


def dense():
    layer = keras.layers.Dense(5, activation="relu")
    layer.build((None, 4))
    layer.set_weights([K, B])
    return layer


def einsum():
    layer = keras.layers.EinsumDense("ab,bcd->acd", output_shape=(2, 3), bias_axes="cd")
    layer.build((None, 4))
    layer.set_weights([KE, BE])
    return layer


def embedding():
    layer = keras.layers.Embedding(7, 4)
    layer.build()
    layer.set_weights([E])
    return layer


def record(layer, inputs):
    return {"output": np.asarray(layer(inputs)).tolist(), "dtype_policy": layer.dtype_policy.name,
            "policy_class": type(layer.dtype_policy).__name__,
            "weights": [{"name": w.name, "path": w.path, "dtype": w.dtype, "shape": list(w.shape),
                         "trainable": w.trainable, "value": np.asarray(w).tolist()} for w in layer.weights],
            "config_dtype": layer.get_config()["dtype"]}


out["quantized"] = {}
for mode in ("int8", "int4"):
    for key, make, inputs in (("dense", dense, X), ("einsum", einsum, X), ("embedding", embedding, IDS)):
        layer = make()
        layer.quantize(mode)
        out["quantized"][f"{key}_{mode}"] = record(layer, inputs)
layer = dense()
layer.quantize("int8")
out["quantize_errors"] = {
    "twice": raises(lambda: layer.quantize("int8")),
    "unbuilt": raises(lambda: keras.layers.Dense(3).quantize("int8")),
    "bad_mode": raises(lambda: dense().quantize("int3")),
    "gptq_no_config": raises(lambda: dense().quantize("gptq")),
    "base_layer": raises(lambda: keras.layers.Dropout(0.5).quantize("int8")),
}
# gradient through an int8 Dense (Keras: the dequantized kernel for the inputs' gradient)
layer = dense()
layer.quantize("int8")
x = tf.constant(X)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.reduce_sum(layer(x))
out["int8_input_grad"] = tape.gradient(y, x).numpy().tolist()

# ----- a quantized model in a .keras file -------------------------------------------------------
inputs = keras.Input((4,))
hidden = dense()(inputs)
hidden = keras.layers.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c", name="mix")(hidden)
model = keras.Model(inputs, keras.layers.Dense(3, name="head")(hidden))
model.quantize("int8")
tmp = tempfile.mkdtemp()
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "formats", "fixtures", "quantized_int8.keras")
model.save(path)
with zipfile.ZipFile(path) as z:
    config = json.loads(z.read("config.json"))
    z.extract("model.weights.h5", tmp)
stored = {}
with h5py.File(os.path.join(tmp, "model.weights.h5")) as f:
    f.visititems(lambda n, o: stored.__setitem__(n, [str(o.dtype), list(o.shape)])
                 if isinstance(o, h5py.Dataset) else None)
out["model_file"] = {"stored": stored, "fixture": "tests/formats/fixtures/quantized_int8.keras",
                     "layer_dtypes": [layer["config"]["dtype"] for layer in config["config"]["layers"]],
                     "output": np.asarray(model(X)).tolist()}
loaded = keras.saving.load_model(path)
out["model_file"]["loaded_output"] = np.asarray(loaded(X)).tolist()

json.dump(out, open(os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras",
                                 "keras_quantize_reference.json"), "w"), indent=None)
print("ok")
