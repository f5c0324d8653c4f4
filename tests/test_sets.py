"""tf.sets against TF 2.21 (tests/sparse_reference.json: dense and sparse sets, strings, the errors TF gives)
and against Python sets on random integer rows."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf
from tests import _sparse_reference


def test_every_case_matches_tf_2_21() -> None:
    failures = _sparse_reference.run(lambda case: case.startswith("tf.sets."))
    assert not failures, "\n".join(failures)


def _rows_of(sparse) -> list:
    rows = [[] for _ in range(int(sparse.dense_shape[0]))]
    for (row, _), value in zip(sparse.indices.tolist(), sparse.values.tolist()):
        rows[row].append(value)
    return rows


@pytest.mark.parametrize("name", ["intersection", "union", "difference"])
def test_against_python_sets(name: str) -> None:
    rng = np.random.default_rng(7)
    a, b = rng.integers(0, 6, (5, 4)), rng.integers(0, 6, (5, 3))
    got = _rows_of(getattr(tf.sets, name)(a.astype(np.int32), b.astype(np.int32)))
    combine = {"intersection": set.intersection, "union": set.union, "difference": set.difference}[name]
    assert got == [sorted(combine(set(x), set(y))) for x, y in zip(a.tolist(), b.tolist())]
    sizes = tf.sets.size(tf.sparse.from_dense(a + 1))  # from_dense drops zeros: shift so every value counts
    assert sizes.tolist() == [len(set(row)) for row in a.tolist()]


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="integer or string"):
        tf.sets.union(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="different dtypes"):
        tf.sets.union(np.ones((2, 2), np.int32), np.ones((2, 2), np.int64))
