"""keras.RematScope and keras.remat (keras/rematerialization.py): which layers recompute in backward
for each mode (counted by their calls during backward), nesting, creation-time modes, gradients, bad input."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy import _context

layers = tf.keras.layers


def _calls_during_backward(model, x, watched):
    """How often each watched layer ran during backward only, i.e. how often it was recomputed."""
    counts = {layer.name: 0 for layer in watched}
    handles = [layer.register_forward_pre_hook(lambda module, args: counts.__setitem__(
        module.name, counts[module.name] + 1)) for layer in watched]
    out = model(x, training=True)
    for name in counts:
        counts[name] = 0
    out.square().sum().backward()
    for handle in handles:
        handle.remove()
    return counts


def test_scopes_nest_and_restore_the_outer_mode():
    assert _context.keras_scope("remat") is None
    with tf.keras.RematScope(mode="full") as outer:
        assert _context.keras_scope("remat").mode == "full"
        with tf.keras.RematScope(mode="larger_than", output_size_threshold=10):
            mode = _context.keras_scope("remat")
            assert (mode.mode, mode.output_size_threshold) == ("larger_than", 10)
            with tf.keras.RematScope(mode=None):
                assert _context.keras_scope("remat") is None
                off = layers.Dense(2)
            assert _context.keras_scope("remat").mode == "larger_than"
        assert _context.keras_scope("remat").mode == "full"
        on = layers.Dense(2)
    assert _context.keras_scope("remat") is None
    assert off._remat_mode is None and on._remat_mode.mode == "full"
    assert outer.mode == "full"


def test_full_mode_recomputes_the_layers_created_inside_and_only_those():
    with tf.keras.RematScope(mode="full"):
        inside = [layers.Dense(8, activation="relu"), layers.Dense(8, activation="relu")]
    outside = layers.Dense(1)
    model = tf.keras.Sequential(inside + [outside])  # created outside the scope: not recomputed itself
    counts = _calls_during_backward(model, torch.randn(4, 3), inside + [outside])
    assert counts == {inside[0].name: 1, inside[1].name: 1, outside.name: 0}


def test_full_mode_applies_to_layers_of_a_functional_model():
    inputs = tf.keras.Input((3,))
    with tf.keras.RematScope(mode="full"):
        hidden = layers.Dense(8, activation="relu")
    head = layers.Dense(1)
    model = tf.keras.Model(inputs, head(hidden(inputs)))
    assert _calls_during_backward(model, torch.randn(4, 3), [hidden, head]) == {hidden.name: 1, head.name: 0}


def test_mode_is_fixed_when_the_layer_is_created_not_when_it_is_called():
    with tf.keras.RematScope(mode="full"):
        created_inside = layers.Dense(4)
    created_outside = layers.Dense(4)
    model = tf.keras.Sequential([created_inside, created_outside])
    model(torch.ones(2, 3))
    with tf.keras.RematScope(mode="full"):
        counts = _calls_during_backward(model, torch.randn(2, 3), [created_inside, created_outside])
    assert counts == {created_inside.name: 1, created_outside.name: 0}


def test_activations_mode_recomputes_only_the_activation_function():
    activation_calls = []

    def counted_relu(v):
        activation_calls.append(torch.is_grad_enabled())
        return torch.relu(v)

    with tf.keras.RematScope(mode="activations"):
        with_activation = layers.Dense(8, activation=counted_relu)
        flatten = layers.Flatten()  # no activation: runs plainly
    model = tf.keras.Sequential([flatten, with_activation])
    x = torch.randn(4, 3)
    model(x)
    counts = _calls_during_backward(model, x, [with_activation, flatten])
    assert counts == {with_activation.name: 0, flatten.name: 0}  # the Dense matmul is not rerun
    assert len(activation_calls) == 3  # build call, forward, and its recomputation in backward
    assert with_activation.activation is counted_relu  # the swap is undone after the call


def test_larger_than_mode_uses_the_output_size_with_the_batch():
    with tf.keras.RematScope(mode="larger_than", output_size_threshold=100):
        big = layers.Dense(64)    # 4 x 64 = 256 elements > 100
        small = layers.Dense(8)   # 4 x 8 = 32 elements
        edge = layers.Dense(25)   # 4 x 25 = 100, not larger than 100
    model = tf.keras.Sequential([big, small, edge])
    counts = _calls_during_backward(model, torch.randn(4, 3), [big, small, edge])
    assert counts == {big.name: 1, small.name: 0, edge.name: 0}
    # with a batch of 1 the big layer's output (64) is below the threshold: not recomputed
    assert _calls_during_backward(model, torch.randn(1, 3), [big])[big.name] == 0


def test_list_of_layers_mode_recomputes_the_named_layers():
    with tf.keras.RematScope(mode="list_of_layers", layer_names=["dense_a", "dense_c"]):
        a, b, c = layers.Dense(4, name="dense_a"), layers.Dense(4, name="dense_b"), layers.Dense(4, name="dense_c")
    model = tf.keras.Sequential([a, b, c])
    assert _calls_during_backward(model, torch.randn(3, 2), [a, b, c]) == {"dense_a": 1, "dense_b": 0, "dense_c": 1}


def _model():
    return tf.keras.Sequential([layers.Dense(16, activation="relu", input_shape=(6,)), layers.Dropout(0.4, seed=2),
                                layers.Dense(16, activation="tanh"), layers.Dense(1)])


@pytest.mark.parametrize("mode", ["full", "activations", "larger_than", "list_of_layers"])
def test_every_mode_keeps_the_gradients_of_a_model_with_seeded_dropout(mode):
    plain = _model()
    with tf.keras.RematScope(mode=mode, output_size_threshold=16, layer_names=[plain.layers[0].name]):
        rematted = _model()
    rematted.set_weights(plain.get_weights())
    x = torch.randn(8, 6)
    for _ in range(2):  # the second step checks the Dropout streams stayed in step
        grads = []
        for model in (plain, rematted):
            with tf.GradientTape() as tape:
                loss = model(x, training=True).square().mean()
            grads.append(tape.gradient(loss, model.trainable_variables))
        for ours, expected in zip(grads[1], grads[0]):
            torch.testing.assert_close(ours, expected, rtol=1e-6, atol=1e-6)


def test_remat_function_equals_recompute_grad():
    dense = layers.Dense(3, activation="tanh")
    x = torch.randn(5, 4)
    expected = torch.autograd.grad(dense(x).sum(), dense.trainable_weights)
    rematted = tf.keras.remat(dense)
    assert rematted.__wrapped__ is dense
    for ours, reference in zip(torch.autograd.grad(rematted(x).sum(), dense.trainable_weights), expected):
        torch.testing.assert_close(ours, reference, rtol=1e-6, atol=1e-6)


def test_bad_arguments_name_the_valid_choices():
    with pytest.raises(ValueError, match="'full', 'activations', 'larger_than', 'list_of_layers', None"):
        tf.keras.RematScope(mode="everything")
    with pytest.raises(TypeError, match="list of layer names"):
        tf.keras.RematScope(mode="list_of_layers", layer_names="dense_1")
    with pytest.raises(ValueError, match="non-negative int"):
        tf.keras.RematScope(mode="larger_than", output_size_threshold=-1)
    with pytest.raises(TypeError, match="recompute_grad expects a callable"):
        tf.keras.remat("dense")
