"""tf.signal against TF 2.21's numbers frozen in tests/signal_reference.json (tools/tf_reference/signal_reference.py)
and against NumPy's FFTs."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import torchstrategy as tf

with open(os.path.join(os.path.dirname(__file__), "signal_reference.json")) as _handle:
    REF = json.load(_handle)


def ref(key):
    value = REF[key]
    if isinstance(value, dict):
        return np.asarray(value["real"]) + 1j * np.asarray(value["imag"])
    return np.asarray(value)


def signal_input(n):  # the reference script's input
    t = np.arange(n, dtype=np.float64)
    return (np.sin(0.3 * t) + 0.5 * np.cos(1.7 * t + 0.2) + 0.01 * t).astype(np.float32)


X = signal_input(300)


def close(actual, expected, atol=1e-5, rtol=1e-5):
    actual = actual.numpy() if isinstance(actual, torch.Tensor) else np.asarray(actual)
    assert actual.shape == np.asarray(expected).shape
    np.testing.assert_allclose(actual, expected, atol=atol, rtol=rtol)


def test_stft_and_its_inverse_match_tensorflow():
    stft = tf.signal.stft(torch.from_numpy(X), 64, 16)
    assert stft.dtype == torch.complex64 and stft.shape == (15, 33)
    close(stft, ref("stft"), atol=1e-4)
    padded = tf.signal.stft(X[:200], 50, 20, fft_length=100, window_fn=tf.signal.hamming_window, pad_end=True)
    close(padded, ref("stft_pad_fft100_hamming"), atol=1e-4)
    inverse = tf.signal.inverse_stft(stft, 64, 16, window_fn=tf.signal.inverse_stft_window_fn(16))
    close(inverse, ref("inverse_stft"), atol=1e-5)
    np.testing.assert_allclose(inverse.numpy()[48:-48], X[48:240], atol=1e-5)  # fully overlapped part reconstructs
    close(tf.signal.inverse_stft_window_fn(24)(40, tf.float32), ref("inverse_stft_window_fn_24_40"))


def test_mel_matrix_and_mfccs_match_tensorflow():
    close(tf.signal.linear_to_mel_weight_matrix(8, 33, 16000, 20.0, 8000.0), ref("mel"), atol=1e-5)
    default = tf.signal.linear_to_mel_weight_matrix()
    assert default.shape == (129, 20) and default.dtype == torch.float32
    close(default, ref("mel_default"), atol=1e-5)
    mfccs = tf.signal.mfccs_from_log_mel_spectrograms(torch.tensor(ref("log_mel"), dtype=torch.float32))
    close(mfccs, ref("mfccs"), atol=1e-4)
    with pytest.raises(ValueError, match="Nyquist"):
        tf.signal.linear_to_mel_weight_matrix(sample_rate=4000, upper_edge_hertz=3800.0)


@pytest.mark.parametrize("kind", [1, 2, 3, 4])
def test_dct_and_idct_match_tensorflow(kind):
    d = torch.from_numpy(signal_input(12).reshape(2, 6))
    close(tf.signal.dct(d, type=kind), ref(f"dct{kind}"), atol=1e-5)
    close(tf.signal.idct(d, type=kind), ref(f"idct{kind}"), atol=1e-5)
    if kind != 1:
        close(tf.signal.dct(d, type=kind, norm="ortho"), ref(f"dct{kind}_ortho"), atol=1e-5)
        roundtrip = tf.signal.idct(tf.signal.dct(d, type=kind, norm="ortho"), type=kind, norm="ortho")
        close(roundtrip, d.numpy(), atol=1e-5)
    else:
        with pytest.raises(ValueError, match="type-I"):
            tf.signal.dct(d, type=1, norm="ortho")


def test_dct_length_and_axis():
    d = signal_input(12).reshape(2, 6)
    close(tf.signal.dct(d, n=4), ref("dct2_n4"), atol=1e-5)
    close(tf.signal.dct(d, n=9), ref("dct2_n9"), atol=1e-5)
    with pytest.raises(NotImplementedError, match="axis=-1"):
        tf.signal.dct(d, axis=0)


def test_windows_match_tensorflow():
    for name in ("hann_window", "hamming_window"):
        close(getattr(tf.signal, name)(10), ref(name), atol=1e-7)
        close(getattr(tf.signal, name)(10, periodic=False), ref(name + "_symmetric"), atol=1e-7)
    close(tf.signal.kaiser_window(9, beta=5.0), ref("kaiser_window"), atol=1e-6)
    close(tf.signal.kaiser_bessel_derived_window(12, beta=4.0), ref("kaiser_bessel_derived_window"), atol=1e-6)
    close(tf.signal.vorbis_window(8), ref("vorbis_window"), atol=1e-7)
    assert tf.signal.hann_window(4, dtype=tf.float64).dtype == torch.float64
    assert tf.signal.hann_window(1).tolist() == [1.0]
    with pytest.raises(ValueError, match="floating point"):
        tf.signal.hann_window(4, dtype=tf.int32)


def test_frame_and_overlap_and_add_match_tensorflow():
    framed = tf.signal.frame(signal_input(22).reshape(11, 2), 4, 3, pad_end=True, pad_value=9.0, axis=0)
    close(framed, ref("frame_pad_end_axis0"), atol=0)
    assert tf.signal.frame(np.arange(5), 3, 2).tolist() == [[0, 1, 2], [2, 3, 4]]
    assert tuple(tf.signal.frame(np.zeros((2, 3)), 4, 1).shape) == (2, 0, 4)
    close(tf.signal.overlap_and_add(signal_input(15).reshape(3, 5), 2), ref("overlap_and_add"), atol=1e-6)


def test_mdct_and_inverse_match_tensorflow():
    close(tf.signal.mdct(X[:64], 16), ref("mdct"), atol=1e-4)
    close(tf.signal.inverse_mdct(tf.signal.mdct(X[:64], 16)), ref("inverse_mdct"), atol=1e-5)
    close(tf.signal.mdct(X[:64], 16, window_fn=tf.signal.kaiser_bessel_derived_window, norm="ortho"),
          ref("mdct_ortho_kbd"), atol=1e-4)
    with pytest.raises(ValueError, match="multiple of 4"):
        tf.signal.mdct(X, 10)


def test_real_ffts_match_tensorflow():
    close(tf.signal.rfft(X[:10], fft_length=[8]), ref("rfft_8"), atol=1e-5)
    close(tf.signal.rfft(X[:10], fft_length=[16]), ref("rfft_16"), atol=1e-5)
    close(tf.signal.irfft(tf.signal.rfft(X[:10])), ref("irfft"), atol=1e-5)
    close(tf.signal.irfft(tf.signal.rfft(X[:10]), fft_length=[7]), ref("irfft_7"), atol=1e-5)
    grid = X[:30].reshape(5, 6)
    close(tf.signal.rfft2d(grid, fft_length=[4, 6]), ref("rfft2d_46"), atol=1e-4)
    close(tf.signal.irfft2d(tf.signal.rfft2d(grid)), ref("irfft2d"), atol=1e-5)
    assert tf.signal.rfft(X[:4].astype(np.float64)).dtype == torch.complex128
    with pytest.raises(ValueError, match="float32 or float64"):
        tf.signal.rfft(torch.zeros(4, dtype=torch.float16))


def test_complex_ffts_match_numpy():
    rng = np.random.default_rng(0)
    z = (rng.standard_normal((2, 3, 4, 5)) + 1j * rng.standard_normal((2, 3, 4, 5))).astype(np.complex64)
    for ours, theirs, rank in ((tf.signal.fft, np.fft.fft, 1), (tf.signal.fft2d, np.fft.fft2, 2),
                               (tf.signal.fft3d, np.fft.fftn, 3)):
        axes = tuple(range(-rank, 0))
        close(ours(z), theirs(z, axes=axes) if rank > 1 else theirs(z), atol=1e-4)
    close(tf.signal.ifft3d(tf.signal.fft3d(z)), z, atol=1e-5)
    close(tf.signal.ifft2d(tf.signal.fft2d(z)), z, atol=1e-5)
    close(tf.signal.ifft(tf.signal.fft(z)), z, atol=1e-5)
    close(tf.signal.rfft3d(z.real), np.fft.rfftn(z.real, axes=(-3, -2, -1)), atol=1e-4)
    close(tf.signal.irfft3d(tf.signal.rfft3d(z.real), fft_length=[3, 4, 5]), z.real, atol=1e-5)  # odd: say so
    close(tf.signal.fftnd(z, axes=[0, 2], norm="ortho"), np.fft.fftn(z, axes=(0, 2), norm="ortho"), atol=1e-4)
    close(tf.signal.ifftnd(z, fft_length=[3, 6], axes=[1, 3]), np.fft.ifftn(z, s=(3, 6), axes=(1, 3)), atol=1e-5)
    close(tf.signal.rfftnd(z.real, axes=[1, 2], norm="forward"),
          np.fft.rfftn(z.real, axes=(1, 2), norm="forward"), atol=1e-5)
    close(tf.signal.irfftnd(np.fft.rfftn(z.real, axes=(2, 3)).astype(np.complex64), fft_length=[4, 5], axes=[2, 3]),
          z.real, atol=1e-5)
    with pytest.raises(TypeError, match="complex64"):
        tf.signal.fft(np.zeros(4, np.float32))


def test_fftshift_matches_tensorflow():
    close(tf.signal.fftshift(np.arange(10).reshape(2, 5), axes=1), ref("fftshift"), atol=0)
    data = np.arange(12).reshape(3, 4)
    assert tf.signal.ifftshift(tf.signal.fftshift(data)).tolist() == data.tolist()
    close(tf.signal.fftshift(data), np.fft.fftshift(data), atol=0)
