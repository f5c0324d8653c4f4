"""keras.utils.split_dataset against Keras 3.15.1's splits (frozen by
tools/tf_reference/keras_split_dataset_reference.py), incl. Keras's seeded shuffle; batched datasets; errors."""
import json
import os

import numpy as np
import pytest

from torchstrategy import data
from torchstrategy.keras import utils

REF = json.load(open(os.path.join(os.path.dirname(__file__), "keras_split_dataset_reference.json")))
DATA = np.arange(20).reshape(10, 2)


@pytest.mark.parametrize("case", REF["cases"], ids=[str(c["kwargs"]) for c in REF["cases"]])
def test_splits_match_keras(case):
    left, right = utils.split_dataset(DATA, **case["kwargs"])
    assert [np.asarray(x).tolist() for x in left] == case["left"]
    assert [np.asarray(x).tolist() for x in right] == case["right"]


def test_tuples_and_batched_datasets():
    left, right = utils.split_dataset((DATA, np.arange(10)), left_size=0.5, shuffle=True, seed=5)
    assert [[np.asarray(v).tolist() for v in x] for x in left] == REF["tuple"]["left"]
    assert [[np.asarray(v).tolist() for v in x] for x in right] == REF["tuple"]["right"]
    batched = data.Dataset.from_tensor_slices(DATA).batch(3)
    left, right = utils.split_dataset(batched, right_size=4)
    assert [tuple(np.asarray(b).shape) for b in left] == [(3, 2), (3, 2)]
    assert np.concatenate([np.asarray(b) for b in right]).tolist() == DATA[6:].tolist()


def test_bad_sizes_are_explained():
    with pytest.raises(ValueError, match="At least one"):
        utils.split_dataset(DATA)
    with pytest.raises(ValueError, match="`left_size` should be"):
        utils.split_dataset(DATA, left_size=10)
    with pytest.raises(ValueError, match="greater than 1"):
        utils.split_dataset(DATA, left_size=0.7, right_size=0.5)
