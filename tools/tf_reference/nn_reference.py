"""Writes tests/nn/nn_reference.json: TF 2.21's tf.nn numbers (run with /work/tf-venv; not part of the test
suite). Inputs come from fixed formulas (`arr` below, mirrored in tests/nn/_reference.py) so tests need no TF."""
import json
import os

import numpy as np
import tensorflow as tf


def arr(*shape, offset=0.0):
    n = int(np.prod(shape))
    t = np.arange(n, dtype=np.float64)
    return (np.sin(0.7 * t + offset) + 0.3 * np.cos(2.3 * t)).reshape(shape).astype(np.float32)


out = {}
x = arr(2, 7, 6, 3)
w = arr(3, 2, 3, 4, offset=1.0)
for pad in ("SAME", "VALID"):
    for s in (1, 2):
        out[f"conv2d_{pad}_s{s}"] = tf.nn.conv2d(x, w, s, pad).numpy()
out["conv2d_dil2"] = tf.nn.conv2d(x, w, 1, "SAME", dilations=2).numpy()
out["conv2d_explicit"] = tf.nn.conv2d(x, w, [1, 2, 1, 1], [[0, 0], [1, 2], [0, 1], [0, 0]]).numpy()
out["conv2d_groups"] = tf.nn.conv2d(arr(1, 5, 5, 4), arr(3, 3, 2, 4, offset=2.0), 1, "SAME").numpy()
out["conv1d_SAME_s2"] = tf.nn.conv1d(arr(2, 9, 3), arr(4, 3, 2, offset=1.0), 2, "SAME").numpy()
out["conv3d_SAME_s2"] = tf.nn.conv3d(arr(1, 5, 4, 6, 2), arr(2, 3, 2, 2, 3, offset=1.0), [1, 2, 2, 2, 1],
                                     "SAME").numpy()
out["convolution_VALID"] = tf.nn.convolution(x, w, strides=[1, 2], dilations=None).numpy()
wt = arr(3, 3, 5, 3, offset=0.5)
for pad in ("SAME", "VALID"):
    shape = [2, 14, 12, 5] if pad == "SAME" else [2, 15, 13, 5]
    out[f"conv2d_transpose_{pad}"] = tf.nn.conv2d_transpose(x, wt, shape, 2, pad).numpy()
out["conv2d_transpose_VALID_extra"] = tf.nn.conv2d_transpose(x, wt, [2, 16, 14, 5], 2, "VALID").numpy()
out["conv1d_transpose"] = tf.nn.conv1d_transpose(arr(2, 5, 3), arr(3, 2, 3, offset=1.0), [2, 10, 2], 2).numpy()
dw = arr(3, 3, 3, 2, offset=0.3)
out["depthwise_SAME_s2"] = tf.nn.depthwise_conv2d(x, dw, [1, 2, 2, 1], "SAME").numpy()
out["depthwise_dil"] = tf.nn.depthwise_conv2d(x, dw, [1, 1, 1, 1], "VALID", dilations=[2, 1]).numpy()
out["separable"] = tf.nn.separable_conv2d(x, dw, arr(1, 1, 6, 4, offset=0.9), [1, 1, 1, 1], "SAME").numpy()
out["atrous"] = tf.nn.atrous_conv2d(x, w, 2, "SAME").numpy()
out["bias_add_nchw"] = tf.nn.bias_add(arr(2, 3, 4), np.array([1.0, 2.0, 3.0], np.float32), "NCHW").numpy()
for pad in ("SAME", "VALID"):
    out[f"max_pool2d_{pad}"] = tf.nn.max_pool2d(x, 3, 2, pad).numpy()
    out[f"avg_pool2d_{pad}"] = tf.nn.avg_pool2d(x, 3, 2, pad).numpy()
