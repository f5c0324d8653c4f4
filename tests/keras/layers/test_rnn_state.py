"""Stateful recurrent layers (keras/layers/rnn_state.py): states kept between batches, reset_states, the static
batch size; numbers against Keras 3.15 on weights set by hand, frozen by
tools/tf_reference/keras_functional_reference.py ("stateful")."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from torchstrategy import keras
from torchstrategy.keras import layers

REF = json.load(open(os.path.join(os.path.dirname(os.path.dirname(__file__)),
                                  "keras_functional_reference.json")))["stateful"]
X = (np.cos(np.arange(2 * 3 * 4, dtype="float32").reshape(2, 3, 4) * 0.5) * 0.8).astype("float32")
MAKERS = {
    "SimpleRNN": lambda: layers.SimpleRNN(3, stateful=True),
    "LSTM": lambda: layers.LSTM(3, stateful=True),
    "GRU": lambda: layers.GRU(3, stateful=True),
    "RNN_GRUCell": lambda: layers.RNN(layers.GRUCell(3), stateful=True),
    "RNN_stacked": lambda: layers.RNN([layers.SimpleRNNCell(2), layers.LSTMCell(3)], stateful=True),
    "Bidirectional_LSTM": lambda: layers.Bidirectional(layers.LSTM(2, stateful=True, return_sequences=True)),
}


def _hand_weights(layer) -> list:
    out = []
    for weight in layer.get_weights():
        ramp = np.arange(weight.size, dtype="float32").reshape(weight.shape)
        out.append((np.sin(ramp * 0.37 + weight.ndim) * 0.4).astype("float32"))
    return out


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_stateful_layers_keep_their_state_between_batches_as_keras(name):
    layer = MAKERS[name]()
    model = keras.Sequential([keras.Input(batch_shape=(2, 3, 4)), layer])
    layer.set_weights(_hand_weights(layer))
    assert len(layer.weights) == REF[name]["weights"]  # the kept states are not weights
    first = model.predict_on_batch(X)
    second = model.predict_on_batch(X)
    np.testing.assert_allclose(first, REF[name]["first"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(second, REF[name]["second"], rtol=1e-5, atol=1e-6)
    layer.reset_states()
    third = model.predict_on_batch(X)
    # Keras 3.15 cannot reset stacked cells' nested states; here they reset like the others
    np.testing.assert_allclose(third, REF[name]["third"] if REF[name]["third"] is not None else REF[name]["first"],
                               rtol=1e-5, atol=1e-6)


def test_the_kept_state_is_the_last_batch_final_state_and_training_keeps_it():
    layer = layers.LSTM(3, stateful=True, return_state=True)
    model = keras.Sequential([keras.Input(batch_shape=(2, 3, 4)), layer])
    _, h, c = layer(X)
    np.testing.assert_allclose(layer.states[0].numpy(), np.asarray(h), rtol=1e-6)
    np.testing.assert_allclose(layer.states[1].numpy(), np.asarray(c), rtol=1e-6)
    assert [v.name for v in layer.states] == ["rnn_state", "rnn_state"]
    trained = keras.Sequential([keras.Input(batch_shape=(2, 3, 4)), layers.GRU(3, stateful=True), layers.Dense(1)])
    trained.compile("sgd", "mse")
    trained.fit(np.concatenate([X, X]), np.zeros((4, 1), "float32"), batch_size=2, epochs=1, shuffle=False, verbose=0)
    assert np.abs(trained.layers[0].states[0].numpy()).max() > 0  # the last batch's state stays for the next
    trained.layers[0].reset_states()
    assert np.abs(trained.layers[0].states[0].numpy()).max() == 0


def test_a_dynamic_or_wrong_batch_size_is_refused_with_what_to_do():
    with pytest.raises(ValueError, match="batch size must be static"):
        keras.Sequential([keras.Input((3, 4)), layers.LSTM(5, stateful=True)])
    with pytest.raises(ValueError, match="batch size must be static"):
        layers.SimpleRNN(2, stateful=True)(keras.Input((3, 4)))
    model = keras.Sequential([keras.Input(batch_shape=(2, 3, 4)), layers.SimpleRNN(2, stateful=True)])
    with pytest.raises(ValueError, match="stateful with batch size 2, but got a batch of 3 rows"):
        model.predict_on_batch(np.zeros((3, 3, 4), "float32"))


def test_config_and_reset_of_a_layer_that_never_ran():
    layer = layers.GRU(2, stateful=True)
    assert layer.get_config()["stateful"] is True and layer.states is None
    layer.reset_states()  # nothing kept yet: nothing to do
    assert layers.GRU.from_config(layer.get_config()).stateful is True
    with pytest.raises(AttributeError, match="must be stateful"):
        layers.Bidirectional(layers.GRU(2)).reset_states()
