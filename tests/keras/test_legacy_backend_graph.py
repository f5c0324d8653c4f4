"""The legacy keras.backend helpers of _legacy_backend/graph.py (get_uid, map_fn, foldl/foldr, paddings,
resize_images/volumes, random variables) against TF 2.21 / Keras 3.15 results frozen in
keras_backend_graph_reference.json by tools/tf_reference/keras_backend_graph_reference.py."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf

K = tf.keras.backend
REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_backend_graph_reference.json")))
X3 = np.arange(12, dtype="float32").reshape(2, 3, 2)
X4 = np.arange(2 * 3 * 2 * 2, dtype="float32").reshape(2, 3, 2, 2)
X5 = np.arange(2 * 2 * 2 * 1 * 2, dtype="float32").reshape(2, 2, 2, 1, 2)


def check(got, ref):
    got = np.asarray(got.numpy() if isinstance(got, torch.Tensor) else got)
    assert str(got.dtype) == ref["dtype"]
    np.testing.assert_allclose(got, np.asarray(ref["value"], dtype=ref["dtype"]), rtol=1e-6, atol=1e-5)


def test_get_uid_counts_with_layer_names():
    K.clear_session()
    tf.keras.layers.Dense(2)
    assert [K.get_uid("dense"), K.get_uid("dense"), K.get_uid("zzz"), K.get_uid()] == REF["uids"]


def test_functional_helpers():
    check(K.map_fn(lambda r: r * 2 + 1, torch.from_numpy(X3)), REF["map_fn"])
    check(K.foldl(lambda a, r: a + r, torch.from_numpy(X3)), REF["foldl"])
    check(K.foldr(lambda a, r: a * 2 - r, torch.from_numpy(X3), initializer=torch.zeros(3, 2)), REF["foldr"])
    with K.name_scope("block"):
        pass


def test_paddings_and_resizes():
    check(K.temporal_padding(X3, (1, 2)), REF["temporal"])
    check(K.spatial_2d_padding(X4, ((1, 0), (0, 2)), data_format="channels_last"), REF["spatial2d_last"])
    check(K.spatial_2d_padding(X4, ((0, 1), (1, 1)), data_format="channels_first"), REF["spatial2d_first"])
    check(K.spatial_3d_padding(X5, ((1, 0), (0, 1), (1, 1)), data_format="channels_last"), REF["spatial3d"])
    check(K.resize_images(X4, 2, 3, "channels_last"), REF["resize_nearest"])
    check(K.resize_images(X4, 2, 1, "channels_first", interpolation="bilinear"), REF["resize_bilinear_first"])
    check(K.resize_volumes(X5, 2, 1, 3, "channels_last"), REF["resize_volumes"])


def test_random_variables():
    normal = K.random_normal_variable((3, 4), 0.0, 1.0, seed=1)
    uniform = K.random_uniform_variable((3, 4), -1.0, 1.0, dtype="float64", seed=1)
    assert K.dtype(normal) == REF["normal_var_dtype"] and K.dtype(uniform) == REF["uniform_var_dtype"]
    assert tuple(K.int_shape(normal)) == (3, 4)
    values = K.get_value(uniform)
    assert values.min() >= -1.0 and values.max() < 1.0
    np.testing.assert_array_equal(K.get_value(K.random_normal_variable((3, 4), 0.0, 1.0, seed=1)),
                                  K.get_value(normal))  # one seed, one draw


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return {"raises": type(info.value).__name__, "message": str(info.value)}


def test_errors_match_keras():
    errors = REF["errors"]
    assert _message(lambda: K.temporal_padding(X3, (1, 2, 3))) == errors["temporal"]
    assert _message(lambda: K.spatial_2d_padding(X4, ((1, 1),))) == errors["spatial2d"]
    assert _message(lambda: K.spatial_3d_padding(X5, ((1, 1),))) == errors["spatial3d"]
    assert _message(lambda: K.spatial_2d_padding(X4, data_format="nchw")) == errors["format"]
    assert _message(lambda: K.resize_images(X4, 2, 2, "nchw")) == errors["resize_format"]
    assert _message(lambda: K.resize_images(X4, 2, 2, "channels_last", "cubic")) == errors["resize_interp"]
