"""Finds a dataset file in the searched directories, or downloads it there through keras.utils.get_file.
Used by the loaders that read Keras's own cache files (fashion_mnist, cifar100, boston_housing)."""
from __future__ import annotations

import os
from collections.abc import Sequence

from torchstrategy.keras import file_utils
from torchstrategy.keras.datasets import _locate


def find_or_download(
    dataset: str,
    relative_paths: Sequence[str],
    origins: Sequence[str],
    keras_subdirs: Sequence[str] = (),
    file_hash: str | None = None,
) -> str:
    """The first searched root holding every one of `relative_paths`; downloads them when none does.

    Roots are those of `_locate.search_roots` ($TORCHSTRATEGY_DATA, Keras's cache, ./data). The
    download (origins[i] saved as relative_paths[i], checked against `file_hash` when given) goes
    into the first writable root, and only when `_locate.download_blocker` allows it; otherwise
    `DatasetNotFoundError` lists the directories searched and what to put there.
    """
    roots = _locate.search_roots(keras_subdirs)
    root = _locate.find_root(
        roots, lambda path: all(os.path.isfile(os.path.join(path, name)) for name in relative_paths)
    )
    if root is not None:
        return root

    def download(target: str) -> None:
        for name, origin in zip(relative_paths, origins):
            file_utils.get_file(
                os.path.basename(name), origin, cache_dir=target, cache_subdir=os.path.dirname(name),
                file_hash=file_hash,
            )

    listing = ", ".join(relative_paths)
    where = origins[0] if len(origins) == 1 else f"{os.path.dirname(origins[0])}/"
    return _locate.download_into_first_writable(
        roots,
        origins,
        download=download,
        not_found=lambda reason: _locate.not_found_error(dataset, f"{listing} (from {where})", roots, reason),
    )
