"""Shared by the layer tests that train one model twice in mixed_bfloat16, on a fast path and on the path it
replaces: the two fits, and the check that they trained alike (losses 1e-5, weights 1e-4 after 8 Adam steps)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np


def fit_twice(tf: Any, build: Callable[[], Any], x: np.ndarray, y: np.ndarray, seed: int,
              switch: Callable[[], None], check: Optional[Callable[[Any], None]] = None) -> list:
    """[(losses, weights)] of two mixed_bfloat16 fits of `build()` (adam, sparse cross-entropy on logits, batch 16,
    2 epochs, no shuffle), the second after `switch()`; `check(model)` runs on each model before its fit."""
    runs = []
    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        for second in (False, True):
            if second:
                switch()
            tf.random.set_seed(seed)
            model = build()
            model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            if check is not None:
                check(model)
            history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
            runs.append((history.history["loss"], model.get_weights()))
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    return runs


def assert_trained_alike(runs: list) -> None:
    """The two fits' losses agree to 1e-5 and their weights to 1e-4 (relative)."""
    (losses, weights), (other_losses, other_weights) = runs
    assert np.allclose(losses, other_losses, rtol=1e-5)
    for a, b in zip(weights, other_weights):
        assert np.allclose(a, b, rtol=1e-4, atol=1e-6)
