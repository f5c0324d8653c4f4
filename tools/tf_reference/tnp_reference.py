"""Writes TF 2.21's tf.experimental.numpy results for the cases tests/experimental_numpy/ checks, next to NumPy's
(run with TF's venv, outside the suite): /path/to/tf-venv/bin/python tools/tf_reference/tnp_reference.py

Each case is an expression over `M` (the module: tnp, or numpy for the comparison) and named inputs. Every
case runs in TF twice: with TF's defaults (NumPy behaviour off, where many tnp functions fail for want of
`.astype`) and with `experimental_enable_numpy_behavior()`. A case where either run equals NumPy (dtype, and
values up to the dtype's rounding) is stored as "np" (the test compares against NumPy itself); otherwise the
result with the behaviour on is kept (TF's dtype and values); "error" where TF and NumPy both fail, "tf-error"
where only TF does. The `prefer_float32` table records cases under
`experimental_enable_numpy_behavior(prefer_float32=True)`.
"""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests",
                   "experimental_numpy", "tnp_reference.json.gz")

# Inputs: [dtype, values]; Python values are given as {"py": value}.
INPUTS = {
    "f64": ["float64", [[1.5, -2.25, 3.0], [0.5, 4.0, -1.0]]],
    "f32": ["float32", [[1.5, -2.25, 3.0], [0.5, 4.0, -1.0]]],
    "f16": ["float16", [[1.5, -2.25, 3.0], [0.5, 4.0, -1.0]]],
    "c64": ["complex64", [[[1, 2], [0, -1], [3, 0]], [[0.5, 0], [4, -1], [-1, 0]]]],
    "i32": ["int32", [[1, -2, 3], [4, 5, -6]]],
    "i64": ["int64", [[1, -2, 3], [4, 5, -6]]],
    "i16": ["int16", [[1, -2, 3], [4, 5, -6]]],
    "i8": ["int8", [[1, -2, 3], [4, 5, -6]]],
    "u8": ["uint8", [[1, 2, 3], [4, 5, 6]]],
    "b": ["bool", [[True, False, True], [False, False, True]]],
    "pi": {"py": 2}, "pf": {"py": 1.5}, "pb": {"py": True},
    "li": {"py": [[1, 2, 3], [4, 5, 6]]}, "lf": {"py": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]},
    # shaped inputs for the structural functions
    "v3": ["float64", [1.0, 2.0, 3.0]],
    "w3": ["float32", [0.5, -1.0, 2.0]],
    "k3": ["int32", [3, 1, 2]],
    "m33": ["float64", [[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.0, 2.0, 4.0]]],
    "n34": ["float32", [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]],
    "t234": ["float64", np.arange(24.0).reshape(2, 3, 4).tolist()],
    "nan": ["float64", [[1.0, np.nan, 3.0], [np.nan, 5.0, 6.0]]],
    "inf": ["float64", [1.0, np.inf, -np.inf, np.nan]],
    "idx": ["int64", [0, 2, 1]],
    "mask": ["bool", [True, False, True]],
    "e0": ["float32", []],
}


def _unit(c: complex) -> list:
    return [c.real, c.imag]


def build(name: str, M, asarray):
    """The input `name` as the module `M` takes it (tnp arrays for TF, NumPy arrays for NumPy)."""
    spec = INPUTS[name]
    if isinstance(spec, dict):
        return spec["py"]
    dtype, values = spec
    if dtype.startswith("complex"):
        array = np.array(values, dtype=np.float64)
        array = (array[..., 0] + 1j * array[..., 1]).astype(dtype)
    else:
        array = np.array(values, dtype=dtype)
    return asarray(array)


UNARY = ("abs absolute angle arccos arccosh arcsin arcsinh arctan arctanh around cbrt ceil conj conjugate cos cosh "
         "deg2rad exp exp2 expm1 fabs fix floor imag iscomplex isfinite isinf isnan isneginf isposinf isreal log "
         "log10 log1p log2 logical_not negative positive rad2deg real reciprocal sign signbit sin sinc sinh sqrt "
         "square tan tanh bitwise_not round ravel copy ndim size shape sum prod mean std var amax amin max min all "
         "any argmax argmin count_nonzero cumsum cumprod nanmean nansum nanprod ptp average diff sort argsort flip "
         "fliplr flipud transpose squeeze nonzero diagonal trace tril triu atleast_1d atleast_2d atleast_3d "
         "iscomplexobj isrealobj isscalar asarray array zeros_like ones_like").split()
