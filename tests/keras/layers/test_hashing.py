"""Hashing (FarmHash, SipHash salt, mask bin, multi_hot/count/one_hot) and HashedCrossing against Keras 3.15 /
TF 2.21 outputs frozen in keras_layers_reference.json; output shapes, configs and bad arguments."""
from __future__ import annotations

import numpy as np
import pytest

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("Hashing", "HashedCrossing"))
def test_matches_keras(case_id):
    check_case(case_id)


def test_output_dtypes_and_shapes():
    out = layers.Hashing(num_bins=3)(np.array(["a", "b"]))
    assert str(out.dtype) == "torch.int64"
    assert layers.Hashing(3, output_mode="one_hot").compute_output_shape((None, 1)) == (None, 3)
    assert layers.HashedCrossing(4, output_mode="one_hot").compute_output_shape([(None, 1), (None, 1)]) == (None, 4)
    # floats hash as their int64 value, as Keras
    assert layers.Hashing(5)(np.array([3.7, -2.2])).tolist() == layers.Hashing(5)(np.array([3, -2])).tolist()


@pytest.mark.parametrize("make,error,message", [
    (lambda: layers.Hashing(0), ValueError, "num_bins=0"),
    (lambda: layers.Hashing(3, salt="x"), ValueError, "salt"),
    (lambda: layers.Hashing(3, output_mode="tf_idf"), ValueError, "output_mode"),
    (lambda: layers.Hashing(3, dtype="float32"), ValueError, "integer type"),
    (lambda: layers.Hashing(3, output_mode="int", sparse=True), ValueError, "sparse"),
    (lambda: layers.HashedCrossing(3, output_mode="count"), ValueError, "output_mode"),
    (lambda: layers.HashedCrossing(3)([np.array([1, 2])]), ValueError, "at least two inputs"),
    (lambda: layers.HashedCrossing(3)([np.array([1, 2]), np.array([1, 2, 3])]), ValueError, "same shape"),
    (lambda: layers.HashedCrossing(3)([np.array([1.5]), np.array([1])]), ValueError, "integer or string"),
])
def test_bad_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_config_round_trip():
    for layer in (layers.Hashing(7, salt=[1, 2], mask_value="", output_mode="count"),
                  layers.HashedCrossing(9, output_mode="one_hot")):
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config
    assert layers.Hashing(7, salt=5).get_config()["salt"] == [5, 5]
