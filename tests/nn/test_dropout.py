"""tf.nn.dropout: TF's rate semantics (fraction dropped, survivors scaled by 1 / (1 - rate)), noise_shape
sharing a draw, seeded repeatability under tf.random.set_seed, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_rate_and_scale():
    out = tf.nn.dropout(np.ones((20000,), np.float32), 0.25, seed=3)
    kept = out[out != 0]
    torch.testing.assert_close(kept, torch.full_like(kept, 1 / 0.75))
    assert abs(float((out == 0).float().mean()) - 0.25) < 0.02


def test_noise_shape_shares_the_draw_and_gradients_flow():
    x = torch.ones(4, 50, requires_grad=True)
    out = tf.nn.dropout(x, 0.5, noise_shape=[4, 1])
    assert all(len(set(row.tolist())) == 1 for row in out)
    out.sum().backward()
    assert set(x.grad.unique().tolist()) <= {0.0, 2.0}


def test_seeded_runs_repeat():
    tf.random.set_seed(7)
    first = tf.nn.dropout(torch.ones(100), 0.5, seed=1)
    tf.random.set_seed(7)
    assert torch.equal(tf.nn.dropout(torch.ones(100), 0.5, seed=1), first)


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match=r"range \[0, 1\)"):
        tf.nn.dropout(np.ones(3, np.float32), 1.0)
    with pytest.raises(ValueError, match="floating-point"):
        tf.nn.dropout(np.ones(3, np.int32), 0.5)
    with pytest.raises(ValueError, match="noise_shape"):
        tf.nn.dropout(np.ones((2, 3), np.float32), 0.5, noise_shape=[3, 1])


def test_experimental_stateless_and_general_dropout():
    x = torch.ones(200)
    first = tf.nn.experimental.stateless_dropout(x, 0.5, seed=[1, 2])
    assert torch.equal(tf.nn.experimental.stateless_dropout(x, 0.5, seed=[1, 2]), first)
    assert set(first.unique().tolist()) == {0.0, 2.0}
    fixed = tf.nn.experimental.general_dropout(torch.ones(4), 0.5,
                                               lambda shape, dtype: torch.tensor([0.1, 0.6, 0.4, 0.9], dtype=dtype))
    assert fixed.tolist() == [0.0, 2.0, 0.0, 2.0]


def test_stateless_dropout_is_tfs():
    # TF 2.21's masks for these seeds (tests/extra_reference.json): the draws are TF's Philox numbers.
    import os

    from tests._reference_arrays import Reference
    from tests.nn._reference import arr

    ref = Reference(os.path.join(os.path.dirname(__file__), "..", "extra_reference.json"))
    ref.close(tf.nn.experimental.stateless_dropout(arr(3, 5), 0.4, [3, 7]), "stateless_dropout")
    ref.close(tf.nn.experimental.stateless_dropout(arr(3, 5), 0.3, [5, 1], noise_shape=[3, 1]),
              "stateless_dropout_noise")
