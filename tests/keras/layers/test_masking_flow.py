"""How masks travel between layers (keras/layers/masking_flow.py), against Keras 3.15's behaviour frozen by
tools/tf_reference/keras_functional_reference.py (tests/keras/keras_functional_reference.json, "masks")."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from torchstrategy import keras
from torchstrategy.keras import layers, ops

REF = json.load(open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "keras_functional_reference.json")))
MASKS = REF["masks"]


class ZeroRowMask(layers.Layer):
    """Masks the steps whose first feature is 0; says nothing about supports_masking (Keras infers it)."""

    def call(self, x):
        return x * 1.0

    def compute_mask(self, x, mask=None):
        return ops.not_equal(x[..., 0], 0)


class MaskSum(layers.Layer):
    def call(self, x, mask=None):
        return ops.sum(x * ops.cast(mask, x.dtype)[..., None], axis=1)


def test_a_custom_compute_mask_reaches_the_next_layer_and_the_outputs():
    inputs = keras.Input((4, 2))
    masked = ZeroRowMask()(inputs)
    model = keras.Model(inputs, [MaskSum()(masked), layers.Concatenate()([masked, masked]),
                                 layers.Add()([masked, inputs])])
    summed, concatenated, added = model(np.asarray(MASKS["x"], "float32"))
    assert ZeroRowMask().supports_masking is MASKS["supports_masking"]
    np.testing.assert_allclose(np.asarray(summed), MASKS["sum"])
    np.testing.assert_array_equal(np.asarray(concatenated._keras_mask), MASKS["concat_mask"])
    assert MASKS["add_mask"] is None and getattr(added, "_keras_mask", None) is None  # one input has no mask


def test_a_layer_without_masking_drops_the_mask_with_keras_warning():
    class Plain(layers.Layer):
        def call(self, x):
            return x + 0.0

    x = torch.tensor([[[1.0, 1.0], [0.0, 0.0]]])
    masked = ZeroRowMask()(x)
    with pytest.warns(UserWarning, match="does not support masking and will therefore destroy the mask"):
        out = Plain()(masked)
    assert getattr(out, "_keras_mask", None) is None


def test_merging_layers_combine_masks_as_keras():
    a = torch.ones(1, 3, 2)
    b = torch.ones(1, 3, 2)
    a._keras_mask = torch.tensor([[True, False, False]])
    b._keras_mask = torch.tensor([[False, False, True]])
    np.testing.assert_array_equal(layers.Add()([a, b])._keras_mask.numpy(), [[True, False, True]])
    np.testing.assert_array_equal(layers.Concatenate(axis=1)([a, b])._keras_mask.numpy(),
                                  [[True, False, False, False, False, True]])
    assert getattr(layers.Dot(axes=2)([a, b]), "_keras_mask", None) is None
    assert getattr(layers.GlobalAveragePooling1D()(a), "_keras_mask", None) is None


def test_supports_masking_can_still_be_set_either_way():
    class Off(ZeroRowMask):
        def __init__(self):
            super().__init__()
            self.supports_masking = False

    assert Off().supports_masking is False
    assert layers.Layer().supports_masking is False


def test_lambda_mask_argument_gives_the_output_mask():
    x = torch.tensor([[[1.0], [0.0], [2.0]]])
    out = layers.Lambda(lambda t: t * 2, mask=lambda t, previous: t[..., 0] > 0)(x)
    np.testing.assert_array_equal(out._keras_mask.numpy(), [[True, False, True]])
    plain = layers.Lambda(lambda t: t * 2)
    assert plain.supports_masking is False and getattr(plain(x), "_keras_mask", None) is None
