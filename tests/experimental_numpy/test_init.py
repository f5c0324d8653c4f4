"""tf.experimental.numpy as a namespace: every TF 2.21 tnp name resolves (the manifest), a name TF lacks
reads as Python's AttributeError, and tnp works on tf.Variable and inside GradientTape."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy._machinery import api_manifest

tnp = tf.experimental.numpy


def test_every_tf_name_resolves() -> None:
    names = [path for path in api_manifest.load()["names"] if path.startswith("tf.experimental.numpy.")]
    assert len(names) > 220
    missing = []
    for path in names:
        obj = tf
        try:
            for part in path.split(".")[1:]:
                obj = getattr(obj, part)
        except AttributeError:
            missing.append(path)
    assert missing == []


def test_unknown_name() -> None:
    with pytest.raises(AttributeError, match="no_such_function"):
        tnp.no_such_function  # noqa: B018


def test_on_variables_and_under_a_tape() -> None:
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tnp.sum(tnp.square(v))
    grad = tape.gradient(y, v)
    np.testing.assert_allclose(np.asarray(grad), [2.0, 4.0, 6.0])
    assert tnp.mean(v).dtype == torch.float32