BINARY = ("add subtract multiply divide true_divide floor_divide mod remainder divmod power float_power maximum "
          "minimum arctan2 hypot heaviside nextafter logaddexp logaddexp2 gcd lcm bitwise_and bitwise_or bitwise_xor "
          "equal not_equal greater greater_equal less less_equal logical_and logical_or logical_xor isclose "
          "allclose array_equal").split()
UNARY_KEYS = ["f64", "f32", "f16", "c64", "i32", "i64", "i16", "i8", "u8", "b", "pi", "pf", "pb", "li", "lf"]
BINARY_KEYS = ["f64", "f32", "f16", "c64", "i32", "i64", "i8", "u8", "b", "pi", "pf", "li", "lf"]
PRODUCT_KEYS = ["f64", "f32", "i32", "i64", "u8", "b", "pi", "pf"]

EXPLICIT = [
    # creation
    "M.zeros((2, 3))", "M.zeros(3, dtype=M.int32)", "M.zeros([2], dtype='float32')", "M.zeros((2,), dtype=bool)",
    "M.ones((2, 2))", "M.ones(2, dtype=int)", "M.ones(2, dtype=float)", "M.ones(2, dtype=M.complex64)",
    "M.full((2, 2), 7)", "M.full((2,), 1.5)", "M.full(3, 2, dtype=M.float32)", "M.full((2, 2), v3[:2])",
    "M.full((2,), True)", "M.full_like(i32, 7)", "M.full_like(f32, 2.5)", "M.full_like(i32, 2.5)",
    "M.full_like(i32, 2, dtype=M.float64)", "M.zeros_like(f32)", "M.ones_like(i8)", "M.zeros_like(li)",
    "M.ones_like(f32, dtype=M.int64)", "M.zeros_like(lf, dtype=M.float32)",
    "M.eye(3)", "M.eye(2, 3, k=1)", "M.eye(3, k=-1, dtype=M.int32)", "M.eye(3, 2, k=-2)", "M.identity(2)",
    "M.identity(3, dtype=M.int64)",
    "M.arange(5)", "M.arange(1, 7, 2)", "M.arange(5.0)", "M.arange(0.5, 3)", "M.arange(0, 1, 0.25)",
    "M.arange(5, dtype=M.float32)", "M.arange(3, 0, -1)", "M.arange(2, 2)", "M.arange(k3[1], 5)",
    "M.linspace(0, 1, 5)", "M.linspace(0, 1, 4, endpoint=False)", "M.linspace(2, 3, 3, dtype=M.int32)",
    "M.linspace(0, 10, 6, retstep=True)", "M.linspace(v3, 2 * v3, 3)", "M.linspace(v3, 2 * v3, 3, axis=1)",
    "M.linspace(0, 1, 1)", "M.linspace(1, 2, 0)",
    "M.logspace(0, 2, 3)", "M.logspace(0, 3, 4, base=2.0)", "M.logspace(0, 2, 3, endpoint=False)",
    "M.logspace(0, 2, 3, dtype=M.float32)", "M.geomspace(1, 1000, 4)", "M.geomspace(1, 16, 5, endpoint=False)",
    "M.geomspace(2, 32, 3, dtype=M.float32)", "M.geomspace(v3, 8 * v3, 4, axis=1)",
    "M.array([1, 2, 3])", "M.array([1.5, 2])", "M.array([[1, 2], [3, 4]], dtype=M.float32)",
    "M.array(3.0)", "M.array(True)", "M.array([1, 2], ndmin=3)", "M.array(f32, dtype=M.float64)",
    "M.array([1+2j, 3])", "M.array([True, 2])", "M.array([v3, v3])", "M.array(i32, copy=False)",
    "M.asarray([1, 2])", "M.asarray(f16)", "M.asarray(i32, dtype=M.float32)", "M.asarray(2.5, dtype=int)",
    "M.asanyarray([1.0, 2.0])", "M.ascontiguousarray(i8)", "M.ascontiguousarray(5)", "M.copy(f32)",
    "M.tri(3)", "M.tri(3, 4, k=1)", "M.tri(2, dtype=M.int32)", "M.tri(3, k=-1)",
    "M.diag(v3)", "M.diag(v3, k=1)", "M.diag(v3, k=-2)", "M.diag(m33)", "M.diag(m33, k=1)", "M.diag(n34, k=-1)",
    "M.diagflat(v3)", "M.diagflat(m33[:2, :2], k=1)", "M.diagflat([1, 2], k=-1)",
    "M.diag_indices(3)", "M.diag_indices(2, ndim=3)",
    "M.vander(v3)", "M.vander(v3, N=2)", "M.vander(k3, increasing=True)", "M.vander([1, 2, 3], N=4)",
    "M.meshgrid(v3, w3)", "M.meshgrid(v3, k3, indexing='ij')", "M.meshgrid([1, 2], [3, 4, 5], sparse=True)",
    "M.ix_(idx, [0, 1])", "M.ix_([1, 0])",
    # shape manipulation
    "M.reshape(f64, (3, 2))", "M.reshape(f64, -1)", "M.reshape(t234, (4, -1))", "M.reshape(f64, (3, 2), order='F')",
    "M.reshape(li, [3, 2])", "M.ravel(t234)", "M.ravel(pi)", "M.flatten(f64)", "M.flatten(f64, order='F')",
    "M.transpose(t234)", "M.transpose(t234, (1, 0, 2))", "M.transpose(t234, [2, 0, 1])", "M.transpose(v3)",
    "M.swapaxes(t234, 0, 2)", "M.swapaxes(f64, -1, 0)", "M.moveaxis(t234, 0, -1)", "M.moveaxis(t234, [0, 1], [2, 0])",
    "M.expand_dims(v3, 0)", "M.expand_dims(f64, -1)", "M.expand_dims(f64, (0, 3))", "M.expand_dims(pi, 0)",
    "M.squeeze(M.ones((1, 3, 1)))", "M.squeeze(M.ones((1, 3, 1)), axis=0)", "M.squeeze(M.ones((1, 3, 1)), axis=(0, 2))",
    "M.concatenate([f64, f64])", "M.concatenate([f64, i32], axis=1)", "M.concatenate([v3, w3])",
    "M.concatenate([f64, f64], axis=None)", "M.concatenate([li, li], axis=-1)", "M.concatenate((i8, u8))",
    "M.stack([v3, v3])", "M.stack([v3, w3], axis=1)", "M.stack([k3, k3], axis=-1)", "M.stack([pi, pf])",
    "M.hstack([v3, w3])", "M.hstack([f64, f64])", "M.hstack([1, 2])", "M.vstack([v3, w3])", "M.vstack([f64, v3])",
    "M.vstack([1, 2])", "M.dstack([v3, v3])", "M.dstack([f64, f64])", "M.dstack([1, 2])",
    "M.split(n34, 3)", "M.split(n34, [1, 3], axis=1)", "M.split(v3, [1])", "M.split(n34, 2, axis=1)",
    "M.hsplit(n34, 2)", "M.hsplit(v3, 3)", "M.vsplit(n34, 3)", "M.vsplit(n34, [1])", "M.dsplit(t234, 2)",
    "M.dsplit(t234, [1, 3])",
    "M.tile(v3, 2)", "M.tile(v3, (2, 2))", "M.tile(f64, (2, 1, 2))", "M.tile(pi, 3)",
    "M.repeat(v3, 2)", "M.repeat(f64, 2, axis=1)", "M.repeat(f64, [1, 2], axis=0)", "M.repeat(k3, k3)",
    "M.repeat(pi, 3)", "M.broadcast_to(v3, (2, 3))", "M.broadcast_to(pi, (2,))", "M.broadcast_to(f64, (4, 2, 3))",
    "M.broadcast_arrays(v3, M.ones((2, 1)))", "M.broadcast_arrays(pi, k3)",
    "M.flip(t234, 1)", "M.flip(t234, (0, 2))", "M.flip(v3)", "M.fliplr(n34)", "M.flipud(n34)",
    "M.rot90(n34)", "M.rot90(n34, 2)", "M.rot90(n34, -1)", "M.rot90(t234, 1, axes=(1, 2))", "M.rot90(n34, 3)",
    "M.roll(v3, 1)", "M.roll(f64, -1, axis=1)", "M.roll(t234, (1, 2), axis=(0, 2))", "M.roll(f64, 4)",
    "M.pad(v3, 2, 'constant')", "M.pad(f64, ((1, 0), (0, 2)), 'constant', constant_values=9)",
    "M.pad(v3, (1, 2), 'reflect')", "M.pad(v3, (2, 1), 'symmetric')", "M.pad(f64, 1, mode='constant')",
    "M.pad(k3, [[1, 1]], 'constant', constant_values=-1)",
    "M.append(v3, w3)", "M.append(f64, f64, axis=0)", "M.append(f64, [[1, 2, 3]], axis=0)", "M.append(k3, 4.5)",
    "M.atleast_1d(pi)", "M.atleast_1d(v3, pf)", "M.atleast_2d(v3)", "M.atleast_2d(pi)", "M.atleast_3d(v3)",
    "M.atleast_3d(f64)", "M.atleast_3d(t234)",
    "M.take(v3, [0, 2])", "M.take(f64, [1, 0], axis=1)", "M.take(f64, [[0, 5]])", "M.take(v3, 1)",
    "M.take(v3, [5, -1])", "M.take(f64, [2, 0], axis=0)",
    "M.take_along_axis(f64, M.argsort(f64, axis=1), axis=1)", "M.take_along_axis(n34, M.ones((1, 4), dtype=int), 0)",
    "M.take_along_axis(v3, idx, None)",
    "M.where(mask, v3, w3)", "M.where(mask, v3, 0)", "M.where(f64 > 0, i32, f32)", "M.where(mask, 1, 2.5)",
    "M.where(b)", "M.where(v3 > 1.5)", "M.where(mask, k3, i8[0])",
    "M.select([v3 < 2, v3 > 2], [v3, -v3])", "M.select([mask], [k3], default=-1)", "M.select([v3 > 1], [1.5], 7)",
    "M.compress(mask, v3)", "M.compress([True, False], f64, axis=0)", "M.compress([False, True], f64, axis=1)",
    "M.compress([1, 0, 1, 1], f64)", "M.compress([True], v3)",
    "M.nonzero(f64 > 0)", "M.nonzero(k3 - 1)", "M.nonzero(v3)",
    "M.diagonal(m33)", "M.diagonal(m33, 1)", "M.diagonal(t234, 0, 1, 2)", "M.diagonal(n34, -1)",
    "M.diagonal(t234, axis1=0, axis2=2)",
    "M.trace(m33)", "M.trace(m33, 1)", "M.trace(t234, axis1=1, axis2=2)", "M.trace(n34, dtype=M.int32)",
    "M.tril(m33)", "M.tril(m33, -1)", "M.tril(t234, 1)", "M.triu(n34, 1)", "M.triu(m33, -1)", "M.tril(v3)",
    "M.diff(v3)", "M.diff(f64, axis=0)", "M.diff(n34, n=2)", "M.diff(k3, 2)", "M.diff(mask)",
    "M.shape(t234)", "M.shape(pi)", "M.shape(li)", "M.ndim(t234)", "M.ndim([1, 2])", "M.size(t234)", "M.size(pf)",
    "M.isscalar(pf)", "M.isscalar(v3)", "M.isscalar('a')", "M.isscalar([1])",
    # reductions
    "M.sum(f64, axis=0)", "M.sum(f64, axis=1, keepdims=True)", "M.sum(t234, axis=(0, 2))", "M.sum(i8, axis=1)",
    "M.sum(u8)", "M.sum(f32, dtype=M.float64)", "M.sum(i32, dtype=M.float32)", "M.sum(b, axis=0)",
    "M.sum(b, dtype=bool)", "M.sum(e0)",
    "M.prod(f64, axis=1)", "M.prod(i16, axis=0)", "M.prod(b)", "M.prod(e0)", "M.prod(t234, axis=-1, keepdims=True)",
    "M.mean(f64, axis=1)", "M.mean(i32, axis=0)", "M.mean(f32, keepdims=True)", "M.mean(i8, dtype=M.float32)",
    "M.mean(t234, axis=(1, 2))", "M.mean(b)", "M.mean(f16)",
    "M.std(f64)", "M.std(f64, axis=0)", "M.std(i32, axis=1, keepdims=True)", "M.std(f32)",
    "M.var(f64)", "M.var(f64, axis=1, ddof=1)", "M.var(i32, axis=0)", "M.var(f32, dtype=M.float64)", "M.var(c64)",
    "M.var(f64, keepdims=True)",
    "M.amax(f64, axis=0)", "M.amax(t234, axis=(0, 1))", "M.amax(i8, keepdims=True)", "M.amax(b, axis=1)",
    "M.amin(f64, axis=1)", "M.amin(u8)", "M.max(n34, axis=1)", "M.min(n34, axis=0, keepdims=True)",
    "M.amax(nan)", "M.amin(nan, axis=0)",
    "M.all(f64, axis=0)", "M.all(i32 > 0, axis=1, keepdims=True)", "M.any(b, axis=0)", "M.any(f64 > 3)",
    "M.all(e0)", "M.any(e0)",
    "M.argmax(f64, axis=0)", "M.argmax(f64, axis=1)", "M.argmin(t234, axis=2)", "M.argmax(b)", "M.argmin(nan)",
    "M.argmax(nan, axis=1)",
    "M.count_nonzero(i32)", "M.count_nonzero(b, axis=0)", "M.count_nonzero(f64 > 0, axis=1)",
    "M.cumsum(f64, axis=1)", "M.cumsum(i8, axis=0)", "M.cumsum(b)", "M.cumsum(i32, dtype=M.float32)",
    "M.cumprod(f64, axis=0)", "M.cumprod(u8)", "M.cumprod(i16, axis=1)",
    "M.nanmean(nan)", "M.nanmean(nan, axis=0)", "M.nanmean(nan, axis=1, keepdims=True)", "M.nanmean(i32)",
    "M.nansum(nan)", "M.nansum(nan, axis=1)", "M.nansum(i32, dtype=M.float32)", "M.nanprod(nan, axis=0)",
    "M.nanprod(nan, keepdims=True)",
    "M.ptp(f64)", "M.ptp(f64, axis=1)", "M.ptp(i32, axis=0, keepdims=True)",
    "M.average(f64)", "M.average(f64, axis=1)", "M.average(f64, axis=0, weights=[1, 3])",
    "M.average(f64, weights=f64 * 0 + 2)", "M.average(v3, weights=w3, returned=True)",
    "M.average(i32, axis=1, returned=True)",
    "M.sort(f64)", "M.sort(f64, axis=0)", "M.sort(f64, axis=None)", "M.sort(k3)", "M.sort(nan, axis=1)",
    "M.argsort(f64)", "M.argsort(f64, axis=0)", "M.argsort(k3)", "M.argsort([3, 1, 1, 2], kind='stable')",
    "M.allclose(v3, v3 + 1e-9)", "M.allclose(v3, w3)", "M.allclose(inf, inf)", "M.allclose(inf, inf, equal_nan=True)",
    "M.isclose(v3, v3 * 1.001, rtol=1e-2)", "M.isclose(inf, inf)", "M.isclose(inf, inf, equal_nan=True)",
    "M.isclose(v3, 1.0)", "M.isclose(k3, 3)", "M.isclose(f64, f64 + 1e-6, atol=0.0)",
    "M.array_equal(v3, v3)", "M.array_equal(v3, w3)", "M.array_equal(v3, v3[:2])", "M.array_equal(k3, [3, 1, 2])",
    "M.clip(v3, 1.5, 2.5)", "M.clip(k3, 2, 3)", "M.clip(f64, v3, 3.0)", "M.clip(i32, 0, 2.5)", "M.clip(k3, None, 2)",
    "M.around(f64 * 1.37, 1)", "M.around(k3 * 37, -1)", "M.round(f64 / 3, 2)", "M.around([0.5, 1.5, 2.5, -0.5])",
    "M.round(f32 * 1.37, 2)",
    "M.isneginf(inf)", "M.isposinf(inf)", "M.isinf(inf)", "M.isnan(inf)", "M.isfinite(inf)",
    "M.sign(inf)", "M.sign([-1.5, 0, 2])", "M.signbit([-0.0, 0.0, -1.0])",
    # products
    "M.dot(v3, v3)", "M.dot(f64, v3)", "M.dot(m33, m33)", "M.dot(t234, M.ones((4, 2)))", "M.dot(2, v3)",
    "M.dot(k3, w3)", "M.dot(t234, M.ones(4))",
    "M.matmul(m33, v3)", "M.matmul(v3, m33)", "M.matmul(t234, M.ones((4, 2)))", "M.matmul(k3, k3)",
    "M.matmul(M.ones((2, 1, 3, 4)), M.ones((5, 4, 2)))",
    "M.tensordot(t234, M.ones((3, 4)))", "M.tensordot(t234, M.ones((4, 3)), axes=([1, 2], [1, 0]))",
    "M.tensordot(v3, w3, axes=0)", "M.tensordot(m33, m33, axes=1)", "M.tensordot(f64, n34, axes=[[1], [0]])",
    "M.einsum('ij,jk->ik', m33, m33)", "M.einsum('i,i', v3, v3)", "M.einsum('ii->i', m33)", "M.einsum('ij->ji', f64)",
    "M.einsum('bij,bjk->bik', t234, M.ones((2, 4, 2)))", "M.einsum('...j,j', t234, M.ones(4))",
    "M.einsum('ij,j->i', f64, k3)",
    "M.inner(v3, w3)", "M.inner(f64, f64)", "M.inner(t234, M.ones(4))", "M.inner(pi, v3)",
    "M.outer(v3, w3)", "M.outer(f64, k3)", "M.outer(k3, k3)",
    "M.vdot(v3, w3)", "M.vdot(f64, f64)", "M.vdot(c64, c64)", "M.vdot(k3, k3)",
    "M.kron(v3, w3)", "M.kron(m33[:2, :2], f64)", "M.kron(k3, pi)",
    "M.cross(v3, w3)", "M.cross(f64, M.flipud(f64))", "M.cross([1, 2], [3, 4])", "M.cross(v3, [1, 2])",
    "M.cross(t234[:, :, :3], M.ones((2, 3, 3)))", "M.cross(n34[:, :3], v3, axisa=1, axisc=0)",
    "M.cross(M.ones((3, 2)), M.arange(6.0).reshape(3, 2), axisa=0, axisb=0)",
    "M.cross(M.ones((2, 3)), M.arange(6.0).reshape(2, 3), axis=1)",
    "M.polyval([1, 2, 3], 2)", "M.polyval(v3, w3)", "M.polyval([1.5, -1], k3)", "M.polyval([2], v3)",
    "M.float_power(k3, 2)", "M.float_power(v3, -1)", "M.power(k3, 2)", "M.power(v3, w3)", "M.power(2, k3)",
    "M.heaviside(f64, 0.5)", "M.gcd(k3 * 6, 4)", "M.lcm(k3, 4)", "M.divmod(f64, 1.5)", "M.divmod(i32, 4)",
    "M.floor_divide(i32, -4)", "M.mod(i32, -4)", "M.remainder(f64, -1.5)", "M.mod(f64, 0.7)",
    "M.true_divide(i8, i8)", "M.true_divide(i16, 3)", "M.divide(u8, 2)", "M.divide(b, b)",
    "M.nextafter(v3, 0)", "M.nextafter(w3, 10)", "M.logaddexp(v3, w3)", "M.logaddexp2(v3, k3)",
    "M.sinc([0.0, 0.5, 1.0])", "M.angle(c64, deg=True)", "M.angle([1j, -1])", "M.real(c64)", "M.imag(c64)",
    "M.real(f32)", "M.imag(i32)", "M.conj(c64)", "M.iscomplex(c64)", "M.isreal(c64)",
    "M.cbrt([-8.0, 27.0])", "M.exp2(k3)", "M.fix([-1.5, 1.5, 2.7])", "M.reciprocal(v3)",
    # dtype utilities
    "M.result_type(M.int32, M.float32)", "M.result_type(i8, 2.5)", "M.result_type(i32, 2)", "M.result_type(f16, f32)",
    "M.result_type(u8, i8)", "M.result_type(b, pi)", "M.result_type(M.float32, 1j)", "M.result_type(1, 2.0)",
    "M.result_type(i32, [1.5])", "M.result_type(M.int64, M.uint64)", "M.result_type(pf)", "M.result_type()",
    "M.promote_types(M.int8, M.uint8)", "M.promote_types('float32', 'int32')", "M.promote_types(M.int16, M.float16)",
    "M.promote_types(bool, M.int8)", "M.promote_types(M.uint64, M.int64)",
    "M.issubdtype(M.float32, M.inexact)", "M.issubdtype(M.int32, M.inexact)", "M.issubdtype(M.int8, M.int8)",
    "M.finfo(M.float32).eps", "M.finfo(M.float64).max", "M.finfo(M.float16).tiny", "M.finfo(M.float32).resolution",
    "M.iinfo(M.int8).min", "M.iinfo(M.uint16).max", "M.iinfo(M.int32).max",
    "M.pi", "M.e", "M.inf", "M.newaxis",
]
# Cases compared by dtype and shape only (random samples, uninitialised arrays)
SHAPE_ONLY = [
    "M.empty((2, 3))", "M.empty(2, dtype=M.int32)", "M.empty_like(i8)", "M.empty_like(lf, dtype=M.float32)",
    "M.random.rand(2, 3)", "M.random.rand()", "M.random.randn(4)", "M.random.random((2, 2))", "M.random.random()",
    "M.random.standard_normal(3)", "M.random.standard_normal((2, 3))", "M.random.uniform(1, 2, (3,))",
    "M.random.uniform(size=2)", "M.random.uniform(v3, 4.0)", "M.random.randint(5, size=4)",
    "M.random.randint(2, 9, size=(2, 2))", "M.random.randint(3, 5, size=2, dtype=M.int32)",
    "M.random.poisson(3.0, size=(2, 3))", "M.random.poisson()",
]
# Under experimental_enable_numpy_behavior(prefer_float32=True)
PREFER_FLOAT32 = [
    "M.asarray(1.5)", "M.asarray([1.0, 2.0])", "M.asarray(1)", "M.asarray(1j)", "M.array([1, 2.5])", "M.zeros(2)",
    "M.ones(2, dtype=float)", "M.full(2, 1.5)", "M.eye(2)", "M.arange(2.0)", "M.arange(0, 1, 0.5)",
    "M.linspace(0, 1, 3)", "M.logspace(0, 1, 2)", "M.add(i32, 1.5)", "M.add(f16, 1.5)", "M.add(pf, pf)",
    "M.add(i32, f32)", "M.multiply(li, 1.5)", "M.sqrt(pf)", "M.sqrt(i32)", "M.sqrt(lf)", "M.mean(i32)",
    "M.mean(lf)", "M.true_divide(i32, i32)", "M.divide(pi, pi)", "M.exp(pi)", "M.sin(lf)", "M.power(i32, pf)",
    "M.where(mask, 1.5, 2)", "M.result_type(1.5)", "M.result_type(i32, 1.5)", "M.full_like(i32, 2.5)",
    "M.random.rand(2)", "M.random.randn(2)", "M.random.uniform(size=2)", "M.clip(k3, 0.5, 2)",
    "M.average(i32)", "M.std(lf)", "M.var(li)", "M.cumsum(lf)", "M.concatenate([li, lf])", "M.stack([pi, pf])",
]


