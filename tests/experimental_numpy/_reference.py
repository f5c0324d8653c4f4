"""The frozen TF 2.21 tf.experimental.numpy cases (tnp_reference.json.gz, written by
tools/tf_reference/tnp_reference.py) and how a test runs one: the same expression on our tnp (inputs as torch
tensors) and, where TF equals NumPy, on NumPy; where TF differs, against TF's frozen dtype and values."""
from __future__ import annotations

import ast
import functools
import gzip
import json
import math
import os
import warnings
from typing import Any

import numpy as np
import torch

import torchstrategy as tf
from torchstrategy.experimental_numpy import _dtypes

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tnp_reference.json.gz")
_RTOL = {"float16": 5e-3, "float32": 2e-6, "complex64": 2e-6}

# Cases where TF 2.21's answer is a bug we do not copy: the test compares against NumPy instead.
TF_BUGS = {
    "M.around(k3 * 37, -1)": "TF rounds integers at negative decimals wrongly (111 -> 109)",
    "M.signbit([-0.0, 0.0, -1.0])": "TF compares with 0, so signbit(-0.0) is False",
    "M.argmin(nan)": "TF's argmin skips NaN; NumPy (and torch) let NaN win",
    "M.argmax(nan, axis=1)": "TF's argmax skips NaN; NumPy (and torch) let NaN win",
    "M.sort(nan, axis=1)": "TF's sort leaves NaNs in place; NumPy puts them last",
    "M.isclose(inf, inf)": "TF's isclose calls inf and inf not close (inf - inf is NaN)",
    "M.isclose(inf, inf, equal_nan=True)": "TF's isclose calls inf and inf not close",
    "M.allclose(inf, inf)": "TF's allclose calls inf and inf not close",
    "M.allclose(inf, inf, equal_nan=True)": "TF's allclose calls inf and inf not close",
    "M.divide(c64, b)": "complex / 0: TF gives nan+nanj where NumPy (and torch) keep the infinite part",
    "M.true_divide(c64, b)": "complex / 0: TF gives nan+nanj where NumPy (and torch) keep the infinite part",
    "M.log1p(c64)": "log1p(-1+0j): TF gives -inf+nanj, NumPy (and torch) -inf+0j",
}
# TF's logaddexp2 divides by np.log(2), a float64 NumPy scalar, which (with the numpy behaviour on) widens
# float16/float32 results to float64: those cases are checked for values and dtype kind only.
# TF reads a complex value as a truth value by its real part only (-1j is False): NumPy's rule here instead.
_TF_COMPLEX_TRUTH = ("M.logical_and(", "M.logical_or(", "M.logical_xor(", "M.logical_not(", "M.all(", "M.any(",
                     "M.nonzero(")
# Case families where TF returns a bare Python False for a whole integer array (shape lost): NumPy's bool array.
_TF_SCALAR_FALSE = ("M.isinf(", "M.isneginf(", "M.isposinf(")


@functools.lru_cache(maxsize=1)
def load() -> dict:
    with gzip.open(PATH, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def _array(spec: list) -> np.ndarray:
    dtype, values = spec
    if dtype.startswith("complex"):
        pairs = np.array(values, dtype=np.float64)
        return (pairs[..., 0] + 1j * pairs[..., 1]).astype(dtype)
    return np.array(values, dtype=dtype)


@functools.lru_cache(maxsize=1)
def _arrays() -> dict:
    return {name: (spec["py"] if isinstance(spec, dict) else _array(spec)) for name, spec in load()["inputs"].items()}


def inputs(as_torch: bool) -> dict:
    """The named inputs, fresh for each case: torch tensors (what our tnp gets) or NumPy arrays; Python values
    as they are."""
    out = {}
    for name, value in _arrays().items():
        if isinstance(value, np.ndarray):
            out[name] = torch.from_numpy(value.copy()) if as_torch else value.copy()
        else:
            out[name] = json.loads(json.dumps(value))
    return out


def function_of(expr: str) -> str:
    """The tnp function a case calls first ('M.add(f32, i8)' -> 'add', 'M.random.rand(2)' -> 'random.rand')."""
    call = ast.parse(expr, mode="eval").body
    node = call.func if isinstance(call, ast.Call) else call
    while isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call):
        node = node.value.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join(reversed(parts))


