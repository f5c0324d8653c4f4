"""compile(jit_compile=True) and tf.function(jit_compile=True) run through torch.compile and
give the eager results. Needs a C compiler for TorchInductor's CPU backend."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

import torchstrategy as tf

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                       reason="torch.compile's CPU backend needs a C compiler"),
]


def test_fit_with_jit_compile_matches_eager_fit():
    rng = np.random.default_rng(0)
    x = rng.random((64, 4)).astype(np.float32)
    y = x @ np.array([[1.0], [-1.0], [2.0], [0.5]], dtype=np.float32)
    results = []
    for jit in (False, True):
        tf.random.set_seed(5)
        model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                                     tf.keras.layers.Dense(1)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse", jit_compile=jit)
        history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
        results.append((model.get_weights(), history.history["loss"]))
    (eager_w, eager_loss), (jit_w, jit_loss) = results
    np.testing.assert_allclose(jit_loss, eager_loss, rtol=1e-5)
    for a, b in zip(eager_w, jit_w):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_tf_function_jit_compile_equals_eager():
    @tf.function(jit_compile=True)
    def affine(x, w):
        return torch.tanh(x @ w) * 2

    x, w = torch.randn(5, 3), torch.randn(3, 2)
    assert torch.allclose(affine(x, w), torch.tanh(x @ w) * 2, atol=1e-6)
