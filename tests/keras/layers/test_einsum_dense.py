"""EinsumDense against Keras 3.15 outputs frozen in keras_layers_reference.json (plain, 3-D with partial
output_shape and bias axes, left and right ellipses); kernel/bias shapes, output shapes, errors, config."""
from __future__ import annotations

import pytest
import torch

from tests.keras.layers._keras_reference import cases_of, check_case
from torchstrategy.keras import layers


@pytest.mark.parametrize("case_id", cases_of("EinsumDense"))
def test_matches_keras(case_id):
    check_case(case_id)


@pytest.mark.parametrize("equation,output_shape,bias_axes,input_shape,kernel,bias,out", [
    ("ab,bc->ac", 4, "c", (None, 3), (3, 4), (4,), (None, 4)),
    # Keras leaves an output dimension given as None unknown in compute_output_shape
    ("abc,cde->abde", (None, 2, 3), "de", (None, 5, 4), (4, 2, 3), (2, 3), (None, None, 2, 3)),
    ("abc,cd->abd", (5, 6), "b", (None, 5, 4), (4, 6), (5, 1), (None, 5, 6)),
    ("...b,bc->...c", 3, None, (None, 7, 4), (4, 3), None, (None, 7, 3)),
    ("ab...,bc->ac...", 5, "c", (None, 3, 4), (3, 5), (5, 1), (None, 5, 4)),
])
def test_weight_and_output_shapes(equation, output_shape, bias_axes, input_shape, kernel, bias, out):
    layer = layers.EinsumDense(equation, output_shape, bias_axes=bias_axes)
    assert layer.compute_output_shape(input_shape) == out
    layer(torch.ones((2,) + input_shape[1:]))
    assert tuple(layer.kernel.shape) == kernel
    assert (None if layer.bias is None else tuple(layer.bias.shape)) == bias


def test_bad_equations_and_shapes():
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        layers.EinsumDense("ab->b", 3)
    with pytest.raises(ValueError, match="do not match at shared dimension 'b'"):
        layers.EinsumDense("abc,cd->abd", (7, 4))(torch.ones(2, 5, 3))
    with pytest.raises(ValueError, match="Bias dimension 'x'"):
        layers.EinsumDense("ab,bc->ac", 4, bias_axes="x")(torch.ones(2, 3))
    with pytest.raises(ValueError, match="Weight dimension 'z'"):
        layers.EinsumDense("ab,bz->a", 4)(torch.ones(2, 3))
    with pytest.raises(NotImplementedError, match="lora_rank"):
        layers.EinsumDense("ab,bc->ac", 4, lora_rank=2)


def test_config_round_trip():
    layer = layers.EinsumDense("abc,cd->abd", (None, 4), bias_axes="d", activation="relu")
    config = layer.get_config()
    assert config["output_shape"] == (None, 4) and config["equation"] == "abc,cd->abd" and config["bias_axes"] == "d"
    assert layers.EinsumDense.from_config(config).get_config() == config
