"""STFTSpectrogram and MelSpectrogram against Keras 3.15 outputs frozen in keras_augment_reference.json; their
kernels, shapes, configs, training of the STFT kernels and bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.keras.layers._augment_reference import cases_of, check_case
from torchstrategy.keras import layers
from torchstrategy.keras.layers.preprocessing_spectrogram import mel_weight_matrix


@pytest.mark.parametrize("case_id", cases_of("STFTSpectrogram"))
def test_stft_matches_keras(case_id):
    check_case(case_id, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("case_id", cases_of("MelSpectrogram"))
def test_mel_matches_keras(case_id):
    check_case(case_id, rtol=1e-4, atol=1e-3)  # decibels: values up to ~100


def test_stft_magnitude_equals_the_fft_of_windowed_frames():
    """A rectangular window with no scaling makes the kernels a plain DFT: compare with torch.fft."""
    signal = torch.randn(1, 40, 1)
    layer = layers.STFTSpectrogram(mode="magnitude", frame_length=8, frame_step=4, window=None, scaling=None)
    out = layer(signal)
    frames = signal[0, :, 0].unfold(0, 8, 4)
    expected = torch.fft.rfft(frames, n=8).abs()
    torch.testing.assert_close(out[0], expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kwargs,shape", [
    ({}, (2, 3, 2 * 129)),  # valid: (512 - 256) // 128 + 1 frames, channels * bins features
    ({"padding": "same"}, (2, 4, 2 * 129)),  # same: ceil(512 / 128) frames
    ({"expand_dims": True, "mode": "stft"}, (2, 3, 258, 2)),
    ({"data_format": "channels_first"}, (2, 2 * 129, 3)),
])
def test_stft_shapes_and_compute_output_shape(kwargs, shape):
    layer = layers.STFTSpectrogram(frame_length=256, frame_step=128, **kwargs)
    first = kwargs.get("data_format") == "channels_first"
    signal = torch.randn(2, 2, 512) if first else torch.randn(2, 512, 2)
    assert tuple(layer(signal).shape) == shape
    assert tuple(layer.compute_output_shape(tuple(signal.shape))) == shape


def test_stft_kernels_are_weights_that_train():
    layer = layers.STFTSpectrogram(mode="magnitude", frame_length=8)
    signal = torch.randn(2, 32, 1)
    layer(signal)
    assert [w.name for w in layer.weights] == ["real_kernel", "imag_kernel"]
    assert len(layer.trainable_weights) == 2
    layer(signal).sum().backward()
    assert layer.real_kernel.grad is not None and float(layer.real_kernel.grad.abs().sum()) > 0
    frozen = layers.STFTSpectrogram(mode="real", frame_length=8, trainable=False)
    frozen(signal)
    assert [w.name for w in frozen.non_trainable_weights] == ["real_kernel"]


def test_mel_matrix_rows_are_triangles_peaking_at_one():
    matrix = mel_weight_matrix(8, 129, 16000, 20.0, 8000.0)
    assert matrix.shape == (129, 8)
    assert float(matrix[0].abs().sum()) == 0.0  # DC maps to nothing
    assert float(matrix.max()) <= 1.0 and float(matrix.min()) >= 0.0
    assert all(float(matrix[:, j].max()) > 0.5 for j in range(8))


def test_mel_top_db_floors_the_whole_batch():
    loud, quiet = torch.sin(torch.arange(2048.0) * 0.3) * 10.0, torch.sin(torch.arange(2048.0) * 0.3) * 1e-4
    out = layers.MelSpectrogram(fft_length=256, sequence_stride=128, num_mel_bins=16, top_db=30.0)(
        torch.stack([loud, quiet]))
    assert float(out.max() - out.min()) <= 30.0 + 1e-4
    assert float(out[1].max()) == pytest.approx(float(out.max()) - 30.0, abs=1e-4)  # quiet one sits on the floor


def test_mel_shape_follows_keras_formula():
    layer = layers.MelSpectrogram(fft_length=512, sequence_stride=160, num_mel_bins=40)
    out = layer(torch.randn(3, 1600))
    assert tuple(out.shape) == (3, 40, 11) == tuple(layer.compute_output_shape((3, 1600)))
    assert tuple(layer(torch.randn(1600)).shape) == (40, 11)


@pytest.mark.parametrize("make,error,message", [
    (lambda: layers.STFTSpectrogram(frame_length=8, frame_step=9), ValueError, "frame_step"),
    (lambda: layers.STFTSpectrogram(frame_length=8, fft_length=4), ValueError, "fft_length"),
    (lambda: layers.STFTSpectrogram(mode="power"), ValueError, "Output mode is invalid"),
    (lambda: layers.STFTSpectrogram(scaling="l2"), ValueError, "Scaling is invalid"),
    (lambda: layers.STFTSpectrogram(padding="causal"), ValueError, "Padding is invalid"),
    (lambda: layers.STFTSpectrogram(window="kaiser_bessel"), ValueError, "pass the window's values"),
    (lambda: layers.MelSpectrogram(fft_length=64, sequence_length=128), ValueError, "greater than or equal"),
    (lambda: layers.MelSpectrogram(window="blackman"), ValueError, "hann"),
])
def test_bad_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_bad_inputs_say_what_was_wrong():
    with pytest.raises(TypeError, match="float16"):
        layers.STFTSpectrogram(frame_length=8)(torch.ones(1, 16, 1, dtype=torch.int32))
    with pytest.raises(ValueError, match="longer than"):
        layers.MelSpectrogram(fft_length=64)(torch.ones(1, 20))


def test_stft_array_window_and_config_round_trip():
    window = np.hanning(8)
    layer = layers.STFTSpectrogram(mode="real", frame_length=8, window=window, scaling=None)
    out = layer(torch.ones(1, 8, 1))
    assert float(out[0, 0, 0]) == pytest.approx(float(window.sum()), rel=1e-5)  # the DC bin sums the window
    clone = layers.STFTSpectrogram.from_config(layers.STFTSpectrogram(frame_length=16, padding="same").get_config())
    assert clone.padding == "same" and clone.frame_length == 16
