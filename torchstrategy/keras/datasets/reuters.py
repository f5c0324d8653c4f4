"""`keras.datasets.reuters`: `load_data()`, `get_word_index()` and `get_label_names()` as in Keras 3.
Reads Keras's `reuters.npz` (ragged object arrays) and `reuters_word_index.json` from the Keras cache or $TORCHSTRATEGY_DATA."""
from __future__ import annotations

import numbers

import numpy as np

from torchstrategy.keras.datasets import _npz

ORIGIN = _npz.BASE_URL + "reuters.npz"
FILE_SHA256 = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
WORD_INDEX_ORIGIN = _npz.BASE_URL + "reuters_word_index.json"
WORD_INDEX_MD5 = "4d44cc38712099c9e383dc6e5f11a921"
LABEL_NAMES = (
    "cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply", "coffee",
    "sugar", "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas", "cpi", "money-fx",
    "interest", "gnp", "meal-feed", "alum", "oilseed", "gold", "tin", "strategic-metal", "livestock",
    "retail", "ipi", "iron-steel", "rubber", "heat", "jobs", "lei", "bop", "zinc", "orange", "pet-chem",
    "dlr", "gas", "silver", "wpi", "hog", "lead",
)


def load_data(
    path: str = "reuters.npz",
    num_words: int | None = None,
    skip_top: int = 0,
    maxlen: int | None = None,
    test_split: float = 0.2,
    seed: int = 113,
    start_char: int | None = 1,
    oov_char: int | None = 2,
    index_from: int = 3,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Loads Reuters newswires as `((x_train, y_train), (x_test, y_test))`, like `keras.datasets.reuters`.

    x arrays are object arrays of lists of word indices; y arrays the topic ids 0-45 (see
    `get_label_names()`). As in Keras 3: all 11228 wires are shuffled with
    `np.random.RandomState(seed)`, indices shifted by `index_from` with `start_char` first,
    sequences not shorter than `maxlen` dropped, words outside `[skip_top, num_words)` made
    `oov_char` (or dropped when it is None; a None `num_words` means the largest index present),
    then the first `int(N * (1 - test_split))` wires are the train split.

    Args:
        path: the npz's name, relative to each searched directory (`$TORCHSTRATEGY_DATA`, Keras's
            cache `<$KERAS_HOME or ~/.keras>/datasets/`, `./data`); an absolute path is read directly.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data(num_words=10000)  # doctest: +SKIP
        >>> len(x_train), len(x_test)  # doctest: +SKIP
        (8982, 2246)
    """
    _npz.check_sequence_arguments(num_words=num_words, maxlen=maxlen, start_char=start_char, oov_char=oov_char,
                                  skip_top=skip_top, index_from=index_from)
    if isinstance(test_split, bool) or not isinstance(test_split, numbers.Real) or not 0 <= test_split <= 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split!r}. It must be a fraction between 0 and 1.")
    npz_file = _npz.locate("Reuters", path, ORIGIN, FILE_SHA256)
    arrays = _npz.load_npz(npz_file, "Reuters", ("x", "y"), ORIGIN)
    sequences, labels = arrays["x"], arrays["y"]

    order = np.arange(len(sequences))
    np.random.RandomState(seed).shuffle(order)
    sequences, labels = sequences[order], labels[order]
    sequences = _npz.shift_indices(sequences, start_char, index_from)
    if maxlen:
        sequences, labels = _npz.drop_long(maxlen, sequences, labels)
    sequences = _npz.limit_vocabulary(sequences, num_words, skip_top, oov_char)

    num_train = int(len(sequences) * (1 - test_split))
    return ((np.array(sequences[:num_train], dtype="object"), np.array(labels[:num_train])),
            (np.array(sequences[num_train:], dtype="object"), np.array(labels[num_train:])))


def get_word_index(path: str = "reuters_word_index.json") -> dict[str, int]:
    """The Reuters word index `{word: rank}` (data indices are rank + index_from, 3 by default)."""
    return _npz.load_json("Reuters word index", path, WORD_INDEX_ORIGIN, WORD_INDEX_MD5)


def get_label_names() -> tuple[str, ...]:
    """The 46 topic names, indexed by the label ids `load_data()` returns.

    >>> get_label_names()[3]
    'earn'
    """
    return LABEL_NAMES
