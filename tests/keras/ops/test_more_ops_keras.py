"""keras.ops additions against Keras 3.15.1 (TF backend) numbers frozen by tools/tf_reference/keras_ops_reference.py:
convolutions (Keras kernel layouts, 'same' padding), pooling, attention, normalizations, activations, CTC,
linear algebra, STFT, segments/scatter and keras.ops.image."""
import json
import os

import numpy as np
import pytest

from torchstrategy.keras import ops

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_ops_reference.json")))
I = {k: np.asarray(v, dtype="float32") for k, v in REF["inputs"].items()}
img, img2, seq, x1d, signal, vec = I["img"], I["img2"], I["seq"], I["x1d"], I["signal"], I["vec"]

CASES = {
    "conv2d_same_s2": lambda: ops.conv(img, I["k2d"], strides=2, padding="same"),
    "conv2d_valid_dil": lambda: ops.conv(img, I["k2d"], padding="valid", dilation_rate=(1, 2)),
    "conv1d_same": lambda: ops.conv(x1d, I["k1d"], padding="same"),
    "conv_transpose_same_s2": lambda: ops.conv_transpose(img, I["kt2d"], strides=2, padding="same"),
    "conv_transpose_valid_s2": lambda: ops.conv_transpose(img, I["kt2d"], strides=2, padding="valid"),
    "conv_transpose_outpad": lambda: ops.conv_transpose(img, I["kt2d"], strides=2, padding="same", output_padding=1),
    "conv_transpose_same_s3": lambda: ops.conv_transpose(img, I["kt2d"], strides=(3, 2), padding="same"),
    "depthwise_same": lambda: ops.depthwise_conv(img, I["dk2d"], strides=1, padding="same"),
    "separable_valid": lambda: ops.separable_conv(img, I["dk2d"], I["pk2d"], padding="valid"),
    "max_pool_same": lambda: ops.max_pool(img, 2, strides=2, padding="same"),
    "avg_pool_same": lambda: ops.average_pool(img, 3, strides=2, padding="same"),
    "avg_pool_valid": lambda: ops.average_pool(img, (2, 3), padding="valid"),
    "depth_to_space": lambda: ops.depth_to_space(np.concatenate([img, img[..., :1]], -1), 2),
    "space_to_depth": lambda: ops.space_to_depth(img[:, :6, :6], 2),
    "attention": lambda: ops.dot_product_attention(I["q"], I["kk"], I["vv"]),
    "attention_causal_scale": lambda: ops.dot_product_attention(I["q"], I["kk"][:, :4], I["vv"][:, :4],
                                                                is_causal=True, scale=0.3),
    "batch_norm": lambda: ops.batch_normalization(img, np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 0.5]), -1,
                                                  offset=np.array([1.0, 0.0, -1.0]), scale=np.array([2.0, 1.0, 0.5])),
    "layer_norm": lambda: ops.layer_normalization(seq, np.arange(4.0), np.ones(4)),
    "rms_norm": lambda: ops.rms_normalization(seq, np.arange(1.0, 5.0)),
    "sparsemax": lambda: ops.sparsemax(vec),
    "sparse_plus": lambda: ops.sparse_plus(vec),
    "sparse_sigmoid": lambda: ops.sparse_sigmoid(vec),
    "squareplus": lambda: ops.squareplus(vec, 2),
    "glu": lambda: ops.glu(vec),
    "celu": lambda: ops.celu(vec, 0.5),
    "hard_shrink": lambda: ops.hard_shrink(vec),
    "soft_shrink": lambda: ops.soft_shrink(vec, 0.3),
    "tanh_shrink": lambda: ops.tanh_shrink(vec),
    "hard_tanh": lambda: ops.hard_tanh(vec),
    "threshold": lambda: ops.threshold(vec, 0.1, -5.0),
    "psnr": lambda: ops.psnr(img, img2, 1.0),
    "ctc_loss": lambda: ops.ctc_loss(np.array([[1, 2, 0], [3, 1, 2]]), seq, np.array([2, 3]), np.array([5, 4])),
    "ctc_decode": lambda: ops.ctc_decode(seq, np.array([5, 4]))[0],
    "cholesky": lambda: ops.cholesky(I["spd"]),
    "inv": lambda: ops.inv(I["mat"]),
    "det": lambda: ops.det(I["mat"]),
    "solve": lambda: ops.solve(I["mat"], I["rhs"]),
    "solve_triangular": lambda: ops.solve_triangular(np.tril(I["mat"]) + 3 * np.eye(4, dtype="float32"), I["rhs"],
                                                     lower=True),
    "lstsq": lambda: ops.lstsq(I["mat"][:, :3], I["rhs"]),
    "pinv": lambda: ops.pinv(I["mat"][:, :3]),
    "slogdet": lambda: ops.stack(ops.slogdet(I["mat"])),
    "matrix_rank": lambda: ops.matrix_rank(I["mat"]),
    "stft_real": lambda: ops.stft(signal, 8, 4, 8)[0],
    "stft_imag": lambda: ops.stft(signal, 8, 4, 16, window="hamming", center=False)[1],
    "istft": lambda: ops.istft(ops.stft(signal, 8, 4, 8), 8, 4, 8, length=32),
    "rfft_real": lambda: ops.rfft(signal)[0],
    "extract_sequences": lambda: ops.extract_sequences(signal, 5, 3),
    "segment_max": lambda: ops.segment_max(vec, np.array([0, 1, 0, 2]), num_segments=3),
    "segment_sum": lambda: ops.segment_sum(vec, np.array([0, 1, 0, 2])),
    "scatter": lambda: ops.scatter(np.array([[0, 1], [2, 2], [0, 1]]), np.array([1.0, 2.0, 3.0]), (3, 3)),
    "scatter_update": lambda: ops.scatter_update(np.zeros((3, 3)), np.array([[0, 1], [2, 2]]), np.array([5.0, 6.0])),
    "resize_bilinear": lambda: ops.image.resize(img, (4, 9)),
    "resize_nearest": lambda: ops.image.resize(img, (9, 5), interpolation="nearest"),
    "resize_crop_ratio": lambda: ops.image.resize(img, (4, 4), crop_to_aspect_ratio=True),
    "resize_pad_ratio": lambda: ops.image.resize(img, (4, 8), pad_to_aspect_ratio=True),
    "grayscale": lambda: ops.image.rgb_to_grayscale(img),
    "rgb_to_hsv": lambda: ops.image.rgb_to_hsv(img),
    "hsv_to_rgb": lambda: ops.image.hsv_to_rgb(img),
    "pad_images": lambda: ops.image.pad_images(img, 1, 2, target_height=9, target_width=10),
    "crop_images": lambda: ops.image.crop_images(img, 1, 2, target_height=4, target_width=3),
    "extract_patches": lambda: ops.image.extract_patches(img, (2, 3), strides=(2, 2)),
    "extract_patches_same": lambda: ops.image.extract_patches(img, 3, strides=2, padding="same"),
    "gaussian_blur": lambda: ops.image.gaussian_blur(img, (3, 5), (1.0, 2.0)),
    "sobel": lambda: ops.image.sobel_edges(img),
    "ssim": lambda: ops.image.ssim(img, img2, filter_size=3),
}
TOLERANCE = {"ctc_loss": 1e-4, "lstsq": 1e-4, "pinv": 1e-4, "inv": 1e-4, "istft": 1e-5}


@pytest.mark.parametrize("name", sorted(REF["cases"]))
def test_matches_keras(name):
    got = np.asarray(CASES[name]())
    want = np.asarray(REF["cases"][name])
    assert got.shape == want.shape, (got.shape, want.shape)
    tol = TOLERANCE.get(name, 2e-5)
    np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=tol, atol=tol)
