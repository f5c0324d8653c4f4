"""keras.layers.RNN over our cells (LSTM, GRU backwards with states, stacked cells) against Keras 3.15 outputs
frozen in keras_layers_reference.json; a custom cell against NumPy; masks; StackedRNNCells; configs; errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("RNN"))
def test_matches_keras(case_id):
    check_case(case_id)


class MinimalCell(layers.Layer):
    """Keras's documented example cell: h_t = x_t @ kernel + h_{t-1} @ recurrent_kernel."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units))
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, self.units))

    def call(self, inputs, states):
        prev = states[0]
        output = inputs @ self.kernel + prev @ self.recurrent_kernel
        return output, [output]


def test_custom_cell_against_numpy_with_mask():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4, 3)).astype(np.float32)
    mask = np.array([[1, 1, 0, 1], [1, 0, 0, 0]], bool)
    layer = layers.RNN(MinimalCell(2), return_sequences=True)
    out = layer(torch.from_numpy(x), mask=torch.from_numpy(mask)).detach().numpy()
    kernel, recurrent = [w for w in layer.get_weights()]
    h, prev_out, expected = np.zeros((2, 2), np.float32), np.zeros((2, 2), np.float32), []
    for t in range(4):
        new = x[:, t] @ kernel + h @ recurrent
        keep = mask[:, t:t + 1]
        h = np.where(keep, new, h)
        prev_out = np.where(keep, new, prev_out)  # masked steps repeat the previous output
        expected.append(prev_out)
    np.testing.assert_allclose(out, np.stack(expected, 1), rtol=1e-5, atol=1e-6)


def test_rnn_of_lstm_cell_equals_lstm_layer():
    x = torch.randn(3, 5, 4)
    lstm = layers.LSTM(3, return_sequences=True, return_state=True)
    expected = lstm(x)
    rnn = layers.RNN(layers.LSTMCell(3), return_sequences=True, return_state=True)
    rnn(x)
    rnn.set_weights(lstm.get_weights())
    for got, want in zip(rnn(x), expected):
        torch.testing.assert_close(got, want)


def test_initial_state_and_output_shape():
    x = torch.randn(2, 3, 4)
    h0 = torch.randn(2, 5)
    layer = layers.RNN(layers.SimpleRNNCell(5), return_state=True)
    out, state = layer(x, initial_state=[h0])
    assert torch.equal(out, state)
    assert layer.compute_output_shape((None, 3, 4)) == ((None, 5), (None, 5))
    stacked = layers.RNN([layers.SimpleRNNCell(3), layers.LSTMCell(2)], return_sequences=True)
    assert stacked(x).shape == (2, 3, 2)
    assert stacked.compute_output_shape((None, 3, 4)) == (None, 3, 2)


def test_bad_cells():
    with pytest.raises(ValueError, match="`call` method"):
        layers.RNN(object())
    with pytest.raises(ValueError, match="`state_size`"):
        layers.StackedRNNCells([layers.Dense(2)])


def test_config_round_trip():
    layer = layers.RNN([layers.GRUCell(2), layers.LSTMCell(3)], return_sequences=True, go_backwards=True)
    config = layer.get_config()
    assert config["cell"]["class_name"] == "StackedRNNCells"
    clone = layers.RNN.from_config(config)
    assert [type(c).__name__ for c in clone.cell.cells] == ["GRUCell", "LSTMCell"]
    assert clone.return_sequences and clone.go_backwards
    x = torch.randn(2, 3, 4)
    layer(x), clone(x)
    clone.set_weights(layer.get_weights())
    torch.testing.assert_close(clone(x), layer(x))


class ScaledCell(MinimalCell):
    """MinimalCell whose call takes an extra keyword, to see StackedRNNCells hand it on."""

    def call(self, inputs, states, scale=1.0):
        output, new_states = super().call(inputs, states)
        return output * scale, [state * scale for state in new_states]


def test_stacked_cells_hand_extra_call_keywords_to_every_cell():
    # Keras 3.15: StackedRNNCells.call(inputs, states, training=False, **kwargs) forwards kwargs to each cell.
    torch.manual_seed(0)
    stacked = layers.StackedRNNCells([ScaledCell(3), ScaledCell(2)])
    x = torch.randn(4, 5)
    states = [[torch.zeros(4, 3)], [torch.zeros(4, 2)]]
    plain, _ = stacked(x, states)
    scaled, new_states = stacked(x, states, scale=2.0)
    # the first cell's output doubles, which doubles the second's pre-scale output, then it doubles again
    torch.testing.assert_close(scaled, plain * 4.0)
    assert new_states[0][0].shape == (4, 3)
