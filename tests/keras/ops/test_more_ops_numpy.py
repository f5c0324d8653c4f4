"""keras.ops additions against NumPy: element-wise math, bitwise ops, windows, nan-reductions, percentiles,
searching/counting, splits and stacks, creation, rearrange; the control-flow ops on small Python loops;
namespaces keras.ops.nn / linalg / numpy / image hold the same functions."""
import numpy as np
import pytest
import torch

from torchstrategy.keras import ops

rng = np.random.default_rng(0)
A = rng.normal(size=(3, 4)).astype("float32")
B = rng.normal(size=(3, 4)).astype("float32")
POS = (np.abs(A) + 1.1).astype("float32")
UNIT = np.tanh(A).astype("float32")
NAN = A.copy()
NAN[0, 1] = NAN[2, 3] = np.nan
INTS = rng.integers(1, 50, size=(3, 4)).astype("int32")
INTS2 = rng.integers(1, 50, size=(3, 4)).astype("int32")

CASES = [
    ("arccosh", lambda: ops.arccosh(POS), lambda: np.arccosh(POS)),
    ("arcsinh", lambda: ops.arcsinh(A), lambda: np.arcsinh(A)),
    ("arctanh", lambda: ops.arctanh(UNIT * 0.9), lambda: np.arctanh(UNIT * 0.9)),
    ("arctan2", lambda: ops.arctan2(A, B), lambda: np.arctan2(A, B)),
    ("cbrt", lambda: ops.cbrt(A), lambda: np.cbrt(A)),
    ("exp2", lambda: ops.exp2(A), lambda: np.exp2(A)),
    ("fabs", lambda: ops.fabs(A), lambda: np.fabs(A)),
    ("deg2rad", lambda: ops.deg2rad(A), lambda: np.deg2rad(A)),
    ("rad2deg", lambda: ops.rad2deg(A), lambda: np.rad2deg(A)),
    ("i0", lambda: ops.i0(A), lambda: np.i0(A)),
    ("sinc", lambda: ops.sinc(A), lambda: np.sinc(A)),
    ("fmax", lambda: ops.fmax(NAN, B), lambda: np.fmax(NAN, B)),
    ("fmin", lambda: ops.fmin(NAN, B), lambda: np.fmin(NAN, B)),
    ("fmod", lambda: ops.fmod(A, 0.7), lambda: np.fmod(A, np.float32(0.7))),
    ("gcd", lambda: ops.gcd(INTS, INTS2), lambda: np.gcd(INTS, INTS2)),
    ("lcm", lambda: ops.lcm(INTS, INTS2), lambda: np.lcm(INTS, INTS2)),
    ("heaviside", lambda: ops.heaviside(np.round(A), 0.5), lambda: np.heaviside(np.round(A), 0.5)),
    ("hypot", lambda: ops.hypot(A, B), lambda: np.hypot(A, B)),
    ("logaddexp", lambda: ops.logaddexp(A, B), lambda: np.logaddexp(A, B)),
    ("logaddexp2", lambda: ops.logaddexp2(A, B), lambda: np.logaddexp2(A, B)),
    ("ldexp", lambda: ops.ldexp(A, INTS % 5), lambda: np.ldexp(A, INTS % 5)),
    ("signbit", lambda: ops.signbit(A), lambda: np.signbit(A)),
    ("isneginf", lambda: ops.isneginf(np.array([-np.inf, 1.0, np.inf])), lambda: np.isneginf([-np.inf, 1.0, np.inf])),
    ("bitwise_and", lambda: ops.bitwise_and(INTS, INTS2), lambda: np.bitwise_and(INTS, INTS2)),
    ("bitwise_xor", lambda: ops.bitwise_xor(INTS, INTS2), lambda: np.bitwise_xor(INTS, INTS2)),
    ("bitwise_invert", lambda: ops.bitwise_invert(INTS), lambda: np.invert(INTS)),
    ("left_shift", lambda: ops.left_shift(INTS, 2), lambda: np.left_shift(INTS, 2)),
    ("right_shift", lambda: ops.bitwise_right_shift(INTS, 1), lambda: np.right_shift(INTS, 1)),
    ("isin", lambda: ops.isin(INTS, INTS2), lambda: np.isin(INTS, INTS2)),
    ("hamming", lambda: ops.hamming(7), lambda: np.hamming(7)),
    ("kaiser", lambda: ops.kaiser(6, 3.0), lambda: np.kaiser(6, 3.0)),
    ("blackman", lambda: ops.blackman(5), lambda: np.blackman(5)),
    ("nansum", lambda: ops.nansum(NAN, axis=1), lambda: np.nansum(NAN, axis=1)),
    ("nanmean", lambda: ops.nanmean(NAN, axis=0, keepdims=True), lambda: np.nanmean(NAN, axis=0, keepdims=True)),
    ("nanvar", lambda: ops.nanvar(NAN), lambda: np.nanvar(NAN)),
    ("nanstd", lambda: ops.nanstd(NAN, axis=1), lambda: np.nanstd(NAN, axis=1)),
    ("nanmax", lambda: ops.nanmax(NAN, axis=1), lambda: np.nanmax(NAN, axis=1)),
    ("nanmin", lambda: ops.nanmin(NAN), lambda: np.nanmin(NAN)),
    ("nanprod", lambda: ops.nanprod(NAN, axis=0), lambda: np.nanprod(NAN, axis=0)),
    ("nanargmax", lambda: ops.nanargmax(NAN, axis=1), lambda: np.nanargmax(NAN, axis=1)),
    ("nancumsum", lambda: ops.nancumsum(NAN, axis=1), lambda: np.nancumsum(NAN, axis=1)),
    ("nanmedian", lambda: ops.nanmedian(NAN, axis=1), lambda: np.nanmedian(NAN, axis=1)),
    ("percentile", lambda: ops.percentile(A, [10, 50, 90], axis=1), lambda: np.percentile(A, [10, 50, 90], axis=1)),
    ("nanpercentile", lambda: ops.nanpercentile(NAN, 30), lambda: np.nanpercentile(NAN, 30)),
    ("nanquantile", lambda: ops.nanquantile(NAN, 0.3, axis=0), lambda: np.nanquantile(NAN, 0.3, axis=0)),
    ("ptp", lambda: ops.ptp(A, axis=0), lambda: np.ptp(A, axis=0)),
    ("bincount", lambda: ops.bincount(INTS.ravel() % 7, minlength=9), lambda: np.bincount(INTS.ravel() % 7, minlength=9)),
    ("bincount_w", lambda: ops.bincount(INTS.ravel() % 7, weights=A.ravel()),
     lambda: np.bincount(INTS.ravel() % 7, weights=A.ravel())),
    ("histogram", lambda: ops.histogram(A.ravel(), bins=5)[0], lambda: np.histogram(A.ravel(), bins=5)[0]),
    ("digitize", lambda: ops.digitize(A, np.array([-1.0, 0.0, 1.0])), lambda: np.digitize(A, [-1.0, 0.0, 1.0])),
    ("searchsorted", lambda: ops.searchsorted(np.sort(A.ravel()), B.ravel(), side="right"),
     lambda: np.searchsorted(np.sort(A.ravel()), B.ravel(), side="right")),
    ("diff", lambda: ops.diff(A, n=2, axis=1), lambda: np.diff(A, n=2, axis=1)),
    ("trapezoid", lambda: ops.trapezoid(A, dx=0.5), lambda: np.trapezoid(A, dx=0.5)),
    ("corrcoef", lambda: ops.corrcoef(A), lambda: np.corrcoef(A)),
    ("correlate", lambda: ops.correlate(A[0], B[1], mode="full"), lambda: np.correlate(A[0], B[1], mode="full")),
    ("inner", lambda: ops.inner(A, B), lambda: np.inner(A, B)),
    ("kron", lambda: ops.kron(A[:2, :2], B[:2, :3]), lambda: np.kron(A[:2, :2], B[:2, :3])),
    ("vander", lambda: ops.vander(A[0], 3, increasing=True), lambda: np.vander(A[0], 3, increasing=True)),
    ("cdist", lambda: ops.cdist(A, B), lambda: np.sqrt(((A[:, None] - B[None]) ** 2).sum(-1))),
    ("select", lambda: ops.select([A > 0.5, A < -0.5], [A, B], default=7.0),
     lambda: np.select([A > 0.5, A < -0.5], [A, B], default=7.0)),
    ("unravel_index", lambda: ops.stack(ops.unravel_index(np.array([5, 11]), (3, 4))),
     lambda: np.stack(np.unravel_index([5, 11], (3, 4)))),
    ("array_split", lambda: ops.array_split(np.arange(10), 3)[0], lambda: np.array_split(np.arange(10), 3)[0]),
    ("hsplit", lambda: ops.hsplit(A, 2)[1], lambda: np.hsplit(A, 2)[1]),
    ("dstack", lambda: ops.dstack([A, B]), lambda: np.dstack([A, B])),
    ("diagflat", lambda: ops.diagflat(A[0], k=1), lambda: np.diagflat(A[0], k=1)),
    ("rot90", lambda: ops.rot90(A, k=3), lambda: np.rot90(A, k=3)),
    ("fliplr", lambda: ops.fliplr(A), lambda: np.fliplr(A)),
    ("meshgrid", lambda: ops.meshgrid(np.arange(3), np.arange(2))[0], lambda: np.meshgrid(np.arange(3), np.arange(2))[0]),
    ("geomspace", lambda: ops.geomspace(1.0, 100.0, 5), lambda: np.geomspace(1.0, 100.0, 5)),
    ("logspace", lambda: ops.logspace(0.0, 2.0, 4, base=2), lambda: np.logspace(0.0, 2.0, 4, base=2)),
    ("rearrange", lambda: ops.rearrange(np.arange(24).reshape(2, 3, 4), "b h w -> b (w h)"),
     lambda: np.arange(24).reshape(2, 3, 4).transpose(0, 2, 1).reshape(2, 12)),
    ("rearrange_split", lambda: ops.rearrange(np.arange(24).reshape(2, 12), "b (h w) -> w b h", h=3),
     lambda: np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1)),
    ("slice_update", lambda: ops.slice_update(np.zeros((3, 4)), (1, 2), np.ones((2, 2))),
     lambda: np.pad(np.ones((2, 2)), ((1, 0), (2, 0)))),
    ("get_item", lambda: ops.get_item(A, (slice(None), 2)), lambda: A[:, 2]),
    ("fft", lambda: ops.fft((A, B))[1], lambda: np.fft.fft(A + 1j * B).imag),
    ("irfft", lambda: ops.irfft(ops.rfft(A)), lambda: np.fft.irfft(np.fft.rfft(A))),
    ("segment_prod", lambda: ops.segment_prod(A, np.array([1, 0, 1])), lambda: np.stack([A[1], A[0] * A[2]])),
    ("eigh", lambda: ops.eigh(A @ A.T)[0], lambda: np.linalg.eigh(A @ A.T)[0]),
    ("qr", lambda: ops.qr(A.T)[1].abs(), lambda: np.abs(np.linalg.qr(A.T)[1])),
    ("svd", lambda: ops.svd(A, compute_uv=False), lambda: np.linalg.svd(A, compute_uv=False)),
    ("logdet", lambda: ops.logdet(A @ A.T + np.eye(3, dtype="float32")),
     lambda: np.linalg.slogdet(A @ A.T + np.eye(3))[1]),
]


