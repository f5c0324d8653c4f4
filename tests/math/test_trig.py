"""tf.math's trigonometric/hyperbolic functions, C-style divisions, complex, scalar_mul and saturate_cast,
against TF 2.21 numbers (tools/tf_reference/tensors_reference.py) and NumPy."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

X = np.array([-0.9, -0.3, 0.0, 0.4, 0.8], np.float32)
TF_TRIG = {  # TF 2.21 tf.math.<name>(X), float32
    "tan": [-1.2601581811904907, -0.30933627486228943, 0.0, 0.4227932393550873, 1.0296385288238525],
    "asin": [-1.1197694540023804, -0.30469265580177307, 0.0, 0.41151684522628784, 0.9272952079772949],
    "acos": [2.690565824508667, 1.8754889965057373, 1.5707963705062866, 1.159279465675354, 0.6435011029243469],
    "atan": [-0.7328150868415833, -0.29145681858062744, 0.0, 0.38050639629364014, 0.6747409701347351],
    "sinh": [-1.0265166759490967, -0.30452030897140503, 0.0, 0.4107523262500763, 0.8881060481071472],
    "cosh": [1.4330863952636719, 1.04533851146698, 1.0, 1.0810723304748535, 1.3374348878860474],
    "asinh": [-0.8088668584823608, -0.29567307233810425, 0.0, 0.39003533124923706, 0.7326682209968567],
    "atanh": [-1.4722193479537964, -0.30951961874961853, 0.0, 0.4236489534378052, 1.0986123085021973],
}


@pytest.mark.parametrize("name", sorted(TF_TRIG))
def test_trig_matches_tf(name):
    out = getattr(tf.math, name)(X)
    assert out.dtype == torch.float32 and getattr(tf, name) is getattr(tf.math, name)
    np.testing.assert_allclose(out.numpy(), TF_TRIG[name], rtol=2e-6, atol=1e-7)


def test_acosh_atan2_and_int_refusal():
    np.testing.assert_allclose(tf.acosh([1.0, 2.5, 10.0]).numpy(), [0.0, 1.566799283027649, 2.993222951889038],
                               rtol=1e-6)
    np.testing.assert_allclose(tf.atan2([1.0, -1.0, 0.0], [-1.0, -1.0, 2.0]).numpy(),
                               [2.356194496154785, -2.356194496154785, 0.0], rtol=1e-6)
    with pytest.raises(TypeError, match="cast"):
        tf.tan(tf.constant([1, 2]))


def test_truncating_divisions_follow_c_not_python():
    x, y = tf.constant([7, -7, 7, -7]), tf.constant([2, 2, -2, -2])
    assert tf.truncatediv(x, y).tolist() == [3, -3, -3, 3]  # TF 2.21
    assert tf.truncatemod(x, y).tolist() == [1, -1, 1, -1]
    assert tf.truncatediv(x, y).dtype == torch.int32
    with pytest.raises(ZeroDivisionError):
        tf.truncatediv(x, tf.constant([1, 0, 1, 1]))
    np.testing.assert_allclose(tf.realdiv([1.0, 3.0], [2.0, 4.0]).numpy(), [0.5, 0.75])


def test_saturate_cast_clamps_to_the_target_range():
    out = tf.saturate_cast(tf.constant([-300.0, 12.7, 300.0]), tf.uint8)
    assert out.dtype == torch.uint8 and out.tolist() == [0, 12, 255]  # TF 2.21
    assert tf.saturate_cast(tf.constant([-70000, 5, 70000]), tf.int16).tolist() == [-32768, 5, 32767]


def test_complex_and_scalar_mul():
    z = tf.complex(tf.constant([1.0, 2.0]), tf.constant([3.0, -1.0]))
    assert z.dtype == torch.complex64
    np.testing.assert_allclose(z.numpy(), np.array([1 + 3j, 2 - 1j]))
    assert tf.scalar_mul(3, tf.constant([1.0, 2.0])).tolist() == [3.0, 6.0]
    with pytest.raises(ValueError, match="scalar"):
        tf.scalar_mul(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0]))
