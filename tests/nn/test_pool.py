"""tf.nn pooling against TF 2.21 (tests/nn/nn_reference.json): SAME edges (max ignores padding, average
divides by the cells inside), 1-D/3-D, dilated pool, max_pool_with_argmax's flat index, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests.nn._reference import arr, close, ref

X = arr(2, 7, 6, 3)


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_max_and_avg_pool2d(pad):
    close(tf.nn.max_pool2d(X, 3, 2, pad), f"max_pool2d_{pad}")
    close(tf.nn.avg_pool2d(X, 3, 2, pad), f"avg_pool2d_{pad}")
    close(tf.nn.max_pool(X, [1, 3, 3, 1], [1, 2, 2, 1], pad), f"max_pool2d_{pad}")
    close(tf.nn.avg_pool(torch.tensor(X), 3, 2, pad), f"avg_pool2d_{pad}")


def test_1d_3d_and_generic_pool():
    close(tf.nn.avg_pool1d(arr(2, 9, 3), 2, 2, "SAME"), "avg_pool1d")
    close(tf.nn.max_pool3d(arr(1, 5, 4, 6, 2), 2, 2, "SAME"), "max_pool3d")
    close(tf.nn.avg_pool3d(arr(1, 5, 4, 6, 2), [2, 3, 2], 2, "SAME"), "avg_pool3d")
    close(tf.nn.pool(X, [2, 2], "AVG", padding="VALID", dilations=[2, 2]), "pool_avg_dil")
    close(tf.nn.pool(X, [2, 2], "MAX", padding="VALID", dilations=[2, 1]), "pool_max_dil")


def test_max_pool_with_argmax_flat_index():
    values, index = tf.nn.max_pool_with_argmax(X, 3, 2, "SAME")
    close(values, "argmax_values")
    assert index.dtype == torch.int64
    np.testing.assert_array_equal(index.numpy(), ref("argmax_index"))
    batch_index = tf.nn.max_pool_with_argmax(X, 2, 2, "VALID", include_batch_in_index=True).argmax
    np.testing.assert_array_equal(batch_index.numpy(), ref("argmax_index_batch"))
    np.testing.assert_array_equal(X.reshape(-1)[batch_index.numpy()], tf.nn.max_pool2d(X, 2, 2, "VALID").numpy())


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.max_pool2d(X, 2, 2, "SAME", data_format="HWNC")
    with pytest.raises(ValueError, match="pooling_type"):
        tf.nn.pool(X, [2, 2], "MIN")
    with pytest.raises(ValueError, match="dilations"):
        tf.nn.pool(X, [2, 2], "MAX", padding="SAME", dilations=[2, 2])
    with pytest.raises(ValueError, match="padding"):
        tf.nn.avg_pool2d(X, 2, 2, "same-ish")
