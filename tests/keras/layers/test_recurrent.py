"""Recurrent layers (SimpleRNN, LSTM, GRU), Bidirectional, TimeDistributed and Masking against
frozen TF 2.21 outputs; mask propagation through Sequential and functional models, training, configs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torchstrategy.keras import models, optimizers
from torchstrategy.keras.functional import Input
from torchstrategy.keras.layers.core import Dense, Dropout, Embedding
from torchstrategy.keras.layers.recurrent import GRU, LSTM, Bidirectional, Masking, SimpleRNN, TimeDistributed

CUSTOM = {"SimpleRNN": SimpleRNN, "LSTM": LSTM, "GRU": GRU, "Bidirectional": Bidirectional,
          "TimeDistributed": TimeDistributed, "Masking": Masking}
UNITS = 2


def _a(values):
    return np.asarray(values, dtype=np.float32)


def _t(array):
    return torch.tensor(np.asarray(array, dtype=np.float32))


def _close(actual, expected):
    np.testing.assert_allclose(actual.detach().numpy(), expected, rtol=1e-5, atol=1e-5)


def _built(layer, inputs, weights, **call_kwargs):
    layer(inputs, **call_kwargs)
    layer.set_weights(weights)
    return layer


@pytest.mark.parametrize("tag,cls,extra", [("SimpleRNN", SimpleRNN, {}), ("LSTM", LSTM, {}), ("GRU", GRU, {}),
                                           ("GRU_ra0", GRU, {"reset_after": False})])
@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_rnn_sequences_and_states_match_tf(tag, cls, extra, backwards, masked):
    x = _t(TF["x_masked"] if masked else TF["x"])
    inputs = Masking()(x) if masked else x
    layer = _built(cls(UNITS, return_sequences=True, return_state=True, go_backwards=backwards, **extra),
                   inputs, TF[tag + "_w"])
    result = layer(inputs)
    expected = TF[f"{tag}_b{int(backwards)}_m{int(masked)}"]
    assert len(result) == len(expected) == 1 + len(layer.state_size)
    for ours, theirs in zip(result, expected):
        _close(ours, theirs)
    # return_sequences=False gives the last (unmasked) step's output: the first state here
    last = _built(cls(UNITS, go_backwards=backwards, **extra), inputs, TF[tag + "_w"])(inputs)
    _close(last, expected[1])
    if masked:  # the sequence keeps the input's mask (unreversed, as Keras); the states carry none
        assert torch.equal(result[0]._keras_mask, torch.tensor(np.abs(TF["x_masked"]).sum(-1) > 0))
        assert getattr(result[1], "_keras_mask", None) is None
        assert getattr(last, "_keras_mask", None) is None


def test_weight_names_shapes_and_defaults_follow_keras():
    x = _t(TF["x"])
    lstm, gru, simple = LSTM(5), GRU(5), SimpleRNN(5)
    for layer in (lstm, gru, simple):
        layer(x)
    assert [tuple(w.shape) for w in lstm.weights] == [(3, 20), (5, 20), (20,)]
    assert [tuple(w.shape) for w in gru.weights] == [(3, 15), (5, 15), (2, 15)]
    gru_before = GRU(5, reset_after=False)
    gru_before(x)
    assert [tuple(w.shape) for w in gru_before.weights] == [(3, 15), (5, 15), (15,)]
    assert [tuple(w.shape) for w in simple.weights] == [(3, 5), (5, 5), (5,)]
    assert [name for name, _ in lstm.named_parameters()] == ["cell.kernel", "cell.recurrent_kernel", "cell.bias"]
    bias = lstm.get_weights()[2]  # unit_forget_bias: forget gate (second quarter) starts at one
    np.testing.assert_array_equal(bias, np.r_[np.zeros(5), np.ones(5), np.zeros(10)])
    recurrent = lstm.get_weights()[1]  # orthogonal recurrent_initializer: (5, 20) has orthonormal rows
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(5), atol=1e-5)
    assert np.abs(lstm.get_weights()[0]).max() <= np.sqrt(6 / (3 + 20))  # glorot_uniform on (3, 20)


def test_lstm_initial_state_matches_tf():
    x = _t(TF["x"])
    h0, c0 = (_t(s) for s in TF["init_state"])
    layer = _built(LSTM(UNITS, return_sequences=True), x, TF["LSTM_w"], initial_state=[h0, c0])
    _close(layer(x, initial_state=[h0, c0]), TF["LSTM_init"])
    with pytest.raises(ValueError, match=r"has 2 state\(s\) but initial_state has 1"):
        layer(x, initial_state=[h0])
    with pytest.raises(ValueError, match=r"shape \(batch, 2\)"):
        layer(x, initial_state=[h0[:, :1], c0])


def test_embedding_mask_zero_feeds_lstm_last_unmasked_step():
    ids = torch.tensor(TF["ids"])
    embedding = Embedding(5, 3, mask_zero=True)
    embedded = embedding(ids)
    embedding.set_weights([TF["emb_w"]])
    embedded = embedding(ids)
    assert torch.equal(embedded._keras_mask, ids != 0)
    layer = _built(LSTM(UNITS), embedded, TF["LSTM_w"])
    _close(layer(embedded), TF["emb_lstm"])
    # without the mask the padded steps change the result
    assert not np.allclose(layer(embedded, mask=torch.ones_like(ids, dtype=torch.bool)).detach().numpy(),
                           TF["emb_lstm"], atol=1e-3)


@pytest.mark.parametrize("mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_merge_modes_match_tf(mode):
    inputs = Masking()(_t(TF["x_masked"]))
    layer = _built(Bidirectional(LSTM(UNITS, return_sequences=True), merge_mode=mode), inputs, TF["bi_w"])
    result = layer(inputs)
    expected = TF[f"bi_{mode}"]
    mask = torch.tensor(np.abs(TF["x_masked"]).sum(-1) > 0)
    if mode is None:
        assert isinstance(result, list) and len(result) == 2
        for ours, theirs in zip(result, expected):
            _close(ours, theirs)
            assert torch.equal(ours._keras_mask, mask)
    else:
        _close(result, expected)
        assert torch.equal(result._keras_mask, mask)
    # Keras: zeros at the masked steps of both directions' sequences
    flat = result if isinstance(result, list) else [result]
    assert all(float(t.detach()[~mask].abs().max()) == 0.0 for t in flat)
    names = [w.shape for w in layer.weights]
    assert names == [(3, 8), (2, 8), (8,)] * 2


def test_bidirectional_gru_return_state_matches_tf():
    inputs = Masking()(_t(TF["x_masked"]))
    layer = _built(Bidirectional(GRU(UNITS, return_state=True)), inputs, TF["bi_gru_w"])
    result = layer(inputs)
    assert len(result) == 3
    for ours, theirs in zip(result, TF["bi_gru_state"]):
        _close(ours, theirs)
    assert layer.forward_layer.name.startswith("forward_") and layer.backward_layer.go_backwards


def test_bidirectional_bad_arguments():
    with pytest.raises(ValueError, match="Invalid merge_mode 'max'"):
        Bidirectional(LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="go_backwards` must be the opposite"):
        Bidirectional(LSTM(2), backward_layer=LSTM(2))
    with pytest.raises(ValueError, match="needs a recurrent layer"):
        Bidirectional(Dense(2))


def test_time_distributed_dense_matches_tf_and_passes_mask():
    x = _t(TF["x"])
    layer = _built(TimeDistributed(Dense(4)), x, TF["td_w"])
    _close(layer(x), TF["td"])
    masked = Masking()(_t(TF["x_masked"]))
    assert torch.equal(layer(masked)._keras_mask, masked._keras_mask)
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        TimeDistributed(Dense(2))(torch.ones(2, 3))


def test_masking_zeroes_and_masks_steps():
    out = Masking(mask_value=0.0)(_t(TF["x_masked"]))
    np.testing.assert_array_equal(out.numpy(), TF["x_masked"])
    assert out._keras_mask.tolist() == [[True, True, False, True], [False, True, True, False]]
    out = Masking(mask_value=2.0)(torch.tensor([[[2.0, 2.0], [2.0, 1.0]]]))
    assert out._keras_mask.tolist() == [[False, True]] and out[0, 0].abs().sum() == 0


def _sequence_model_weights():
    return TF["LSTM_w"] + TF["model_dense_w"]


def test_functional_model_propagates_masks_like_tf():
    inputs = Input(shape=(4, 3))
    hidden = LSTM(UNITS, return_sequences=True)(Masking()(inputs))
    model = models.Model(inputs, TimeDistributed(Dense(4))(hidden))
    model.set_weights(_sequence_model_weights())
    _close(model(_t(TF["x_masked"])), TF["model_seq"])


def test_sequential_model_propagates_masks_like_tf():
    model = models.Sequential([Masking(input_shape=(4, 3)), LSTM(UNITS, return_sequences=True),
                               TimeDistributed(Dense(4))])
    model(_t(TF["x_masked"]))
    model.set_weights(_sequence_model_weights())
    _close(model(_t(TF["x_masked"])), TF["model_seq"])
    unmasked = models.Sequential([LSTM(UNITS, return_sequences=True), TimeDistributed(Dense(4))])
    unmasked(_t(TF["x_masked"]))
    unmasked.set_weights(_sequence_model_weights())
    assert not np.allclose(unmasked(_t(TF["x_masked"])).detach().numpy(), TF["model_seq"], atol=1e-3)


def test_a_layer_without_masking_support_drops_the_mask():
    from torchstrategy.keras.layers.core import Flatten

    out = Flatten()(Masking()(_t(TF["x_masked"])))  # Keras's Flatten has supports_masking False
    assert getattr(out, "_keras_mask", None) is None


@pytest.mark.parametrize("cls", [SimpleRNN, LSTM, GRU])
def test_dropout_only_in_training(cls):
    torch.manual_seed(0)
    x = _t(TF["x"])
    layer = cls(4, dropout=0.5, recurrent_dropout=0.5, return_sequences=True)
    inference = layer(x)
    torch.testing.assert_close(layer(x), inference)  # no randomness outside training
    trained = layer(x, training=True)
    assert trained.shape == inference.shape and not torch.allclose(trained, inference)
    only_inputs = cls(4, dropout=0.5, seed=3)
    only_inputs(x)
    assert not torch.allclose(only_inputs(x, training=True), only_inputs(x))
    with pytest.raises(ValueError, match="between 0 and 1"):
        cls(4, dropout=1.5)


def test_lstm_model_fit_reduces_loss():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 6, 3)).astype(np.float32)
    y = x.sum(axis=(1, 2))[:, None].astype(np.float32) / 6
    model = models.Sequential([LSTM(8, input_shape=(6, 3)), Dense(1)])
    model.compile(optimizer=optimizers.Adam(learning_rate=0.02), loss="mse")
    history = model.fit(x, y, epochs=10, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0]
    weights = model.trainable_weights
    grads = torch.autograd.grad(model(_t(x)).pow(2).mean(), weights)  # every LSTM weight gets a gradient
    assert len(grads) == 5 and all(float(g.abs().sum()) > 0 for g in grads)


@pytest.mark.parametrize("make", [
    lambda: LSTM(3, return_sequences=True, go_backwards=True, dropout=0.1, unit_forget_bias=False, name="l"),
    lambda: GRU(3, reset_after=False, recurrent_activation="hard_sigmoid", return_state=True),
    lambda: SimpleRNN(3, activation="relu", use_bias=False),
    lambda: Bidirectional(LSTM(3, return_sequences=True), merge_mode="sum"),
    lambda: TimeDistributed(Dense(3, activation="relu")),
    lambda: Masking(mask_value=-1.0),
])
def test_config_round_trip(make):
    from torchstrategy.keras import saving

    layer = make()
    x = _t(TF["x"])
    layer(x)
    entry = saving.serialize_layer(layer)
    clone = saving.deserialize_layer(entry, custom_objects=CUSTOM)
    clone(x)
    assert type(clone) is type(layer)
    config, clone_config = layer.get_config(), clone.get_config()
    config.pop("name"), clone_config.pop("name")
    assert _strip_names(clone_config) == _strip_names(config)
    clone.set_weights(layer.get_weights())
    first, second = layer(x), clone(x)
    for a, b in zip(first if isinstance(first, list) else [first], second if isinstance(second, list) else [second]):
        torch.testing.assert_close(a, b)


def _strip_names(config):
    if isinstance(config, dict):
        return {k: _strip_names(v) for k, v in config.items() if k != "name"}
    if isinstance(config, list):
        return [_strip_names(v) for v in config]
    return config


def test_save_and_load_model_with_lstm(tmp_path):
    model = models.Sequential([Embedding(6, 3, mask_zero=True, input_shape=(4,)), LSTM(UNITS), Dense(1)])
    ids = torch.tensor(TF["ids"])
    expected = model(ids)
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = models.load_model(path, custom_objects=CUSTOM)
    torch.testing.assert_close(loaded(ids), expected)


def test_save_and_load_functional_model_with_wrappers(tmp_path):
    inputs = Input(shape=(4, 3))
    hidden = Bidirectional(GRU(UNITS, return_sequences=True), merge_mode="ave")(Masking()(inputs))
    model = models.Model(inputs, TimeDistributed(Dense(1))(hidden))
    x = _t(TF["x_masked"])
    expected = model(x)
    path = str(tmp_path / "functional.keras")
    model.save(path)
    loaded = models.load_model(path, custom_objects=CUSTOM)
    torch.testing.assert_close(loaded(x), expected)
    assert len(loaded.get_weights()) == 8


# TF 2.21 (Keras 3) reference values, generated with tensorflow-cpu 2.21.0; inputs and weights are
# 2-decimal numbers, outputs rounded to 7 decimals.
TF = {
    'x': _a([[[0.0, 0.3, -0.27], [-0.89, -0.45, -0.99], [0.06, 1.34, -0.49], [-0.62, 0.49, 0.36]], [[0.11, -0.93,
        -0.03], [0.7, -1.34, -0.46], [-1.9, -1.29, -1.84], [-0.24, -1.27, 0.27]]]),
    'x_masked': _a([[[0.0, 0.3, -0.27], [-0.89, -0.45, -0.99], [0.0, 0.0, 0.0], [-0.62, 0.49, 0.36]], [[0.0, 0.0,
        0.0], [0.7, -1.34, -0.46], [-1.9, -1.29, -1.84], [0.0, 0.0, 0.0]]]),
    'SimpleRNN_w': [_a([[-2.52, -0.54], [-0.05, 0.11], [-1.53, -0.48]]), _a([[-0.98, -0.81], [1.0599999, -0.81]]),
        _a([0.16, -0.19])],
    'SimpleRNN_b0_m0': [_a([[[0.5065664, -0.0273931], [0.9978386, 0.3168752], [0.0494654, -0.7185875], [0.324726,
        0.5138072]], [[-0.0247949, -0.3250648], [-0.8189002, -0.2081279], [1.0, 0.9839699], [0.4448073,
        -0.9592727]]]), _a([[0.324726, 0.5138072], [0.4448073, -0.9592727]])],
    'SimpleRNN_b0_m1': [_a([[[0.5065664, -0.0273931], [0.9978386, 0.3168752], [0.9978386, 0.3168752], [0.4661231,
        -0.7775]], [[0.0, 0.0], [-0.6821904, -0.4578598], [1.0, 0.9866341], [1.0, 0.9866341]]]), _a([[0.4661231,
        -0.7775], [1.0, 0.9866341]])],
    'SimpleRNN_b1_m0': [_a([[[0.8167911, 0.0258942], [-0.0813275, -0.4795311], [0.998219, 0.8244629], [0.4249979,
        -0.9058276]], [[0.3928789, -0.3182512], [0.9999987, 0.9081473], [-0.6913632, -0.9667603], [-0.355766,
        0.764011]]]), _a([[0.4249979, -0.9058276], [-0.355766, 0.764011]])],
    'SimpleRNN_b1_m1': [_a([[[0.8167911, 0.0258942], [0.8167911, 0.0258942], [0.9964563, 0.0337121], [-0.3650434,
        -0.6972027]], [[0.0, 0.0], [0.9999997, 0.9181792], [-0.6857718, -0.9672874], [-0.6857718, -0.9672874]]]),
        _a([[-0.3650434, -0.6972027], [-0.6857718, -0.9672874]])],
    'LSTM_w': [_a([[1.36, -1.55, 0.86, 0.12, -0.64, 2.0, 0.76, -1.2], [0.07, 0.58, -0.19, 0.68, -0.07, 0.67,
        1.4400001, -0.68], [0.2, -0.46, 0.13, -1.1900001, -0.58, -0.2, 0.9, 1.15]]), _a([[-1.3200001, -0.79, 0.65,
        -1.99, -0.46, -0.1, 1.26, 0.69], [-0.33, -0.37, -0.25, 1.52, -0.43, -0.3, 0.35, -0.12]]), _a([-0.03, 0.88,
        -0.58, -0.11, 0.11, 0.06, -1.23, 0.08])],
    'LSTM_b0_m0': [_a([[[0.03029, 0.0900315], [0.0056363, -0.356497], [0.1419478, 0.0472908], [0.0442013,
        -0.3624142]], [[0.0046593, -0.1111249], [0.0035901, 0.0528002], [0.0001063, -0.5338139], [0.0078371,
        -0.4604298]]]), _a([[0.0442013, -0.3624142], [0.0078371, -0.4604298]]), _a([[0.1158783, -0.5441598],
        [0.1998394, -0.6224212]])],
    'LSTM_b0_m1': [_a([[[0.03029, 0.0900315], [0.0056363, -0.356497], [0.0056363, -0.356497], [0.0550161,
        -0.4854367]], [[0.0, 0.0], [0.0006964, 0.0731028], [9.27e-05, -0.5177281], [9.27e-05, -0.5177281]]]),
        _a([[0.0550161, -0.4854367], [9.27e-05, -0.5177281]]), _a([[0.1780069, -0.816023], [0.0440692, -0.8438724]])],
    'LSTM_b1_m0': [_a([[[0.0275802, -0.4010902], [0.1294419, 0.0612008], [0.0067093, -0.3496143], [0.0602289,
        -0.0006047]], [[0.0036995, -0.392129], [0.0001037, -0.6555653], [0.008873, -0.0005299], [0.0123747,
        -0.1115091]]]), _a([[0.0602289, -0.0006047], [0.0123747, -0.1115091]]), _a([[0.2568851, -0.001496],
        [0.1648483, -0.1775528]])],
    'LSTM_b1_m1': [_a([[[0.0275802, -0.4010902], [0.0275802, -0.4010902], [0.0054691, -0.4933574], [0.0662043,
        -0.0602392]], [[0.0, 0.0], [8.95e-05, -0.5680347], [0.0078797, 0.0120731], [0.0078797, 0.0120731]]]),
        _a([[0.0662043, -0.0602392], [0.0078797, 0.0120731]]), _a([[0.2958461, -0.1486683], [0.2122696, 0.0285347]])],
    'GRU_w': [_a([[-1.29, 0.35, -1.6900001, -2.04, -0.3, -0.9], [0.16, 2.24, -0.83, -0.62, 0.21, 0.49], [-0.18, -0.21,
        0.7, 0.52, -1.03, -0.08]]), _a([[0.04, -1.05, 0.26, -0.86, 0.97, 0.19], [0.09, -0.59, -0.12, -2.0, -1.13,
        0.36]]), _a([[-0.2, -1.11, -0.01, -0.44, 1.17, 0.65], [-0.02, 0.67, -0.34, 1.05, -0.01, 0.58]])],
    'GRU_b0_m0': [_a([[[0.4812219, 0.3501839], [0.6081632, 0.8994887], [0.7717347, 0.8946521], [0.7549953,
        0.9300621]], [[0.4661636, 0.437557], [0.7322291, -0.4034641], [0.7555454, 0.9632183], [0.5657436,
        0.5503684]]]), _a([[0.7549953, 0.9300621], [0.5657436, 0.5503684]])],
    'GRU_b0_m1': [_a([[[0.4812219, 0.3501839], [0.6081632, 0.8994887], [0.6081632, 0.8994887], [0.6280017,
        0.9313838]], [[0.0, 0.0], [0.6360779, -0.3154849], [0.6676472, 0.9639551], [0.6676472, 0.9639551]]]),
        _a([[0.6280017, 0.9313838], [0.6676472, 0.9639551]])],
    'GRU_b1_m0': [_a([[[0.2824979, 0.3923038], [0.6112344, 0.4438267], [0.7045032, 0.9154068], [0.7946836, 0.779653]],
        [[0.3229582, 0.6061595], [0.3776832, 0.9856513], [0.6391393, -0.4571213], [0.8214718, 0.4284423]]]),
        _a([[0.7946836, 0.779653], [0.8214718, 0.4284423]])],
    'GRU_b1_m1': [_a([[[0.2824979, 0.3923038], [0.2824979, 0.3923038], [0.458545, 0.8935897], [0.6664118, 0.7893716]],
        [[0.0, 0.0], [0.086395, 0.9591514], [0.546032, -0.4353827], [0.546032, -0.4353827]]]), _a([[0.6664118,
        0.7893716], [0.546032, -0.4353827]])],
    'GRU_ra0_w': [_a([[0.13, -1.54, 1.25, 1.4400001, -0.07, -0.27], [-0.16, -0.98, 1.1, -0.54, -0.05, -0.79], [-0.63,
        -1.28, 1.26, -0.15, 0.97, 0.01]]), _a([[-0.69, -0.33, -0.56, 0.01, -0.38, -0.3], [-1.38, -0.81, 1.65, -0.67,
        -1.05, 0.34]]), _a([-2.1300001, 0.85, -1.75, 0.76, -0.85, 0.78])],
    'GRU_ra0_b0_m0': [_a([[[-0.7140764, 0.1424019], [-0.894035, 0.1551029], [-0.8705808, 0.0246651], [-0.4434393,
        0.1559823]], [[-0.6003786, 0.147782], [-0.825694, 0.2642757], [-0.9369769, 0.2646904], [-0.6309651,
        0.3331986]]]), _a([[-0.4434393, 0.1559823], [-0.6309651, 0.3331986]])],
    'GRU_ra0_b0_m1': [_a([[[-0.7140764, 0.1424019], [-0.894035, 0.1551029], [-0.894035, 0.1551029], [-0.4608958,
        0.2675094]], [[0.0, 0.0], [-0.7042415, 0.14655], [-0.8941922, 0.1470067], [-0.8941922, 0.1470067]]]),
        _a([[-0.4608958, 0.2675094], [-0.8941922, 0.1470067]])],
    'GRU_ra0_b1_m0': [_a([[[-0.4142901, 0.1514951], [-0.8293604, -0.0250927], [-0.9064353, -0.0120514], [-0.8050396,
        0.1135603]], [[-0.4184118, 0.1021324], [-0.8174087, 0.1026423], [-0.8599333, 0.2147519], [-0.7671854,
        0.3197592]]]), _a([[-0.8050396, 0.1135603], [-0.7671854, 0.3197592]])],
    'GRU_ra0_b1_m1': [_a([[[-0.4142901, 0.1514951], [-0.4142901, 0.1514951], [-0.846938, 0.1654176], [-0.8224653,
        0.2697694]], [[0.0, 0.0], [-0.722177, 0.0006013], [-0.8170146, 0.1203349], [-0.8170146, 0.1203349]]]),
        _a([[-0.8224653, 0.2697694], [-0.8170146, 0.1203349]])],
    'init_state': [_a([[1.41, -1.45], [-0.21, -0.63]]), _a([[-1.76, 0.73], [-0.02, 0.07]])],
    'LSTM_init': _a([[[-0.4452518, 0.2305904], [0.0015518, -0.2593225], [0.1172942, 0.0582957], [0.0394389,
        -0.3451376]], [[0.0128633, -0.0402505], [0.0080438, 0.0648734], [0.0001264, -0.5253021], [0.0079363,
        -0.4595246]]]),
    'ids': np.array([[1, 2, 3, 0], [4, 0, 2, 0]]),
    'emb_w': _a([[-0.75, 0.45, -0.54], [-0.14, -1.11, -1.22], [1.34, -0.51, 0.29], [-0.03, -0.44, -0.51], [0.63, -0.3,
        -0.15]]),
    'emb_lstm': _a([[0.0072661, -0.0473223], [-0.2051705, 0.0867382]]),
    'bi_w': [_a([[-0.14, 0.54, 0.78, 0.83, 0.92, -0.46, 1.51, -1.25], [0.86, 0.49, 0.87, 1.88, 1.48, -1.15,
        -1.6900001, 0.82], [-1.02, -0.01, 0.84, -1.64, -2.1099999, 0.26, 0.04, -0.25]]), _a([[0.04, -0.86, -1.51,
        -0.17, -0.97, -1.64, 0.51, -0.06], [0.41, -0.99, -0.66, -1.0, -0.89, 0.2, -0.78, 0.36]]), _a([0.02, 1.1799999,
        0.68, 0.38, -0.56, -1.38, 0.95, 0.97]), _a([[0.74, -0.08, 0.08, -0.29, 1.15, -0.02, -2.2, -0.69], [-1.97,
        -3.25, -0.53, 1.33, 0.05, -1.17, -0.94, 1.13], [0.16, 0.05, -0.05, 0.04, 0.81, 0.55, 0.22, -1.04]]),
        _a([[0.51, -0.68, 1.09, -1.27, -0.14, -0.01, -1.3200001, 1.72], [1.46, -0.46, 0.77, 0.38, -2.6099999, 0.25,
        -0.06, 0.08]]), _a([0.34, 2.03, -1.39, 0.89, -0.09, -0.01, -1.45, -0.46])],
    'bi_concat': _a([[[0.15975, -0.4965696, -0.0099243, -0.1930562], [0.1809803, -0.6788421, -0.3367531, -0.1129999],
        [0.0, 0.0, 0.0, 0.0], [-0.0428856, -0.7855755, -0.0456865, -0.1174085]], [[0.0, 0.0, 0.0, 0.0], [-0.2251063,
        -0.0560361, -0.1584978, 0.0370024], [-0.0311591, 0.2193246, -0.6254678, 0.3517463], [0.0, 0.0, 0.0, 0.0]]]),
    'bi_sum': _a([[[0.1498257, -0.6896258], [-0.1557728, -0.791842], [0.0, 0.0], [-0.0885721, -0.902984]], [[0.0,
        0.0], [-0.3836041, -0.0190337], [-0.6566269, 0.5710709], [0.0, 0.0]]]),
    'bi_mul': _a([[[-0.0015854, 0.0958658], [-0.0609457, 0.0767091], [0.0, 0.0], [0.0019593, 0.0922333]], [[0.0, 0.0],
        [0.0356789, -0.0020735], [0.019489, 0.0771466], [0.0, 0.0]]]),
    'bi_ave': _a([[[0.0749129, -0.3448129], [-0.0778864, -0.395921], [0.0, 0.0], [-0.0442861, -0.451492]], [[0.0,
        0.0], [-0.1918021, -0.0095169], [-0.3283135, 0.2855355], [0.0, 0.0]]]),
    'bi_None': _a([[[[0.15975, -0.4965696], [0.1809803, -0.6788421], [0.0, 0.0], [-0.0428856, -0.7855755]], [[0.0,
        0.0], [-0.2251063, -0.0560361], [-0.0311591, 0.2193246], [0.0, 0.0]]], [[[-0.0099243, -0.1930562],
        [-0.3367531, -0.1129999], [0.0, 0.0], [-0.0456865, -0.1174085]], [[0.0, 0.0], [-0.1584978, 0.0370024],
        [-0.6254678, 0.3517463], [0.0, 0.0]]]]),
    'bi_gru_w': [_a([[0.92, 0.67, 0.11, 0.22, -0.25, -0.2], [0.05, 1.51, 0.56, -0.06, -0.58, -0.63], [1.6, 0.51, 0.07,
        -0.35, -1.11, -0.07]]), _a([[0.87, -0.39, -0.23, -0.22, 0.11, -1.59], [-0.24, -0.85, 0.88, -0.77, 0.58,
        1.52]]), _a([[-1.08, -0.27, -0.18, 1.1900001, 0.33, -0.01], [1.53, -0.56, -0.39, -1.8200001, 1.5700001,
        0.96]]), _a([[-1.11, 1.28, -0.91, 1.08, 1.52, 0.26], [0.55, 1.95, -0.2, -0.59, -1.35, 0.04], [1.48, 0.96,
        -0.94, -0.86, -0.5, 0.29]]), _a([[-0.21, 0.21, 0.3, -0.3, -0.04, 0.21], [-0.08, 0.5, 1.87, 0.59, 0.06,
        -1.6900001]]), _a([[-0.31, -0.6, 0.19, -0.0, -0.99, 0.46], [2.02, -0.26, -0.2, -1.04, 0.32, -1.25]])],
    'bi_gru_state': [_a([[0.830329, 0.0267589, -0.3322254, 0.0447756], [0.9901315, 0.9358324, 0.454995, 0.3846073]]),
        _a([[0.830329, 0.0267589], [0.9901315, 0.9358324]]), _a([[-0.3322254, 0.0447756], [0.454995, 0.3846073]])],
    'td_w': [_a([[0.39, -1.95, -1.41, 0.85], [0.71, -0.15, -1.71, -0.37], [-0.68, 0.64, 2.26, 0.22]]), _a([-0.78,
        -1.17, -0.06, -0.18])],
    'td': _a([[[-0.3834, -1.3878, -1.1832, -0.3504], [-0.7733999, -0.0006, -0.273, -0.9878001], [0.528, -1.8016,
        -3.5434, -0.7326], [-0.9187, 0.1959, 0.7899, -0.8091]], [[-1.377, -1.2642, 1.3074001, 0.251], [-1.1456,
        -2.6283998, 0.2048001, 0.8096001], [-1.1856998, 1.5509003, 0.6665, -1.7225001], [-1.9589, -0.3386999,
        3.0602999, 0.1453]]]),
    'model_dense_w': [_a([[-1.15, 0.12, -1.15, 1.11], [1.0599999, 1.08, -0.47, 0.51]]), _a([-0.13, -0.39, -0.34,
        -1.3])],
    'model_seq': _a([[[-0.0694001, -0.2891312, -0.4171482, -1.2204621], [-0.5143687, -0.7743405, -0.1789282,
        -1.4755571], [-0.5143687, -0.7743405, -0.1789282, -1.4755571], [-0.7078314, -0.9076697, -0.1751133,
        -1.4865048]], [[-0.13, -0.39, -0.34, -1.3], [-0.0533119, -0.3109654, -0.3751591, -1.2619445], [-0.6788985,
        -0.9491353, -0.0967744, -1.5639384], [-0.6788985, -0.9491353, -0.0967744, -1.5639384]]]),
}


def test_core_layers_pass_the_mask_on_in_training_too():
    import torchstrategy as tf

    ids = torch.tensor([[3, 1, 0, 0], [2, 0, 0, 0]])
    embedded = tf.keras.layers.Embedding(5, 3, mask_zero=True)(ids)
    for layer in (tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(2), tf.keras.layers.Activation("relu"),
                  tf.keras.layers.LayerNormalization()):
        out = layer(embedded, training=True)
        assert torch.equal(out._keras_mask, ids != 0), type(layer).__name__
    flat = tf.keras.layers.Flatten()(embedded)  # Keras's Flatten does not support masking: the mask ends there
    assert getattr(flat, "_keras_mask", None) is None


def test_constructor_arguments_bind_by_position_in_keras_order():
    # Keras 3.15: LSTM(units, activation, recurrent_activation, use_bias, ...), GRU(... reset_after, use_cudnn)
    lstm = LSTM(3, "relu", "hard_sigmoid", False)
    assert (lstm.cell.activation.__name__, lstm.cell.recurrent_activation.__name__, lstm.cell.use_bias) == \
        ("relu", "hard_sigmoid", False)
    lstm(torch.ones(2, 4, 5))
    assert [w.path.split("/")[-1] for w in lstm.weights] == ["kernel", "recurrent_kernel"]
    gru = GRU(2, reset_after=False, use_cudnn=False, zero_output_for_mask=True)
    assert gru.cell.reset_after is False and gru.zero_output_for_mask is True
    simple = SimpleRNN(2, "relu", False)
    assert simple.cell.activation.__name__ == "relu" and simple.cell.use_bias is False
    with pytest.raises(TypeError):
        LSTM(2, not_an_argument=1)


@pytest.mark.parametrize("merge_mode", ["concat", "sum", None])
@pytest.mark.parametrize("return_state", [False, True])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_compute_output_shape_matches_the_outputs(merge_mode, return_state, return_sequences):
    x = torch.ones(2, 5, 3)
    for layer in (LSTM(4, return_sequences=return_sequences, return_state=return_state),
                  Bidirectional(GRU(4, return_sequences=return_sequences, return_state=return_state),
                                merge_mode=merge_mode)):
        out = layer(x)
        flat = out if isinstance(out, list) else [out]
        shapes = layer.compute_output_shape((2, 5, 3))
        shapes = list(shapes) if isinstance(shapes, (list, tuple)) and isinstance(shapes[0], (list, tuple)) \
            else [shapes]
        flat_shapes = [s for shape in shapes for s in (shape if isinstance(shape, list) else [shape])]
        assert [tuple(t.shape) for t in flat] == [tuple(s) for s in flat_shapes], layer
def test_rnn_layers_and_cells_take_keras_arguments_in_keras_order():
    # Keras 3.15: the second positional argument of LSTM/GRU/SimpleRNN (and their cells) is `activation`,
    # and the cell arguments (dropout, unit_forget_bias, reset_after, seed ...) are named parameters
    from torchstrategy.keras import layers as kl

    lstm = kl.LSTM(4, "relu", "hard_sigmoid", dropout=0.25, unit_forget_bias=False, seed=3, return_sequences=True)
    assert lstm.cell.activation.__name__ == "relu" and lstm.cell.recurrent_activation.__name__ == "hard_sigmoid"
    assert (lstm.cell.dropout, lstm.cell.unit_forget_bias, lstm.return_sequences) == (0.25, False, True)
    assert tuple(lstm(torch.ones(2, 3, 5)).shape) == (2, 3, 4)
    gru = kl.GRU(3, "relu", reset_after=False, zero_output_for_mask=True)
    assert (gru.cell.activation.__name__, gru.cell.reset_after, gru.zero_output_for_mask) == ("relu", False, True)
    assert kl.SimpleRNN(2, "relu").cell.activation.__name__ == "relu"
    assert kl.LSTMCell(2, "relu", unit_forget_bias=False).unit_forget_bias is False
    assert kl.GRUCell(2, "relu", reset_after=False).reset_after is False
    assert kl.SimpleRNNCell(2, "relu", use_bias=False).use_bias is False
