"""MultiHeadAttention against outputs and attention scores frozen from TF 2.21 (Keras 3.15): self and
cross attention, key != value, masks, causal masks, output_shape, no bias; plus dropout, config,
functional-model training and bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.keras.layers._keras_reference import golden_array as _arr

from torchstrategy.keras.layers.attention import MultiHeadAttention




# Row 1 of batch 0 masks every key: TF then gives zero weights on its scores path but averages all keys on
# its fused path (no scores requested, no dropout); both are frozen below.
MASK = np.array([[[1, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]], [[1, 1, 1, 1], [0, 1, 1, 0], [1, 1, 0, 0]]], bool)

# keras.layers.MultiHeadAttention(**kwargs) on query _arr(qshape, 70 + i), value _arr(vshape, 80 + i) (None: the
# query), key _arr(kshape, 90 + i), weights _arr(w.shape, 100 + 10 * i + j) in layer.weights order:
# (kwargs, qshape, vshape, kshape, call arguments, output shape, output with return_attention_scores=True,
#  scores shape, scores, output with return_attention_scores=False).
MHA_CASES = [
    ({'num_heads': 2, 'key_dim': 3}, (2, 4, 6), None, None, [],
     (2, 4, 6), np.array([
        0.8379545, -0.0326044, -0.0211581, 0.9555519, -0.4941797, -0.2464331, 1.058583, -0.9243718,
        0.2071067, 1.54931, -0.4574063, 0.06942016, 2.004751, -1.718711, 1.659346, 0.3777727,
        -1.137011, 1.61258, 1.145449, -0.2177057, 0.2882255, 0.7141113, -0.6223142, 0.0615927,
        0.9214864, 0.5621428, 0.6234781, -0.2579543, -0.5338103, 0.5722596, 1.232856, 0.5702653,
        0.04093319, 0.8104106, -1.559495, 0.2000872, 0.5344946, 0.3219544, 0.2764155, 0.6723984,
        -1.100917, 0.2692754, 0.1212648, 0.9468421, -0.03744483, 0.2970557, -0.274227, -0.08962929], np.float32),
     (2, 2, 4, 4), np.array([
        0.1003947, 0.09268814, 0.734249, 0.07266816, 0.2664574, 0.2938822, 0.08774059, 0.3519198,
        0.1469999, 0.5511381, 0.06586754, 0.2359944, 0.1183575, 0.1034559, 0.6890563, 0.08913023,
        0.2021754, 0.1894532, 0.356888, 0.2514834, 0.2622973, 0.2725655, 0.2067603, 0.2583768,
        0.04411595, 0.5969579, 0.3109239, 0.0480024, 0.1551352, 0.2487659, 0.4067262, 0.1893726,
        0.3181822, 0.2387069, 0.2912385, 0.1518725, 0.7928357, 0.03476836, 0.1234167, 0.04897915,
        0.4547168, 0.1070777, 0.330892, 0.1073135, 0.3293095, 0.3135003, 0.2948941, 0.06229619,
        0.118149, 0.6937423, 0.1593989, 0.02870972, 0.2972066, 0.539686, 0.1158938, 0.04721362,
        0.4926832, 0.3500226, 0.06351887, 0.09377544, 0.1669052, 0.303314, 0.3842784, 0.1455024], np.float32),
     np.array([
        0.8379545, -0.03260431, -0.0211581, 0.9555518, -0.4941796, -0.2464331, 1.058583, -0.9243718,
        0.2071067, 1.54931, -0.4574063, 0.06942016, 2.004751, -1.718711, 1.659346, 0.377773,
        -1.137011, 1.61258, 1.145449, -0.2177058, 0.2882255, 0.7141114, -0.6223143, 0.06159279,
        0.9214864, 0.5621428, 0.6234782, -0.2579544, -0.5338103, 0.5722597, 1.232856, 0.5702652,
        0.04093319, 0.8104107, -1.559495, 0.2000873, 0.5344946, 0.3219544, 0.2764155, 0.6723984,
        -1.100917, 0.2692754, 0.1212648, 0.9468421, -0.03744483, 0.2970557, -0.274227, -0.08962929], np.float32)),
    ({'num_heads': 2, 'key_dim': 3, 'value_dim': 2, 'output_shape': 4},
     (2, 3, 5), (2, 4, 6), (2, 4, 7), ['attention_mask'],
     (2, 3, 4), np.array([
        -1.121177, 0.9991376, -0.5741801, 0.2778686, -0.942, 0.294068, -0.469864, 0.7662039,
        -2.608197, 1.657374, 0.7998899, -0.9357266, -0.3944145, 0.1292355, -1.289981, 1.063493,
        0.1748922, -0.03901628, -1.835131, 1.488837, -0.3883914, 0.1697857, -1.317677, 1.043448], np.float32),
     (2, 2, 3, 4), np.array([
        0.3941381, 0.2264031, 0, 0.3794588, 0, 0, 0, 0,
        1, 0, 0, 0, 0.3695912, 0.2581556, 0, 0.3722533,
        0, 0, 0, 0, 1, 0, 0, 0,
        0.4588082, 0.09069775, 0.4213054, 0.02918863, 0, 0.167674, 0.8323261, 0,
        0.7748594, 0.2251405, 0, 0, 0.1987454, 0.4645824, 0.2799782, 0.05669404,
        0, 0.2119367, 0.7880633, 0, 0.6310111, 0.3689888, 0, 0], np.float32),
     np.array([
        -1.121177, 0.9991376, -0.57418, 0.2778686, -0.1409119, 0.2626047, -1.46938, 1.197529,
        -2.608197, 1.657374, 0.7998899, -0.9357266, -0.3944145, 0.1292355, -1.289981, 1.063493,
        0.1748922, -0.03901631, -1.835131, 1.488837, -0.3883915, 0.1697856, -1.317677, 1.043448], np.float32)),
    ({'num_heads': 3, 'key_dim': 2, 'use_bias': False, 'output_shape': (2, 3)},
     (2, 4, 5), None, None, ['use_causal_mask'],
     (2, 4, 2, 3), np.array([
        -0.209927, -0.5966577, -1.091509, -0.5876318, 1.37217, 0.8770732, -0.2123071, -0.5105047,
        -1.293288, -0.6075208, 1.657361, 0.7146893, -0.1765833, -0.8553946, -0.8747934, -0.3809999,
        1.299248, 0.6692877, -0.07215999, -0.9709533, -0.7769669, -0.1795252, 1.14775, 0.6588144,
        -1.299845, 1.400485, 1.230517, -0.7891032, 0.1337448, 0.1053516, -1.309379, 1.462101,
        1.054256, -0.8157337, 0.3937689, -0.04096974, -0.822078, 1.297542, 0.4298444, -0.4176472,
        0.3077487, -0.5377635, -0.7611055, 1.248002, 0.1385182, -0.3942089, 0.4050169, -0.7234333], np.float32),
     (2, 3, 4, 4), np.array([
        1, 0, 0, 0, 0.4811602, 0.5188398, 0, 0,
        0.3040894, 0.275201, 0.4207096, 0, 0.2246457, 0.2024607, 0.3013256, 0.271568,
        1, 0, 0, 0, 0.4395692, 0.5604308, 0, 0,
        0.3489868, 0.3826691, 0.2683441, 0, 0.2682791, 0.3003047, 0.2035583, 0.2278578,
        1, 0, 0, 0, 0.502077, 0.497923, 0, 0,
        0.4269858, 0.4545843, 0.1184298, 0, 0.3784805, 0.401327, 0.1068707, 0.1133218,
        1, 0, 0, 0, 0.5711232, 0.4288769, 0, 0,
        0.3676416, 0.3666445, 0.2657139, 0, 0.2916595, 0.2896613, 0.2100591, 0.20862,
        1, 0, 0, 0, 0.5165702, 0.4834298, 0, 0,
        0.2826867, 0.2551481, 0.4621651, 0, 0.2362196, 0.2176526, 0.2842345, 0.2618934,
        1, 0, 0, 0, 0.5044705, 0.4955295, 0, 0,
        0.352579, 0.3446765, 0.3027446, 0, 0.2746022, 0.2673702, 0.2320697, 0.2259579], np.float32),
     np.array([
        -0.209927, -0.5966577, -1.091509, -0.5876318, 1.37217, 0.8770732, -0.2123071, -0.5105047,
        -1.293288, -0.6075208, 1.657361, 0.7146893, -0.1765833, -0.8553946, -0.8747934, -0.3809999,
        1.299248, 0.6692877, -0.07215999, -0.9709533, -0.7769669, -0.1795252, 1.14775, 0.6588144,
        -1.299845, 1.400485, 1.230517, -0.7891032, 0.1337448, 0.1053516, -1.309379, 1.462101,
        1.054256, -0.8157337, 0.3937689, -0.04096969, -0.822078, 1.297542, 0.4298444, -0.4176472,
        0.3077487, -0.5377635, -0.7611055, 1.248003, 0.1385182, -0.394209, 0.405017, -0.7234333], np.float32)),
    ({'num_heads': 1, 'key_dim': 4}, (2, 3, 5), (2, 4, 5), None, ['attention_mask', 'use_causal_mask'],
     (2, 3, 5), np.array([
        -0.05869967, -0.1495306, -0.9353874, -0.09339398, -0.184225, 0.538, -0.225932, -0.9898641,
        0.2462039, -0.5177281, -0.05869967, -0.1495306, -0.9353874, -0.09339398, -0.184225, 0.2724859,
        -0.2086127, -1.288985, 0.0887226, -0.3923761, 0.5319423, -0.08794558, -2.284936, 0.2951662,
        -0.3247217, 0.4788314, -0.1126462, -2.081064, 0.2529071, -0.3385706], np.float32),
     (2, 1, 3, 4), np.array([
        1, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0, 1, 0, 0, 0,
        0, 1, 0, 0, 0.2047005, 0.7952995, 0, 0], np.float32),
     np.array([
        -0.05869967, -0.1495306, -0.9353874, -0.09339398, -0.184225, 0.2719421, -0.049034, -1.975168,
        0.1493402, -0.171636, -0.05869967, -0.1495306, -0.9353874, -0.09339398, -0.184225, 0.2724859,
        -0.2086127, -1.288985, 0.0887226, -0.3923761, 0.5319423, -0.08794558, -2.284936, 0.2951662,
        -0.3247217, 0.4788314, -0.1126462, -2.081064, 0.2529071, -0.3385706], np.float32)),
]


def _case_inputs(index):
    kwargs, qshape, vshape, kshape, call_args = MHA_CASES[index][:5]
    query = _arr(qshape, 70 + index)
    value = query if vshape is None else _arr(vshape, 80 + index)
    key = None if kshape is None else torch.tensor(_arr(kshape, 90 + index))
    call = {"attention_mask": torch.tensor(MASK)} if "attention_mask" in call_args else {}
    if "use_causal_mask" in call_args:
        call["use_causal_mask"] = True
    return kwargs, torch.tensor(query), torch.tensor(value), key, call


@pytest.mark.parametrize("index", range(len(MHA_CASES)))
def test_multi_head_attention_matches_tf(index):
    kwargs, query, value, key, call = _case_inputs(index)
    _, _, _, _, _, out_shape, expected, scores_shape, expected_scores, expected_plain = MHA_CASES[index]
    layer = MultiHeadAttention(**kwargs)
    layer(query, value, key=key, **call)
    shapes = [tuple(w.shape) for w in layer.weights]
    heads, key_dim = kwargs["num_heads"], kwargs["key_dim"]
    value_dim = kwargs.get("value_dim") or key_dim
    assert shapes[0] == (query.shape[-1], heads, key_dim)  # query kernel, Keras's EinsumDense shape
    assert shapes[-2 if kwargs.get("use_bias", True) else -1][:2] == (heads, value_dim)  # attention_output kernel
    layer.set_weights([_arr(s, 100 + 10 * index + j) for j, s in enumerate(shapes)])
    out, scores = layer(query, value, key=key, return_attention_scores=True, **call)
    assert tuple(out.shape) == out_shape and tuple(scores.shape) == scores_shape
    np.testing.assert_allclose(out.detach().numpy().ravel(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(scores.detach().numpy().ravel(), expected_scores, rtol=1e-5, atol=1e-5)
    plain = layer(query, value, key=key, **call)
    np.testing.assert_allclose(plain.detach().numpy().ravel(), expected_plain, rtol=1e-5, atol=1e-5)


def test_weight_order_and_names_follow_keras():
    layer = MultiHeadAttention(2, 3, value_dim=4, output_shape=(2, 5), use_bias=True)
    layer(torch.zeros(1, 3, 6), torch.zeros(1, 4, 7), key=torch.zeros(1, 4, 8))
    assert [tuple(w.shape) for w in layer.weights] == [
        (6, 2, 3), (2, 3), (8, 2, 3), (2, 3), (7, 2, 4), (2, 4), (2, 4, 2, 5), (2, 5)]
    assert [sub.name for sub in (layer.query_dense, layer.key_dense, layer.value_dense, layer.output_dense)] == [
        "query", "key", "value", "attention_output"]
    assert layer(torch.zeros(2, 3, 6), torch.zeros(2, 4, 7), key=torch.zeros(2, 4, 8)).shape == (2, 3, 2, 5)
    with pytest.raises(ValueError, match=r"layer 'key'.*axis -1.*value 8"):  # built for an 8-wide key
        layer(torch.zeros(2, 3, 6), torch.zeros(2, 4, 7))
    assert layer.compute_output_shape((None, 3, 6), (None, 4, 7)) == (None, 3, 2, 5)


def test_causal_mask_hides_future_steps():
    layer = MultiHeadAttention(2, 4)
    x = torch.randn(2, 6, 5)
    changed = x.clone()
    changed[:, 4:] += 3.0
    out, changed_out = layer(x, x, use_causal_mask=True), layer(changed, changed, use_causal_mask=True)
    assert torch.allclose(out[:, :4], changed_out[:, :4], atol=1e-6)
    assert not torch.allclose(out[:, 4:], changed_out[:, 4:], atol=1e-3)
    _, scores = layer(x, x, use_causal_mask=True, return_attention_scores=True)
    assert torch.all(scores.triu(1) == 0) and torch.allclose(scores.sum(-1), torch.ones(2, 2, 6))


def test_dropout_only_in_training_and_scores_before_dropout():
    torch.manual_seed(0)
    layer = MultiHeadAttention(2, 4, dropout=0.5, seed=3)
    x = torch.randn(2, 5, 6)
    inference = layer(x, x)
    assert torch.equal(inference, layer(x, x, training=False))
    trained, scores = layer(x, x, training=True, return_attention_scores=True)
    assert not torch.allclose(trained, inference, atol=1e-4)
    assert torch.allclose(scores.sum(-1), torch.ones(2, 2, 5))  # the softmax itself, before dropout
    reference = MultiHeadAttention(2, 4)
    reference(x, x)
    reference.set_weights(layer.get_weights())
    assert torch.allclose(reference(x, x), inference, atol=1e-6)


def test_config_round_trip():
    layer = MultiHeadAttention(3, 2, value_dim=5, dropout=0.1, use_bias=False, output_shape=4, name="attn",
                               kernel_initializer="ones")
    config = layer.get_config()
    assert config["output_shape"] == [4] and config["value_dim"] == 5 and config["attention_axes"] is None
    clone = MultiHeadAttention.from_config(config)
    assert clone.get_config() == config
    q = torch.randn(2, 3, 4)
    out = clone(q, q)
    assert out.shape == (2, 3, 4) and len(clone.weights) == 4
    np.testing.assert_array_equal(clone.query_dense.kernel.detach().numpy(), 1.0)
    assert MultiHeadAttention(2, 3).get_config()["value_dim"] == 3  # defaults to key_dim, as Keras


def test_functional_model_trains():
    from torchstrategy import keras

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 6, 4)).astype(np.float32)
    y = x.mean(axis=1, keepdims=True).repeat(6, axis=1)[..., :2]
    inputs = keras.layers.Input((6, 4))
    attended = MultiHeadAttention(2, 4, output_shape=2, name="mha")(inputs, inputs)
    model = keras.Model(inputs, attended)
    assert model(torch.tensor(x[:2])).shape == (2, 6, 2)
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse")
    history = model.fit(x, y, batch_size=8, epochs=15, verbose=0, shuffle=False)
    losses = history.history["loss"]
    assert losses[-1] < 0.6 * losses[0], losses
    assert all(w.grad is None or w.grad.shape == w.shape for w in model.trainable_weights)
    assert len(model.trainable_weights) == 8


def test_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match="num_heads"):
        MultiHeadAttention(0, 4)
    with pytest.raises(ValueError, match="key_dim"):
        MultiHeadAttention(2, None)
    with pytest.raises(ValueError, match="value_dim"):
        MultiHeadAttention(2, 4, value_dim=-1)
    with pytest.raises(ValueError, match="attention_axes"):
        MultiHeadAttention(2, 4, attention_axes=(1, 2))
    with pytest.raises(ValueError, match="dropout"):
        MultiHeadAttention(2, 4, dropout=1.5)
    with pytest.raises(ValueError, match="use_gate"):
        MultiHeadAttention(2, 4, use_gate=True)
    assert MultiHeadAttention(2, 4, attention_axes=1).attention_axes == (1,)
    with pytest.raises(ValueError, match="`value` is missing"):
        MultiHeadAttention(2, 4)(torch.zeros(1, 3, 4))
    with pytest.raises(ValueError, match=r"must be 3-D.*\(None, 2, 3, 4\)"):
        MultiHeadAttention(2, 4)(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match="same shape except the last axis"):
        MultiHeadAttention(2, 4)(torch.zeros(1, 3, 4), torch.zeros(1, 5, 4), key=torch.zeros(1, 6, 4))
