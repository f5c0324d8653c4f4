"""tf.experimental.Optional (what get_next_as_optional gives) and the image codecs TF also names under tf.io."""
from __future__ import annotations

import numpy as np
import torch

import torchstrategy as tf


def test_optional_holds_a_value_or_nothing_as_tf_does():
    full = tf.experimental.Optional.from_value(3)
    assert bool(full.has_value()) and int(full.get_value()) == 3
    iterator = iter(tf.data.Dataset.range(1))
    assert bool(iterator.get_next_as_optional().has_value())
    nothing = iterator.get_next_as_optional()
    assert not bool(nothing.has_value()) and isinstance(nothing, tf.experimental.Optional)


def test_tf_io_names_the_image_codecs():
    image = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    decoded = tf.io.decode_png(tf.io.encode_png(image))
    assert torch.equal(torch.as_tensor(np.asarray(decoded)), torch.from_numpy(image))
    assert tf.io.decode_image is tf.image.decode_image
