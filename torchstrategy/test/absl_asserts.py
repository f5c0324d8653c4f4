"""absl.testing's assertion helpers that tf.test.TestCase inherits (absltest.TestCase), written for unittest:
containment, ordering, string prefixes/suffixes, structures, literal error matches and commands."""
from __future__ import annotations

import collections.abc
import dataclasses
import json
import re
import subprocess
import urllib.parse
from typing import Any, Callable, Optional


class AbslAssertions:
    """Mixin for unittest.TestCase: absl's extra assertions (assertLen, assertContainsSubset, ...)."""

    failureException: type
    fail: Callable

    def _absl_fail(self, default: str, msg: Optional[str]) -> None:
        raise self.failureException(f"{default} : {msg}" if msg else default)

    def assertLen(self, container: Any, expected_len: int, msg: Optional[str] = None) -> None:
        """Asserts len(container) == expected_len."""
        if len(container) != expected_len:
            self._absl_fail(f"{container!r} has length of {len(container)}, expected {expected_len}.", msg)

    def assertEmpty(self, container: Any, msg: Optional[str] = None) -> None:
        """Asserts the container is empty."""
        if len(container):
            self._absl_fail(f"{container!r} has length of {len(container)}.", msg)

    def assertNotEmpty(self, container: Any, msg: Optional[str] = None) -> None:
        """Asserts the container is not empty."""
        if not len(container):
            self._absl_fail(f"{container!r} has length of 0.", msg)

    def assertBetween(self, value: Any, minv: Any, maxv: Any, msg: Optional[str] = None) -> None:
        """Asserts minv <= value <= maxv."""
        if not minv <= value <= maxv:
            self._absl_fail(f"{value!r} is not between {minv!r} and {maxv!r}", msg)

    def assertStartsWith(self, actual: Any, expected_start: Any, msg: Optional[str] = None) -> None:
        """Asserts actual starts with expected_start."""
        if not actual.startswith(expected_start):
            self._absl_fail(f"{actual!r} does not start with {expected_start!r}", msg)

    def assertNotStartsWith(self, actual: Any, unexpected_start: Any, msg: Optional[str] = None) -> None:
        """Asserts actual does not start with unexpected_start."""
        if actual.startswith(unexpected_start):
            self._absl_fail(f"{actual!r} does start with {unexpected_start!r}", msg)

    def assertEndsWith(self, actual: Any, expected_end: Any, msg: Optional[str] = None) -> None:
        """Asserts actual ends with expected_end."""
        if not actual.endswith(expected_end):
            self._absl_fail(f"{actual!r} does not end with {expected_end!r}", msg)

    def assertNotEndsWith(self, actual: Any, unexpected_end: Any, msg: Optional[str] = None) -> None:
        """Asserts actual does not end with unexpected_end."""
        if actual.endswith(unexpected_end):
            self._absl_fail(f"{actual!r} does end with {unexpected_end!r}", msg)

    def assertSequenceStartsWith(self, prefix: Any, whole: Any, msg: Optional[str] = None) -> None:
        """Asserts the sequence `whole` begins with the sequence `prefix`."""
        if list(whole[:len(prefix)]) != list(prefix):
            self._absl_fail(f"{whole!r} does not start with {prefix!r}", msg)

    def assertContainsSubset(self, expected_subset: Any, actual_set: Any, msg: Optional[str] = None) -> None:
        """Asserts every element of expected_subset is in actual_set."""
        missing = set(expected_subset) - set(actual_set)
        if missing:
            self._absl_fail(f"Missing elements {missing}", msg)

    def assertNoCommonElements(self, expected_seq: Any, actual_seq: Any, msg: Optional[str] = None) -> None:
        """Asserts the two collections share no element."""
        common = set(expected_seq) & set(actual_seq)
        if common:
            self._absl_fail(f"Common elements {common}", msg)

    def assertSameElements(self, expected_seq: Any, actual_seq: Any, msg: Optional[str] = None) -> None:
        """Asserts the two collections hold the same distinct elements (counts ignored)."""
        if set(expected_seq) != set(actual_seq):
            self._absl_fail(f"Expected {set(expected_seq)!r}, found {set(actual_seq)!r}", msg)

    def assertContainsInOrder(self, strings: Any, target: str, msg: Optional[str] = None) -> None:
        """Asserts the strings occur in target one after another."""
        position = 0
        for text in [strings] if isinstance(strings, str) else strings:
            found = target.find(text, position)
            if found < 0:
                self._absl_fail(f"Did not find {text!r} after position {position} in {target!r}", msg)
            position = found + len(text)

    def assertContainsSubsequence(self, container: Any, subsequence: Any, msg: Optional[str] = None) -> None:
        """Asserts subsequence's elements appear in container in order (gaps allowed)."""
        items = iter(container)
        if not all(any(item == wanted for item in items) for wanted in subsequence):
            self._absl_fail(f"{list(subsequence)!r} is not a subsequence of {list(container)!r}", msg)

    def assertContainsExactSubsequence(self, container: Any, subsequence: Any, msg: Optional[str] = None) -> None:
        """Asserts subsequence appears in container as one contiguous run."""
        whole, part = list(container), list(subsequence)
        if not any(whole[i:i + len(part)] == part for i in range(len(whole) - len(part) + 1)):
            self._absl_fail(f"{part!r} is not an exact subsequence of {whole!r}", msg)

    def assertRegexMatch(self, actual_str: str, regexes: Any, message: Optional[str] = None) -> None:
        """Asserts at least one of the regexes matches actual_str (re.search)."""
        if isinstance(regexes, (str, bytes)):
            raise AssertionError("regexes is a string; wrap it in a list.")
        if not regexes:
            raise AssertionError("No regexes specified.")
        if not any(re.search(pattern, actual_str) for pattern in regexes):
            self._absl_fail(f"{actual_str!r} does not match any of {list(regexes)!r}", message)

    def assertRaisesWithLiteralMatch(self, expected_exception: Any, expected_exception_message: str,
                                     callable_obj: Optional[Callable] = None, *args: Any, **kwargs: Any) -> Any:
        """Asserts the call (or the with-block) raises expected_exception whose str() is exactly the message."""
        outer = self

        class _Context:
            def __enter__(self) -> "_Context":
                return self

            def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
                if kind is None:
                    outer._absl_fail(f"{expected_exception} not raised", None)
                if not issubclass(kind, expected_exception):
                    return False
                if str(error) != expected_exception_message:
                    outer._absl_fail(f"Exception message does not match.\nExpected: {expected_exception_message!r}\n"
                                     f"Actual: {str(error)!r}", None)
                return True

        context = _Context()
        if callable_obj is None:
            return context
        with context:
            callable_obj(*args, **kwargs)
        return None

    def assertSameStructure(self, a: Any, b: Any, aname: str = "a", bname: str = "b", msg: Optional[str] = None) -> None:
        """Asserts two nested dicts/lists/tuples have the same structure and equal leaves."""
        problems: list = []

        def walk(left: Any, right: Any, path: str) -> None:
            if isinstance(left, collections.abc.Mapping) and isinstance(right, collections.abc.Mapping):
                for key in set(left) | set(right):
                    if key not in left or key not in right:
                        problems.append(f"{aname}{path}[{key!r}] / {bname}{path}[{key!r}]: key missing on one side")
                    else:
                        walk(left[key], right[key], f"{path}[{key!r}]")
            elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
                if len(left) != len(right):
                    problems.append(f"{aname}{path} has {len(left)} elements, {bname}{path} has {len(right)}")
                for index, (x, y) in enumerate(zip(left, right)):
                    walk(x, y, f"{path}[{index}]")
            elif left != right:
                problems.append(f"{aname}{path} is {left!r} but {bname}{path} is {right!r}")

        walk(a, b, "")
        if problems:
            self._absl_fail("; ".join(problems), msg)

    def assertIsSubclass(self, cls: type, superclass: Any, msg: Optional[str] = None) -> None:
        """Asserts issubclass(cls, superclass)."""
        if not issubclass(cls, superclass):
            self._absl_fail(f"{cls!r} is not a subclass of {superclass!r}", msg)

    def assertNotIsSubclass(self, cls: type, superclass: Any, msg: Optional[str] = None) -> None:
        """Asserts not issubclass(cls, superclass)."""
        if issubclass(cls, superclass):
            self._absl_fail(f"{cls!r} is a subclass of {superclass!r}", msg)

    def assertSequenceAlmostEqual(self, expected_seq: Any, actual_seq: Any, places: Optional[int] = None,
                                  msg: Optional[str] = None, delta: Optional[float] = None) -> None:
        """Asserts equal lengths and assertAlmostEqual element by element."""
        if len(expected_seq) != len(actual_seq):
            self._absl_fail(f"Sequence size mismatch: {len(expected_seq)} vs {len(actual_seq)}", msg)
        for expected, actual in zip(expected_seq, actual_seq):
            self.assertAlmostEqual(expected, actual, places=places, msg=msg, delta=delta)  # type: ignore[attr-defined]

    def assertDictAlmostEqual(self, a: Any, b: Any, places: Optional[int] = None, msg: Optional[str] = None,
                              delta: Optional[float] = None) -> None:
        """Asserts equal keys and assertAlmostEqual value by value."""
        if set(a) != set(b):
            self._absl_fail(f"Keys differ: {sorted(map(repr, set(a) ^ set(b)))}", msg)
        for key in a:
            self.assertAlmostEqual(a[key], b[key], places=places, msg=msg, delta=delta)  # type: ignore[attr-defined]

    def assertTotallyOrdered(self, *groups: Any, **kwargs: Any) -> None:
        """Asserts the groups are in strictly increasing order, elements within a group equal."""
        for index, group in enumerate(groups):
            for x in group:
                for y in group:
                    if not (x == y and not x < y and not x > y):
                        self._absl_fail(f"{x!r} and {y!r} should be equal", kwargs.get("msg"))
                for later in groups[index + 1:]:
                    for y in later:
                        if not (x < y and y > x and x != y):
                            self._absl_fail(f"{x!r} should be less than {y!r}", kwargs.get("msg"))

    def assertMappingEqual(self, a: Any, b: Any, msg: Optional[str] = None,
                           mapping_type: type = collections.abc.Mapping,
                           check_values_equality: Callable[[Any, Any], bool] = lambda x, y: x == y) -> None:
        """Asserts two mappings of `mapping_type` hold equal keys and equal values."""
        if not isinstance(a, mapping_type) or not isinstance(b, mapping_type):
            self._absl_fail(f"Both must be {mapping_type.__name__}s, got {type(a).__name__} and "
                            f"{type(b).__name__}", msg)
        if set(a) != set(b) or not all(check_values_equality(a[key], b[key]) for key in a):
            self._absl_fail(f"{a!r} != {b!r}", msg)

    def assertJsonEqual(self, first: str, second: str, msg: Optional[str] = None) -> None:
        """Asserts two JSON texts decode to equal values."""
        if json.loads(first) != json.loads(second):
            self._absl_fail(f"JSON differs: {first!r} != {second!r}", msg)

    def assertUrlEqual(self, a: str, b: str, msg: Optional[str] = None) -> None:
        """Asserts two URLs are equal up to the order of their query parameters."""
        def parts(url: str) -> tuple:
            parsed = urllib.parse.urlparse(url)
            return parsed._replace(query="")[:], sorted(urllib.parse.parse_qsl(parsed.query))
        if parts(a) != parts(b):
            self._absl_fail(f"{a!r} != {b!r}", msg)

    def assertDataclassEqual(self, first: Any, second: Any, msg: Optional[str] = None) -> None:
        """Asserts two dataclass instances of one type have equal fields."""
        if not (dataclasses.is_dataclass(first) and dataclasses.is_dataclass(second)):
            self._absl_fail("Both arguments must be dataclass instances.", msg)
        if type(first) is not type(second) or dataclasses.asdict(first) != dataclasses.asdict(second):
            self._absl_fail(f"{first!r} != {second!r}", msg)

    def _command(self, command: Any, env: Any, close_fds: bool) -> tuple[int, bytes]:
        completed = subprocess.run(command, shell=isinstance(command, str), env=env, close_fds=close_fds,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return completed.returncode, completed.stdout

    def assertCommandSucceeds(self, command: Any, regexes: Any = (b"",), env: Any = None, close_fds: bool = True,
                              msg: Optional[str] = None) -> None:
        """Runs the command; asserts exit status 0 and that its output matches every regex."""
        code, output = self._command(command, env, close_fds)
        if code != 0 or not all(re.search(pattern, output) for pattern in regexes):
            self._absl_fail(f"Command {command!r} exited {code} with output {output!r}", msg)

    def assertCommandFails(self, command: Any, regexes: Any, env: Any = None, close_fds: bool = True,
                           msg: Optional[str] = None) -> None:
        """Runs the command; asserts a non-zero exit status and that its output matches every regex."""
        code, output = self._command(command, env, close_fds)
        if code == 0 or not all(re.search(pattern, output) for pattern in regexes):
            self._absl_fail(f"Command {command!r} exited {code} with output {output!r}", msg)
