"""Freezes Keras 3.15's KerasFileEditor behaviour (run under the TF reference env, TF 2.21 / Keras 3.15):
/work/tf-venv/bin/python tools/tf_reference/keras_file_editor_reference.py
-> tests/keras/keras_file_editor_reference.json, tests/formats/fixtures/editor_model.keras and .weights.h5"""
import json
import os
import tempfile

import h5py
import keras
import numpy as np
import tensorflow as tf

HERE = os.path.dirname(__file__)
FIXTURES = os.path.join(HERE, "..", "..", "tests", "formats", "fixtures")
rng = np.random.default_rng(3)


def model(second=3, extra=False):
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(second, name="dense_a")(inputs)
    hidden = keras.layers.BatchNormalization(name="norm")(hidden)
    if extra:
        hidden = keras.layers.Dense(3, name="dense_x")(hidden)
    return keras.Model(inputs, keras.layers.Dense(2, name="dense_b")(hidden))


def raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"raises": None}


def shapes(d):
    return {k: shapes(v) if isinstance(v, dict) else [list(v.shape), str(v.dtype)] for k, v in d.items()}


def stored(path):
    out = {}
    with h5py.File(path) as f:
        f.visititems(lambda n, o: out.__setitem__(n, [list(o.shape), str(o.dtype)])
                     if isinstance(o, h5py.Dataset) else None)
    return out


net = model()
net.set_weights([rng.normal(size=w.shape).astype("float32") for w in net.get_weights()])
net.save(os.path.join(FIXTURES, "editor_model.keras"))
net.save_weights(os.path.join(FIXTURES, "editor_model.weights.h5"))
out = {"keras_version": keras.__version__, "tf_version": tf.__version__}
for kind in ("keras", "weights.h5"):
    editor = keras.saving.KerasFileEditor(os.path.join(FIXTURES, f"editor_model.{kind}"))
    out[f"{kind}_weights"] = shapes(editor.weights_dict)
    out[f"{kind}_values"] = {k: np.asarray(v).tolist() for k, v in editor.weights_dict["layers"]["dense_1"].items()}
editor = keras.saving.KerasFileEditor(os.path.join(FIXTURES, "editor_model.keras"))
out["metadata_keys"] = sorted(editor.metadata)
out["compare_same"] = editor.compare(model())
out["compare_wider"] = editor.compare(model(second=5))
out["compare_extra"] = editor.compare(model(extra=True))
out["errors"] = {
    "bad_suffix": raises(lambda: keras.saving.KerasFileEditor("model.h5")),
    "rename_target_path": raises(lambda: editor.rename_object("dense", "layers/x")),
    "missing_path": raises(lambda: editor.delete_object("layers/nothing")),
    "missing_name": raises(lambda: editor.delete_object("nothing")),
    "add_not_dict": raises(lambda: editor.add_object("layers/new", [1])),
    "add_missing_parent": raises(lambda: editor.add_object("nowhere/new", {"0": np.zeros(2)})),
    "delete_missing_weight": raises(lambda: editor.delete_weight("dense", "7")),
    "add_weights_not_dict": raises(lambda: editor.add_weights("dense", 3)),
    "save_suffix": raises(lambda: editor.save("edited.keras")),
}
editor.rename_object("dense", "dense_renamed")
editor.delete_object("layers/batch_normalization")
editor.add_object("layers/dense_new", {"0": np.ones((2, 2), "float32"), "1": np.zeros((2,), "float32")})
editor.delete_weight("dense_1", "1")
editor.add_weights("layers/dense_renamed", {"2": np.full((3,), 7.0, "float32")})
out["edited_weights"] = shapes(editor.weights_dict)
tmp = tempfile.mkdtemp()
editor.save(os.path.join(tmp, "edited.weights.h5"))
out["edited_file"] = stored(os.path.join(tmp, "edited.weights.h5"))
editor.resave_weights(os.path.join(tmp, "again.weights.h5"))
out["resaved_file"] = stored(os.path.join(tmp, "again.weights.h5"))
json.dump(out, open(os.path.join(HERE, "..", "..", "tests", "keras", "keras_file_editor_reference.json"), "w"))
print("ok")
