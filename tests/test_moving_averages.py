"""tf.train.ExponentialMovingAverage against TF 2.21's numbers (frozen from tools/tf_reference/
iodata_reference.py): shadow start, decay, the num_updates cap, names, variables_to_restore and bad input."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf


def test_shadow_follows_the_variable_as_tf():
    v = tf.Variable(1.0)
    ema = tf.train.ExponentialMovingAverage(0.9)
    ema.apply([v])
    seen = [float(ema.average(v))]
    for value in (2.0, 4.0):
        v.assign(value)
        ema.apply([v])
        seen.append(float(ema.average(v)))
    assert seen == pytest.approx([1.0, 1.100000023841858, 1.3900001049041748], abs=1e-6)  # TF 2.21
    assert ema.name == "ExponentialMovingAverage"
    assert ema.average_name(v) == "Variable/ExponentialMovingAverage"
    assert ema.average(v).name == "Variable/ExponentialMovingAverage:0"
    assert ema.average(tf.Variable(0.0)) is None


def test_num_updates_caps_the_decay_as_tf():
    v, step = tf.Variable(0.0), tf.Variable(0)
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
    ema.apply([v])
    seen = []
    for value in (10.0, 20.0):
        v.assign(value)
        step.assign_add(1)
        ema.apply([v])
        seen.append(float(ema.average(v)))
    assert seen == pytest.approx([8.181818008422852, 17.045454025268555], abs=1e-5)  # TF 2.21


def test_variables_to_restore_and_tensors():
    w = tf.Variable(1.0, name="w")
    ema = tf.train.ExponentialMovingAverage(0.5)
    ema.apply([w])
    assert ema.variables_to_restore() == {"w/ExponentialMovingAverage": w}
    with pytest.raises(TypeError, match="does not support non-Variable tensors"):  # TF 2.21 in eager mode
        tf.train.ExponentialMovingAverage(0.5, zero_debias=True).apply([torch.tensor([2.0])])
    with pytest.raises(TypeError, match="floating point"):
        ema.apply([tf.Variable(3)])