@functools.lru_cache(maxsize=1)
def by_function() -> dict:
    """The frozen cases grouped by the tnp function they call first: {name: [(expr, expected), ...]}."""
    groups: dict = {}
    for expr, expected in sorted(load()["cases"].items()):
        groups.setdefault(function_of(expr), []).append((expr, expected))
    return groups


def cases(names: set) -> list:
    """The frozen cases (expr, expected) whose first tnp function is in `names`."""
    return [case for name in sorted(names) for case in by_function().get(name, [])]


def normalize(value: Any) -> Any:
    """A result in the reference file's form (see tools/tf_reference/tnp_reference.py)."""
    if isinstance(value, (tuple, list)) and not (value and isinstance(value[0], (int, float, bool, complex))):
        return {"seq": [normalize(item) for item in value]}
    if isinstance(value, torch.dtype):
        return {"dtype": _dtypes.numpy_dtype(value).name}
    if isinstance(value, np.dtype) or isinstance(value, type):
        return {"dtype": np.dtype(value).name}
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().resolve_conj().numpy()
    if value is None or isinstance(value, (bool, str)):
        return {"py": value}
    if isinstance(value, (int, float)) and not isinstance(value, np.generic):
        return {"py": value if not isinstance(value, float) or np.isfinite(value) else repr(value)}
    array = np.asarray(value)
    if array.dtype.kind == "c":
        return [array.dtype.name, {"complex": np.stack([array.real, array.imag], -1).tolist()}]
    return [array.dtype.name, json.loads(json.dumps(array.tolist()).replace("NaN", '"nan"')
                                         .replace("-Infinity", '"-inf"').replace("Infinity", '"inf"'))]


def _numbers(values: Any) -> np.ndarray:
    if isinstance(values, dict):
        values = values.get("complex", values.get("shape"))
    text = json.dumps(values).replace('"nan"', "NaN").replace('"-inf"', "-Infinity").replace('"inf"', "Infinity")
    return np.array(json.loads(text), dtype=float)


def assert_same(ours: Any, expected: Any, where: str, shape_only: bool = False) -> None:
    """Our normalized result equals the expected one: structure, dtype, and values up to the dtype's rounding."""
    if isinstance(expected, dict) and "seq" in expected:
        assert isinstance(ours, dict) and "seq" in ours, f"{where}: expected a sequence, got {ours}"
        assert len(ours["seq"]) == len(expected["seq"]), f"{where}: {ours} != {expected}"
        for index, (a, b) in enumerate(zip(ours["seq"], expected["seq"])):
            assert_same(a, b, f"{where}[{index}]", shape_only)
        return
    if isinstance(ours, dict) and "py" in ours and isinstance(expected, list):
        ours = [expected[0], ours["py"]]  # a Python scalar where TF gives a 0-d array of its default dtype
    if isinstance(expected, dict) and "py" in expected and isinstance(ours, list) and np.ndim(ours[1]) == 0:
        ours = {"py": ours[1] if not isinstance(ours[1], float) or math.isfinite(ours[1]) else repr(ours[1])}
    if not isinstance(expected, list):
        if isinstance(expected, dict) and isinstance(ours, dict) and "py" in expected and "py" in ours and \
                isinstance(expected["py"], float):
            assert math.isclose(ours["py"], expected["py"], rel_tol=1e-12), f"{where}: {ours} != {expected}"
            return
        assert ours == expected, f"{where}: got {ours}, expected {expected}"
        return
    assert isinstance(ours, list), f"{where}: got {ours}, expected {expected}"
    assert ours[0] == expected[0], f"{where}: dtype {ours[0]}, expected {expected[0]} ({expected})"
    if shape_only or (isinstance(expected[1], dict) and "shape" in expected[1]):
        got_shape = list(np.shape(_numbers(ours[1]))) if not isinstance(ours[1], dict) else ours[1]["shape"]
        want = expected[1]["shape"] if isinstance(expected[1], dict) else list(np.shape(_numbers(expected[1])))
        if isinstance(ours[1], dict) and "complex" in ours[1]:
            got_shape = got_shape[:-1]
        assert got_shape == want, f"{where}: shape {got_shape}, expected {want}"
        return
    a, b = _numbers(ours[1]), _numbers(expected[1])
    assert a.shape == b.shape, f"{where}: shape {a.shape}, expected {b.shape}: {ours} vs {expected}"
    rtol = _RTOL.get(expected[0], 1e-10)
    assert np.allclose(a, b, rtol=rtol, atol=rtol * 1e-3, equal_nan=True), f"{where}: {ours} != {expected}"


