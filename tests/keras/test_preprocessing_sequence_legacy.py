"""keras.preprocessing.sequence's legacy helpers (skipgrams, make_sampling_table, TimeseriesGenerator) against
TF 2.21 / Keras 3.15 results frozen in keras_sequence_reference.json by
tools/tf_reference/keras_sequence_reference.py."""
from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest

import torchstrategy as tf

seq = tf.keras.preprocessing.sequence
REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_sequence_reference.json")))
SEQ = [1, 2, 0, 3, 4, 2, 5]
SKIP = {"plain": {"window_size": 2, "shuffle": False, "negative_samples": 0.0},
        "negatives": {"window_size": 1, "negative_samples": 0.5, "seed": 3},
        "categorical": {"window_size": 1, "categorical": True, "seed": 5},
        "table": {"window_size": 2, "sampling_table": [1.0, 1.0, 0.2, 0.9, 0.5, 1.0], "seed": 1}}
TS = {"plain": {"length": 4, "batch_size": 3},
      "strided": {"length": 5, "sampling_rate": 2, "stride": 3, "start_index": 2, "end_index": 20, "batch_size": 2},
      "reverse": {"length": 3, "reverse": True, "batch_size": 8}}


def test_make_sampling_table():
    np.testing.assert_allclose(seq.make_sampling_table(8, sampling_factor=0.05), REF["sampling_table"], rtol=1e-12)


@pytest.mark.parametrize("key", sorted(SKIP))
def test_skipgrams(key):
    state = random.getstate()
    try:
        random.seed(42)  # Keras draws negatives from Python's random module, as we do
        couples, labels = seq.skipgrams(SEQ, 6, **SKIP[key])
    finally:
        random.setstate(state)
    assert {"couples": couples, "labels": labels} == REF["skipgrams"][key]


@pytest.mark.parametrize("key", sorted(TS))
def test_timeseries_generator(key):
    data = np.arange(50).reshape(25, 2).astype("float32")
    gen = seq.TimeseriesGenerator(data, np.arange(25) * 10, **TS[key])
    ref = REF["ts"][key]
    assert len(gen) == ref["len"]
    for i, (x, y) in enumerate(ref["batches"]):
        got_x, got_y = gen[i]
        np.testing.assert_array_equal(got_x, np.asarray(x, dtype="float32"))
        np.testing.assert_array_equal(got_y, y)


def test_timeseries_generator_trains_a_model():
    data = np.random.default_rng(0).normal(size=(30, 2)).astype("float32")
    gen = seq.TimeseriesGenerator(data, data[:, :1], length=3, batch_size=5)
    model = tf.keras.Sequential([tf.keras.Input((3, 2)), tf.keras.layers.Flatten(), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(gen, epochs=1, verbose=0)
    assert len(history.history["loss"]) == 1 and np.isfinite(history.history["loss"][0])


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return {"raises": type(info.value).__name__, "message": str(info.value)}


def test_timeseries_generator_config_and_errors():
    gen = seq.TimeseriesGenerator([1, 2, 3, 4], [5, 6, 7, 8], length=2)
    # Keras 3.15 raises here (AttributeError: 'super' object has no attribute 'get_config'); ours returns the
    # fields Keras's get_config sets, and to_json wraps them
    assert REF["ts_config"]["raises"] == "AttributeError"
    config = gen.get_config()
    assert config == {"data": "[1, 2, 3, 4]", "targets": "[5, 6, 7, 8]", "length": 2, "sampling_rate": 1,
                      "stride": 1, "start_index": 2, "end_index": 3, "shuffle": False, "reverse": False,
                      "batch_size": 128}
    assert json.loads(gen.to_json()) == {"class_name": "TimeseriesGenerator", "config": config}
    errors = REF["ts_errors"]
    assert _message(lambda: seq.TimeseriesGenerator([1, 2], [1], length=1)) == errors["lengths"]
    assert _message(lambda: seq.TimeseriesGenerator([1, 2, 3], [1, 2, 3], length=3)) == errors["start"]
