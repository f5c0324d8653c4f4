"""`keras.datasets.imdb`: `load_data()` and `get_word_index()` exactly as Keras 3 returns them.
Reads Keras's `imdb.npz` (ragged object arrays) and `imdb_word_index.json` from the Keras cache or $TORCHSTRATEGY_DATA."""
from __future__ import annotations

from typing import Any

import numpy as np

from torchstrategy.keras.datasets import _npz

ORIGIN = _npz.BASE_URL + "imdb.npz"
FILE_SHA256 = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
WORD_INDEX_ORIGIN = _npz.BASE_URL + "imdb_word_index.json"
WORD_INDEX_MD5 = "bfafd718b763782e994055a2d397834f"


def load_data(
    path: str = "imdb.npz",
    num_words: int | None = None,
    skip_top: int = 0,
    maxlen: int | None = None,
    seed: int = 113,
    start_char: int | None = 1,
    oov_char: int | None = 2,
    index_from: int = 3,
    **kwargs: Any,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Loads IMDB reviews as `((x_train, y_train), (x_test, y_test))`, like `keras.datasets.imdb`.

    x arrays are object arrays of lists of word indices (rank by frequency, shifted by
    `index_from`, each list starting with `start_char` unless it is None); y arrays hold 0/1
    labels. As in Keras 3: train and test are each shuffled with one `np.random.RandomState(seed)`;
    `maxlen` keeps only sequences shorter than `maxlen`; words outside `[skip_top, num_words)`
    become `oov_char` (or are dropped when it is None), and when `num_words` is None its bound is the
    largest index present. The real data has 25000 train and 25000 test reviews.

    Args:
        path: the npz's name, relative to each searched directory (`$TORCHSTRATEGY_DATA`, Keras's
            cache `<$KERAS_HOME or ~/.keras>/datasets/`, `./data`); an absolute path is read directly.
        **kwargs: accepted and ignored, as Keras 3 does.

    Example:
        >>> (x_train, y_train), _ = load_data(num_words=10000)  # doctest: +SKIP
        >>> x_train[0][:3], y_train[0]  # doctest: +SKIP
        ([1, 14, 22], 1)
    """
    _npz.check_sequence_arguments(num_words=num_words, maxlen=maxlen, start_char=start_char, oov_char=oov_char,
                                  skip_top=skip_top, index_from=index_from)
    npz_file = _npz.locate("IMDB", path, ORIGIN, FILE_SHA256)
    arrays = _npz.load_npz(npz_file, "IMDB", ("x_train", "y_train", "x_test", "y_test"), ORIGIN)
    x_train, labels_train = arrays["x_train"], arrays["y_train"]
    x_test, labels_test = arrays["x_test"], arrays["y_test"]

    rng = np.random.RandomState(seed)
    order = np.arange(len(x_train))
    rng.shuffle(order)
    x_train, labels_train = x_train[order], labels_train[order]
    order = np.arange(len(x_test))
    rng.shuffle(order)  # the same generator, continued: Keras does not reseed for the test split
    x_test, labels_test = x_test[order], labels_test[order]

    x_train = _npz.shift_indices(x_train, start_char, index_from)
    x_test = _npz.shift_indices(x_test, start_char, index_from)
    if maxlen:
        x_train, labels_train = _npz.drop_long(maxlen, x_train, labels_train)
        x_test, labels_test = _npz.drop_long(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(
                f"After filtering for sequences shorter than maxlen={maxlen}, no sequence was kept. Increase maxlen."
            )
    sequences = _npz.limit_vocabulary(x_train + x_test, num_words, skip_top, oov_char)
    labels = np.concatenate([labels_train, labels_test])
    num_train = len(x_train)
    return ((np.array(sequences[:num_train], dtype="object"), labels[:num_train]),
            (np.array(sequences[num_train:], dtype="object"), labels[num_train:]))


def get_word_index(path: str = "imdb_word_index.json") -> dict[str, int]:
    """The IMDB word index `{word: rank}` (rank 1 = most frequent; data indices are rank + index_from).

    Example:
        >>> index = get_word_index()  # doctest: +SKIP
        >>> index["the"]  # doctest: +SKIP
        1
    """
    return _npz.load_json("IMDB word index", path, WORD_INDEX_ORIGIN, WORD_INDEX_MD5)
