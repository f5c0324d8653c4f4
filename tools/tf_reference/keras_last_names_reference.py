"""Freezes Keras 3.15's last tf.keras names for issue 22 (legacy layers ThresholdedReLU / RandomHeight /
RandomWidth, legacy backend focal and CTC functions, optimizers.legacy's error) under the TF reference env
(TF 2.21 / Keras 3.15): /work/tf-venv/bin/python tools/tf_reference/keras_last_names_reference.py
-> tests/keras/keras_last_names_reference.json"""
import json
import os

import numpy as np
import tensorflow as tf

keras = tf.keras
K = keras.backend
rng = np.random.default_rng(22)
IMG = rng.uniform(0, 1, (2, 5, 7, 3)).astype("float32")
X = np.array([[-1.0, 0.5, 1.0, 1.5, 3.0]], dtype="float32")


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


L = keras.layers
out = {"keras_version": keras.version(), "tf_version": tf.__version__, "IMG": IMG.tolist(), "X": X.tolist()}
out["thresholded"] = np.asarray(L.ThresholdedReLU(theta=0.75)(X)).tolist()
out["thresholded_config"] = {k: v for k, v in L.ThresholdedReLU(theta=0.75).get_config().items() if k == "theta"}
out["thresholded_errors"] = {"neg": raises(lambda: L.ThresholdedReLU(theta=-1.0)),
                             "none": raises(lambda: L.ThresholdedReLU(theta=None))}
for name, layer in {"height_up_bilinear": L.RandomHeight((0.6, 0.6)),
                    "height_down_nearest": L.RandomHeight((-0.4, -0.4), interpolation="nearest"),
                    "width_up_bilinear": L.RandomWidth((0.5, 0.5)),
                    "width_down_bicubic": L.RandomWidth((-0.3, -0.3), interpolation="bicubic")}.items():
    out[name] = np.asarray(layer(IMG)).tolist()
out["height_inference_is_input"] = bool(np.array_equal(np.asarray(L.RandomHeight(0.5)(IMG, training=False)), IMG))
out["height_output_shape"] = list(L.RandomHeight(0.2).compute_output_shape((2, 5, 7, 3)))
out["height_config"] = {k: v for k, v in L.RandomHeight((0.1, 0.2), seed=3).get_config().items()
                        if k in ("factor", "interpolation", "seed")}
out["height_errors"] = {"order": raises(lambda: L.RandomHeight((0.3, 0.1))),
                        "below": raises(lambda: L.RandomWidth((-1.5, 0.1)))}
out["legacy_optimizer"] = raises(lambda: keras.optimizers.legacy.Adam(0.1))
out["legacy_same"] = keras.optimizers.legacy.SGD is keras.optimizers.legacy.Adam

# focal cross-entropies (legacy backend)
T = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]], dtype="float32")
P = np.array([[0.1, 0.7, 0.6], [0.8, 0.3, 0.05]], dtype="float32")
Z = np.array([[-1.2, 0.4, 2.0], [0.3, -0.7, 1.1]], dtype="float32")
out["T"], out["P"], out["Z"] = T.tolist(), P.tolist(), Z.tolist()
out["bfce"] = np.asarray(K.binary_focal_crossentropy(T, P)).tolist()
out["bfce_balanced_logits"] = np.asarray(K.binary_focal_crossentropy(
    T, Z, apply_class_balancing=True, alpha=0.3, gamma=1.5, from_logits=True)).tolist()
out["cfce"] = np.asarray(K.categorical_focal_crossentropy(T, P)).tolist()
out["cfce_logits"] = np.asarray(K.categorical_focal_crossentropy(T, Z, alpha=0.4, gamma=3.0,
                                                                 from_logits=True)).tolist()

