"""tf.nn's RNN cell wrappers over this library's Keras cells against TF 2.21 (tensorflow-cpu 2.21.0, Keras 3.15;
rnn_cell_wrappers_reference.json from tools/tf_reference/rnn_cell_wrappers_reference.py). TF's keras.layers.RNN
refuses these Keras 2 wrappers around Keras 3 cells, so TF's numbers come from stepping the wrapper by hand; here
keras.layers.RNN runs them too, and must give the same sequence."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf

with open(os.path.join(os.path.dirname(__file__), "rnn_cell_wrappers_reference.json")) as _handle:
    REF = json.load(_handle)
X = np.array(REF["x"], np.float32)


def _cell():
    cell = tf.keras.layers.GRUCell(3)
    cell.build((None, 3))
    cell.set_weights([np.array(w, np.float32) for w in REF["weights"]])
    return cell


def _steps(wrapper):
    state = [torch.zeros(2, 3)]
    outputs = []
    for t in range(X.shape[1]):
        out, state = wrapper(torch.from_numpy(X[:, t]), state)
        outputs.append(out.detach().numpy())
    return np.stack(outputs, 1), state


@pytest.mark.parametrize("key,make", [
    ("residual", tf.nn.RNNCellResidualWrapper),
    ("device", lambda cell: tf.nn.RNNCellDeviceWrapper(cell, "/cpu:0")),
    ("keep_all", tf.nn.RNNCellDropoutWrapper),
    ("residual_fn", lambda cell: tf.nn.RNNCellResidualWrapper(cell, residual_fn=lambda i, o: 2.0 * i + o)),
])
def test_wrapped_gru_steps_match_tf_and_keras_rnn_runs_them(key, make):
    cell = _cell()
    wrapper = make(cell)
    assert isinstance(wrapper, tf.keras.layers.Layer) and wrapper.cell is cell
    assert wrapper.state_size == cell.state_size and wrapper.output_size == 3
    outputs, state = _steps(wrapper)
    np.testing.assert_allclose(outputs, np.array(REF[key]), rtol=1e-5, atol=1e-6)
    sequence = tf.keras.layers.RNN(make(_cell()), return_sequences=True, return_state=True)(X)
    np.testing.assert_allclose(sequence[0].detach().numpy(), np.array(REF[key]), rtol=1e-5, atol=1e-6)
    if key == "residual":  # the state is the cell's own; only the output gets the inputs added
        np.testing.assert_allclose(state[0].detach().numpy(), np.array(REF["residual_state"][0]), rtol=1e-5)
        np.testing.assert_allclose(outputs - X, np.array(REF["plain"]), rtol=1e-5, atol=1e-6)


def test_wrapper_tracks_the_cell_weights_and_round_trips_its_config():
    wrapper = tf.nn.RNNCellDropoutWrapper(_cell(), input_keep_prob=0.5, seed=3)
    assert len(wrapper.trainable_weights) == 3
    config = wrapper.get_config()
    assert sorted(config) == REF["dropout_config_keys"]
    again = tf.nn.RNNCellDropoutWrapper.from_config(config)
    assert type(again.cell) is tf.keras.layers.GRUCell and again.get_config()["input_keep_prob"] == 0.5


def test_dropout_runs_in_inference_too_and_scales_as_tf():
    # TF's legacy wrapper has no training flag: the dropout runs at every call (model.predict included)
    wrapper = tf.nn.RNNCellDropoutWrapper(_cell(), output_keep_prob=0.5)
    plain = tf.keras.layers.RNN(_cell(), return_sequences=True)(np.repeat(X, 200, axis=0)).detach().numpy()
    dropped = tf.keras.layers.RNN(wrapper, return_sequences=True)(np.repeat(X, 200, axis=0)).detach().numpy()
    zeros = dropped == 0
    assert 0.45 < zeros.mean() < 0.55
    np.testing.assert_allclose(dropped[~zeros], 2.0 * plain[~zeros], rtol=1e-5, atol=1e-6)


def test_variational_dropout_reuses_one_mask_for_every_step_and_row():
    wrapper = tf.nn.RNNCellDropoutWrapper(tf.keras.layers.GRUCell(8), output_keep_prob=0.5,
                                          variational_recurrent=True, dtype=tf.float32, seed=5)
    outputs = tf.keras.layers.RNN(wrapper, return_sequences=True)(np.ones((4, 6, 3), np.float32)).detach().numpy()
    pattern = outputs[0, 0] == 0
    assert pattern.any() and not pattern.all()
    assert ((outputs == 0) == pattern).all()  # the same units are dropped at every step, in every row


def test_state_dropout_follows_the_filter():
    cell = tf.keras.layers.LSTMCell(64)
    keep_c = tf.nn.RNNCellDropoutWrapper(cell, state_keep_prob=0.5,
                                         dropout_state_filter_visitor=lambda states: [True, False])
    _, (h, c) = keep_c(torch.ones(2, 3), [torch.zeros(2, 64), torch.zeros(2, 64)])
    _, (h_ref, c_ref) = cell(torch.ones(2, 3), [torch.zeros(2, 64), torch.zeros(2, 64)])
    torch.testing.assert_close(c, c_ref)
    assert (h == 0).any() and not torch.equal(h, h_ref)


@pytest.mark.parametrize("key,make", [
    ("keep_prob", lambda: tf.nn.RNNCellDropoutWrapper(_cell(), input_keep_prob=1.5)),
    ("variational_dtype", lambda: tf.nn.RNNCellDropoutWrapper(_cell(), variational_recurrent=True)),
    ("variational_input_size", lambda: tf.nn.RNNCellDropoutWrapper(
        _cell(), input_keep_prob=0.5, variational_recurrent=True, dtype=tf.float32)),
    ("residual_shape", lambda: tf.nn.RNNCellResidualWrapper(tf.keras.layers.GRUCell(4))(
        torch.ones(2, 3), [torch.zeros(2, 4)])),
])
def test_errors_mean_what_tf_says(key, make):
    kind, message = REF["errors"][key].split(": ", 1)
    with pytest.raises(ValueError) as info:
        make()
    assert kind == "ValueError"
    head = message.split(":")[0] if key == "keep_prob" else message
    assert head.replace("(", "").replace(")", "") in str(info.value).replace("(", "").replace(")", "")


def test_wrapping_something_that_is_no_cell_is_a_type_error():
    with pytest.raises(TypeError, match="wraps an RNN cell"):
        tf.nn.RNNCellResidualWrapper(tf.keras.layers.Dense(3))


def test_add_variable_is_keras_2s_alias_of_add_weight():
    """TF 2.21's wrappers keep the legacy add_variable(*args, **kwargs): name first, as their add_weight."""
    wrapper = tf.nn.RNNCellResidualWrapper(_cell())
    weight = wrapper.add_variable("extra", (2, 2), initializer="ones")
    assert tuple(weight.shape) == (2, 2) and weight.name == "extra"
    assert float(weight.detach().sum()) == 4.0
