"""Freezes keras.preprocessing.sequence's legacy helpers (skipgrams, make_sampling_table, TimeseriesGenerator)
(run under the TF reference env, TF 2.21 / Keras 3.15):
/work/tf-venv/bin/python tools/tf_reference/keras_sequence_reference.py -> tests/keras/keras_sequence_reference.json"""
import json
import os
import random

import numpy as np
import tensorflow as tf

seq = tf.keras.preprocessing.sequence


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


SEQ = [1, 2, 0, 3, 4, 2, 5]
out = {"tf_version": tf.__version__, "sampling_table": seq.make_sampling_table(8, sampling_factor=0.05).tolist(),
       "skipgrams": {}}
for key, kwargs in {"plain": {"window_size": 2, "shuffle": False, "negative_samples": 0.0},
                    "negatives": {"window_size": 1, "negative_samples": 0.5, "seed": 3},
                    "categorical": {"window_size": 1, "categorical": True, "seed": 5},
                    "table": {"window_size": 2, "sampling_table": [1.0, 1.0, 0.2, 0.9, 0.5, 1.0], "seed": 1}
                    }.items():
    random.seed(42)
    couples, labels = seq.skipgrams(SEQ, 6, **kwargs)
    out["skipgrams"][key] = {"couples": couples, "labels": labels}
data = np.arange(50).reshape(25, 2).astype("float32")
targets = np.arange(25) * 10
out["ts"] = {}
for key, kwargs in {"plain": {"length": 4, "batch_size": 3}, "strided": {"length": 5, "sampling_rate": 2,
                    "stride": 3, "start_index": 2, "end_index": 20, "batch_size": 2},
                    "reverse": {"length": 3, "reverse": True, "batch_size": 8}}.items():
    gen = seq.TimeseriesGenerator(data, targets, **kwargs)
    out["ts"][key] = {"len": len(gen), "batches": [[gen[i][0].tolist(), gen[i][1].tolist()]
                                                   for i in range(len(gen))]}
gen = seq.TimeseriesGenerator([1, 2, 3, 4], [5, 6, 7, 8], length=2)
out["ts_config"] = raises(lambda: gen.get_config())
out["ts_json"] = raises(lambda: gen.to_json())
if out["ts_config"]["raises"] is None:
    out["ts_config"] = gen.get_config()
out["ts_errors"] = {"lengths": raises(lambda: seq.TimeseriesGenerator([1, 2], [1], length=1)),
                    "start": raises(lambda: seq.TimeseriesGenerator([1, 2, 3], [1, 2, 3], length=3))}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_sequence_reference.json")
with open(path, "w") as f:
    json.dump(out, f)
print("ok")
