"""Freezes keras.utils.split_dataset's splits (run under the TF reference env):
/work/tf-venv/bin/python tools/tf_reference/keras_split_dataset_reference.py -> tests/keras/keras_split_dataset_reference.json"""
import json
import os

import keras
import numpy as np

data = np.arange(20).reshape(10, 2)
out = {"keras_version": keras.__version__, "cases": []}
for kwargs in ({"left_size": 0.8}, {"right_size": 3}, {"left_size": 4, "right_size": 0.3},
               {"left_size": 0.6, "shuffle": True, "seed": 123}, {"right_size": 0.25, "shuffle": True, "seed": 9}):
    left, right = keras.utils.split_dataset(data, **kwargs)
    out["cases"].append({"kwargs": kwargs, "left": [np.asarray(x).tolist() for x in left],
                         "right": [np.asarray(x).tolist() for x in right]})
left, right = keras.utils.split_dataset((data, np.arange(10)), left_size=0.5, shuffle=True, seed=5)
out["tuple"] = {"left": [[np.asarray(v).tolist() for v in x] for x in left],
                "right": [[np.asarray(v).tolist() for v in x] for x in right]}
with open(os.path.join(os.path.dirname(__file__), "..", "..", "tests", "keras", "keras_split_dataset_reference.json"),
          "w") as f:
    json.dump(out, f)
print("ok")
