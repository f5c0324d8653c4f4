"""tf.image extract_patches / resize_with_pad against TF 2.21, rot90 / transpose against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf
from tests.image._reference import close, pattern, ref


def test_extract_patches_matches_tensorflow():
    images = pattern((1, 7, 8, 2))
    close(tf.image.extract_patches(images, [1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1], "VALID"),
          ref("extract_patches_valid"))
    close(tf.image.extract_patches(images, [1, 2, 3, 1], [1, 3, 2, 1], [1, 2, 1, 1], "SAME"),
          ref("extract_patches_same_rates"))
    with pytest.raises(ValueError, match=r"\[1, rows, cols, 1\]"):
        tf.image.extract_patches(images, [2, 3], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")


def test_resize_with_pad_matches_tensorflow():
    close(tf.image.resize_with_pad(pattern((5, 8, 1)), 6, 6), ref("resize_with_pad"), atol=1e-6)


def test_rot90_and_transpose_match_numpy():
    image = np.arange(24).reshape(2, 4, 3)
    for k in range(-1, 5):
        assert tf.image.rot90(image, k).numpy().tolist() == np.rot90(image, k, axes=(0, 1)).tolist()
    batch = np.stack([image, image + 1])
    assert tf.image.rot90(batch).numpy().tolist() == np.rot90(batch, 1, axes=(1, 2)).tolist()
    assert tf.image.transpose(batch).numpy().tolist() == batch.transpose(0, 2, 1, 3).tolist()


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_extract_volume_patches_matches_tf(pad):
    # TF 2.21's patches (tests/extra_reference.json, from tools/tf_reference/nn2_reference.py).
    import os

    from tests._reference_arrays import Reference
    from tests.nn._reference import arr

    ref = Reference(os.path.join(os.path.dirname(__file__), "..", "extra_reference.json"))
    out = tf.extract_volume_patches(arr(2, 5, 6, 4, 3), [1, 2, 3, 2, 1], [1, 2, 2, 3, 1], pad)
    ref.close(out, f"volume_patches_{pad}")
    with pytest.raises(ValueError, match=r"\[1, p, r, c, 1\]"):
        tf.extract_volume_patches(arr(2, 5, 6, 4, 3), [2, 2, 3, 2, 1], [1, 2, 2, 3, 1], pad)
