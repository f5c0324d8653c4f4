"""imdb.load_data / get_word_index: Keras 3's shuffle, index shift, maxlen and vocabulary cut, on a small npz."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import torchstrategy as tf
from tests.keras.datasets._sequence_files import write_reference_files
from torchstrategy.keras.datasets import _locate, imdb

# Outputs of TF 2.21 / Keras 3's keras.datasets.imdb.load_data(**kwargs) on write_reference_files()'s imdb.npz.
REFERENCE = json.loads((pathlib.Path(__file__).parent / "keras_sequence_reference.json").read_text())["imdb"]


@pytest.fixture
def cache(isolated_dataset_env):
    return write_reference_files(isolated_dataset_env / "home" / ".keras" / "datasets")


@pytest.mark.parametrize("case", REFERENCE, ids=[json.dumps(case["kwargs"]) for case in REFERENCE])
def test_matches_keras(cache, case):
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.imdb.load_data(**case["kwargs"])
    assert x_train.dtype == object and x_train.shape == (len(case["x_train"]),)
    assert [list(s) for s in x_train] == case["x_train"]
    assert [list(s) for s in x_test] == case["x_test"]
    assert y_train.tolist() == case["y_train"] and y_test.tolist() == case["y_test"]
    assert y_train.dtype == np.int64


def test_no_num_words_makes_the_largest_index_oov_as_keras_does(cache):
    (x_train, _), (x_test, _) = imdb.load_data()
    raw = np.load(cache / "imdb.npz", allow_pickle=True)
    largest = max(max(s) for s in np.concatenate([raw["x_train"], raw["x_test"]])) + 3
    words = {w for s in list(x_train) + list(x_test) for w in s}
    assert largest not in words and 2 in words


def test_maxlen_keeping_nothing_is_an_error(cache):
    with pytest.raises(ValueError, match="maxlen=2, no sequence was kept"):
        imdb.load_data(maxlen=2)


def test_absolute_path_and_extra_kwargs(tmp_path):
    folder = write_reference_files(tmp_path / "elsewhere")
    (x_train, _), _ = imdb.load_data(path=str(folder / "imdb.npz"), unused_option=1)
    assert [list(s) for s in x_train] == REFERENCE[0]["x_train"]


def test_pickle_payload_other_than_arrays_is_refused(isolated_dataset_env):
    class Evil:
        def __reduce__(self):
            return (pathlib.Path, ("/pwned",))

    folder = isolated_dataset_env / "home" / ".keras" / "datasets"
    folder.mkdir(parents=True)
    payload = np.empty(1, dtype=object)
    payload[0] = Evil()
    np.savez(folder / "imdb.npz", x_train=payload, y_train=np.zeros(1), x_test=payload, y_test=np.zeros(1))
    with pytest.raises(_locate.DatasetCorruptedError, match="refusing to build pathlib"):
        imdb.load_data()


def test_missing_keys_and_bad_arguments(cache):
    np.savez(cache / "imdb.npz", x=np.zeros(2))
    with pytest.raises(ValueError, match=r"lacks the keys \['x_train', 'y_train', 'x_test', 'y_test'\]"):
        imdb.load_data()
    with pytest.raises(ValueError, match="`num_words` must be an integer or None"):
        imdb.load_data(num_words=1.5)
    with pytest.raises(ValueError, match="`index_from` must be an integer"):
        imdb.load_data(index_from=None)


def test_missing_file_offline_is_a_clear_error(isolated_dataset_env):
    with pytest.raises(_locate.DatasetNotFoundError, match="imdb.npz") as info:
        imdb.load_data()
    assert imdb.ORIGIN in str(info.value)


def test_word_index_is_read_from_the_cache(isolated_dataset_env):
    folder = isolated_dataset_env / "home" / ".keras" / "datasets"
    folder.mkdir(parents=True)
    (folder / "imdb_word_index.json").write_text(json.dumps({"the": 1, "and": 2}))
    assert tf.keras.datasets.imdb.get_word_index() == {"the": 1, "and": 2}
    (folder / "imdb_word_index.json").write_text("{not json")
    with pytest.raises(_locate.DatasetCorruptedError, match="not a readable json"):
        imdb.get_word_index()
