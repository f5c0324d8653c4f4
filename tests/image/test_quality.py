"""tf.image psnr / ssim / ssim_multiscale / total_variation / sobel_edges / image_gradients against TF 2.21."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.image._reference import close, pattern, ref

A, B = pattern((2, 16, 16, 3)), pattern((2, 16, 16, 3), 0.3)


def test_psnr_matches_tensorflow():
    close(tf.image.psnr(torch.from_numpy(A), B, 1.0), ref("psnr"), atol=1e-4)
    close(tf.image.psnr((A * 255).astype(np.uint8), (B * 255).astype(np.uint8), 255), ref("psnr_uint8"), atol=1e-4)


def test_ssim_matches_tensorflow():
    close(tf.image.ssim(A, B, 1.0), ref("ssim"), atol=1e-5)
    close(tf.image.ssim(A, B, 2.0, filter_size=5, filter_sigma=0.8, k1=0.02, k2=0.05), ref("ssim_small_filter"),
          atol=1e-5)
    close(tf.image.ssim((A * 255).astype(np.uint8), (B * 255).astype(np.uint8), 255), ref("ssim_uint8"), atol=1e-5)
    close(tf.image.ssim(A[0], B[0], 1.0, filter_size=7, return_index_map=True), ref("ssim_map"), atol=1e-5)
    assert float(tf.image.ssim(A[0], A[0], 1.0)) == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError, match="filter"):
        tf.image.ssim(A[:, :8, :8], B[:, :8, :8], 1.0)


def test_ssim_multiscale_matches_tensorflow():
    big_a, big_b = pattern((1, 37, 41, 2)), pattern((1, 37, 41, 2), 0.2)
    close(tf.image.ssim_multiscale(big_a, big_b, 1.0, power_factors=(0.3, 0.3, 0.4), filter_size=3),
          ref("ssim_multiscale"), atol=1e-5)


def test_gradients_and_total_variation_match_tensorflow():
    close(tf.image.sobel_edges(pattern((1, 5, 6, 2))), ref("sobel_edges"), atol=1e-5)
    dy, dx = tf.image.image_gradients(pattern((1, 4, 5, 2)))
    close(dy, ref("image_gradients_dy"))
    close(dx, ref("image_gradients_dx"))
    close(tf.image.total_variation(pattern((2, 4, 5, 3))), ref("total_variation"), atol=1e-4)
    close(tf.image.total_variation(pattern((4, 5, 3))), ref("total_variation_single"), atol=1e-4)
    with pytest.raises(ValueError, match="batch"):
        tf.image.sobel_edges(pattern((4, 5, 3)))
