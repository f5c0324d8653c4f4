"""tf.nn losses against TF 2.21 (tests/nn/nn_reference.json): log_poisson_loss, weighted cross entropy,
ctc_loss with TF 2's default blank 0 and a negative blank_index; the existing cross-entropies stay."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.nn._reference import arr, close

F = arr(3, 5) * 3


def test_log_poisson_and_weighted_cross_entropy():
    targets = np.abs(arr(3, 5, offset=0.4)) * 3
    close(tf.nn.log_poisson_loss(targets, F), "log_poisson")
    close(tf.nn.log_poisson_loss(targets, F, compute_full_loss=True), "log_poisson_full", atol=1e-4)
    labels = (arr(3, 5, offset=2.0) > 0).astype(np.float32)
    close(tf.nn.weighted_cross_entropy_with_logits(labels, F, 2.5), "weighted_ce")
    plain = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=F)
    torch.testing.assert_close(tf.nn.weighted_cross_entropy_with_logits(labels, F, 1.0), plain)


def test_ctc_loss_blank_positions_and_gradient():
    logits = torch.tensor(arr(8, 2, 5, offset=0.2), requires_grad=True)
    labels = np.array([[1, 2, 2], [3, 1, 0]], np.int32)
    loss = tf.nn.ctc_loss(labels, logits, [3, 2], [8, 6])
    close(loss, "ctc_loss", atol=1e-4)
    close(tf.nn.ctc_loss(labels, logits, [3, 2], [8, 6], blank_index=-1), "ctc_loss_blank_last", atol=1e-4)
    batch_major = tf.nn.ctc_loss(labels, logits.transpose(0, 1), [3, 2], [8, 6], logits_time_major=False)
    torch.testing.assert_close(batch_major, loss)
    loss.sum().backward()
    assert torch.isfinite(logits.grad).all() and logits.grad[6:, 1].abs().max() == 0


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.log_poisson_loss(np.ones(3, np.float32), F)
    with pytest.raises(ValueError, match="blank_index"):
        tf.nn.ctc_loss(np.zeros((2, 1), np.int32), arr(4, 2, 3), [1, 1], [4, 4], blank_index=3)
    with pytest.raises(NotImplementedError, match="unique"):
        tf.nn.ctc_loss(np.zeros((2, 1), np.int32), arr(4, 2, 3), [1, 1], [4, 4], unique=1)
