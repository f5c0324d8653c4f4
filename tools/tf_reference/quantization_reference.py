"""Writes tests/quantization/quantization_reference.json: TF 2.21's tf.quantization numbers (fake quantisation and
its gradients, quantize/dequantize in every mode, quantize_and_dequantize, quantized_concat) and error messages.
Run with /work/tf-venv; not part of the test suite. The inputs are written into the file too."""
import json
import os

import numpy as np
import tensorflow as tf

q = tf.quantization
x = np.array([-7.0, -6.0, -3.3, -0.04, 0.0, 0.02, 0.7, 1.26, 2.5, 5.99, 6.2, 11.0], np.float32)
out = {"tf_version": tf.__version__, "x": x.tolist()}
out["args_default"] = q.fake_quant_with_min_max_args(x).numpy().tolist()
out["args_m1_2_4bit_narrow"] = q.fake_quant_with_min_max_args(x, min=-1.1, max=2.3, num_bits=4, narrow_range=True).numpy().tolist()
out["args_0p1_5"] = q.fake_quant_with_min_max_args(x, min=0.1, max=5.0).numpy().tolist()
g = np.arange(12, dtype=np.float32) + 1
out["args_grad"] = q.fake_quant_with_min_max_args_gradient(g, x, min=-1.1, max=2.3, num_bits=4, narrow_range=True).numpy().tolist()
out["vars"] = q.fake_quant_with_min_max_vars(x, -2.5, 3.1, num_bits=6).numpy().tolist()
r = q.fake_quant_with_min_max_vars_gradient(g, x, -2.5, 3.1, num_bits=6)
out["vars_grad"] = [r[0].numpy().tolist(), float(r[1]), float(r[2])]
m = x.reshape(4, 3)
mins = np.array([-1.0, -0.5, 0.2], np.float32); maxs = np.array([1.0, 6.0, 3.0], np.float32)
out["pc"] = q.fake_quant_with_min_max_vars_per_channel(m, mins, maxs, num_bits=5).numpy().tolist()
r = q.fake_quant_with_min_max_vars_per_channel_gradient(g.reshape(4, 3), m, mins, maxs, num_bits=5)
out["pc_grad"] = [r[0].numpy().tolist(), r[1].numpy().tolist(), r[2].numpy().tolist()]
# gradients through tf.GradientTape of vars version
mn, mx = tf.Variable(-2.5), tf.Variable(3.1); xt = tf.constant(x)
with tf.GradientTape() as tape:
    tape.watch(xt)
    y = q.fake_quant_with_min_max_vars(xt, mn, mx, num_bits=6)
    loss = tf.reduce_sum(y * g)
gx, gmin, gmax = tape.gradient(loss, [xt, mn, mx])
out["tape_vars"] = [gx.numpy().tolist(), float(gmin), float(gmax)]
# quantize
for T in ("quint8", "qint8", "qint16", "quint16"):
    for mode in ("MIN_COMBINED", "MIN_FIRST", "SCALED"):
        try:
            r = q.quantize(x, -3.0, 6.5, getattr(tf, T), mode=mode)
            out[f"quantize_{T}_{mode}"] = [r.output.numpy().astype(np.int64).tolist(), float(r.output_min), float(r.output_max)]
        except Exception as e:
            out[f"quantize_{T}_{mode}"] = "ERR " + type(e).__name__ + ": " + str(e)[:200]
r = q.quantize(x, -3.0, 6.5, tf.qint8, mode="SCALED", round_mode="HALF_TO_EVEN", narrow_range=True)
out["quantize_qint8_SCALED_even_narrow"] = [r.output.numpy().astype(np.int64).tolist(), float(r.output_min), float(r.output_max)]
r = q.quantize(x, 0.5, 0.5001, tf.quint8)
out["quantize_tiny_range"] = [r.output.numpy().astype(np.int64).tolist(), float(r.output_min), float(r.output_max)]
r = q.quantize(m, [-1.0, -0.5, 0.2], [1.0, 6.0, 3.0], tf.qint8, mode="SCALED", axis=1)
out["quantize_axis"] = [r.output.numpy().astype(np.int64).tolist(), r.output_min.numpy().tolist(), r.output_max.numpy().tolist()]
# dequantize
qu8 = tf.constant([0, 1, 17, 128, 200, 255], tf.uint8)
qi8 = tf.constant([-128, -127, -5, 0, 60, 127], tf.int8)
for mode in ("MIN_COMBINED", "MIN_FIRST", "SCALED"):
    out[f"deq_quint8_{mode}"] = q.dequantize(tf.bitcast(qu8, tf.quint8), -3.0, 6.5, mode=mode).numpy().tolist()
    out[f"deq_qint8_{mode}"] = q.dequantize(tf.bitcast(qi8, tf.qint8), -3.0, 6.5, mode=mode).numpy().tolist()