@pytest.mark.parametrize("name,ours,reference", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, ours, reference):
    got, want = np.asarray(ours()), np.asarray(reference())
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=2e-5, atol=2e-5)


def test_control_flow():
    assert int(ops.cond(torch.tensor(True), lambda: 1, lambda: 2)) == 1
    assert ops.switch(5, [lambda x: x + 1, lambda x: x * 10], 3) == 30  # index clamped to the last branch
    assert ops.fori_loop(0, 5, lambda i, v: v + i, 0) == 10
    assert ops.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2), (0, 1)) == (4, 16)
    assert ops.while_loop(lambda i: i < 10, lambda i: i + 3, 0, maximum_iterations=2) == 6
    carry, ys = ops.scan(lambda c, x: (c + x, c * x), 0.0, np.arange(1.0, 5.0))
    assert float(carry) == 10.0 and np.asarray(ys).tolist() == [0.0, 2.0, 9.0, 24.0]
    np.testing.assert_allclose(np.asarray(ops.associative_scan(lambda a, b: a + b, np.arange(5.0))),
                               np.cumsum(np.arange(5.0)))
    np.testing.assert_allclose(np.asarray(ops.associative_scan(lambda a, b: a + b, np.arange(5.0), reverse=True)),
                               np.cumsum(np.arange(5.0)[::-1])[::-1])
    np.testing.assert_allclose(np.asarray(ops.map(lambda r: r.sum(), A)), A.sum(1), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ops.vectorized_map(lambda r: r * 2, A)), A * 2)
    assert np.asarray(ops.vectorize(lambda a, b: a + b)(A, B)).shape == (3, 4)
    primal, tangent = ops.jvp(lambda x: x ** 2, (torch.tensor(3.0),), (torch.tensor(1.0),))
    assert float(primal) == 9.0 and float(tangent) == 6.0


def test_custom_gradient():
    @ops.custom_gradient
    def clipped_identity(x):
        def grad(upstream):
            return upstream.clamp(-0.5, 0.5)
        return x * 1.0, grad

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (clipped_identity(x) * torch.tensor([3.0, -0.1])).sum().backward()
    assert x.grad.tolist() == [0.5, pytest.approx(-0.1)]


def test_namespaces_hold_the_same_functions():
    assert ops.nn.conv is ops.conv and ops.linalg.svd is ops.svd and ops.numpy.nanmean is ops.nanmean
    assert ops.linalg.norm is ops.norm and ops.nn.relu is ops.relu
    with pytest.raises(NotImplementedError, match="affine_transform"):
        ops.image.affine_transform(np.zeros((1, 2, 2, 1)), np.zeros((1, 8)))