# CTC (legacy backend: blank is the last class, y_pred holds probabilities, batch-major)
probs = rng.uniform(0.05, 1.0, (2, 6, 4)).astype("float32")
probs = probs / probs.sum(-1, keepdims=True)
labels = np.array([[1, 2, 2], [0, 1, 0]], dtype="int32")
label_len = np.array([[3], [2]], dtype="int32")
input_len = np.array([[6], [5]], dtype="int32")
out["ctc_probs"], out["ctc_labels"] = probs.tolist(), labels.tolist()
out["ctc_label_len"], out["ctc_input_len"] = label_len.tolist(), input_len.tolist()
out["ctc_batch_cost"] = np.asarray(K.ctc_batch_cost(labels, probs, input_len, label_len)).tolist()
sp = K.ctc_label_dense_to_sparse(labels, np.array([3, 2], dtype="int32"))
out["ctc_sparse"] = {"indices": np.asarray(sp.indices).tolist(), "values": np.asarray(sp.values).tolist(),
                     "dense_shape": np.asarray(sp.dense_shape).tolist(), "values_dtype": sp.values.dtype.name}
dec, logp = K.ctc_decode(probs, np.array([6, 5]))
out["ctc_greedy"] = {"decoded": [np.asarray(d).tolist() for d in dec], "log_prob": np.asarray(logp).tolist()}
dec, logp = K.ctc_decode(probs, np.array([6, 5]), greedy=False, beam_width=5, top_paths=2)
out["ctc_beam"] = {"decoded": [np.asarray(d).tolist() for d in dec], "log_prob": np.asarray(logp).tolist()}
out["result_type"] = {"f16_i32": K.result_type("float16", "int32"), "i8_u8": K.result_type("int8", "uint8"),
                      "f32_f64": K.result_type("float32", "float64"), "bool_i64": K.result_type("bool", "int64"),
                      "int_float": K.result_type(int, float)}

# K.rnn with a small tanh cell: plain, masked (both output rules), backwards with constants, last output only
SEQ = rng.normal(size=(2, 4, 3)).astype("float32")
WK = rng.normal(size=(3, 2)).astype("float32") * 0.5
UK = rng.normal(size=(2, 2)).astype("float32") * 0.5
CONST = np.array([[0.1, -0.2], [0.3, 0.05]], dtype="float32")
MASK = np.array([[1, 1, 0, 1], [1, 0, 0, 1]], dtype=bool)
out["SEQ"], out["WK"], out["UK"], out["CONST"], out["MASK"] = (SEQ.tolist(), WK.tolist(), UK.tolist(),
                                                                 CONST.tolist(), MASK.tolist())


def step(x, states):
    h = tf.tanh(tf.matmul(x, WK) + tf.matmul(states[0], UK) + (states[1] if len(states) > 1 else 0.0))
    return h, [h]


H0 = np.zeros((2, 2), dtype="float32")
for name, kwargs in {"rnn_plain": {}, "rnn_mask": {"mask": MASK},
                     "rnn_mask_zero": {"mask": MASK, "zero_output_for_mask": True},
                     "rnn_back_const": {"go_backwards": True, "constants": [CONST]},
                     "rnn_last_only": {"return_all_outputs": False, "mask": MASK}}.items():
    last, outs, states = K.rnn(step, tf.constant(SEQ), [tf.constant(H0)], **kwargs)
    out[name] = {"last": np.asarray(last).tolist(), "outputs": np.asarray(outs).tolist(),
                 "state": np.asarray(states[0]).tolist()}
out["gradients_eager"] = raises(lambda: K.gradients(tf.constant(1.0), [tf.Variable(1.0)]))

# keras.initializers.STFT kernels. This env has no SciPy, which Keras needs for named windows, so the named
# windows are passed as their values (symmetric hann of 8; periodic hamming of 6 = symmetric of 7, cut).
I = keras.initializers
out["stft"] = {
    "real_hann_density": np.asarray(I.STFT(window=np.hanning(8))((8, 1, 5))).tolist(),
    "imag_hamming_spectrum_periodic": np.asarray(
        I.STFT("imag", np.hamming(7)[:6], "spectrum", True)((6, 1, 4))).tolist(),
    "real_none": np.asarray(I.STFTInitializer(window=None, scaling=None)((4, 1, 3))).tolist(),
    "array_window": np.asarray(I.stft(window=np.linspace(0.2, 1.0, 5))((5, 1, 3))).tolist(),
    "config": I.STFT("imag", None, "spectrum", True).get_config(),
    "same_class": I.STFT is I.STFTInitializer is I.stft,
    "bad_side": raises(lambda: I.STFT(side="both")),
    "bad_scaling": raises(lambda: I.STFT(window=None, scaling="power")),
}

