"""Writes tests/signal_reference.json: TF 2.21's tf.signal numbers (run with /work/tf-venv; not part of the
test suite). Inputs are generated from fixed formulas so the test rebuilds them without TF."""
import json
import os

import numpy as np
import tensorflow as tf


def signal_input(n):
    t = np.arange(n, dtype=np.float64)
    return (np.sin(0.3 * t) + 0.5 * np.cos(1.7 * t + 0.2) + 0.01 * t).astype(np.float32)


out = {}
x = signal_input(300)
out["stft"] = tf.signal.stft(x, 64, 16).numpy()
out["stft_pad_fft100_hamming"] = tf.signal.stft(x[:200], 50, 20, fft_length=100, window_fn=tf.signal.hamming_window,
                                                pad_end=True).numpy()
out["inverse_stft"] = tf.signal.inverse_stft(
    tf.signal.stft(x, 64, 16), 64, 16, window_fn=tf.signal.inverse_stft_window_fn(16)).numpy()
out["inverse_stft_window_fn_24_40"] = tf.signal.inverse_stft_window_fn(24)(40, tf.float32).numpy()
out["mel"] = tf.signal.linear_to_mel_weight_matrix(8, 33, 16000, 20.0, 8000.0).numpy()
out["mel_default"] = tf.signal.linear_to_mel_weight_matrix().numpy()
log_mel = np.log(np.abs(out["stft"]) @ tf.signal.linear_to_mel_weight_matrix(10, 33, 8000, 40.0, 4000.0).numpy() + 1e-6)
out["log_mel"] = log_mel
out["mfccs"] = tf.signal.mfccs_from_log_mel_spectrograms(log_mel.astype(np.float32)).numpy()
d = signal_input(12).reshape(2, 6)
for kind in (1, 2, 3, 4):
    out[f"dct{kind}"] = tf.signal.dct(d, type=kind).numpy()
    out[f"idct{kind}"] = tf.signal.idct(d, type=kind).numpy()
    if kind != 1:
        out[f"dct{kind}_ortho"] = tf.signal.dct(d, type=kind, norm="ortho").numpy()
out["dct2_n4"] = tf.signal.dct(d, n=4).numpy()
out["dct2_n9"] = tf.signal.dct(d, n=9).numpy()
for name in ("hann_window", "hamming_window"):
    out[name] = getattr(tf.signal, name)(10).numpy()
    out[name + "_symmetric"] = getattr(tf.signal, name)(10, periodic=False).numpy()
out["kaiser_window"] = tf.signal.kaiser_window(9, beta=5.0).numpy()
out["kaiser_bessel_derived_window"] = tf.signal.kaiser_bessel_derived_window(12, beta=4.0).numpy()
out["vorbis_window"] = tf.signal.vorbis_window(8).numpy()
out["frame_pad_end_axis0"] = tf.signal.frame(signal_input(22).reshape(11, 2), 4, 3, pad_end=True, pad_value=9.0,
                                             axis=0).numpy()
out["overlap_and_add"] = tf.signal.overlap_and_add(signal_input(15).reshape(3, 5), 2).numpy()
out["mdct"] = tf.signal.mdct(x[:64], 16).numpy()
out["inverse_mdct"] = tf.signal.inverse_mdct(tf.signal.mdct(x[:64], 16)).numpy()
out["mdct_ortho_kbd"] = tf.signal.mdct(x[:64], 16, window_fn=tf.signal.kaiser_bessel_derived_window,
                                       norm="ortho").numpy()
out["rfft_8"] = tf.signal.rfft(x[:10], fft_length=[8]).numpy()
out["rfft_16"] = tf.signal.rfft(x[:10], fft_length=[16]).numpy()
out["irfft"] = tf.signal.irfft(tf.signal.rfft(x[:10])).numpy()
out["irfft_7"] = tf.signal.irfft(tf.signal.rfft(x[:10]), fft_length=[7]).numpy()
out["rfft2d_46"] = tf.signal.rfft2d(x[:30].reshape(5, 6), fft_length=[4, 6]).numpy()
out["irfft2d"] = tf.signal.irfft2d(tf.signal.rfft2d(x[:30].reshape(5, 6))).numpy()
# tf.signal.fftnd has no CPU kernel in tensorflow-cpu 2.21 (FFTND): the tests compare it with NumPy
out["fftshift"] = tf.signal.fftshift(np.arange(10).reshape(2, 5), axes=1).numpy()


def short(array):
    # 9 significant digits keep every float32 exactly and the file small
    return np.vectorize(lambda v: float(f"{v:.9g}"), otypes=[object])(array).tolist() if array.size else []


def encode(value):
    value = np.asarray(value)
    if np.iscomplexobj(value):
        return {"real": short(value.real), "imag": short(value.imag)}
    return short(value) if value.dtype.kind == "f" else value.tolist()


path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "signal_reference.json")
with open(path, "w") as handle:
    json.dump({"_source": f"TF {tf.__version__}, tools/tf_reference/signal_reference.py",
               **{key: encode(value) for key, value in out.items()}}, handle)
print("wrote", path)