def cases() -> list:
    out = [f"M.{f}({k})" for f in UNARY for k in UNARY_KEYS]
    out += [f"M.{f}({a}, {b})" for f in BINARY for a in BINARY_KEYS for b in BINARY_KEYS]
    out += [f"M.{f}({a}, {b})" for f in ("dot", "inner", "outer", "kron", "vdot", "tensordot")
            for a in PRODUCT_KEYS for b in PRODUCT_KEYS]
    out += [f"M.matmul({a}, M.transpose({b}))" for a in PRODUCT_KEYS[:6] for b in PRODUCT_KEYS[:6]]
    return out + EXPLICIT


def normalize(value, shape_only: bool = False):
    """A result as JSON: [dtype, values] for arrays, nested lists for tuples/lists of arrays, [type, repr] else."""
    if isinstance(value, (tuple, list)) and not (value and isinstance(value[0], (int, float, bool, complex))):
        return {"seq": [normalize(item, shape_only) for item in value]}
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, type) or isinstance(value, np.dtype) or type(value).__name__ == "DType":
        return {"dtype": np.dtype(getattr(value, "as_numpy_dtype", value)).name}
    if value is None or isinstance(value, (bool, str)):
        return {"py": value}
    if isinstance(value, (int, float)) and not isinstance(value, np.generic):
        return {"py": value if not isinstance(value, float) or np.isfinite(value) else repr(value)}
    array = np.asarray(value)
    if shape_only:
        return [array.dtype.name, {"shape": list(array.shape)}]
    if array.dtype.kind == "c":
        return [array.dtype.name, {"complex": np.stack([array.real, array.imag], -1).tolist()}]
    listed = array.tolist()
    return [array.dtype.name, json.loads(json.dumps(listed, allow_nan=True).replace("NaN", '"nan"')
                                         .replace("-Infinity", '"-inf"').replace("Infinity", '"inf"'))]


