"""Freezes Keras 3's keras.ops numbers (TF backend) for the ops torchstrategy adds (run under the TF reference env):
/work/tf-venv/bin/python tools/tf_reference/keras_ops_reference.py -> tests/keras/ops/keras_ops_reference.json"""
import json
import os

import keras
import numpy as np
from keras import ops

rng = np.random.RandomState(3)
img = rng.uniform(size=(2, 6, 7, 3)).astype("float32")
img2 = np.clip(img + rng.normal(scale=0.1, size=img.shape), 0, 1).astype("float32")
seq = rng.normal(size=(2, 5, 4)).astype("float32")
x1d = rng.normal(size=(2, 9, 3)).astype("float32")
k1d = rng.normal(size=(3, 3, 4)).astype("float32")
k2d = rng.normal(size=(3, 2, 3, 4)).astype("float32")
kt2d = rng.normal(size=(3, 3, 4, 3)).astype("float32")
dk2d = rng.normal(size=(3, 3, 3, 2)).astype("float32")
pk2d = rng.normal(size=(1, 1, 6, 5)).astype("float32")
vec = rng.normal(size=(4, 6)).astype("float32")
q = rng.normal(size=(2, 4, 2, 8)).astype("float32")
kk = rng.normal(size=(2, 5, 2, 8)).astype("float32")
vv = rng.normal(size=(2, 5, 2, 8)).astype("float32")
spd = (lambda a: a @ a.T + 4 * np.eye(4))(rng.normal(size=(4, 4))).astype("float32")
mat = rng.normal(size=(4, 4)).astype("float32")
rhs = rng.normal(size=(4, 2)).astype("float32")
signal = rng.normal(size=(2, 32)).astype("float32")
inputs = dict(img=img, img2=img2, seq=seq, x1d=x1d, k1d=k1d, k2d=k2d, kt2d=kt2d, dk2d=dk2d, pk2d=pk2d, vec=vec,
              q=q, kk=kk, vv=vv, spd=spd, mat=mat, rhs=rhs, signal=signal)
cases = {
    "conv2d_same_s2": lambda: ops.conv(img, k2d, strides=2, padding="same"),
    "conv2d_valid_dil": lambda: ops.conv(img, k2d, padding="valid", dilation_rate=(1, 2)),
    "conv1d_same": lambda: ops.conv(x1d, k1d, padding="same"),
    "conv_transpose_same_s2": lambda: ops.conv_transpose(img, kt2d, strides=2, padding="same"),
    "conv_transpose_valid_s2": lambda: ops.conv_transpose(img, kt2d, strides=2, padding="valid"),
    "conv_transpose_outpad": lambda: ops.conv_transpose(img, kt2d, strides=2, padding="same", output_padding=1),
    "conv_transpose_same_s3": lambda: ops.conv_transpose(img, kt2d, strides=(3, 2), padding="same"),
    "depthwise_same": lambda: ops.depthwise_conv(img, dk2d, strides=1, padding="same"),
    "separable_valid": lambda: ops.separable_conv(img, dk2d, pk2d, padding="valid"),
    "max_pool_same": lambda: ops.max_pool(img, 2, strides=2, padding="same"),
    "avg_pool_same": lambda: ops.average_pool(img, 3, strides=2, padding="same"),
    "avg_pool_valid": lambda: ops.average_pool(img, (2, 3), padding="valid"),
    "depth_to_space": lambda: ops.depth_to_space(np.concatenate([img, img[..., :1]], -1), 2),
    "space_to_depth": lambda: ops.space_to_depth(img[:, :6, :6], 2),
    "attention": lambda: ops.dot_product_attention(q, kk, vv),
    "attention_causal_scale": lambda: ops.dot_product_attention(q, kk[:, :4], vv[:, :4], is_causal=True, scale=0.3),
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
    "cholesky": lambda: ops.cholesky(spd),
    "inv": lambda: ops.inv(mat),
    "det": lambda: ops.det(mat),
    "solve": lambda: ops.solve(mat, rhs),
    "solve_triangular": lambda: ops.solve_triangular(np.tril(mat) + 3 * np.eye(4, dtype="float32"), rhs, lower=True),
    "lstsq": lambda: ops.lstsq(mat[:, :3], rhs),
    "pinv": lambda: ops.pinv(mat[:, :3]),
    "slogdet": lambda: ops.stack(ops.slogdet(mat)),
    "matrix_rank": lambda: ops.matrix_rank(mat),
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
def compact(value):
    """float32 values with 9 significant digits (they read back as the same float32), to keep the file small."""
    array = np.asarray(value)
    if array.dtype.kind != "f":
        return array.tolist()

    def short(item):
        return [short(i) for i in item] if isinstance(item, list) else float(f"{item:.9g}")

    return short(array.astype("float32").tolist())


out = {"keras_version": keras.__version__, "inputs": {k: compact(v) for k, v in inputs.items()}, "cases": {}}
for name, fn in cases.items():
    try:
        out["cases"][name] = compact(np.asarray(fn()).astype("float32") if np.asarray(fn()).dtype.kind == "f"
                                     else np.asarray(fn()))
    except Exception as error:  # noqa: BLE001 - recorded so the test skips what Keras itself refuses
        print("skip", name, type(error).__name__, str(error)[:200])
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "ops", "keras_ops_reference.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump(out, f)
print("wrote", len(out["cases"]), "cases,", os.path.getsize(path), "bytes")
