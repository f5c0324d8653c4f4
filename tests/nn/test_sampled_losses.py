"""tf.nn.nce_loss / sampled_softmax_loss with sampled_values given by hand against TF 2.21 numbers
(tests/nn/nn2_reference.json), with and without accidental hits removed, num_true=2 and sharded weights."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests._reference_arrays import Reference
from tests.nn._reference import arr

REF = Reference(os.path.join(os.path.dirname(__file__), "nn2_reference.json"))
WEIGHTS, BIASES, INPUTS = arr(10, 4), arr(10, offset=1.0), arr(3, 4, offset=2.0)
LABELS = np.array([[1, 5], [3, 0], [7, 2]], np.int64)
SAMPLED = (np.array([5, 8, 2, 9], np.int64), np.abs(arr(3, 2, offset=0.3)) + 0.1, np.abs(arr(4, offset=0.9)) + 0.1)


@pytest.mark.parametrize("hits", [False, True])
def test_losses_match_tf(hits):
    nce = tf.nn.nce_loss(WEIGHTS, BIASES, LABELS, INPUTS, 4, 10, num_true=2, sampled_values=SAMPLED,
                         remove_accidental_hits=hits)
    REF.close(nce, f"nce_{hits}", atol=1e-4)
    ssl = tf.nn.sampled_softmax_loss(WEIGHTS, BIASES, LABELS, INPUTS, 4, 10, num_true=2, sampled_values=SAMPLED,
                                     remove_accidental_hits=hits)
    REF.close(ssl, f"ssl_{hits}", atol=1e-4)


def test_sharded_weights_match_tf():
    loss = tf.nn.nce_loss([WEIGHTS[:5], WEIGHTS[5:]], BIASES, LABELS[:, :1], INPUTS, 4, 10,
                          sampled_values=(SAMPLED[0], SAMPLED[1][:, :1], SAMPLED[2]))
    REF.close(loss, "nce_shards", atol=1e-4)


def test_default_sampler_gives_finite_losses_with_gradients():
    weights = torch.tensor(arr(50, 4), requires_grad=True)
    loss = tf.nn.sampled_softmax_loss(weights, torch.zeros(50), LABELS[:, :1], INPUTS, 8, 50, seed=4)
    assert loss.shape == (3,) and bool(torch.isfinite(loss).all())
    loss.sum().backward()
    assert weights.grad is not None and float(weights.grad.abs().sum()) > 0


def test_bad_shapes_are_explained():
    with pytest.raises(ValueError, match="num_true"):
        tf.nn.nce_loss(WEIGHTS, BIASES, LABELS, INPUTS, 4, 10, num_true=1, sampled_values=SAMPLED)
    with pytest.raises(ValueError, match="inputs must be"):
        tf.nn.nce_loss(WEIGHTS, BIASES, LABELS, INPUTS[0], 4, 10, num_true=2, sampled_values=SAMPLED)
