"""keras.utils.audio_dataset_from_directory over WAV folders written here, against Keras 3.15 batches (padded,
fixed-length, ragged, split) frozen in preprocessing/keras_imggen_reference.json."""
from __future__ import annotations

import numpy as np
import pytest

from torchstrategy import keras
from tests.keras.preprocessing._imggen_reference import REFERENCE, write_wavs

AUDIO = REFERENCE["audio"]


@pytest.fixture()
def wav_root(tmp_path):
    write_wavs(tmp_path)
    return tmp_path


def _same_batches(dataset, want):
    got = [[np.asarray(x), np.asarray(y)] for x, y in dataset]
    assert len(got) == len(want)
    for (x, y), (want_x, want_y) in zip(got, want):
        assert x.dtype == np.float32
        np.testing.assert_allclose(x, np.asarray(want_x), atol=1e-6)
        np.testing.assert_array_equal(y, np.asarray(want_y))


def test_padded_batches_match_keras(wav_root):
    ds = keras.utils.audio_dataset_from_directory(str(wav_root), batch_size=2, shuffle=False)
    assert ds.class_names == AUDIO["class_names"] == ["down", "up"]
    _same_batches(ds, AUDIO["padded"])


def test_fixed_length_categorical_batches_match_keras(wav_root):
    ds = keras.utils.audio_dataset_from_directory(str(wav_root), batch_size=2, shuffle=False,
                                                  output_sequence_length=7, label_mode="categorical")
    _same_batches(ds, AUDIO["fixed"])


def test_ragged_batches_and_subsets(wav_root):
    ds = keras.utils.audio_dataset_from_directory(str(wav_root), batch_size=4, shuffle=False, ragged=True,
                                                  label_mode=None)
    rows = [[int(n) for n in np.asarray(batch.row_lengths())] for batch in ds]
    assert rows == AUDIO["ragged_rows"]
    train, val = keras.utils.audio_dataset_from_directory(str(wav_root), batch_size=None, validation_split=0.4,
                                                          subset="both", seed=5, output_sequence_length=5)
    train_items, val_items = list(train), list(val)
    assert [len(train_items), len(val_items)] == AUDIO["split_sizes"]
    assert all(tuple(x.shape) == (5, 2) for x, _ in train_items + val_items)
    assert set(train.file_paths).isdisjoint(val.file_paths)
    shuffled = keras.utils.audio_dataset_from_directory(str(wav_root), batch_size=5, seed=1)
    (x, y), = list(shuffled)
    assert sorted(np.asarray(y).tolist()) == [0, 0, 0, 1, 1] and tuple(x.shape) == (5, 9, 2)


def test_bad_arguments(wav_root):
    fn = keras.utils.audio_dataset_from_directory
    with pytest.raises(ValueError, match="both `ragged` and `output_sequence_length`"):
        fn(str(wav_root), ragged=True, output_sequence_length=4)
    with pytest.raises(ValueError, match="integer value"):
        fn(str(wav_root), sampling_rate=8000.0)
    with pytest.raises(NotImplementedError, match="tensorflow-io"):
        fn(str(wav_root), sampling_rate=8000)
    with pytest.raises(ValueError, match="label_mode"):
        fn(str(wav_root), label_mode="sparse")
    with pytest.raises(ValueError, match="exactly 2"):
        fn(str(wav_root / "down"), labels=[0, 1, 2], label_mode="binary")
    with pytest.raises(ValueError, match="seed"):
        fn(str(wav_root), validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="not an existing directory"):
        fn(str(wav_root / "missing"))
