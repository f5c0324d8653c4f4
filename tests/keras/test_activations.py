"""Keras activations against closed-form NumPy formulas, plus name resolution and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torchstrategy.keras import activations

X = np.linspace(-7.0, 7.0, 141)


def _run(fn, x=X, **kwargs):
    return fn(torch.tensor(x, dtype=torch.float64), **kwargs).numpy()


def _np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946

CLOSED_FORMS = {
    "linear": lambda x: x,
    "relu": lambda x: np.maximum(x, 0.0),
    "relu6": lambda x: np.clip(x, 0.0, 6.0),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.2 * x),
    "sigmoid": _np_sigmoid,
    "hard_sigmoid": lambda x: np.clip(0.2 * x + 0.5, 0.0, 1.0),
    "tanh": np.tanh,
    "elu": lambda x: np.where(x > 0, x, np.exp(x) - 1.0),
    "selu": lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1.0)),
    "gelu": lambda x: 0.5 * x * (1.0 + np.array([math.erf(v / math.sqrt(2.0)) for v in x])),
    "swish": lambda x: x * _np_sigmoid(x),
    "silu": lambda x: x * _np_sigmoid(x),
    "mish": lambda x: x * np.tanh(np.log1p(np.exp(x))),
    "softplus": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (np.abs(x) + 1.0),
    "exponential": np.exp,
}


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_activation_matches_closed_form(name):
    fn = activations.get(name)
    np.testing.assert_allclose(_run(fn), CLOSED_FORMS[name](X), rtol=1e-10, atol=1e-12)


def test_gelu_approximate_uses_tanh_formula():
    expected = 0.5 * X * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (X + 0.044715 * X ** 3)))
    np.testing.assert_allclose(_run(activations.gelu, approximate=True), expected, rtol=1e-10, atol=1e-12)


def test_elu_alpha():
    np.testing.assert_allclose(_run(activations.elu, alpha=0.5), np.where(X > 0, X, 0.5 * (np.exp(X) - 1)), rtol=1e-12)


@pytest.mark.parametrize("alpha,max_value,threshold", [(0.0, None, 0.0), (0.1, None, 0.0), (0.0, 6.0, 0.0),
                                                        (0.0, None, 1.5), (0.3, 4.0, 1.0), (0.2, 6.0, 0.0)])
def test_relu_options(alpha, max_value, threshold):
    positive = np.where(X > threshold, X, 0.0)
    if max_value is not None:
        positive = np.clip(positive, 0.0, max_value)
    expected = np.where(X > threshold, positive, alpha * (X - threshold))
    got = _run(activations.relu, negative_slope=alpha, max_value=max_value, threshold=threshold)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax_along_axis(axis):
    x = np.random.default_rng(0).normal(size=(3, 4, 5))
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    expected = e / e.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(_run(activations.softmax, x, axis=axis), expected, rtol=1e-10)
    np.testing.assert_allclose(_run(activations.log_softmax, x, axis=axis), np.log(expected), rtol=1e-10)


def test_softmax_rejects_1d_input():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        activations.softmax(torch.ones(3))


def test_get_none_and_linear_are_identity():
    x = torch.randn(4)
    assert activations.get(None)(x) is x
    assert activations.get("linear")(x) is x


def test_get_passes_callables_through():
    fn = lambda t: t * 2  # noqa: E731
    assert activations.get(fn) is fn


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match=r"Unknown activation function: 'relux'.*'relu'.*'sigmoid'"):
        activations.get("relux")


def test_bad_identifier_type():
    with pytest.raises(ValueError, match="Could not interpret activation identifier"):
        activations.get(3)


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_serialize_round_trip(name):
    fn = activations.get(name)
    restored = activations.deserialize(activations.serialize(fn))
    assert restored is fn
    assert activations.serialize(activations.silu) == "swish"


def test_serialize_custom_callable_returns_it():
    custom = lambda t: t + 1  # noqa: E731
    assert activations.serialize(custom) is custom
    assert activations.deserialize("my_act", custom_objects={"my_act": custom}) is custom
