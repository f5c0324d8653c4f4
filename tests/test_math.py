"""tf.math through `import torchstrategy as tf`: values against NumPy, dtype rules and results frozen
from TensorFlow 2.21 where TF's rules differ from NumPy's/torch's."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32) + 3.0
POSITIVE = np.abs(X) + 0.5


@pytest.mark.parametrize("op, reference", [
    (tf.math.add, np.add), (tf.math.subtract, np.subtract), (tf.math.multiply, np.multiply),
    (tf.math.divide, np.divide), (tf.math.truediv, np.true_divide), (tf.math.floordiv, np.floor_divide),
    (tf.math.floormod, np.mod), (tf.math.mod, np.mod), (tf.math.maximum, np.maximum),
    (tf.math.minimum, np.minimum), (tf.math.squared_difference, lambda a, b: (a - b) ** 2),
    (tf.math.greater, np.greater), (tf.math.greater_equal, np.greater_equal), (tf.math.less, np.less),
    (tf.math.less_equal, np.less_equal), (tf.math.equal, np.equal), (tf.math.not_equal, np.not_equal),
])
def test_binary_ops_match_numpy(op, reference) -> None:
    out = op(torch.from_numpy(X), Y)  # a NumPy float32 array pairs with a float32 tensor
    np.testing.assert_allclose(out.numpy(), reference(X, Y), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op, reference, data", [
    (tf.math.sqrt, np.sqrt, POSITIVE), (tf.math.rsqrt, lambda a: 1 / np.sqrt(a), POSITIVE),
    (tf.math.exp, np.exp, X), (tf.math.log, np.log, POSITIVE), (tf.math.log1p, np.log1p, POSITIVE),
    (tf.math.sigmoid, lambda a: 1 / (1 + np.exp(-a)), X), (tf.math.tanh, np.tanh, X),
    (tf.math.softplus, lambda a: np.log1p(np.exp(a)), X), (tf.math.abs, np.abs, X), (tf.math.sign, np.sign, X),
    (tf.math.square, np.square, X), (tf.math.negative, np.negative, X), (tf.math.floor, np.floor, X * 3),
    (tf.math.ceil, np.ceil, X * 3), (tf.math.round, np.round, X * 3), (tf.math.reciprocal, np.reciprocal, POSITIVE),
])
def test_unary_ops_match_numpy(op, reference, data) -> None:
    out = op(data)
    assert out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), reference(data), rtol=1e-5, atol=1e-6)


def test_python_values_follow_tf_conversion() -> None:
    # TF 2.21: tf.add(1, 2) -> int32, tf.add(1.5, 2) -> float32, np float64 stays float64, np int64 stays int64.
    assert tf.add(1, 2).dtype == torch.int32
    assert tf.add(1.5, 2).dtype == torch.float32 and tf.add(1.5, 2).item() == 3.5
    assert tf.add(np.array([1.0, 2.0]), 1).dtype == torch.float64
    assert tf.add(np.array([1, 2]), 1).dtype == torch.int64
    assert tf.add(np.int64(3), 1).dtype == torch.int64
    assert tf.add(np.float32(3), 1).dtype == torch.float32
    assert tf.add(tf.constant([1.0, 2.0]), [1, 2]).tolist() == [2.0, 4.0]


@pytest.mark.parametrize("call", [
    lambda: tf.add(tf.constant([1, 2]), 1.5),                     # float into an int32 op
    lambda: tf.add(np.array([1.0, 2.0]), tf.constant(1.0)),       # float64 array + float32 tensor
    lambda: tf.add(tf.constant([1, 2]), tf.constant([1.0, 2.0])),
    lambda: tf.greater(tf.constant([1, 5]), 3.5),
    lambda: tf.add(1, 2.5),
    lambda: tf.add_n([tf.constant([1, 2]), np.array([1, 2])]),     # int32 + int64
    lambda: tf.divide(tf.constant([7]), tf.constant([2.0])),
    lambda: tf.math.logical_and([True], [1]),
    lambda: tf.math.reduce_all([1, 0]),
])
def test_no_silent_promotion(call) -> None:
    # TF 2.21 raises InvalidArgumentError or TypeError for each of these; DTypeError is both.
    with pytest.raises(TypeError, match="dtype|convert|take"):
        call()
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("call", [
    lambda: tf.sqrt(tf.constant([4])), lambda: tf.sqrt(4), lambda: tf.exp(1), lambda: tf.floor(tf.constant([1])),
    lambda: tf.math.is_nan(tf.constant([1, 2])), lambda: tf.math.sigmoid(tf.constant([1])),
    lambda: tf.math.log1p(1), lambda: tf.math.reduce_std(tf.constant([1, 2])),
    lambda: tf.math.l2_normalize(tf.constant([3, 4])), lambda: tf.reduce_sum(tf.constant([True, True])),
    lambda: tf.negative(torch.tensor([1], dtype=torch.uint8)),
])
def test_float_only_ops_refuse_ints(call) -> None:
    with pytest.raises(TypeError, match="does not take .*cast"):
        call()


def test_string_input_to_math_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="tf.strings"):
        tf.add(np.array([b"a"], dtype=object), 1)
    with pytest.raises(TypeError):
        tf.equal(tf.constant([1, 5]), "a")  # TF 2.21: Cannot convert 'a' to EagerTensor of dtype int32
    with pytest.raises(TypeError):
        tf.greater(np.array([b"a"], dtype=object), b"a")


def test_string_equality() -> None:
    words = np.array([b"cat", b"dog"], dtype=object)
    assert tf.equal(words, "dog").tolist() == [False, True]
    assert tf.math.not_equal(words, [b"cat", b"cow"]).tolist() == [False, True]
    assert tf.equal(words, words).dtype == torch.bool


def test_integer_division_rules() -> None:
    # TF 2.21 values and dtypes.
    assert tf.divide(tf.constant([1, 2]), 2).dtype == torch.float64
    assert tf.math.truediv(7, 2).item() == 3.5
    assert tf.math.truediv(torch.tensor([7], dtype=torch.int16), torch.tensor([2], dtype=torch.int16)).dtype \
        == torch.float32
    assert tf.math.floordiv(tf.constant([-7, 7]), 2).tolist() == [-4, 3]
    assert tf.math.floordiv(tf.constant([-7, 7]), 2).dtype == torch.int32
    assert tf.math.floormod(tf.constant([-7, 7]), 3).tolist() == [2, 1]
    assert tf.math.floormod(tf.constant([-7.5, 7.0]), 3.0).tolist() == [1.5, 1.0]
    assert tf.math.floordiv(torch.tensor([7], dtype=torch.uint8), 2).dtype == torch.uint8
    assert tf.pow(tf.constant([2, 3]), 2).tolist() == [4, 9]
    with pytest.raises(TypeError, match="negative integer powers"):
        tf.pow(2, -1)
    assert tf.square(3).dtype == torch.int32 and tf.square(3).item() == 9
    assert tf.math.round(tf.constant([1, 2])).dtype == torch.int32


def test_round_is_half_to_even() -> None:
    assert tf.round([0.5, 1.5, 2.5, -0.5]).tolist() == [0.0, 2.0, 2.0, -0.0]  # TF 2.21


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), ([0, 1], False), (-1, True)])
@pytest.mark.parametrize("name, reference", [
    ("reduce_sum", np.sum), ("reduce_mean", np.mean), ("reduce_max", np.max), ("reduce_min", np.min),
    ("reduce_prod", np.prod), ("reduce_std", np.std), ("reduce_variance", np.var),
    ("reduce_logsumexp", lambda a, axis=None, keepdims=False: np.log(np.sum(np.exp(a), axis=axis,
                                                                            keepdims=keepdims))),
])
def test_reductions_match_numpy(name, reference, axis, keepdims) -> None:
    out = getattr(tf.math, name)(X, axis=axis, keepdims=keepdims)
    expected = reference(X, axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keepdims)
    assert out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_integer_reductions_keep_dtype() -> None:
    ints = tf.constant([[1, 2], [3, 5]])
    assert tf.reduce_sum(ints).dtype == torch.int32 and tf.reduce_sum(ints).item() == 11
    assert tf.reduce_prod(ints, axis=0).tolist() == [3, 10]
    assert tf.reduce_prod(ints).dtype == torch.int32
    # TF 2.21: integer means truncate: mean([1, 2]) == 1, mean([1, 2, 4]) == 2.
    assert tf.reduce_mean(tf.constant([1, 2])).item() == 1
    assert tf.reduce_mean(tf.constant([1, 2, 4])).item() == 2
    assert tf.reduce_mean(ints, axis=1).tolist() == [1, 4]
    assert tf.reduce_mean(ints).dtype == torch.int32
    assert tf.math.reduce_max(tf.constant([], tf.float32)).item() == float("-inf")  # TF 2.21


def test_std_and_variance_frozen_from_tf() -> None:
    # TF 2.21: reduce_std([1, 2, 4]) = 1.2472192, reduce_variance(axis=0, keepdims=True) = [1.5555557].
    assert tf.math.reduce_std(tf.constant([1.0, 2, 4])).item() == pytest.approx(1.2472192, abs=1e-7)
    variance = tf.math.reduce_variance(tf.constant([1.0, 2, 4]), axis=0, keepdims=True)
    assert variance.shape == (1,) and variance.numpy()[0] == np.float32(1.5555557)


def test_bool_reductions() -> None:
    mask = np.array([[True, False], [True, True]])
    assert tf.math.reduce_any(mask, axis=0).tolist() == [True, True]
    assert tf.math.reduce_all(mask, axis=1).tolist() == [False, True]
    assert tf.math.reduce_all(mask).item() is False
    assert tf.math.logical_not([True, False]).tolist() == [False, True]
    assert tf.math.logical_or([True, False], [False, False]).tolist() == [True, False]


def test_argmax_argmin_output_type() -> None:
    assert tf.argmax([1, 3, 2]).dtype == torch.int64 and tf.argmax([1, 3, 2]).item() == 1  # TF 2.21
    out = tf.argmax([[1, 3, 2]], axis=1, output_type=tf.int32)
    assert out.dtype == torch.int32 and out.tolist() == [1]
    np.testing.assert_array_equal(tf.argmin(X, axis=1).numpy(), np.argmin(X, axis=1))
    with pytest.raises(TypeError, match="output_type"):
        tf.argmax([1, 2], output_type=tf.float32)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_against_numpy(exclusive, reverse) -> None:
    data = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    out = tf.math.cumsum(data, axis=1, exclusive=exclusive, reverse=reverse)
    work = data[:, ::-1] if reverse else data
    expected = np.cumsum(work, axis=1)
    if exclusive:
        expected = np.concatenate([np.zeros((3, 1), np.int32), expected[:, :-1]], axis=1)
    expected = expected[:, ::-1] if reverse else expected
    assert out.dtype == torch.int32
    np.testing.assert_array_equal(out.numpy(), expected)
    assert tf.math.cumsum([1, 2, 3], exclusive=True, reverse=True).tolist() == [5, 3, 0]  # TF 2.21


def test_top_k_namedtuple_and_ties() -> None:
    result = tf.math.top_k([1, 3, 2], k=2)
    assert result.values.tolist() == [3, 2] and result.indices.tolist() == [1, 2]  # TF 2.21
    assert result.indices.dtype == torch.int32
    values, indices = tf.math.top_k(np.array([[5.0, 7.0, 7.0, 1.0]], np.float32), k=3)
    assert values.tolist() == [[7.0, 7.0, 5.0]] and indices.tolist() == [[1, 2, 0]]
    with pytest.raises(ValueError, match="k=5"):
        tf.math.top_k([1, 2], k=5)


def test_clip_divide_no_nan_l2_normalize_add_n() -> None:
    assert tf.clip_by_value(tf.constant([1, 5, 9]), 2, 6).tolist() == [2, 5, 6]
    assert tf.clip_by_value(tf.constant([1, 5, 9]), 2, 6).dtype == torch.int32
    assert tf.clip_by_value(tf.constant([1.0, 5, 9]), 2, 6).tolist() == [2.0, 5.0, 6.0]
    out = tf.math.divide_no_nan(tf.constant([1.0, 2]), tf.constant([0.0, 4]))
    assert out.tolist() == [0.0, 0.5] and out.dtype == torch.float32
    assert tf.math.divide_no_nan(tf.constant([1, 2]), tf.constant([0, 4])).dtype == torch.float64  # TF 2.21
    normalised = tf.math.l2_normalize(X, axis=1)
    np.testing.assert_allclose(normalised.numpy(), X / np.linalg.norm(X, axis=1, keepdims=True), rtol=1e-5)
    assert tf.math.l2_normalize([3.0, 4.0]).numpy().tolist() == pytest.approx([0.6, 0.8])
    assert tf.add_n([1, 2]).item() == 3 and tf.add_n([1, 2]).dtype == torch.int32
    np.testing.assert_allclose(tf.add_n([X, Y, X]).numpy(), X + Y + X, rtol=1e-6)


def test_count_nonzero_and_finiteness() -> None:
    assert tf.math.count_nonzero([1, 0, 2]).dtype == torch.int64
    assert tf.math.count_nonzero([1, 0, 2]).item() == 2
    out = tf.math.count_nonzero([[1.0, 0.0], [2.0, 3.0]], axis=0, dtype=tf.int32)
    assert out.dtype == torch.int32 and out.tolist() == [2, 1]
    data = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    assert tf.math.is_nan(data).tolist() == [False, True, False, False]
    assert tf.math.is_inf(data).tolist() == [False, False, True, True]
    assert tf.math.is_finite(data).tolist() == [True, False, False, False]


def test_segment_sums_and_bincount() -> None:
    assert tf.math.segment_sum([1, 2, 3, 4], [0, 0, 2, 2]).tolist() == [3, 0, 7]  # TF 2.21
    rows = tf.math.segment_sum(np.arange(6, dtype=np.float32).reshape(3, 2), [0, 1, 1])
    assert rows.tolist() == [[0.0, 1.0], [6.0, 8.0]]
    with pytest.raises(ValueError, match="sorted"):
        tf.math.segment_sum([1, 2], [1, 0])
    assert tf.math.unsorted_segment_sum([1, 2, 3, 4], [0, 1, 0, -1], 3).tolist() == [4, 2, 0]  # TF 2.21
    with pytest.raises(ValueError, match="out of range"):
        tf.math.unsorted_segment_sum([1, 2], [0, 5], 3)
    counts = tf.math.bincount([1, 1, 3])
    assert counts.tolist() == [0, 2, 0, 1] and counts.dtype == torch.int32  # TF 2.21
    weighted = tf.math.bincount([1, 1, 3], minlength=6, weights=[1.0, 2.0, 3.0])
    assert weighted.tolist() == [0.0, 3.0, 0.0, 3.0, 0.0, 0.0] and weighted.dtype == torch.float32
    values = RNG.integers(0, 7, size=50)
    np.testing.assert_array_equal(tf.math.bincount(values, maxlength=5).numpy(), np.bincount(values)[:5])


def test_top_level_aliases_are_the_math_ops() -> None:
    for name in ["add", "square", "reduce_prod", "maximum", "abs", "sqrt", "exp", "clip_by_value", "add_n",
                 "reduce_sum", "argmax", "equal", "cumsum", "logical_and"]:
        assert getattr(tf, name) is getattr(tf.math, name), name


def test_gradients_flow_through_the_ops() -> None:
    # Training code differentiates these ops with tf.GradientTape; check the gradients against closed forms.
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.math.reduce_logsumexp(x, axis=1)) + tf.reduce_sum(
            tf.math.unsorted_segment_sum(x, [1, 0], 2) * tf.constant([[1.0], [2.0]]))
    grad = tape.gradient(loss, x)
    softmax = torch.softmax(x.detach(), dim=1)
    expected = softmax + torch.tensor([[2.0, 2.0], [1.0, 1.0]])  # row 0 goes to segment 1 (weight 2)
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-6)
    v = torch.tensor([3.0, 4.0], requires_grad=True)
    tf.clip_by_value(v, 0.0, 3.5).sum().backward()
    assert v.grad.tolist() == [1.0, 0.0]  # the clipped entry gets no gradient
