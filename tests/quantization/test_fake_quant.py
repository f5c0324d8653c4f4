"""quantization/_fake_quant.py: fake_quant_with_min_max_* and their gradients equal TF 2.21's numbers exactly
(tests/quantization/quantization_reference.json), as ops and through GradientTape."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from tests.quantization._reference import CHANNEL_MAXES, CHANNEL_MINS, GRADS, MATRIX, REF, X, exactly

q = tf.quantization


def test_min_max_args_nudges_the_range_so_zero_is_exact():
    exactly(q.fake_quant_with_min_max_args(X), "args_default")
    exactly(q.fake_quant_with_min_max_args(X, min=-1.1, max=2.3, num_bits=4, narrow_range=True),
            "args_m1_2_4bit_narrow")
    exactly(q.fake_quant_with_min_max_args(X, min=0.1, max=5.0), "args_0p1_5")  # range moved to include 0
    exactly(q.fake_quant_with_min_max_args_gradient(GRADS, X, min=-1.1, max=2.3, num_bits=4, narrow_range=True),
            "args_grad")


def test_min_max_vars_and_their_gradients():
    exactly(q.fake_quant_with_min_max_vars(X, -2.5, 3.1, num_bits=6), "vars")
    wrt_input, wrt_min, wrt_max = q.fake_quant_with_min_max_vars_gradient(GRADS, X, -2.5, 3.1, num_bits=6)
    exactly(wrt_input, REF["vars_grad"][0])
    assert (float(wrt_min), float(wrt_max)) == tuple(REF["vars_grad"][1:])


def test_the_tape_gives_tfs_gradients_for_inputs_and_range_variables():
    low, high = tf.Variable(-2.5), tf.Variable(3.1)
    x = torch.tensor(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(q.fake_quant_with_min_max_vars(x, low, high, num_bits=6) * torch.tensor(GRADS))
    grad_x, grad_low, grad_high = tape.gradient(loss, [x, low, high])
    exactly(grad_x, REF["tape_vars"][0])
    assert (float(grad_low), float(grad_high)) == tuple(REF["tape_vars"][1:])


def test_per_channel_ranges_and_gradients():
    exactly(q.fake_quant_with_min_max_vars_per_channel(MATRIX, CHANNEL_MINS, CHANNEL_MAXES, num_bits=5), "pc")
    result = q.fake_quant_with_min_max_vars_per_channel_gradient(GRADS.reshape(4, 3), MATRIX, CHANNEL_MINS,
                                                                 CHANNEL_MAXES, num_bits=5)
    for got, want in zip(result, REF["pc_grad"]):
        exactly(got, want)
    assert result.backprop_wrt_min.shape == (3,)


def test_bad_ranges_and_bit_widths_are_refused_as_tf_refuses_them():
    # TF 2.21 raises InvalidArgumentError with these messages
    assert "min has to be smaller than max" in REF["err_args_minmax"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="min has to be smaller than max"):
        q.fake_quant_with_min_max_args(X, min=2.0, max=1.0)
    assert "num_bits must be between 2 and 16, inclusive" in REF["err_bits"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_bits must be between 2 and 16, inclusive"):
        q.fake_quant_with_min_max_args(X, num_bits=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be scalars"):
        q.fake_quant_with_min_max_vars(X, [0.0, 1.0], 2.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="last dimension"):
        q.fake_quant_with_min_max_vars_per_channel(MATRIX, CHANNEL_MINS[:2], CHANNEL_MAXES[:2])
