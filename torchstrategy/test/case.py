"""tf.test.TestCase for torch programs: TF's assertion helpers (assertAllClose, assertAllEqual, assertShapeEqual,
...) on tensors, arrays and nested structures, absl's helpers (AbslAssertions), seeds and sessions as TF."""
from __future__ import annotations

import contextlib
import random
import re
import tempfile
import threading
import unittest
from typing import Any, Callable, Iterator, Optional, Union

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy import random as tf_random
from torchstrategy.errors import InvalidArgumentError, OpError
from torchstrategy.test.absl_asserts import AbslAssertions

_DEFAULT_GRAPH_SEED = 87654321  # TF's seed for every test (random_seed._DEFAULT_GRAPH_SEED)


def _numpy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        return value.float().numpy() if value.dtype == torch.bfloat16 else value.numpy()
    return value


def evaluate(structure: Any) -> Any:
    """The NumPy values of a tensor or a nested structure of tensors (other values pass through)."""
    return _evaluate(structure)


def _evaluate(structure: Any) -> Any:
    if isinstance(structure, dict):
        return type(structure)((key, _evaluate(value)) for key, value in structure.items())
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*(_evaluate(value) for value in structure))
    if isinstance(structure, (list, tuple)):
        return type(structure)(_evaluate(value) for value in structure)
    return _numpy(structure)


def _is_leaf(value: Any) -> bool:
    return not isinstance(value, (dict, list, tuple)) or (isinstance(value, (list, tuple)) and _array_like(value))


def _array_like(value: Any) -> bool:
    try:
        array = np.asarray(_evaluate(value))
    except (ValueError, TypeError):
        return False
    return array.dtype != object


class _Session:
    """What TestCase.session() yields: `run` evaluates tensors to NumPy (eager: nothing to build)."""

    def __init__(self, case: "TestCase") -> None:
        self._case = case

    def run(self, fetches: Any, feed_dict: Any = None) -> Any:
        if feed_dict:
            raise NotImplementedError("Session.run(feed_dict=...) has no meaning in eager torch programs.")
        return self._case.evaluate(fetches)


