"""tf.IndexedSlices against TF 2.21 (numbers and messages frozen from it): its properties, its dense form with
repeated indices summed, tf.convert_to_tensor and ops taking it, and bad input."""
from __future__ import annotations

import pytest
import torch

import torchstrategy as tf
from torchstrategy.errors import InvalidArgumentError


def _slices() -> tf.IndexedSlices:
    return tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), tf.constant([0, 2, 0]),
                            tf.constant([4, 2]))


def test_dense_form_sums_repeated_rows() -> None:
    dense = tf.convert_to_tensor(_slices())
    assert dense.dtype == torch.float32
    assert dense.tolist() == [[6.0, 8.0], [0.0, 0.0], [3.0, 4.0], [0.0, 0.0]]  # TF 2.21
    assert tf.convert_to_tensor(-_slices()).tolist() == [[-6.0, -8.0], [0.0, 0.0], [-3.0, -4.0], [0.0, 0.0]]
    assert float(tf.reduce_sum(_slices())) == 21.0  # TF 2.21: ops take it through the conversion
    from_python = tf.convert_to_tensor(tf.IndexedSlices([[1.0, 2.0]], [1], [3, 2]))
    assert from_python.tolist() == [[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]] and from_python.dtype == torch.float32


def test_properties_as_tf() -> None:
    s = _slices()
    assert s.shape == (4, 2) and s.dtype == torch.float32
    assert s.indices.tolist() == [0, 2, 0] and s.dense_shape.tolist() == [4, 2]
    assert s.values.tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert s.device == "/job:localhost/replica:0/task:0/device:CPU:0" and s.consumers() == []
    for graph_only in ("name", "op", "graph"):
        with pytest.raises(AttributeError, match="eager execution"):
            getattr(s, graph_only)
    no_shape = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]))
    assert no_shape.dense_shape is None and no_shape.shape is None
    assert "indices=[0, 2, 0]" in repr(s)


def test_spec() -> None:
    spec = tf.IndexedSlicesSpec([4, 2], tf.float32)
    assert spec.value_type is tf.IndexedSlices and spec.shape == (4, 2)
    assert spec == tf.IndexedSlicesSpec([4, 2], tf.float32) and spec != tf.IndexedSlicesSpec([4, 3])


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0])))
    with pytest.raises(ValueError, match="Incompatible tensor conversion requested to `dtype`"):
        tf.convert_to_tensor(_slices(), dtype=tf.float64)
    with pytest.raises(InvalidArgumentError, match=r"= 5 is not in \[0, 4\)"):
        tf.convert_to_tensor(tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([5]), tf.constant([4, 2])))
    with pytest.raises(TypeError, match="integers"):
        tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0.5]))
