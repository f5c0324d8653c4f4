"""tf.math's new special functions, segment reductions and checks beyond the frozen TF numbers: gradients
through torch, TF's dtype refusals, torch-tensor inputs and clear errors on bad input."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_special_functions_take_torch_tensors_and_carry_gradients():
    x = torch.tensor([0.3, 1.2], requires_grad=True)
    tf.math.erf(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 / np.sqrt(np.pi) * np.exp(-x.detach().numpy() ** 2), rtol=1e-6)


def test_xlogy_gradient_is_finite_where_x_is_zero():
    x = torch.tensor([0.0, 2.0], requires_grad=True)
    y = torch.tensor([0.0, 3.0], requires_grad=True)
    out = tf.math.xlogy(x, y)
    out.sum().backward()
    assert out.tolist() == [0.0, pytest.approx(2 * np.log(3.0))]
    assert torch.isfinite(x.grad).all() and torch.isfinite(y.grad).all()
    assert y.grad[1].item() == pytest.approx(2 / 3)


def test_segment_max_gradient_flows_to_the_winning_rows():
    data = torch.tensor([1.0, 5.0, 3.0], requires_grad=True)
    tf.math.unsorted_segment_max(data, [0, 0, 1], 2).sum().backward()
    assert data.grad.tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize("fn", [tf.math.erf, tf.math.lgamma, tf.math.softmax, tf.math.bessel_i0, tf.math.rint])
def test_float_only_ops_refuse_ints(fn):
    with pytest.raises(TypeError, match="cast"):
        fn(np.array([1, 2], np.int32))


def test_mixed_dtypes_are_refused_not_promoted():
    with pytest.raises(TypeError, match="different dtypes"):
        tf.math.igamma(np.float32([1.0]), np.float64([1.0]))
    assert tf.math.xdivy(2.0, 4.0).dtype == torch.float32  # Python floats are float32, as TF


def test_sorted_segment_ops_refuse_unsorted_ids():
    with pytest.raises(ValueError, match="sorted"):
        tf.math.segment_max([1.0, 2.0], [1, 0])
    with pytest.raises(ValueError, match="out of range"):
        tf.math.unsorted_segment_min([1.0, 2.0], [0, 5], 3)
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.math.segment_mean([1.0, 2.0], np.float32([0, 0]))


def test_invert_permutation_refuses_a_non_permutation():
    with pytest.raises(ValueError, match="not a permutation"):
        tf.math.invert_permutation([0, 0, 1])
    assert tf.math.invert_permutation(torch.tensor([2, 0, 1])).tolist() == [1, 2, 0]


def test_approx_min_k_and_other_axes_are_exact():
    values = np.array([[1.0, 9.0, 3.0, 9.0], [4.0, 2.0, 8.0, 0.0]], np.float32)
    low, low_at = tf.math.approx_min_k(values, 2)
    assert low.tolist() == [[1.0, 3.0], [0.0, 2.0]] and low_at.tolist() == [[0, 2], [3, 1]]
    high, high_at = tf.math.approx_max_k(values, 1, reduction_dimension=0)
    np.testing.assert_array_equal(high.numpy(), values.max(0, keepdims=True))
    assert high_at.dtype == torch.int32 and high_at.tolist() == [[1, 0, 1, 0]]
    with pytest.raises(TypeError, match="float32"):
        tf.math.approx_max_k(np.array([[1, 2]], np.int32), 1)


def test_in_top_k_and_confusion_matrix_bad_shapes():
    with pytest.raises(ValueError, match=r"\[batch, classes\]"):
        tf.math.in_top_k([0, 1], np.float32([0.1, 0.2]), 1)
    with pytest.raises(ValueError, match="out of range"):
        tf.math.confusion_matrix([0, 3], [0, 1], num_classes=2)
    with pytest.raises(ValueError, match="non-negative"):
        tf.math.confusion_matrix([0, -1], [0, 1])


def test_polygamma_and_betainc_edges():
    assert torch.isnan(tf.math.polygamma(np.float32([0.5]), np.float32([1.0]))).all()
    out = tf.math.betainc(np.float32([2.0, 2.0, -1.0]), np.float32([3.0, 3.0, 1.0]), np.float32([0.0, 1.0, 0.5]))
    assert out[:2].tolist() == [0.0, 1.0] and torch.isnan(out[2])


def test_complex_parts():
    z = np.array([1 + 2j, -3 - 1j], np.complex64)
    assert tf.math.real(z).tolist() == [1.0, -3.0] and tf.math.imag(z).tolist() == [2.0, -1.0]
    assert tf.math.conj(z).numpy().tolist() == [1 - 2j, -3 + 1j]
    np.testing.assert_allclose(tf.math.angle(z).numpy(), np.angle(z), rtol=1e-6)


# ----- tf.math.special (torchstrategy/math/special.py) against TF 2.21 (tests/math/special_reference.json) -----

_SPECIAL_FNS = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "bessel_j0", "bessel_j1", "bessel_k0",
                "bessel_k0e", "bessel_k1", "bessel_k1e", "bessel_y0", "bessel_y1", "dawsn", "expint", "fresnel_cos",
                "fresnel_sin", "spence"]
_SPECIAL_X = [-3.0, -0.5, 0.0, 0.1, 0.5, 1.0, 1.7, 1.9, 2.5, 4.0, 10.0, 75.0]


def _special_reference():
    import os

    from tests._reference_arrays import Reference
    return Reference(os.path.join(os.path.dirname(__file__), "special_reference.json"))


@pytest.mark.parametrize("fn", _SPECIAL_FNS)
def test_math_special_matches_tf(fn):
    ref = _special_reference()
    x = torch.tensor(_SPECIAL_X, dtype=torch.float64)
    expected = ref.ref(fn)
    got = getattr(tf.math.special, fn)(x).numpy()
    rtol = 5e-7 if fn == "dawsn" else 2e-7  # Rybicki's formula: about 3e-7 relative at worst
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-12, equal_nan=True, err_msg=fn)
    got32 = getattr(tf.math.special, fn)(x.float())
    assert got32.dtype == torch.float32
    expected32 = ref.ref(fn + "_f32")
    if fn == "bessel_y1":
        # TF's float32 kernel gives NaN at 0 where its float64 one gives -inf; ours gives -inf for both.
        assert np.isnan(expected32[2]) and got32[2].item() == -np.inf
        expected32[2] = -np.inf
    np.testing.assert_allclose(got32.numpy(), expected32, rtol=2e-5, atol=1e-6, equal_nan=True, err_msg=fn)