_KINDS = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}


def assert_values(ours: Any, numpy_result: Any, where: str) -> None:
    """Where TF refuses a case, ours may still answer: NumPy's values, in a dtype of the same kind (our dtype
    follows TF's rules, e.g. float64 where NumPy picks float16 for an int8 input)."""
    if isinstance(numpy_result, dict) and "seq" in numpy_result:
        for index, (a, b) in enumerate(zip(ours["seq"], numpy_result["seq"])):
            assert_values(a, b, f"{where}[{index}]")
        return
    if not (isinstance(ours, list) and isinstance(numpy_result, list)):
        assert_same(ours, numpy_result, where)
        return
    kind_ours, kind_np = (_KINDS[np.dtype(d).kind] for d in (ours[0], numpy_result[0]))
    assert kind_ours == kind_np, f"{where}: {ours[0]} is not of the kind of NumPy's {numpy_result[0]}"
    rtol = max(_RTOL.get(ours[0], 1e-10), _RTOL.get(numpy_result[0], 1e-10))
    a, b = _numbers(ours[1]), _numbers(numpy_result[1])
    assert a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True), \
        f"{where}: {ours} != NumPy's {numpy_result}"


@functools.lru_cache(maxsize=None)
def _compiled(expr: str) -> Any:
    return compile(expr, "<case>", "eval")


def run_ours(expr: str) -> Any:
    """Our result for a case (raises what our tnp raises)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return normalize(eval(_compiled(expr), {"M": tf.experimental.numpy, **inputs(as_torch=True)}))  # noqa: S307


def run_numpy(expr: str) -> Any:
    """NumPy's result for a case."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2's cross of 2-vectors
        return normalize(eval(_compiled(expr), {"M": np, **inputs(as_torch=False)}))  # noqa: S307


def check(expr: str, expected: Any) -> None:
    """One frozen case: both fail ("error") -> ours raises; TF fails alone ("tf-error") -> ours raises or gives
    NumPy's result; "np" or a known TF bug -> NumPy's result; otherwise TF's frozen result."""
    shape_only = expr in load()["shape_only"] or expr.startswith("M.random.")
    if expected == "error":
        try:
            got = run_ours(expr)
        except Exception:  # noqa: BLE001 - any clear error will do where TF and NumPy both refuse
            return
        raise AssertionError(f"{expr}: TF and NumPy refuse it, ours gave {got}")
    if expected == "tf-error":
        try:
            got = run_ours(expr)
        except (TypeError, ValueError, NotImplementedError, IndexError, RuntimeError):
            return
        if shape_only:
            assert_same(got, run_numpy(expr), expr, shape_only=True)
        else:
            assert_values(got, run_numpy(expr), expr)
        return
    if expr.startswith(_TF_SCALAR_FALSE) and expected == {"py": False}:
        got = run_ours(expr)
        assert got[0] == "bool" and not np.any(_numbers(got[1])), f"{expr}: {got} (TF: False for the whole array)"
        return
    if expr.startswith("M.shape(") and expected == ["float64", []]:
        assert run_ours(expr) == {"seq": []}, expr  # TF's TensorShape([]) read as an array; ours is ()
        return
    complex_truth = expr.startswith(_TF_COMPLEX_TRUTH) and "c64" in expr
    if expr.startswith("M.logaddexp2(") and ("f16" in expr or "f32" in expr):
        assert_values(run_ours(expr), run_numpy(expr) if expected == "np" else expected, expr)
        return
    if expected == "np" or expr in TF_BUGS or complex_truth or expr.startswith(_TF_SCALAR_FALSE):
        assert_same(run_ours(expr), run_numpy(expr), expr, shape_only)
        return
    assert_same(run_ours(expr), expected, expr, shape_only)
