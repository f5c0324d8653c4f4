"""absl's helpers on tf.test.TestCase: each passes on a true claim and fails on a false one."""
from __future__ import annotations

import dataclasses

import pytest

import torchstrategy as tf


class _Case(tf.test.TestCase):
    __test__ = False

    def runTest(self) -> None:  # noqa: N802 - unittest's name
        pass


@dataclasses.dataclass
class _Point:
    x: int
    y: int


CLAIMS = [
    ("assertLen", ([1, 2], 2), ([1, 2], 3)),
    ("assertEmpty", ([],), ([1],)),
    ("assertNotEmpty", ([1],), ([],)),
    ("assertBetween", (2, 1, 3), (4, 1, 3)),
    ("assertStartsWith", ("tensor", "ten"), ("tensor", "sor")),
    ("assertNotStartsWith", ("tensor", "sor"), ("tensor", "ten")),
    ("assertEndsWith", ("tensor", "sor"), ("tensor", "ten")),
    ("assertNotEndsWith", ("tensor", "ten"), ("tensor", "sor")),
    ("assertSequenceStartsWith", ([1, 2], [1, 2, 3]), ([2], [1, 2, 3])),
    ("assertContainsSubset", ({1, 2}, [1, 2, 3]), ({4}, [1, 2, 3])),
    ("assertNoCommonElements", ([1, 2], [3]), ([1, 2], [2])),
    ("assertSameElements", ([1, 2, 2], [2, 1]), ([1, 2], [1])),
    ("assertContainsInOrder", (["a", "c"], "abc"), (["c", "a"], "abc")),
    ("assertContainsSubsequence", ([1, 2, 3, 4], [1, 3]), ([1, 2, 3], [3, 1])),
    ("assertContainsExactSubsequence", ([1, 2, 3], [2, 3]), ([1, 2, 3], [1, 3])),
    ("assertRegexMatch", ("abc123", [r"\d+$"]), ("abc", [r"\d"])),
    ("assertSameStructure", ({"a": [1, (2, 3)]}, {"a": [1, (2, 3)]}), ({"a": [1]}, {"a": [1, 2]})),
    ("assertIsSubclass", (bool, int), (int, bool)),
    ("assertNotIsSubclass", (int, bool), (bool, int)),
    ("assertSequenceAlmostEqual", ([1.0, 2.0], [1.0, 2.0 + 1e-9]), ([1.0], [1.1])),
    ("assertDictAlmostEqual", ({"a": 1.0}, {"a": 1.0 + 1e-9}), ({"a": 1.0}, {"a": 1.1})),
    ("assertTotallyOrdered", ([1, 1.0], [2]), ([2], [1])),
    ("assertMappingEqual", ({"a": 1}, {"a": 1}), ({"a": 1}, {"a": 2})),
    ("assertJsonEqual", ('{"a": [1, 2]}', '{ "a":[1,2] }'), ('{"a": 1}', '{"a": 2}')),
    ("assertUrlEqual", ("http://x/p?a=1&b=2", "http://x/p?b=2&a=1"), ("http://x/p?a=1", "http://x/q?a=1")),
    ("assertDataclassEqual", (_Point(1, 2), _Point(1, 2)), (_Point(1, 2), _Point(1, 3))),
    pytest.param("assertCommandSucceeds", ("echo hello", [b"hello"]), ("exit 3",), marks=pytest.mark.slow),
    pytest.param("assertCommandFails", ("exit 3", [b""]), ("echo ok", [b""]), marks=pytest.mark.slow),
]


@pytest.mark.parametrize("name, true_args, false_args", CLAIMS)
def test_absl_assertion(name, true_args, false_args):
    case = _Case()
    getattr(case, name)(*true_args)
    with pytest.raises(AssertionError):
        getattr(case, name)(*false_args)


def test_assert_raises_with_literal_match():
    case = _Case()
    with case.assertRaisesWithLiteralMatch(ValueError, "exactly this"):
        raise ValueError("exactly this")
    with pytest.raises(AssertionError, match="does not match"):
        with case.assertRaisesWithLiteralMatch(ValueError, "exactly this"):
            raise ValueError("exactly this, and more")
    case.assertRaisesWithLiteralMatch(KeyError, "'k'", {}.__getitem__, "k")
