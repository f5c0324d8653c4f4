"""tf.train.experimental.PythonState in a tf.train.Checkpoint: the string serialize() gives is saved and handed
back to deserialize() as bytes on restore, as TF 2.21 does (frozen below)."""
from __future__ import annotations

import io

import numpy as np
import pytest

import torchstrategy as tf


class NumpyState(tf.train.experimental.PythonState):
    def __init__(self):
        self.array = np.arange(3)

    def serialize(self):
        buffer = io.BytesIO()
        np.save(buffer, self.array)
        return buffer.getvalue()

    def deserialize(self, string_value):
        self.array = np.load(io.BytesIO(string_value))


class Text(tf.train.experimental.PythonState):
    received = None

    def serialize(self):
        return "hello"

    def deserialize(self, string_value):
        self.received = string_value


def test_a_checkpoint_saves_serialize_and_restores_through_deserialize(tmp_path):
    state = NumpyState()
    path = tf.train.Checkpoint(state=state).write(str(tmp_path / "numpy"))
    state.array = np.zeros(2)
    tf.train.Checkpoint(state=state).read(path)
    np.testing.assert_array_equal(state.array, np.arange(3))


def test_a_str_comes_back_as_bytes_as_in_tf(tmp_path):
    text = Text()
    path = tf.train.Checkpoint(text=text).write(str(tmp_path / "text"))
    restored = Text()
    tf.train.Checkpoint(text=restored).read(path)
    assert restored.received == b"hello"  # TF 2.21: deserialize gets b'hello'


def test_it_is_abstract_and_serialize_must_give_a_string(tmp_path):
    with pytest.raises(TypeError, match="abstract"):  # TF 2.21: the same TypeError
        tf.train.experimental.PythonState()

    class Wrong(tf.train.experimental.PythonState):
        def serialize(self):
            return 3

        def deserialize(self, string_value):
            pass

    with pytest.raises(TypeError, match=r"serialize\(\) must return str or bytes; got int"):
        tf.train.Checkpoint(wrong=Wrong()).write(str(tmp_path / "wrong"))
