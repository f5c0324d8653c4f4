"""tf.fftnd / ifftnd / rfftnd / irfftnd (TF 2.21 has no CPU kernel for them, so NumPy is the reference): lengths
and axes honoured, the output dtypes Tcomplex / Treal, and the round trip."""
from __future__ import annotations

import numpy as np
import torch

import torchstrategy as tf
from tests.nn._reference import arr


def test_nd_ffts_match_numpy():
    z = arr(3, 4, 6)
    np.testing.assert_allclose(tf.fftnd(z.astype(np.complex64), [4, 8], [1, 2]).numpy(),
                               np.fft.fftn(z, s=[4, 8], axes=[1, 2]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tf.ifftnd(z.astype(np.complex64), [3, 6], [0, 2]).numpy(),
                               np.fft.ifftn(z, s=[3, 6], axes=[0, 2]), rtol=1e-5, atol=1e-6)
    spectrum = tf.rfftnd(z, [3, 6], [0, 2], Tcomplex=tf.complex128)
    assert spectrum.dtype == torch.complex128
    np.testing.assert_allclose(spectrum.numpy(), np.fft.rfftn(z, s=[3, 6], axes=[0, 2]), rtol=1e-5, atol=1e-5)
    back = tf.irfftnd(tf.rfftnd(z, [4, 6], [1, 2]), [4, 6], [1, 2])
    assert back.dtype == torch.float32
    np.testing.assert_allclose(back.numpy(), z, rtol=1e-5, atol=1e-5)


def test_top_level_aliases_reach_their_homes():
    assert tf.qint8 is torch.qint8 and tf.quint8 is torch.quint8 and tf.qint32 is torch.qint32
    assert tf.assert_equal is tf.debugging.assert_equal and tf.assert_rank is tf.debugging.assert_rank
    assert tf.assert_less is tf.debugging.assert_less and tf.assert_greater is tf.debugging.assert_greater