def _evaluate(expr: str, M, asarray, shape_only: bool = False):
    namespace = {"M": M, **{name: build(name, M, asarray) for name in INPUTS}}
    try:
        return normalize(eval(expr, namespace), shape_only)  # noqa: S307 - expressions written above
    except Exception as error:  # noqa: BLE001
        return {"error": type(error).__name__}


def _worker(mode: str) -> None:
    import tensorflow.experimental.numpy as tnp

    if mode == "on":
        tnp.experimental_enable_numpy_behavior()
    elif mode == "prefer_float32":
        tnp.experimental_enable_numpy_behavior(prefer_float32=True)
    todo = PREFER_FLOAT32 if mode == "prefer_float32" else cases()
    results = {expr: _evaluate(expr, tnp, tnp.asarray, shape_only=expr.startswith("M.random.")) for expr in todo}
    results.update({expr: _evaluate(expr, tnp, tnp.asarray, shape_only=True) for expr in SHAPE_ONLY})
    json.dump(results, sys.stdout)


def _run(mode: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--worker", mode], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


_RTOL = {"float16": 1e-3, "float32": 1e-6, "complex64": 1e-6}


def _numbers(values):
    """Nested JSON values as a float array ("nan"/"inf" strings read back; complex pairs kept as pairs)."""
    if isinstance(values, dict):
        values = values.get("complex", values.get("shape"))
    return np.array(json.loads(json.dumps(values).replace('"nan"', "NaN").replace('"-inf"', "-Infinity")
                               .replace('"inf"', "Infinity")), dtype=float)


def same(tf_result, np_result) -> bool:
    """True when TF's result is NumPy's: same structure and dtypes, values equal up to the dtype's rounding."""
    if isinstance(tf_result, dict) and isinstance(np_result, dict) and "seq" in tf_result and "seq" in np_result:
        return len(tf_result["seq"]) == len(np_result["seq"]) and all(
            same(a, b) for a, b in zip(tf_result["seq"], np_result["seq"]))
    if not (isinstance(tf_result, list) and isinstance(np_result, list)):
        return tf_result == np_result
    if tf_result[0] != np_result[0]:
        return False
    try:
        a, b = _numbers(tf_result[1]), _numbers(np_result[1])
    except (TypeError, ValueError):
        return tf_result == np_result
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=_RTOL.get(tf_result[0], 1e-12), atol=0,
                                                   equal_nan=True))


