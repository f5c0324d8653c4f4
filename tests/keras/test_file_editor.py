"""keras.saving.KerasFileEditor on files Keras 3.15 wrote (tests/formats/fixtures/editor_model.*): the weights
it reads, compare() against models, edits, saving and errors as Keras's, frozen in keras_file_editor_reference.json
by tools/tf_reference/keras_file_editor_reference.py (TF 2.21 / Keras 3.15)."""
from __future__ import annotations

import json
import os

import h5py
import numpy as np
import pytest

import torchstrategy as tf

keras = tf.keras
HERE = os.path.dirname(__file__)
REF = json.load(open(os.path.join(HERE, "keras_file_editor_reference.json")))
FIXTURES = os.path.join(HERE, "..", "formats", "fixtures")


def editor(kind="keras"):
    return keras.saving.KerasFileEditor(os.path.join(FIXTURES, f"editor_model.{kind}"))


def shapes(d):
    return {k: shapes(v) if isinstance(v, dict) else [list(v.shape), str(v.dtype)] for k, v in d.items()}


def stored(path):
    out = {}
    with h5py.File(path) as f:
        f.visititems(lambda n, o: out.__setitem__(n, [list(o.shape), str(o.dtype)])
                     if isinstance(o, h5py.Dataset) else None)
    return out


def model(second=3, extra=False):
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(second, name="dense_a")(inputs)
    hidden = keras.layers.BatchNormalization(name="norm")(hidden)
    if extra:
        hidden = keras.layers.Dense(3, name="dense_x")(hidden)
    return keras.Model(inputs, keras.layers.Dense(2, name="dense_b")(hidden))


@pytest.mark.parametrize("kind", ["keras", "weights.h5"])
def test_reads_the_weights_keras_reads(kind):
    opened = editor(kind)
    assert shapes(opened.weights_dict) == REF[f"{kind}_weights"]
    for key, value in REF[f"{kind}_values"].items():
        np.testing.assert_array_equal(opened.weights_dict["layers"]["dense_1"][key], np.asarray(value, "float32"))


def test_keras_file_metadata_and_config_are_read():
    opened = editor()
    assert sorted(opened.metadata) == REF["metadata_keys"] and opened.config["class_name"] == "Functional"


@pytest.mark.parametrize("key,kwargs", [("compare_same", {}), ("compare_wider", {"second": 5}),
                                        ("compare_extra", {"extra": True})])
def test_compare_counts_as_keras(key, kwargs, capsys):
    assert editor().compare(model(**kwargs)) == REF[key]
    printed = capsys.readouterr().out
    assert ("Comparison successful" in printed) == (REF[key]["status"] == "success")


def test_edits_and_save_give_keras_structure_and_file(tmp_path):
    opened = editor()
    opened.rename_object("dense", "dense_renamed")
    opened.delete_object("layers/batch_normalization")
    opened.add_object("layers/dense_new", {"0": np.ones((2, 2), "float32"), "1": np.zeros((2,), "float32")})
    opened.delete_weight("dense_1", "1")
    opened.add_weights("layers/dense_renamed", {"2": np.full((3,), 7.0, "float32")})
    assert shapes(opened.weights_dict) == REF["edited_weights"]
    assert list(opened.weights_dict["layers"]) == list(REF["edited_weights"]["layers"])
    opened.save(str(tmp_path / "edited.weights.h5"))
    assert stored(str(tmp_path / "edited.weights.h5")) == REF["edited_file"]
    opened.resave_weights(str(tmp_path / "again.weights.h5"))
    assert stored(str(tmp_path / "again.weights.h5")) == REF["resaved_file"]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # written atomically
    np.testing.assert_array_equal(keras.saving.KerasFileEditor(str(tmp_path / "edited.weights.h5"))
                                  .weights_dict["layers"]["dense_renamed"]["2"], np.full((3,), 7.0, "float32"))


def test_saved_file_loads_into_a_model_when_it_fits(tmp_path):
    opened = editor()
    target = model()
    path = str(tmp_path / "same.weights.h5")
    opened.save(path)
    target.load_weights(path)
    np.testing.assert_array_equal(target.get_layer("dense_b").kernel.detach().numpy(),
                                  opened.weights_dict["layers"]["dense_1"]["0"])


ERRORS = {
    "rename_target_path": lambda e: e.rename_object("dense", "layers/x"),
    "missing_path": lambda e: e.delete_object("layers/nothing"),
    "missing_name": lambda e: e.delete_object("nothing"),
    "add_not_dict": lambda e: e.add_object("layers/new", [1]),
    "add_missing_parent": lambda e: e.add_object("nowhere/new", {"0": np.zeros(2)}),
    "delete_missing_weight": lambda e: e.delete_weight("dense", "7"),
    "add_weights_not_dict": lambda e: e.add_weights("dense", 3),
    "save_suffix": lambda e: e.save("edited.keras"),
}


@pytest.mark.parametrize("key", sorted(ERRORS))
def test_errors_match_keras(key):
    want = REF["errors"][key]
    with pytest.raises(Exception) as error:
        ERRORS[key](editor())
    assert type(error.value).__name__ == want["raises"] and str(error.value) == want["message"]


def test_unknown_suffix_and_ambiguous_names_are_refused():
    with pytest.raises(ValueError) as error:
        keras.saving.KerasFileEditor("model.h5")
    assert str(error.value) == REF["errors"]["bad_suffix"]["message"]
    opened = editor()
    opened.add_object("extra", {"dense": {"0": np.zeros(1)}})
    with pytest.raises(ValueError, match="occurs more than once"):
        opened.delete_object("dense")
