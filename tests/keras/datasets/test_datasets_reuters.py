"""reuters.load_data / get_word_index / get_label_names: Keras 3's shuffle, shifts, cuts and split."""
from __future__ import annotations

import json
import pathlib

import pytest

import torchstrategy as tf
from tests.keras.datasets._sequence_files import write_reference_files
from torchstrategy.keras.datasets import _locate, reuters

# Outputs of TF 2.21 / Keras 3's keras.datasets.reuters.load_data(**kwargs) on write_reference_files()'s reuters.npz.
REFERENCE = json.loads((pathlib.Path(__file__).parent / "keras_sequence_reference.json").read_text())["reuters"]


@pytest.fixture
def cache(isolated_dataset_env):
    return write_reference_files(isolated_dataset_env / "home" / ".keras" / "datasets")


@pytest.mark.parametrize("case", REFERENCE, ids=[json.dumps(case["kwargs"]) for case in REFERENCE])
def test_matches_keras(cache, case):
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.reuters.load_data(**case["kwargs"])
    assert x_train.dtype == object
    assert [list(s) for s in x_train] == case["x_train"]
    assert [list(s) for s in x_test] == case["x_test"]
    assert y_train.tolist() == case["y_train"] and y_test.tolist() == case["y_test"]


def test_split_sizes(cache):
    (x_train, _), (x_test, _) = reuters.load_data(test_split=0.0)
    assert len(x_train) == 13 and len(x_test) == 0
    with pytest.raises(ValueError, match="Invalid `test_split` argument"):
        reuters.load_data(test_split=1.5)


def test_label_names_and_word_index(isolated_dataset_env):
    names = tf.keras.datasets.reuters.get_label_names()
    assert len(names) == 46 and names[0] == "cocoa" and names[3] == "earn" and names[-1] == "lead"
    folder = isolated_dataset_env / "home" / ".keras" / "datasets"
    folder.mkdir(parents=True)
    (folder / "reuters_word_index.json").write_text(json.dumps({"the": 1}))
    assert reuters.get_word_index() == {"the": 1}


def test_corrupt_and_missing_files(cache):
    (cache / "reuters.npz").write_bytes(b"not a zip")
    with pytest.raises(_locate.DatasetCorruptedError, match="not a readable Reuters npz"):
        reuters.load_data()
    (cache / "reuters.npz").unlink()
    with pytest.raises(_locate.DatasetNotFoundError, match=reuters.ORIGIN):
        reuters.load_data()
