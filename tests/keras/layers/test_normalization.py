"""BatchNormalization (training/inference, Keras moving-statistics update with the biased batch
variance, synchronized path, trainable=False) and LayerNormalization against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.keras.layers import _mixed_fits
from torchstrategy.keras import layers

RNG = np.random.default_rng(3)
EPS = 1e-3


def _np_bn(x, mean, var, gamma, beta, eps=EPS):
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _random_bn_weights(channels):
    gamma = RNG.uniform(0.5, 1.5, channels)
    beta = RNG.normal(size=channels)
    moving_mean = RNG.normal(size=channels)
    moving_var = RNG.uniform(0.5, 2.0, channels)
    return [gamma, beta, moving_mean, moving_var]


@pytest.mark.parametrize("shape,axis", [((8, 5, 6, 3), -1), ((16, 4), -1), ((4, 7, 3), -1), ((6, 3, 5, 5), 1),
                                        ((1, 4), -1), ((5, 4, 3), [1, 2])])
@pytest.mark.parametrize("synchronized", [False, True])
def test_batchnorm_training_and_moving_updates_match_numpy(shape, axis, synchronized):
    ndim = len(shape)
    axes = [axis % ndim] if isinstance(axis, int) else [a % ndim for a in axis]
    reduce = tuple(i for i in range(ndim) if i not in axes)
    bn = layers.BatchNormalization(axis=axis, momentum=0.9, synchronized=synchronized, dtype="float64")
    x = RNG.normal(2.0, 3.0, size=shape)
    bn(torch.tensor(x))  # build
    param_shape = tuple(shape[a] if a in axes else 1 for a in range(ndim)) if len(axes) > 1 else (shape[axes[0]],)
    weights = [w.reshape(param_shape) for w in _random_bn_weights(int(np.prod(param_shape)))]
    bn.set_weights(weights)
    gamma, beta, moving_mean, moving_var = [w.reshape([shape[i] if i in axes else 1 for i in range(ndim)])
                                            for w in weights]
    for _ in range(2):
        x = RNG.normal(2.0, 3.0, size=shape)
        out = bn(torch.tensor(x), training=True).detach().numpy()
        mean, var = x.mean(axis=reduce, keepdims=True), x.var(axis=reduce, keepdims=True)  # biased, as Keras
        np.testing.assert_allclose(out, _np_bn(x, mean, var, gamma, beta), rtol=1e-9, atol=1e-9)
        moving_mean = moving_mean * 0.9 + mean * 0.1
        moving_var = moving_var * 0.9 + var * 0.1
        np.testing.assert_allclose(bn.moving_mean.numpy().reshape(moving_mean.shape), moving_mean, rtol=1e-9)
        np.testing.assert_allclose(bn.moving_variance.numpy().reshape(moving_var.shape), moving_var, rtol=1e-9)
    x = RNG.normal(size=shape)
    inference = bn(torch.tensor(x), training=False).detach().numpy()
    np.testing.assert_allclose(inference, _np_bn(x, moving_mean, moving_var, gamma, beta), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(bn.moving_mean.numpy().reshape(moving_mean.shape), moving_mean, rtol=1e-9)


def test_batchnorm_gradients_match_explicit_formula():
    x = torch.randn(6, 4, 4, 3, dtype=torch.float64, requires_grad=True)
    upstream = torch.randn(6, 4, 4, 3, dtype=torch.float64)
    for synchronized in (False, True):
        bn = layers.BatchNormalization(dtype="float64", synchronized=synchronized)
        bn(x.detach())
        bn.set_weights(_random_bn_weights(3))
        (bn(x, training=True) * upstream).sum().backward()
        got_x, got_gamma, got_beta = x.grad.clone(), bn.gamma.grad.clone(), bn.beta.grad.clone()
        x.grad = None
        gamma = bn.gamma.detach().clone().requires_grad_(True)
        beta = bn.beta.detach().clone().requires_grad_(True)
        mean = x.mean(dim=(0, 1, 2))
        var = ((x - mean) ** 2).mean(dim=(0, 1, 2))
        (((x - mean) / torch.sqrt(var + EPS) * gamma + beta) * upstream).sum().backward()
        torch.testing.assert_close(got_x, x.grad)
        torch.testing.assert_close(got_gamma, gamma.grad)
        torch.testing.assert_close(got_beta, beta.grad)
        x.grad = None


def test_batchnorm_synchronized_equals_unsynchronized_with_one_replica():
    x = torch.randn(8, 5, 5, 4)
    plain, synced = layers.BatchNormalization(), layers.BatchNormalization(synchronized=True)
    plain(x)
    synced(x)
    synced.set_weights(plain.get_weights())
    torch.testing.assert_close(synced(x, training=True), plain(x, training=True), rtol=1e-5, atol=1e-5)
    for a, b in zip(synced.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert synced.get_config()["synchronized"] is True


def test_batchnorm_weights_order_buffers_and_defaults():
    bn = layers.BatchNormalization()
    bn(torch.zeros(2, 3, 3, 5))
    assert [tuple(w.shape) for w in bn.weights] == [(5,)] * 4
    gamma, beta, moving_mean, moving_var = bn.get_weights()
    np.testing.assert_array_equal(gamma, 1)
    np.testing.assert_array_equal(beta, 0)
    np.testing.assert_array_equal(moving_mean, 0)
    np.testing.assert_array_equal(moving_var, 1)
    assert [w is p for w, p in zip(bn.trainable_weights, (bn.gamma, bn.beta))] == [True, True]
    assert {name for name, _ in bn.named_buffers()} == {"moving_mean", "moving_variance"}
    no_affine = layers.BatchNormalization(center=False, scale=False)
    no_affine(torch.zeros(2, 5))
    assert len(no_affine.weights) == 2 and not no_affine.trainable_weights


def test_batchnorm_not_trainable_runs_in_inference_mode():
    bn = layers.BatchNormalization()
    x = torch.randn(8, 3) * 4 + 1
    bn(x)
    bn.trainable = False
    out = bn(x, training=True)
    torch.testing.assert_close(out, x / np.sqrt(1 + EPS))  # moving stats 0 / 1, gamma 1, beta 0
    np.testing.assert_array_equal(bn.get_weights()[2], 0)


def test_batchnorm_input_shape_mismatch_and_bad_axis():
    bn = layers.BatchNormalization(name="bn1")
    bn(torch.zeros(2, 4, 4, 3))
    with pytest.raises(ValueError, match=r"layer 'bn1'.*\(None, 4, 4, 3\).*\(None, 4, 4, 6\)"):
        bn(torch.zeros(2, 4, 4, 6))
    with pytest.raises(ValueError, match="invalid axis 3"):
        layers.BatchNormalization(axis=3)(torch.zeros(2, 3))


@pytest.mark.parametrize("shape,axis", [((4, 6), -1), ((3, 5, 6), -1), ((3, 5, 6), [1, 2]), ((3, 5, 6), 1),
                                        ((2, 3, 4, 5), [1, 3])])
def test_layernorm_matches_numpy(shape, axis):
    ln = layers.LayerNormalization(axis=axis, dtype="float64")
    x = RNG.normal(1.0, 2.0, size=shape)
    ln(torch.tensor(x))
    axes = sorted([axis % len(shape)] if isinstance(axis, int) else [a % len(shape) for a in axis])
    param_shape = tuple(shape[a] for a in axes)
    gamma, beta = RNG.normal(size=param_shape), RNG.normal(size=param_shape)
    assert [tuple(w.shape) for w in ln.weights] == [param_shape, param_shape]
    ln.set_weights([gamma, beta])
    broadcast = [shape[i] if i in axes else 1 for i in range(len(shape))]
    mean = x.mean(axis=tuple(axes), keepdims=True)
    var = x.var(axis=tuple(axes), keepdims=True)
    expected = (x - mean) / np.sqrt(var + EPS) * gamma.reshape(broadcast) + beta.reshape(broadcast)
    np.testing.assert_allclose(ln(torch.tensor(x)).detach().numpy(), expected, rtol=1e-9, atol=1e-9)


def test_layernorm_config_round_trip_and_no_affine():
    ln = layers.LayerNormalization(axis=[1, 2], epsilon=1e-5, center=False)
    clone = layers.LayerNormalization.from_config(ln.get_config())
    assert clone.get_config() == ln.get_config()
    clone(torch.randn(2, 3, 4))
    assert [tuple(w.shape) for w in clone.weights] == [(3, 4)]


# ----- GroupNormalization, UnitNormalization, RMSNormalization (Keras 3.15 numbers frozen in JSON) ---------------
from tests.keras.layers._keras_reference import cases_of, check_case  # noqa: E402


@pytest.mark.parametrize("case_id", cases_of("GroupNormalization", "UnitNormalization", "RMSNormalization"))
def test_group_unit_rms_normalization_match_keras(case_id):
    check_case(case_id)


def test_group_normalization_refuses_groups_that_do_not_divide():
    from torchstrategy.keras import layers as keras_layers

    with pytest.raises(ValueError, match=r"groups \(4\) must divide the number of channels \(6\)"):
        keras_layers.GroupNormalization(groups=4)(torch.ones(2, 6))
    with pytest.raises(ValueError, match=r"cannot be more than the number of channels \(3\)"):
        keras_layers.GroupNormalization(groups=4)(torch.ones(2, 3))
    with pytest.raises(ValueError, match="groups=0"):
        keras_layers.GroupNormalization(groups=0)


def test_unit_and_rms_normalization_bad_axes():
    from torchstrategy.keras import layers as keras_layers

    with pytest.raises(TypeError, match="axis"):
        keras_layers.UnitNormalization(axis="last")
    with pytest.raises(ValueError, match="out of bounds"):
        keras_layers.UnitNormalization(axis=3).compute_output_shape((None, 4))
    with pytest.raises(ValueError, match="out of bounds"):
        keras_layers.RMSNormalization(axis=2)(torch.ones(2, 3))


def test_batch_normalization_takes_keras_3_renorm_arguments_and_refuses_renorm():
    # Keras 3.15: renorm / renorm_clipping / renorm_momentum are in the signature and the config; `fused` is not
    layer = layers.BatchNormalization(renorm=False, renorm_clipping=None, renorm_momentum=0.9)
    config = layer.get_config()
    assert (config["renorm"], config["renorm_clipping"], config["renorm_momentum"]) == (False, None, 0.9)
    assert layers.BatchNormalization.from_config(config).renorm_momentum == 0.9
    with pytest.raises(NotImplementedError, match="renorm"):
        layers.BatchNormalization(renorm=True)
    with pytest.raises((TypeError, ValueError), match="fused"):
        layers.BatchNormalization(fused=True)


def _grad_fn_names(tensor):
    """The autograd nodes from `tensor` back to the leaves (a chain: the first input of each node)."""
    names, node = [], tensor.grad_fn
    while node is not None and type(node).__name__ != "AccumulateGrad":
        names.append(type(node).__name__)
        node = node.next_functions[0][0]
    return names


def _float32_first_call(monkeypatch):
    """The path before the mixed-type batch norm: the bfloat16 input cast to float32, normalised, cast back."""
    call = layers.BatchNormalization.call
    monkeypatch.setattr(layers.BatchNormalization, "call",
                        lambda self, inputs, *args, **kwargs: call(self, inputs.float(), *args, **kwargs))


@pytest.mark.parametrize("training", [True, False])
def test_bfloat16_batchnorm_runs_mixed_type_with_the_float32_paths_numbers(training, monkeypatch):
    """A mixed_bfloat16 layer on the CPU hands its bfloat16 input to the batch-norm kernel with float32 weights
    and statistics (no float32 copy of the activation): outputs and input gradients within bfloat16 rounding of
    the cast-to-float32 path, float32 gamma/beta gradients and moving statistics to float32 rounding."""
    x = (torch.from_numpy(RNG.normal(1.0, 3.0, (16, 6, 6, 8))).float()).bfloat16().requires_grad_()
    upstream = torch.from_numpy(RNG.normal(size=(16, 6, 6, 8))).bfloat16()
    weights = _random_bn_weights(8)
    results = []
    for float32_first in (False, True):
        if float32_first:
            _float32_first_call(monkeypatch)
        bn = layers.BatchNormalization(momentum=0.9, dtype="mixed_bfloat16")
        bn(x.detach())
        bn.set_weights(weights)
        out = bn(x, training=training)
        assert out.dtype == torch.bfloat16
        if not float32_first:  # the kernel's own output: no cast before or after it
            names = _grad_fn_names(out)
            assert "NativeBatchNormBackward0" in names and "ToCopyBackward0" not in names, names
        grads = torch.autograd.grad(out, (x, bn.gamma, bn.beta), upstream)
        assert [g.dtype for g in grads] == [torch.bfloat16, torch.float32, torch.float32]
        results.append((out, grads, [w.copy() for w in bn.get_weights()]))
    (out, grads, state), (ref_out, ref_grads, ref_state) = results
    assert torch.allclose(out.float(), ref_out.float(), rtol=2 ** -8, atol=2 ** -8)
    assert torch.allclose(grads[0].float(), ref_grads[0].float(), rtol=2 ** -8, atol=2 ** -8 * ref_grads[0].abs().max())
    for a, b in zip(grads[1:], ref_grads[1:]):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-5 * b.abs().max())
    for a, b in zip(state, ref_state):
        assert a.dtype == np.float32 and np.allclose(a, b, rtol=1e-6, atol=1e-7)


def test_mixed_bfloat16_fit_with_the_mixed_type_batchnorm_trains_as_the_float32_path(monkeypatch):
    """A Conv-BatchNorm-ReLU-pool CNN in mixed_bfloat16, 8 Adam steps, against the same fit with each batch norm
    cast to float32 first: the same losses (1e-5) and weights (1e-4). The convolutions have no bias: a bias
    before a batch norm gets a gradient of zero plus rounding, which Adam scales up to steps of any sign."""
    import torchstrategy as tf

    x = RNG.random((64, 12, 12, 3), dtype=np.float32)
    y = RNG.integers(0, 4, (64,))
    L = tf.keras.layers
    runs = _mixed_fits.fit_twice(
        tf, lambda: tf.keras.Sequential([
            tf.keras.Input((12, 12, 3)), L.Conv2D(8, 3, padding="same", use_bias=False), L.BatchNormalization(),
            L.ReLU(), L.MaxPooling2D(), L.Conv2D(16, 3, use_bias=False), L.BatchNormalization(), L.ReLU(),
            L.Flatten(), L.Dense(4)]),
        x, y, seed=4, switch=lambda: _float32_first_call(monkeypatch))
    _mixed_fits.assert_trained_alike(runs)
    assert all(a.dtype == np.float32 for a in runs[0][1])
