"""keras.Function (keras/function.py): a graph of operations from KerasTensors, run on values; facts and numbers
from Keras 3.15 (TF 2.21, tensorflow backend)."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf

keras = tf.keras


def test_function_of_keras_tensors_matches_keras():
    a, b = keras.KerasTensor(shape=(None, 2, 3)), keras.KerasTensor(shape=(None, 2, 3))
    fn = keras.Function(inputs=[a, b], outputs=keras.ops.sigmoid(a + b))
    assert [type(op).__name__ for op in fn.operations] == ["Add", "Sigmoid"]  # Keras 3.15's list
    assert len(fn.inputs) == 2 and len(fn.outputs) == 1 and isinstance(fn, keras.Operation)
    rng = np.random.RandomState(0)
    va, vb = rng.random((4, 2, 3)).astype("float32"), rng.random((4, 2, 3)).astype("float32")
    np.testing.assert_allclose(np.asarray(fn([va, vb]))[0],  # Keras 3.15's output
                               [[0.6608508229255676, 0.7949638962745667, 0.6783319711685181],
                                [0.8160110116004944, 0.7202098965644836, 0.7427967190742493]], rtol=1e-6)
    assert fn.compute_output_shape([(None, 2, 3), (None, 2, 3)]) == (None, 2, 3)
    spec = fn.compute_output_spec([a, b])
    assert isinstance(spec, keras.KerasTensor) and spec.shape == (None, 2, 3)


def test_function_of_an_input_runs_its_layers_and_refuses_non_tensors():
    inputs = keras.Input((3,))
    dense = keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="ones")
    fn = keras.Function(inputs, dense(inputs))
    assert [type(op).__name__ for op in fn.operations] == ["InputLayer", "Dense"]
    np.testing.assert_allclose(np.asarray(fn(np.ones((1, 3), "float32"))), [[4.0, 4.0]])
    with pytest.raises(ValueError, match="inputs must be KerasTensors"):
        keras.Function([np.ones(3)], dense(inputs))