def _failed(result) -> bool:
    return isinstance(result, dict) and "error" in result


def main() -> None:
    off, on, f32 = _run("off"), _run("on"), _run("prefer_float32")
    table = {}
    for expr in cases() + SHAPE_ONLY:
        np_result = _evaluate(expr, np, np.asarray, shape_only=expr in SHAPE_ONLY)
        results = [result for result in (off[expr], on[expr]) if not _failed(result)]
        if not results:
            table[expr] = "error" if _failed(np_result) else "tf-error"
        elif any(same(result, np_result) for result in results):
            table[expr] = "np"
        else:
            table[expr] = results[-1]  # with the numpy behaviour on where both modes give a result
    data = {"tf": "2.21.0", "numpy": np.__version__, "inputs": INPUTS, "cases": table, "shape_only": SHAPE_ONLY,
            "prefer_float32": {expr: f32[expr] for expr in PREFER_FLOAT32}}
    with gzip.open(OUT, "wt", encoding="utf-8") as handle:
        json.dump(data, handle, sort_keys=True)
    kinds = [v if isinstance(v, str) else "tf" for v in table.values()]
    print(f"{len(table)} cases: " + ", ".join(f"{k} {kinds.count(k)}" for k in sorted(set(kinds))) + f" -> {OUT}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        _worker(sys.argv[2])
    else:
        main()
