"""tf.nn activations against TF 2.21 (tests/nn/nn_reference.json): elu, selu, leaky_relu (alpha 0.2),
crelu, softsign, gelu; NumPy and torch inputs."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from tests.nn._reference import arr, close

F = arr(3, 5) * 3


@pytest.mark.parametrize("name", ["elu", "selu", "leaky_relu", "crelu", "softsign", "gelu"])
def test_activation_matches_tf(name):
    close(getattr(tf.nn, name)(F), name)
    close(getattr(tf.nn, name)(torch.tensor(F)), name)


def test_leaky_relu_alpha_and_crelu_axis():
    assert torch.equal(tf.nn.leaky_relu(torch.tensor([-1.0, 2.0]), alpha=0.5), torch.tensor([-0.5, 2.0]))
    assert tf.nn.crelu(torch.ones(2, 3), axis=0).shape == (4, 3)
