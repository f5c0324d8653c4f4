"""Small Keras 3.15 names (OrthogonalRegularizer, activations.threshold, losses/metrics.logcosh,
metrics.kullback_leibler_divergence, IdentityInitializer/OrthogonalInitializer, keras.name_scope,
keras.device, keras.FloatDTypePolicy) against tf.keras results frozen in keras_small_names_reference.json
by tools/tf_reference/keras_small_names_reference.py (TF 2.21)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras import serialization_lib

keras = tf.keras
REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_small_names_reference.json")))
W = torch.tensor(REF["W"])


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return {"raises": type(info.value).__name__, "message": str(info.value)}


def test_orthogonal_regularizer():
    R = keras.regularizers
    assert float(R.OrthogonalRegularizer(factor=0.3)(W)) == pytest.approx(REF["orth_rows"], rel=1e-6)
    assert float(R.OrthogonalRegularizer(factor=0.05, mode="columns")(W)) == pytest.approx(REF["orth_columns"],
                                                                                           rel=1e-6)
    assert R.OrthogonalRegularizer(factor=0.3).get_config() == REF["orth_config"]
    assert serialization_lib.serialize_keras_object(R.OrthogonalRegularizer(factor=0.3)) == REF["orth_serialized"]
    assert R.orthogonal_regularizer is R.OrthogonalRegularizer
    assert _message(lambda: R.OrthogonalRegularizer(mode="diag")) == REF["orth_errors"]["mode"]
    assert _message(lambda: R.OrthogonalRegularizer(factor=-1)) == REF["orth_errors"]["factor"]
    assert _message(lambda: R.OrthogonalRegularizer()(W[0])) == REF["orth_errors"]["rank"]
    layer = keras.layers.Dense(3, kernel_regularizer=R.OrthogonalRegularizer(factor=0.3))
    layer.build((None, 4))
    assert len(layer.losses) == 1 and float(layer.losses[0]) > 0.0


def test_functions_and_aliases():
    np.testing.assert_allclose(keras.activations.threshold(W, 0.25, -9.0).numpy(), REF["threshold"])
    np.testing.assert_allclose(keras.losses.logcosh(W[:2], W[2:]).numpy(), REF["logcosh"], rtol=1e-6)
    np.testing.assert_allclose(keras.metrics.logcosh(W[:2], W[2:]).numpy(), REF["metrics_logcosh"], rtol=1e-6)
    np.testing.assert_allclose(keras.metrics.kullback_leibler_divergence(W[:2].abs(), W[2:].abs()).numpy(),
                               REF["kld"], rtol=1e-6)
    assert (keras.initializers.IdentityInitializer is keras.initializers.Identity) is REF["identity_is"]
    assert keras.initializers.OrthogonalInitializer is keras.initializers.Orthogonal
    assert keras.FloatDTypePolicy("mixed_float16").compute_dtype == REF["float_policy"]


def test_name_scope_and_device():
    assert _message(lambda: keras.name_scope("a/b")) == REF["name_scope_slash"]
    with keras.name_scope("outer") as scope:
        assert scope.name == "outer"
        with tf.name_scope("inner") as inner:
            assert inner == "outer/inner/"
    with keras.device("cpu:0"):
        assert torch.zeros(1).device.type == "cpu"
