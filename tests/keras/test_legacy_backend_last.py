"""The last legacy keras.backend names (focal cross-entropies, CTC, result_type, rnn, gradients) against Keras
3.15 results frozen in keras_last_names_reference.json by tools/tf_reference/keras_last_names_reference.py
(TF 2.21). Modules: torchstrategy/keras/_legacy_backend/{nn,ctc,promotion,recurrence}.py."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf

K = tf.keras.backend
REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_last_names_reference.json")))


def _close(got, expected, tol=1e-5):
    np.testing.assert_allclose(np.asarray(got), np.array(expected), rtol=tol, atol=tol)


def test_focal_crossentropies():
    T, P, Z = REF["T"], REF["P"], REF["Z"]
    _close(K.binary_focal_crossentropy(T, P), REF["bfce"])
    _close(K.binary_focal_crossentropy(T, Z, apply_class_balancing=True, alpha=0.3, gamma=1.5, from_logits=True),
           REF["bfce_balanced_logits"])
    _close(K.categorical_focal_crossentropy(T, P), REF["cfce"])
    _close(K.categorical_focal_crossentropy(T, Z, alpha=0.4, gamma=3.0, from_logits=True), REF["cfce_logits"])
    with pytest.raises(ValueError, match="must be equal"):
        K.categorical_focal_crossentropy(torch.ones(2, 3), torch.ones(2, 4))


def test_ctc_batch_cost_and_its_gradient():
    probs = torch.tensor(REF["ctc_probs"], requires_grad=True)
    cost = K.ctc_batch_cost(REF["ctc_labels"], probs, REF["ctc_input_len"], REF["ctc_label_len"])
    _close(cost.detach(), REF["ctc_batch_cost"])
    cost.sum().backward()
    assert probs.grad is not None and torch.isfinite(probs.grad).all()
    with pytest.raises(ValueError, match="blank"):
        K.ctc_batch_cost([[3, 1, 0]], torch.tensor(REF["ctc_probs"])[:1], [[6]], [[3]])


def test_ctc_label_dense_to_sparse():
    sparse = K.ctc_label_dense_to_sparse(np.array(REF["ctc_labels"], dtype="int32"), np.array([3, 2], dtype="int32"))
    ref = REF["ctc_sparse"]
    assert np.asarray(sparse.indices).tolist() == ref["indices"]
    assert np.asarray(sparse.values).tolist() == ref["values"]
    assert np.asarray(sparse.dense_shape).tolist() == ref["dense_shape"]
    assert str(np.asarray(sparse.values).dtype) == ref["values_dtype"]


def test_ctc_decode_greedy_and_beam_search_error():
    decoded, log_prob = K.ctc_decode(REF["ctc_probs"], np.array([6, 5]))
    assert [np.asarray(d).tolist() for d in decoded] == REF["ctc_greedy"]["decoded"]
    _close(log_prob, REF["ctc_greedy"]["log_prob"])
    with pytest.raises(NotImplementedError, match="greedy=True"):
        K.ctc_decode(REF["ctc_probs"], np.array([6, 5]), greedy=False, beam_width=5, top_paths=2)


def test_result_type():
    ref = REF["result_type"]
    assert K.result_type("float16", "int32") == ref["f16_i32"]
    assert K.result_type("int8", "uint8") == ref["i8_u8"]
    assert K.result_type("float32", "float64") == ref["f32_f64"]
    assert K.result_type("bool", "int64") == ref["bool_i64"]
    assert K.result_type(int, float) == ref["int_float"]
    assert K.result_type() == "float32"
    assert K.result_type(torch.bfloat16, int) == "bfloat16"  # a weak Python int keeps the tensor's dtype
    with pytest.raises(ValueError, match="float8"):
        K.result_type("float8_e4m3fn", "float32")


def _step(x, states):
    W, U = torch.tensor(REF["WK"]), torch.tensor(REF["UK"])
    h = torch.tanh(x @ W + states[0] @ U + (states[1] if len(states) > 1 else 0.0))
    return h, [h]


@pytest.mark.parametrize("name", ["rnn_plain", "rnn_mask", "rnn_mask_zero", "rnn_back_const", "rnn_last_only"])
def test_rnn_matches_keras(name):
    kwargs = {"rnn_plain": {}, "rnn_mask": {"mask": REF["MASK"]},
              "rnn_mask_zero": {"mask": REF["MASK"], "zero_output_for_mask": True},
              "rnn_back_const": {"go_backwards": True, "constants": [torch.tensor(REF["CONST"])]},
              "rnn_last_only": {"return_all_outputs": False, "mask": REF["MASK"]}}[name]
    if "mask" in kwargs:
        kwargs["mask"] = torch.tensor(kwargs["mask"])
    last, outputs, states = K.rnn(_step, torch.tensor(REF["SEQ"]), [torch.zeros(2, 2)], **kwargs)
    _close(last, REF[name]["last"])
    _close(outputs, REF[name]["outputs"])
    _close(states[0], REF[name]["state"])


def test_rnn_time_major_agrees_with_batch_major():
    seq = torch.tensor(REF["SEQ"])
    _, batch_major, _ = K.rnn(_step, seq, [torch.zeros(2, 2)])
    _, time_major, _ = K.rnn(_step, seq.transpose(0, 1), [torch.zeros(2, 2)], time_major=True)
    torch.testing.assert_close(time_major.transpose(0, 1), batch_major)
    with pytest.raises(ValueError, match="rank 3"):
        K.rnn(_step, torch.zeros(2, 3), [torch.zeros(2, 2)])


def test_gradients_raises_in_eager_as_tf():
    assert REF["gradients_eager"]["raises"] == "RuntimeError"
    with pytest.raises(RuntimeError, match="GradientTape"):
        K.gradients(torch.tensor(1.0), [torch.tensor(1.0, requires_grad=True)])