out["deq_qint8_SCALED_narrow"] = q.dequantize(tf.bitcast(qi8, tf.qint8), -3.0, 6.5, mode="SCALED", narrow_range=True).numpy().tolist()
# quantize_and_dequantize
out["qdq_v2_auto"] = q.quantize_and_dequantize_v2(x, 0.0, 0.0).numpy().tolist()
out["qdq_v2_given"] = q.quantize_and_dequantize_v2(x, -2.0, 4.0, range_given=True, num_bits=4).numpy().tolist()
out["qdq_v2_unsigned_halfup"] = q.quantize_and_dequantize_v2(np.abs(x), 0.0, 0.0, signed_input=False, num_bits=3, round_mode="HALF_UP").numpy().tolist()
out["qdq_v2_narrow"] = q.quantize_and_dequantize_v2(x, -2.0, 4.0, range_given=True, narrow_range=True).numpy().tolist()
out["qdq_v1"] = q.quantize_and_dequantize(x, -2.0, 4.0, range_given=True, num_bits=5).numpy().tolist()
out["qdq_axis"] = q.quantize_and_dequantize_v2(m, [0.0]*3, [0.0]*3, axis=1, num_bits=4).numpy().tolist()
xt = tf.constant(x)
with tf.GradientTape() as tape:
    tape.watch(xt)
    y = q.quantize_and_dequantize_v2(xt, -2.0, 4.0, range_given=True)
gq = tape.gradient(tf.reduce_sum(y * g), xt)
out["qdq_grad"] = None if gq is None else gq.numpy().tolist()
with tf.GradientTape() as tape:
    tape.watch(xt)
    y = q.quantize_and_dequantize(xt, -2.0, 4.0, range_given=True)
gq = tape.gradient(tf.reduce_sum(y * g), xt)
out["qdq_v1_grad"] = None if gq is None else gq.numpy().tolist()
xv = tf.Variable(x)
with tf.GradientTape() as tape:
    y = q.quantize_and_dequantize_v2(xv, -2.0, 4.0, range_given=True)
gq = tape.gradient(tf.reduce_sum(y * g), xv)
out["qdq_var_grad"] = None if gq is None else gq.numpy().tolist()
# quantized_concat
a = tf.bitcast(tf.constant([0, 10, 255], tf.uint8), tf.quint8)
b = tf.bitcast(tf.constant([5, 128, 250], tf.uint8), tf.quint8)
r = q.quantized_concat(0, [a, b], [-1.0, 0.0], [1.0, 3.0])
out["qconcat"] = [tf.bitcast(r.output, tf.uint8).numpy().tolist(), float(r.output_min), float(r.output_max)]
a8 = tf.bitcast(tf.constant([[0, 1], [5, 255]], tf.uint8), tf.quint8)
r = q.quantized_concat(1, [a8, a8], [-1.0, -1.0], [1.0, 1.0])
out["qconcat_same"] = [tf.bitcast(r.output, tf.uint8).numpy().tolist(), float(r.output_min), float(r.output_max)]
a32 = tf.bitcast(tf.constant([-2000000000, 0, 7, 2000000000], tf.int32), tf.qint32)
r = q.quantized_concat(0, [a32, a32], [-1.0, -2.0], [1.0, 0.5])
out["qconcat_32"] = [tf.bitcast(r.output, tf.int32).numpy().tolist(), float(r.output_min), float(r.output_max)]
try:
    q.quantized_concat(0, [tf.bitcast(tf.constant([1], tf.int8), tf.qint8)]*2, [0.0, 0.0], [1.0, 1.0]); out["qconcat_qint8"] = "ok"
except Exception as e:
    out["qconcat_qint8"] = type(e).__name__
# errors
for name, fn in [("args_minmax", lambda: q.fake_quant_with_min_max_args(x, min=2.0, max=1.0)),
                 ("bits", lambda: q.fake_quant_with_min_max_args(x, num_bits=1)),
                 ("quant_mode", lambda: q.quantize(x, -1.0, 1.0, tf.quint8, mode="BAD")),
                 ("quant_even", lambda: q.quantize(x, -1.0, 1.0, tf.quint8, round_mode="HALF_TO_EVEN")),
                 ("quant_range", lambda: q.quantize(x, 1.0, -1.0, tf.quint8)),
                 ("qdq_range", lambda: q.quantize_and_dequantize_v2(x, 4.0, -2.0, range_given=True))]:
    try:
        fn(); out["err_" + name] = None
    except Exception as e:
        out["err_" + name] = type(e).__name__ + ": " + str(e)[:300]
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "quantization",
                    "quantization_reference.json")
with open(path, "w", encoding="utf-8") as handle:
    json.dump(out, handle, indent=0)
