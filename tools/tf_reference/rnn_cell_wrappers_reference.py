"""Freezes TF 2.21's tf.nn RNN cell wrappers (tensorflow-cpu 2.21.0, Keras 3.15) around Keras 3 cells for
tests/keras/layers/test_rnn_cell_wrappers.py: what the classes are, residual/device outputs of a GRUCell stepped
over a sequence (keras.layers.RNN refuses the wrappers in TF 2.21, so the steps are run by hand), the dropout
wrapper's config keys, and its error messages. Run: /work/tf-venv/bin/python tools/tf_reference/rnn_cell_wrappers_reference.py"""
from __future__ import annotations

import json
import os

import numpy as np
import tensorflow as tf
import keras

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "layers", "rnn_cell_wrappers_reference.json")


def steps(make, weights, x):
    """Wraps a fresh GRUCell (TF's wrapper builds the cell itself), gives it `weights`, steps it over x."""
    cell = keras.layers.GRUCell(3)
    wrapper = make(cell)
    state = [tf.zeros([2, 3])]
    wrapper(tf.zeros([2, 3]), state)  # builds the cell
    cell.set_weights(weights)
    outputs = []
    for t in range(x.shape[1]):
        out, state = wrapper(tf.constant(x[:, t]), state)
        outputs.append(out.numpy())
    return np.stack(outputs, 1), [s.numpy() for s in tf.nest.flatten(state)]


def main() -> None:
    keras.utils.set_random_seed(0)
    x = np.random.RandomState(0).rand(2, 5, 3).astype("float32")
    cell = keras.layers.GRUCell(3)
    cell.build((None, 3))
    weights = [w.numpy() + np.float32(0.1) for w in cell.weights]  # a nonzero bias too
    reference = {"x": x.tolist(), "weights": [w.tolist() for w in weights],
                 "weight_names": [w.path for w in cell.weights]}
    reference["plain"], _ = steps(lambda c: c, weights, x)
    reference["residual"], reference["residual_state"] = steps(tf.nn.RNNCellResidualWrapper, weights, x)
    reference["device"], _ = steps(lambda c: tf.nn.RNNCellDeviceWrapper(c, "/cpu:0"), weights, x)
    reference["keep_all"], _ = steps(tf.nn.RNNCellDropoutWrapper, weights, x)
    reference["residual_fn"], _ = steps(
        lambda c: tf.nn.RNNCellResidualWrapper(c, residual_fn=lambda i, o: 2.0 * i + o), weights, x)
    wrapper = tf.nn.RNNCellDropoutWrapper(keras.layers.GRUCell(3), input_keep_prob=0.5, seed=3)
    reference["dropout_config_keys"] = sorted(wrapper.get_config())
    reference["classes"] = {name: getattr(tf.nn, name).__module__ + "." + getattr(tf.nn, name).__name__
                            for name in ("RNNCellDropoutWrapper", "RNNCellResidualWrapper", "RNNCellDeviceWrapper")}
    errors = {}
    for key, make in (("keep_prob", lambda: tf.nn.RNNCellDropoutWrapper(cell, input_keep_prob=1.5)),
                      ("variational_dtype", lambda: tf.nn.RNNCellDropoutWrapper(cell, variational_recurrent=True)),
                      ("variational_input_size", lambda: tf.nn.RNNCellDropoutWrapper(
                          cell, input_keep_prob=0.5, variational_recurrent=True, dtype=tf.float32)),
                      ("residual_shape", lambda: tf.nn.RNNCellResidualWrapper(keras.layers.GRUCell(4))(
                          tf.ones([2, 3]), [tf.zeros([2, 4])]))):
        try:
            make()
        except (ValueError, TypeError) as error:
            errors[key] = f"{type(error).__name__}: {error}"
    reference["errors"] = errors
    for key in ("plain", "residual", "device", "keep_all", "residual_fn"):
        reference[key] = reference[key].tolist()
    reference["residual_state"] = [s.tolist() for s in reference["residual_state"]]
    with open(OUT, "w") as handle:
        json.dump(reference, handle)


if __name__ == "__main__":
    main()