class TestCase(AbslAssertions, unittest.TestCase):
    """unittest.TestCase with TF's helpers; tensors are compared as NumPy arrays (`evaluate`). Each test starts
    as in TF: Python's, NumPy's and tf.random's seeds set to 87654321 and no default summary writer."""

    def setUp(self) -> None:
        """Seeds Python, NumPy and tf.random with TF's test seed and clears the default summary writer."""
        super().setUp()
        random.seed(_DEFAULT_GRAPH_SEED)
        np.random.seed(_DEFAULT_GRAPH_SEED)
        tf_random.set_seed(_DEFAULT_GRAPH_SEED)
        _context.summary_state().writer = None
        if self.id().endswith(".test_session"):
            self.skipTest("Not a test.")

    def evaluate(self, tensors: Any) -> Any:
        """The NumPy values of a tensor or a nested structure of them (other values pass through)."""
        return _evaluate(tensors)

    def get_temp_dir(self) -> str:
        """A temporary directory for this test (removed at the end of the test)."""
        if not hasattr(self, "_tf_temp_dir"):
            holder = tempfile.TemporaryDirectory()
            self.addCleanup(holder.cleanup)
            self._tf_temp_dir = holder.name
        return self._tf_temp_dir

    @contextlib.contextmanager
    def session(self, graph: Any = None, config: Any = None, use_gpu: bool = True,
                force_gpu: bool = False) -> Iterator[_Session]:
        """A session-shaped object whose run() evaluates tensors (TF1 tests run eagerly here)."""
        if force_gpu and not torch.cuda.is_available():
            self.skipTest("force_gpu=True but no GPU is available.")
        yield _Session(self)

    cached_session = session
    test_session = session  # TF's old name; not a test to collect:
    test_session.__test__ = False  # type: ignore[attr-defined]

    # ----- structure-aware comparisons ---------------------------------------------------------------------
    def _walk(self, a: Any, b: Any, path: str, compare: Callable[[Any, Any, str], None]) -> None:
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertIsInstance(a, dict, f"{path}: expected a dict, got {type(a).__name__}")
            self.assertIsInstance(b, dict, f"{path}: expected a dict, got {type(b).__name__}")
            self.assertEqual(set(a), set(b), f"{path}: mismatched keys")
            for key in a:
                self._walk(a[key], b[key], f"{path}[{key!r}]", compare)
        elif not (_is_leaf(a) and _is_leaf(b)):
            self.assertEqual(len(a), len(b), f"{path}: length {len(a)} != {len(b)}")
            for index, (left, right) in enumerate(zip(a, b)):
                self._walk(left, right, f"{path}[{index}]", compare)
        else:
            compare(a, b, path)

    def _arrays(self, a: Any, b: Any, path: str) -> tuple[np.ndarray, np.ndarray]:
        left, right = np.asarray(_evaluate(a)), np.asarray(_evaluate(b))
        self.assertEqual(left.shape, right.shape, f"Shape mismatch{' at ' + path if path else ''}: expected "
                         f"{left.shape}, got {right.shape} with contents {right}.")
        return left, right

    def assertAllClose(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, msg: Optional[str] = None) -> None:
        """Asserts a and b (tensors, arrays, numbers or nested dicts/lists/tuples of them) have equal shapes and
        |a - b| <= atol + rtol * |b| element-wise."""
        def compare(left: Any, right: Any, path: str) -> None:
            x, y = self._arrays(left, right, path)
            if x.dtype.kind in "fcbiu" and y.dtype.kind in "fcbiu":
                np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=f"{msg or ''} {path}".strip(),
                                           equal_nan=True)
            else:
                self.assertEqual(x.tolist(), y.tolist(), msg)
        self._walk(a, b, "", compare)

    def assertAllCloseAccordingToType(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6,
                                      float_rtol: float = 1e-6, float_atol: float = 1e-6, half_rtol: float = 1e-3,
                                      half_atol: float = 1e-3, bfloat16_rtol: float = 1e-2, bfloat16_atol: float = 1e-2,
                                      msg: Optional[str] = None) -> None:
        """assertAllClose with the tolerance widened for the dtype: float32/complex64, float16, bfloat16."""
        dtypes = {value.dtype for value in (a, b) if isinstance(value, torch.Tensor)}
        dtypes |= {np.asarray(value).dtype for value in (a, b) if not isinstance(value, torch.Tensor)}
        if torch.bfloat16 in dtypes:
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        elif dtypes & {torch.float16, np.dtype(np.float16)}:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        elif dtypes & {torch.float32, torch.complex64, np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6,
                          msg: Optional[str] = None) -> None:
        """Asserts that assertAllClose(a, b) would fail."""
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol)
        except AssertionError:
            return
        raise self.failureException(msg or "The two values are close at all elements.")

    def assertAllEqual(self, a: Any, b: Any, msg: Optional[str] = None) -> None:
        """Asserts equal shapes and equal elements (structures compared leaf by leaf)."""
        def compare(left: Any, right: Any, path: str) -> None:
            x, y = self._arrays(left, right, path)
            np.testing.assert_array_equal(x, y, err_msg=f"{msg or ''} {path}".strip())
        self._walk(a, b, "", compare)

    def assertNotAllEqual(self, a: Any, b: Any, msg: Optional[str] = None) -> None:
        """Asserts that a and b differ somewhere (shapes must match)."""
        x, y = self._arrays(a, b, "")
        if np.array_equal(x, y):
            raise self.failureException(msg or f"Expected a and b to differ, both are {x}.")

    def _all(self, a: Any, check: Callable[[np.ndarray], np.ndarray], text: str) -> None:
        array = np.asarray(_evaluate(a))
        if not np.all(check(array)):
            raise self.failureException(f"{array} not {text}")

    def assertAllGreater(self, a: Any, comparison_target: Any) -> None:
        """Asserts every element of a > comparison_target."""
        self._all(a, lambda x: x > comparison_target, f"greater than {comparison_target}")

    def assertAllGreaterEqual(self, a: Any, comparison_target: Any) -> None:
        """Asserts every element of a >= comparison_target."""
        self._all(a, lambda x: x >= comparison_target, f"greater than or equal to {comparison_target}")

    def assertAllLess(self, a: Any, comparison_target: Any) -> None:
        """Asserts every element of a < comparison_target."""
        self._all(a, lambda x: x < comparison_target, f"less than {comparison_target}")

    def assertAllLessEqual(self, a: Any, comparison_target: Any) -> None:
        """Asserts every element of a <= comparison_target."""
        self._all(a, lambda x: x <= comparison_target, f"less than or equal to {comparison_target}")

    def assertAllInRange(self, target: Any, lower_bound: Any, upper_bound: Any, open_lower_bound: bool = False,
                         open_upper_bound: bool = False) -> None:
        """Asserts every element lies in [lower_bound, upper_bound] (either end open on request)."""
        array = np.asarray(_evaluate(target))
        low = array > lower_bound if open_lower_bound else array >= lower_bound
        high = array < upper_bound if open_upper_bound else array <= upper_bound
        bad = np.argwhere(~(low & high))
        if len(bad):
            brackets = ("(" if open_lower_bound else "[", ")" if open_upper_bound else "]")
            details = "\n".join(f"  {list(index)} : {array[tuple(index)]}" for index in bad)
            raise self.failureException(f"{len(bad)} of the {array.size} element(s) are outside the range "
                                        f"{brackets[0]}{lower_bound}, {upper_bound}{brackets[1]}. Subscript(s) and "
                                        f"value(s) of the offending elements:\n{details}")

    def assertAllInSet(self, target: Any, expected_set: Any) -> None:
        """Asserts every element of target is in expected_set."""
        values = set(np.unique(np.asarray(_evaluate(target))).tolist())
        missing = sorted(values - set(np.asarray(list(expected_set)).tolist()))
        if missing:
            raise self.failureException(f"{len(missing)} unique element(s) are not in the set {list(expected_set)}: "
                                        f"{missing}")

    def assertShapeEqual(self, input_a: Any, input_b: Any, msg: Optional[str] = None) -> None:
        """Asserts a NumPy array and a tensor have one shape."""
        if not isinstance(input_a, np.ndarray):
            raise TypeError("input_a must be a NumPy ndarray.")
        if not isinstance(input_b, torch.Tensor):
            raise TypeError("input_b must be a tensor.")
        self.assertEqual(tuple(input_a.shape), tuple(input_b.shape), msg)

    def assertDTypeEqual(self, target: Any, expected_dtype: Any) -> None:
        """Asserts the dtype of target (or of every element of a list of them) equals expected_dtype."""
        items = target if isinstance(target, list) else [target]
        for item in items:
            actual = item.dtype if isinstance(item, torch.Tensor) else np.asarray(item).dtype
            expected = expected_dtype
            if isinstance(actual, np.dtype) and not isinstance(expected, torch.dtype):
                expected = np.dtype(expected)
            self.assertEqual(actual, expected)

    def assertNear(self, f1: float, f2: float, err: float, msg: Optional[str] = None) -> None:
        """Asserts |f1 - f2| <= err."""
        self.assertTrue(f1 == f2 or abs(f1 - f2) <= err,
                        f"{f1:f} != {f2:f} +/- {err:f} (difference: {abs(f1 - f2):g})" + (f" : {msg}" if msg else ""))

    def assertArrayNear(self, farray1: Any, farray2: Any, err: float, msg: Optional[str] = None) -> None:
        """Asserts two lists of floats have one length and are near element by element."""
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNDArrayNear(self, ndarray1: Any, ndarray2: Any, err: float, msg: Optional[str] = None) -> None:
        """Asserts two arrays are within err of each other everywhere."""
        self.assertTrue(np.linalg.norm(np.asarray(_evaluate(ndarray1)) - np.asarray(_evaluate(ndarray2))) <= err,
                        msg=msg)

    def assertItemsEqual(self, first: Any, second: Any, msg: Optional[str] = None) -> None:
        """Asserts both hold the same elements, in any order."""
        self.assertCountEqual(first, second, msg)

    def assertDictEqual(self, a: Any, b: Any, msg: Optional[str] = None) -> None:
        """Asserts two dicts have equal keys and equal values, tensors and arrays compared by assertAllEqual."""
        self.assertEqual(set(a), set(b), msg)
        for key in a:
            left, right = a[key], b[key]
            if isinstance(left, (torch.Tensor, np.ndarray)) or isinstance(right, (torch.Tensor, np.ndarray)):
                self.assertAllEqual(left, right, msg)
            else:
                self.assertEqual(left, right, msg)

    def assertMultiLineEqual(self, first: str, second: str, msg: Optional[str] = None, **kwargs: Any) -> None:
        """unittest's multi-line string comparison (absl's extra keyword arguments are accepted)."""
        unittest.TestCase.assertMultiLineEqual(self, first, second, msg)

    def assertDeviceEqual(self, device1: Any, device2: Any, msg: Optional[str] = None) -> None:
        """Asserts two device specs name one device (torch.device or strings like '/cpu:0', 'cuda:0')."""
        def canonical(device: Any) -> str:
            text = str(device).lower().split("device:")[-1].lstrip("/")
            text = text.replace("gpu", "cuda")
            return text if ":" in text else text + ":0"
        self.assertEqual(canonical(device1), canonical(device2), msg)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type: Any,
                                       expected_err_re_or_predicate: Union[str, Callable]) -> Iterator[None]:
        """Context manager: the block raises exception_type and the error matches the regex or predicate."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(error: Exception) -> bool:
                return re.search(expected_err_re_or_predicate, str(error)) is not None
        try:
            yield
        except exception_type as error:
            if not predicate(error):
                raise self.failureException(f"Exception of type {type(error)}: {error} does not match "
                                            f"{expected_err_re_or_predicate!r}") from error
            return
        raise self.failureException(f"Exception of type {exception_type} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate: Union[str, Callable]) -> Any:
        """assertRaisesWithPredicateMatch(tf.errors.OpError, ...)."""
        return self.assertRaisesWithPredicateMatch(OpError, expected_err_re_or_predicate)

    def assertRaisesIncompatibleShapesError(self, exception_type: Any = InvalidArgumentError) -> Any:
        """The block raises an incompatible-shapes error (torch's size-mismatch RuntimeError counts too)."""
        types = (exception_type, RuntimeError, ValueError)
        return self.assertRaisesWithPredicateMatch(
            types, r"Incompatible shapes|Dimensions must be equal|must match the size|size of tensor|broadcast")

    def assertRaisesRegexp(self, expected_exception: Any, expected_regex: Any, *args: Any, **kwargs: Any) -> Any:
        """Old name of assertRaisesRegex."""
        return self.assertRaisesRegex(expected_exception, expected_regex, *args, **kwargs)

    def assertProtoEquals(self, expected_message_maybe_ascii: Any, validate_message: Any, msg: Optional[str] = None,
                          relative_tolerance: Any = None) -> None:
        """Compares protobuf messages: equal serializations (text-format strings are not parsed here)."""
        if isinstance(expected_message_maybe_ascii, str):
            raise NotImplementedError("assertProtoEquals with a text-format string needs protobuf's text parser; "
                                      "pass a message object.")
        self.assertEqual(expected_message_maybe_ascii.SerializeToString(deterministic=True),
                         validate_message.SerializeToString(deterministic=True), msg)

    def checkedThread(self, target: Callable[..., Any], args: Optional[tuple] = None,
                      kwargs: Optional[dict] = None) -> "_CheckedThread":
        """A thread whose exception fails the test when joined."""
        return _CheckedThread(self, target, args or (), kwargs or {})


class _CheckedThread:
    def __init__(self, case: TestCase, target: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        self._case, self._error = case, None

        def run() -> None:
            try:
                target(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - reported on join
                self._error = error

        self._thread = threading.Thread(target=run)

    def start(self) -> None:
        """Starts the thread."""
        self._thread.start()

    def join(self) -> None:
        """Waits for the thread; its exception, if any, fails the test."""
        self._thread.join()
        if self._error is not None:
            self._case.fail(f"Error in checkedThread: {self._error!r}")

    def is_alive(self) -> bool:
        """Whether the thread still runs."""
        return self._thread.is_alive()
