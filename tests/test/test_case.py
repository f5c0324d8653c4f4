"""tf.test.TestCase: TF's helpers on tensors and structures (failure text noted from TF 2.21), seeds, sessions."""
from __future__ import annotations

import collections

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.errors import InvalidArgumentError


class _Case(tf.test.TestCase):
    __test__ = False  # driven by the tests below, not collected itself

    def runTest(self) -> None:  # noqa: N802 - unittest's name
        pass


@pytest.fixture
def case():
    return _Case()


def test_all_close_and_equal_on_tensors_and_structures(case):
    Point = collections.namedtuple("Point", "x y")
    case.assertAllClose({"a": torch.tensor([1.0, 2.0]), "b": (Point(1.0, [2.0]), 3)},
                        {"a": np.array([1.0, 2.0 + 1e-7]), "b": (Point(1.0, [2.0]), 3.0)})
    with pytest.raises(AssertionError, match="Shape mismatch"):
        case.assertAllClose(1.0, [1.0, 1.0])  # TF 2.21: no broadcasting
    with pytest.raises(AssertionError, match="tolerance"):
        case.assertAllClose({"a": [1.0], "b": (2.0, 3.0)}, {"a": [1.0], "b": (2.0, 3.5)})
    case.assertNotAllClose([1.0, 2.0], [1.0, 2.1])
    case.assertAllEqual(torch.tensor([[1, 2]]), [[1, 2]])
    with pytest.raises(AssertionError, match="Shape mismatch"):
        case.assertAllEqual([1, 2], [[1, 2]])
    with pytest.raises(AssertionError, match="not equal"):
        case.assertAllEqual([1, 2], [1, 3])
    case.assertNotAllEqual([1, 2], [1, 3])
    case.assertAllCloseAccordingToType(torch.tensor([1.0], dtype=torch.float16), torch.tensor([1.0005]))
    with pytest.raises(AssertionError):
        case.assertAllCloseAccordingToType(torch.tensor([1.0]), torch.tensor([1.0005]))


def test_range_set_order_shape_dtype_and_near_helpers(case):
    case.assertAllInRange(torch.tensor([0, 4]), 0, 4)
    with pytest.raises(AssertionError, match=r"1 of the 2 element\(s\) are outside the range \[0, 4\]"):
        case.assertAllInRange([1, 5], 0, 4)
    with pytest.raises(AssertionError, match="outside the range \\(0, 4\\)"):
        case.assertAllInRange([0, 1], 0, 4, open_lower_bound=True, open_upper_bound=True)
    with pytest.raises(AssertionError, match=r"1 unique element\(s\) are not in the set \[1, 2\]: \[5\]"):
        case.assertAllInSet([1, 5], [1, 2])
    case.assertAllGreater(torch.tensor([4, 5]), 3)
    with pytest.raises(AssertionError):
        case.assertAllGreater([1, 5], 3)
    case.assertAllLess([1, 2], 3)
    case.assertAllGreaterEqual([3], 3)
    case.assertAllLessEqual([3], 3)
    case.assertShapeEqual(np.zeros((2, 3)), torch.zeros(2, 3))
    with pytest.raises(AssertionError):
        case.assertShapeEqual(np.zeros((2, 3)), torch.zeros(3, 2))
    case.assertDTypeEqual(np.zeros(2, np.float32), np.float32)
    case.assertDTypeEqual(torch.zeros(2), torch.float32)
    with pytest.raises(AssertionError, match=r"1.000000 != 1.200000 \+/- 0.100000"):
        case.assertNear(1.0, 1.2, 0.1)
    case.assertArrayNear([1.0, 2.0], [1.05, 2.0], 0.1)
    case.assertNDArrayNear(np.ones((2, 2)), np.ones((2, 2)) + 0.01, 0.1)
    case.assertItemsEqual([1, 2, 2], [2, 1, 2])
    case.assertDeviceEqual("/device:GPU:0", "cuda:0")
    case.assertDictEqual({"a": torch.tensor([1, 2]), "b": "x"}, {"a": np.array([1, 2]), "b": "x"})
    with pytest.raises(AssertionError):
        case.assertDictEqual({"a": torch.tensor([1, 2])}, {"a": np.array([1, 3])})


def test_evaluate_session_errors_and_temp_dir(case, tmp_path):
    assert case.evaluate({"a": torch.tensor([1, 2])})["a"].tolist() == [1, 2]
    with case.cached_session() as session:
        assert session.run(torch.tensor(3.0)) == 3.0
    with case.assertRaisesOpError("Condition x == y"):
        tf.debugging.assert_equal(1, 2)
    with pytest.raises(AssertionError, match="does not match"):
        with case.assertRaisesOpError("something else"):
            raise InvalidArgumentError(None, None, "what happened")
    with case.assertRaisesWithPredicateMatch(ValueError, lambda error: "rank" in str(error)):
        tf.debugging.assert_rank(np.zeros(2), 2)
    import os
    assert os.path.isdir(case.get_temp_dir())
    case.doCleanups()


def test_each_test_starts_seeded_as_in_tensorflow():
    import io
    import unittest

    drawn = []

    class Seeded(tf.test.TestCase):
        def test_draw(self):
            drawn.append((np.random.rand(), tf.random.uniform([2]).tolist()))

    result = None
    for _ in range(2):
        result = unittest.TextTestRunner(stream=io.StringIO()).run(
            unittest.defaultTestLoader.loadTestsFromTestCase(Seeded))
        assert result.wasSuccessful()
    assert drawn[0] == drawn[1]  # every test starts from the same seeds
    assert drawn[0][0] == np.random.RandomState(87654321).rand()  # TF's DEFAULT_GRAPH_SEED
    assert [test.id() for test, _ in result.skipped] == [Seeded("test_session").id()]  # "Not a test.", as TF