out["avg_pool1d"] = tf.nn.avg_pool1d(arr(2, 9, 3), 2, 2, "SAME").numpy()
out["max_pool3d"] = tf.nn.max_pool3d(arr(1, 5, 4, 6, 2), 2, 2, "SAME").numpy()
out["avg_pool3d"] = tf.nn.avg_pool3d(arr(1, 5, 4, 6, 2), [2, 3, 2], 2, "SAME").numpy()
out["pool_avg_dil"] = tf.nn.pool(x, [2, 2], "AVG", padding="VALID", dilations=[2, 2]).numpy()
out["pool_max_dil"] = tf.nn.pool(x, [2, 2], "MAX", padding="VALID", dilations=[2, 1]).numpy()
v, a = tf.nn.max_pool_with_argmax(x, 3, 2, "SAME")
out["argmax_values"], out["argmax_index"] = v.numpy(), a.numpy()
out["argmax_index_batch"] = tf.nn.max_pool_with_argmax(x, 2, 2, "VALID", include_batch_in_index=True)[1].numpy()
sx = arr(2, 4, 6, 3)
out["space_to_depth"] = tf.nn.space_to_depth(sx, 2).numpy()
out["depth_to_space"] = tf.nn.depth_to_space(arr(2, 2, 3, 12), 2).numpy()
out["space_to_batch"] = tf.nn.space_to_batch(arr(2, 3, 5, 2), [2, 3], [[1, 0], [0, 1]]).numpy()
m, var = tf.nn.moments(x, [0, 1, 2])
out["moments_mean"], out["moments_var"] = m.numpy(), var.numpy()
fw = arr(2, 7, 6, 1, offset=3.0) ** 2
m, var = tf.nn.weighted_moments(x, [1, 2], fw, keepdims=True)
out["wmoments_mean"], out["wmoments_var"] = m.numpy(), var.numpy()
c, ms, vs, _ = tf.nn.sufficient_statistics(x, [0, 2], shift=0.5)
out["suff_count"], out["suff_mean_ss"], out["suff_var_ss"] = c.numpy(), ms.numpy(), vs.numpy()
m, var = tf.nn.normalize_moments(c, ms, vs, 0.5)
out["norm_moments_mean"], out["norm_moments_var"] = m.numpy(), var.numpy()
out["batch_normalization"] = tf.nn.batch_normalization(x, 0.1, 2.0, 0.5, 1.5, 1e-3).numpy()
out["l2_normalize"] = tf.nn.l2_normalize(x, axis=[1, 3]).numpy()
out["l2_normalize_all"] = tf.nn.l2_normalize(x).numpy()
out["lrn"] = tf.nn.local_response_normalization(arr(2, 3, 4, 8), depth_radius=2, bias=1.5, alpha=0.3,
                                                beta=0.75).numpy()
p = arr(5, 3)
out["embedding"] = tf.nn.embedding_lookup([p[:3], p[3:]], [[4, 0], [2, 3]], max_norm=0.8).numpy()
f = arr(3, 5) * 3
for act in ("elu", "selu", "leaky_relu", "crelu", "softsign", "gelu"):
    out[act] = getattr(tf.nn, act)(f).numpy()
tg = np.abs(arr(3, 5, offset=0.4)) * 3
out["log_poisson"] = tf.nn.log_poisson_loss(tg, f).numpy()
out["log_poisson_full"] = tf.nn.log_poisson_loss(tg, f, compute_full_loss=True).numpy()
lab = (arr(3, 5, offset=2.0) > 0).astype(np.float32)
out["weighted_ce"] = tf.nn.weighted_cross_entropy_with_logits(lab, f, 2.5).numpy()
tv, ti = tf.nn.top_k(f, 3)
out["top_k_values"], out["top_k_indices"] = tv.numpy(), ti.numpy()
out["in_top_k"] = tf.nn.in_top_k([1, 4, 0], f, 2).numpy()
out["zero_fraction"] = tf.nn.zero_fraction(np.array([0.0, 1.0, 0.0, 3.0], np.float32)).numpy()
logits = arr(8, 2, 5, offset=0.2)
labels = np.array([[1, 2, 2], [3, 1, 0]], np.int32)
out["ctc_loss"] = tf.nn.ctc_loss(labels, logits, [3, 2], [8, 6]).numpy()
out["ctc_loss_blank_last"] = tf.nn.ctc_loss(labels, logits, [3, 2], [8, 6], blank_index=-1).numpy()
out["atrous_transpose_SAME"] = tf.nn.atrous_conv2d_transpose(x, wt, [2, 7, 6, 5], 2, "SAME").numpy()
out["atrous_transpose_VALID"] = tf.nn.atrous_conv2d_transpose(x, wt, [2, 11, 10, 5], 2, "VALID").numpy()
out["bn_global"] = tf.nn.batch_norm_with_global_normalization(x, 0.1, 2.0, 0.5, 1.5, 1e-3, False).numpy()
mw = arr(3, 2, 3, offset=0.7)
for pad in ("SAME", "VALID"):
    out[f"dilation2d_{pad}"] = tf.nn.dilation2d(x, mw, [1, 2, 1, 1], pad, "NHWC", [1, 1, 2, 1]).numpy()
    out[f"erosion2d_{pad}"] = tf.nn.erosion2d(x, mw, [1, 1, 2, 1], pad, "NHWC", [1, 2, 1, 1]).numpy()
gb = arr(2, 4, 3, 6, offset=1.3)
out["dw_backprop_input"] = tf.nn.depthwise_conv2d_backprop_input([2, 7, 6, 3], dw, gb, [1, 2, 2, 1], "SAME").numpy()
out["dw_backprop_filter"] = tf.nn.depthwise_conv2d_backprop_filter(x, [3, 3, 3, 2], gb, [1, 2, 2, 1], "SAME").numpy()

doc = {"tf_version": tf.__version__, "arrays": {k: {"dtype": str(np.asarray(v).dtype), "shape": list(np.shape(v)),
                                                    "data": np.asarray(v).ravel().tolist()} for k, v in out.items()}}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "nn", "nn_reference.json")
with open(path + ".tmp", "w") as fh:
    json.dump(doc, fh)
os.replace(path + ".tmp", path)
print(len(out), "arrays ->", path)
