"""Writes the small IMDB/Reuters/California npz files the Keras 3 reference outputs were computed on."""
from __future__ import annotations

import pathlib

import numpy as np


def _ragged(rng: np.random.RandomState, count: int, low: int, high: int, vocab: int) -> np.ndarray:
    sequences = np.empty(count, dtype=object)
    for i in range(count):
        sequences[i] = [int(v) for v in rng.randint(1, vocab, size=rng.randint(low, high))]
    return sequences


def write_reference_files(folder: pathlib.Path) -> pathlib.Path:
    """imdb.npz, reuters.npz and california_housing.npz in Keras's layouts, from RandomState(5)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(5)
    np.savez(folder / "imdb.npz", x_train=_ragged(rng, 9, 2, 8, 20), y_train=rng.randint(0, 2, 9),
             x_test=_ragged(rng, 7, 2, 8, 25), y_test=rng.randint(0, 2, 7))
    np.savez(folder / "reuters.npz", x=_ragged(rng, 13, 1, 9, 30), y=rng.randint(0, 46, 13))
    np.savez(folder / "california_housing.npz", x=rng.rand(23, 8), y=rng.rand(23) * 5e5)
    return folder
