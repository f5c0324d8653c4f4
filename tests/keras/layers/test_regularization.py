"""Regularizers (L1, L2, L1L2, names, serialization) and the penalties layers report in `losses`."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torchstrategy import keras
from torchstrategy.keras import layers, regularizers

W = np.random.default_rng(6).normal(size=(4, 3))


@pytest.mark.parametrize("identifier,expected", [
    ("l1", 0.01 * np.abs(W).sum()), ("l2", 0.01 * np.square(W).sum()),
    ("l1_l2", 0.01 * np.abs(W).sum() + 0.01 * np.square(W).sum()),
    (regularizers.L1L2(l1=0.5, l2=0.25), 0.5 * np.abs(W).sum() + 0.25 * np.square(W).sum()),
    (regularizers.L2(0.1), 0.1 * np.square(W).sum()),
    ({"class_name": "L1", "config": {"l1": 0.3}}, 0.3 * np.abs(W).sum()),
])
def test_penalties_match_numpy(identifier, expected):
    penalty = regularizers.get(identifier)(torch.tensor(W))
    assert penalty.dim() == 0
    np.testing.assert_allclose(float(penalty), expected, rtol=1e-12)


def test_get_none_callable_and_errors():
    assert regularizers.get(None) is None
    fn = lambda w: w.sum()  # noqa: E731
    assert regularizers.get(fn) is fn
    with pytest.raises(ValueError, match=r"Unknown regularizer: 'l3'.*'l1'.*'l2'"):
        regularizers.get("l3")
    with pytest.raises(ValueError, match=">= 0"):
        regularizers.L2(-1.0)


@pytest.mark.parametrize("reg", [regularizers.L1(0.2), regularizers.L2(0.3), regularizers.L1L2(0.1, 0.4)])
def test_serialize_round_trip(reg):
    restored = regularizers.deserialize(regularizers.serialize(reg))
    assert type(restored) is type(reg) and restored.get_config() == reg.get_config()


def test_layer_losses_collect_weight_penalties():
    conv = layers.Conv2D(2, 3, kernel_regularizer=regularizers.L2(0.5), bias_regularizer="l1")
    conv(torch.randn(1, 5, 5, 3))
    kernel, bias = conv.get_weights()
    losses = [float(v.detach()) for v in conv.losses]
    np.testing.assert_allclose(losses, [0.5 * np.square(kernel).sum(), 0.01 * np.abs(bias).sum()], rtol=1e-5)
    bn = layers.BatchNormalization(gamma_regularizer="l2")
    bn(torch.randn(4, 3))
    np.testing.assert_allclose(float(bn.losses[0].detach()), 0.01 * 3, rtol=1e-6)  # gamma starts at ones
    emb = layers.Embedding(5, 2, embeddings_regularizer="l1")
    emb(torch.tensor([[1, 2]]))
    np.testing.assert_allclose(float(emb.losses[0].detach()), 0.01 * np.abs(emb.get_weights()[0]).sum(), rtol=1e-5)


# ----- the walks for losses skip while no living layer holds any (Layer.losses, the clearing at an outermost call) --
@pytest.fixture
def no_loss_holders(monkeypatch):
    """A process where no layer has recorded losses yet (other tests' layers may still be alive)."""
    import weakref

    from torchstrategy import _context

    monkeypatch.setattr(_context, "_loss_holders", weakref.WeakSet())
    return _context


def test_layers_without_losses_skip_the_walk_and_report_none(no_loss_holders):
    model = keras.Sequential([layers.Dense(3, input_shape=(4,)), layers.Dense(2)])
    model(torch.ones(2, 4))
    assert not no_loss_holders.any_loss_holder()
    assert model.losses == []


def test_add_loss_and_regularized_weights_are_found_after_the_skip(no_loss_holders):
    class Adds(layers.Layer):
        def call(self, inputs):
            self.add_loss(inputs.sum())
            return inputs

    model = keras.Sequential([layers.Dense(3, input_shape=(4,)), Adds()])
    model(torch.ones(2, 4))
    assert no_loss_holders.any_loss_holder()
    first = model.losses
    assert len(first) == 1
    model(torch.ones(2, 4))  # an outermost call clears the last call's added losses first
    assert len(model.losses) == 1
    regularized = layers.Dense(3, kernel_regularizer="l2")
    regularized.build((None, 4))
    expected = 0.01 * float(torch.square(regularized.kernel.detach()).sum())
    np.testing.assert_allclose(float(regularized.losses[0]), expected, rtol=1e-6)


def test_a_copy_of_a_regularized_layer_keeps_its_penalty_when_the_original_is_gone(no_loss_holders):
    import copy
    import gc
    import pickle

    original = layers.Dense(3, kernel_regularizer="l2")
    original.build((None, 4))
    copied, unpickled = copy.deepcopy(original), pickle.loads(pickle.dumps(original))
    del original
    gc.collect()
    for layer in (copied, unpickled):
        expected = 0.01 * float(torch.square(layer.kernel.detach()).sum())
        assert len(layer.losses) == 1
        np.testing.assert_allclose(float(layer.losses[0]), expected, rtol=1e-6)