# keras.utils.bounding_boxes: compute_ciou, encode_box_to_deltas, decode_deltas_to_boxes
BB = keras.utils.bounding_boxes
B1 = np.array([[10.0, 20.0, 50.0, 60.0], [5.0, 5.0, 15.0, 30.0], [0.0, 0.0, 8.0, 8.0]], dtype="float32")
B2 = np.array([[12.0, 18.0, 45.0, 70.0], [20.0, 20.0, 30.0, 40.0], [1.0, 2.0, 9.0, 6.0]], dtype="float32")
ANCH = np.array([[0.0, 0.0, 10.0, 10.0], [5.0, 5.0, 25.0, 15.0], [10.0, 0.0, 40.0, 30.0]], dtype="float32")
out["BB1"], out["BB2"], out["ANCH"] = B1.tolist(), B2.tolist(), ANCH.tolist()
out["ciou"] = np.asarray(BB.compute_ciou(B1, B2, "xyxy")).tolist()
out["ciou_batched_yxyx"] = np.asarray(BB.compute_ciou(B1[None], B2[None], "yxyx")).tolist()
out["encode"] = np.asarray(BB.encode_box_to_deltas(ANCH, B1, "xyxy", "xyxy")).tolist()
out["encode_var_xywh"] = np.asarray(BB.encode_box_to_deltas(
    ANCH, B2, "xyxy", "xywh", encoding_format="center_xywh", variance=[0.1, 0.1, 0.2, 0.2])).tolist()
deltas = np.array([[0.1, -0.2, 0.3, 0.0], [0.0, 0.5, -0.1, 0.2], [-0.3, 0.1, 0.0, -0.4]], dtype="float32")
out["deltas"] = deltas.tolist()
out["decode"] = np.asarray(BB.decode_deltas_to_boxes(ANCH, deltas, "xyxy", "xyxy")).tolist()
out["decode_var_batched"] = np.asarray(BB.decode_deltas_to_boxes(
    ANCH, deltas[None], "xyxy", "yxyx", encoded_format="center_xywh", variance=[0.1, 0.1, 0.2, 0.2])).tolist()
out["decode_dict"] = {k: np.asarray(v).tolist() for k, v in BB.decode_deltas_to_boxes(
    {"P3": ANCH[:2], "P4": ANCH[2:]}, {"P3": deltas[:2], "P4": deltas[2:]}, "xyxy", "xywh").items()}

AB = np.array([[[10.0, 20.0, 50.0, 60.0], [5.0, 5.0, 15.0, 30.0]],
               [[0.0, 0.0, 8.0, 8.0], [30.0, 10.0, 60.0, 40.0]]], dtype="float32")
out["AB"] = AB.tolist()
out["affine"] = np.asarray(BB.affine_transform(
    AB, np.array([15.0, -30.0], "float32"), np.array([0.1, -0.05], "float32"), np.array([0.0, 0.2], "float32"),
    np.array([1.0, 1.2], "float32"), np.array([5.0, 0.0], "float32"), np.array([0.0, -10.0], "float32"),
    80, 100)).tolist()
out["affine_center"] = np.asarray(BB.affine_transform(
    AB, np.array([90.0, 45.0], "float32"), np.zeros(2, "float32"), np.zeros(2, "float32"),
    np.array([0.5, 2.0], "float32"), np.zeros(2, "float32"), np.zeros(2, "float32"), 64, 64,
    center_x=np.array([0.2, 0.7], "float32"), center_y=np.array([0.3, 0.6], "float32"))).tolist()
out["affine_format_error"] = raises(lambda: BB.affine_transform(AB, np.zeros(2, "float32"), 0, 0, 1, 0, 0, 8, 8,
                                                                 bounding_box_format="yxyx"))

path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_last_names_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
