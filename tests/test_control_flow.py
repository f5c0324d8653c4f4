"""tf.cond / case / switch_case / while_loop / map_fn / vectorized_map / scan / foldl / foldr: results against
TF 2.21 numbers (tools/tf_reference/tensors_reference.py) and NumPy, laziness, and clear errors."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import torchstrategy as tf


def test_cond_runs_only_the_chosen_branch():
    ran = []
    assert tf.cond(tf.constant(False), lambda: ran.append("t") or 1, lambda: ran.append("f") or 2) == 2
    assert ran == ["f"]
    assert tf.cond(True, lambda: tf.constant([1, 2]), lambda: tf.constant([3, 4])).tolist() == [1, 2]


def test_cond_and_map_fn_refuse_non_callables():
    with pytest.raises(TypeError, match="'true_fn' must be callable"):
        tf.cond(True, 1, lambda: 2)
    with pytest.raises(TypeError, match="'fn' must be callable"):
        tf.map_fn(3, tf.constant([1, 2]))
    with pytest.raises(TypeError, match="bool"):
        tf.cond(tf.constant(1), lambda: 1, lambda: 2)


def test_case_picks_the_first_true_pair_and_checks_exclusivity():
    pairs = [(tf.constant(False), lambda: 1), (tf.constant(True), lambda: 2), (tf.constant(True), lambda: 3)]
    assert tf.case(pairs) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one"):
        tf.case(pairs, exclusive=True)
    assert tf.case([(tf.constant(False), lambda: 1)], default=lambda: 9) == 9
    with pytest.raises(tf.errors.InvalidArgumentError, match="none of the conditions"):  # as TF 2.21
        tf.case([(tf.constant(False), lambda: 1)])


def test_switch_case_out_of_range_runs_default_or_last_branch():
    branches = [lambda: tf.constant(1), lambda: tf.constant(2)]
    assert int(tf.switch_case(tf.constant(0), branches)) == 1
    assert int(tf.switch_case(tf.constant(7), branches, default=lambda: tf.constant(-1))) == -1  # TF 2.21
    assert int(tf.switch_case(tf.constant(5), branches)) == 2  # TF 2.21: the last branch
    assert int(tf.switch_case(tf.constant(1), {0: lambda: 10, 1: lambda: 11})) == 11
    with pytest.raises(TypeError, match="must be a Tensor"):
        tf.switch_case(1, branches)


def test_while_loop_matches_tf_and_keeps_the_structure():
    i, s = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + tf.cast(i * i, tf.float32)),
                         (tf.constant(0), tf.constant(0.5)), maximum_iterations=4)
    assert int(i) == 4 and float(s) == 14.5  # TF 2.21
    Pair = collections.namedtuple("Pair", "a b")
    out = tf.while_loop(lambda p: p.a < 3, lambda p: Pair(p.a + 1, p.b * 2), [Pair(tf.constant(0), tf.constant(1))])
    assert isinstance(out, list) and isinstance(out[0], Pair) and out[0].b.item() == 8
    assert int(tf.while_loop(lambda x: x < 10, lambda x: x * 3, tf.constant(1))) == 27  # a bare tensor


def test_while_loop_shape_change_needs_shape_invariants():
    grow = dict(cond=lambda x: tf.shape(x)[0] < 4, body=lambda x: tf.concat([x, x], 0))
    with pytest.raises(ValueError, match=r"enters the loop with shape \[1\] but has shape \[2\].*shape_invariants"):
        tf.while_loop(loop_vars=[tf.constant([1])], **grow)
    out = tf.while_loop(loop_vars=[tf.constant([1])], shape_invariants=[tf.TensorShape([None])], **grow)
    assert out[0].tolist() == [1, 1, 1, 1]
    with pytest.raises(TypeError, match="dtype"):
        tf.while_loop(lambda x: x < 2, lambda x: tf.cast(x, tf.float32) + 1, [tf.constant(0)])
    with pytest.raises(ValueError, match="same structure"):
        tf.while_loop(lambda a, b: a < 2, lambda a, b: (a + 1,), [tf.constant(0), tf.constant(0)])


def test_map_fn_over_nests_and_vectorized_map_match_numpy():
    values = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(tf.map_fn(lambda row: row * row, tf.constant(values)).numpy(), values ** 2)
    summed = tf.map_fn(lambda pair: pair[0] + pair[1], (tf.constant([1, 2]), tf.constant([10, 20])))
    assert summed.tolist() == [11, 22]
    np.testing.assert_allclose(tf.vectorized_map(lambda row: row.sum() * row, tf.constant(values)).numpy(),
                               values.sum(1, keepdims=True) * values)
    # vmap cannot run data-dependent Python control flow: the loop fallback gives the same numbers
    out = tf.vectorized_map(lambda row: row * 2 if float(row[0]) > 3 else row, tf.constant(values), warn=False)
    np.testing.assert_allclose(out.numpy(), np.where(values[:, :1] > 3, values * 2, values))


def test_scan_and_folds_match_tf():
    assert tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3, 4])).tolist() == [1, 3, 6, 10]  # TF 2.21
    assert tf.scan(lambda a, x: a * 2 + x, tf.constant([1, 2, 3]), initializer=tf.constant(1),
                   reverse=True).tolist() == [25, 12, 5]
    first, second = tf.scan(lambda a, x: (a[0] + x, a[1] * x), tf.constant([1, 2, 3]),
                            initializer=(tf.constant(0), tf.constant(1)))
    assert first.tolist() == [1, 3, 6] and second.tolist() == [1, 2, 6]
    assert int(tf.foldl(lambda a, x: a - x, tf.constant([1, 2, 3]))) == -4
    assert int(tf.foldr(lambda a, x: a - x, tf.constant([1, 2, 3]))) == 0
    assert int(tf.foldl(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]), initializer=tf.constant(5))) == 5123


def test_map_fn_refuses_mismatched_elems():
    with pytest.raises(ValueError, match="same size along axis 0"):
        tf.map_fn(lambda p: p[0], (tf.constant([1, 2]), tf.constant([1, 2, 3])))
    with pytest.raises(ValueError, match="scalar"):
        tf.map_fn(lambda x: x, tf.constant(1))


def test_while_loop_unknown_rank_invariant_allows_any_shape():
    out = tf.while_loop(lambda x: tf.size(x) < 4, lambda x: tf.reshape(tf.concat([x, x], 0), [-1, 1]),
                        [tf.constant([1])], shape_invariants=[tf.TensorShape(None)])
    assert out[0].shape == (4, 1)
