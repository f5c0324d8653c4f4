"""Merge layers on lists of tensors against NumPy, including Keras's rank-broadcast rule,
Concatenate/Dot shape checks, the functional forms, and error messages."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torchstrategy.keras import layers

RNG = np.random.default_rng(4)


def _arrays(*shapes):
    return [RNG.normal(size=s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize("cls,reference", [
    (layers.Add, lambda xs: xs[0] + xs[1] + xs[2]),
    (layers.Multiply, lambda xs: xs[0] * xs[1] * xs[2]),
    (layers.Average, lambda xs: (xs[0] + xs[1] + xs[2]) / 3),
    (layers.Maximum, lambda xs: np.maximum(np.maximum(xs[0], xs[1]), xs[2])),
    (layers.Minimum, lambda xs: np.minimum(np.minimum(xs[0], xs[1]), xs[2])),
])
def test_elementwise_merges(cls, reference):
    xs = _arrays((2, 3, 4), (2, 3, 4), (2, 1, 4))
    out = cls()([torch.tensor(x) for x in xs]).numpy()
    np.testing.assert_allclose(out, reference(xs), rtol=1e-6)


def test_lower_rank_inputs_gain_axes_after_batch():
    a, b = _arrays((2, 4), (2, 3, 4))
    out = layers.Add()([torch.tensor(a), torch.tensor(b)]).numpy()
    np.testing.assert_allclose(out, a[:, None, :] + b, rtol=1e-6)
    # Batch 2 vs middle axis 2: plain right-aligned broadcasting would pair them wrongly.
    c, d = _arrays((2, 3), (2, 2, 3))
    np.testing.assert_allclose(layers.Multiply()([torch.tensor(c), torch.tensor(d)]).numpy(), c[:, None] * d, rtol=1e-6)


def test_subtract_needs_exactly_two():
    a, b = _arrays((2, 3), (2, 3))
    np.testing.assert_allclose(layers.Subtract()([torch.tensor(a), torch.tensor(b)]).numpy(), a - b, rtol=1e-6)
    with pytest.raises(ValueError, match=r"exactly 2 inputs\. Received 3 inputs"):
        layers.Subtract()([torch.tensor(a)] * 3)


def test_incompatible_shapes_and_non_list_raise():
    a, b = _arrays((2, 3), (2, 4))
    with pytest.raises(ValueError, match=r"'add_me'.*incompatible shapes \[\(None, 3\), \(None, 4\)\]"):
        layers.Add(name="add_me")([torch.tensor(a), torch.tensor(b)])
    with pytest.raises(ValueError, match="should be called on a list of tensors"):
        layers.Add()(torch.tensor(a))


@pytest.mark.parametrize("axis", [-1, 1, 2])
def test_concatenate(axis):
    shapes = {-1: [(2, 3, 4), (2, 3, 5)], 1: [(2, 1, 4), (2, 3, 4)], 2: [(2, 3, 2), (2, 3, 6)]}[axis]
    xs = _arrays(*shapes)
    out = layers.Concatenate(axis=axis)([torch.tensor(x) for x in xs]).numpy()
    np.testing.assert_array_equal(out, np.concatenate(xs, axis=axis))
    np.testing.assert_array_equal(layers.concatenate([torch.tensor(x) for x in xs], axis=axis).numpy(), out)


def test_concatenate_mismatch_raises():
    a, b = _arrays((2, 3, 4), (2, 5, 6))
    with pytest.raises(ValueError, match=r"matching shapes except for the concatenation axis.*\(None, 3, 4\), \(None, 5, 6\)"):
        layers.Concatenate()([torch.tensor(a), torch.tensor(b)])


def test_dot_2d_and_normalized():
    a, b = _arrays((4, 5), (4, 5))
    out = layers.Dot(axes=1)([torch.tensor(a), torch.tensor(b)]).numpy()
    np.testing.assert_allclose(out, (a * b).sum(1, keepdims=True), rtol=1e-5)
    cosine = layers.Dot(axes=-1, normalize=True)([torch.tensor(a), torch.tensor(b)]).numpy()
    expected = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(cosine, expected[:, None], rtol=1e-5)


@pytest.mark.parametrize("axes,shape_a,shape_b,spec", [
    ((2, 2), (2, 3, 4), (2, 5, 4), "bij,bkj->bik"),
    ((2, 1), (2, 3, 4), (2, 4, 6), "bij,bjk->bik"),
    ((1, 1), (2, 3, 4), (2, 3, 6), "bji,bjk->bik"),
])
def test_dot_3d_axes(axes, shape_a, shape_b, spec):
    a, b = _arrays(shape_a, shape_b)
    out = layers.dot([torch.tensor(a), torch.tensor(b)], axes=axes).numpy()
    np.testing.assert_allclose(out, np.einsum(spec, a, b), rtol=1e-5, atol=1e-6)


def test_dot_bad_axes():
    a, b = _arrays((2, 3), (2, 4))
    with pytest.raises(ValueError, match="dotted axes must be non-batch axes of equal size"):
        layers.Dot(axes=1)([torch.tensor(a), torch.tensor(b)])


def test_function_forms():
    a, b = _arrays((2, 3), (2, 3))
    ta, tb = torch.tensor(a), torch.tensor(b)
    np.testing.assert_allclose(layers.add([ta, tb]).numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose(layers.subtract([ta, tb]).numpy(), a - b, rtol=1e-6)
    np.testing.assert_allclose(layers.multiply([ta, tb]).numpy(), a * b, rtol=1e-6)
    np.testing.assert_allclose(layers.average([ta, tb]).numpy(), (a + b) / 2, rtol=1e-6)
    np.testing.assert_array_equal(layers.maximum([ta, tb]).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(layers.minimum([ta, tb]).numpy(), np.minimum(a, b))
