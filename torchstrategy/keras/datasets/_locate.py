"""Where the dataset loaders look for files, when they may download, and the errors they raise.
Shared by cifar10.py and mnist.py; environment variables come from torchstrategy.cluster.environment."""
from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Optional, Sequence
from urllib.parse import urlsplit

from torchstrategy.cluster import environment

#: A file placed in a folder written by `torchstrategy.keras.datasets.testing`: it marks the
#: data as generated, so the md5 sums of the real dataset are not required for it.
GENERATED_MARKER = "TORCHSTRATEGY_GENERATED"

#: torchvision has no default root; the PyTorch tutorials use `./data`, so that is searched last.
TORCHVISION_DEFAULT_ROOT = "data"

#: Seconds a TCP connect to the download host may take before the network counts as unreachable.
PROBE_TIMEOUT_S = 3.0


class DatasetNotFoundError(FileNotFoundError):
    """The dataset files are in none of the searched directories and could not be downloaded."""


class DatasetCorruptedError(RuntimeError):
    """A dataset folder was found but its files are missing or fail the checksum check."""


@dataclass(frozen=True)
class SearchRoot:
    """One directory searched for a dataset, and why it is searched."""

    path: str
    origin: str


def search_roots(keras_subdirs: Sequence[str] = ()) -> list[SearchRoot]:
    """Directories searched, in order: `TORCHSTRATEGY_DATA`, Keras's cache, then `./data`.

    Keras's cache is `<KERAS_HOME or ~/.keras>/datasets`; `keras_subdirs` adds folders inside it
    (newer Keras versions extract CIFAR-10 one level deeper, under `cifar-10-batches-py-target/`).
    """
    roots: list[SearchRoot] = []
    data_dir = environment.data_dir()
    if data_dir is not None:
        roots.append(SearchRoot(data_dir, f"${environment.DATA_DIR_VARIABLE}"))
    keras_cache = os.path.join(environment.keras_home(), "datasets")
    roots.append(SearchRoot(keras_cache, "Keras cache"))
    for subdir in keras_subdirs:
        roots.append(SearchRoot(os.path.join(keras_cache, subdir), "Keras cache"))
    roots.append(SearchRoot(os.path.abspath(TORCHVISION_DEFAULT_ROOT), "torchvision default root ./data"))
    unique: dict[str, SearchRoot] = {}
    for root in roots:
        unique.setdefault(root.path, root)
    return list(unique.values())


def import_torchvision_datasets() -> ModuleType:
    """`torchvision.datasets`, imported on first use; a clear ImportError when it is missing."""
    try:
        import torchvision.datasets as tv_datasets
    except ImportError as error:
        raise ImportError(
            "keras.datasets loaders read the files through torchvision, which is not installed "
            f"or failed to import ({error}). Install it with: pip install torchstrategy[vision]"
        ) from error
    return tv_datasets


def host_reachable(host: str, port: int = 443, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """True when a TCP connection to (host, port) opens within `timeout` seconds."""
    return any_reachable([(host, port)], timeout)


def any_reachable(addresses: Sequence[tuple[str, int]], timeout: float = PROBE_TIMEOUT_S) -> bool:
    """True when a TCP connection to any (host, port) opens within `timeout` seconds.

    All probes run at once in daemon threads, so neither several hosts nor a slow DNS lookup
    can hold the caller much past `timeout`.
    """
    state = {"opened": False, "finished": 0}
    changed = threading.Condition()

    def _attempt(host: str, port: int) -> None:
        opened = False
        try:
            with socket.create_connection((host, port), timeout=timeout):
                opened = True
        except OSError:
            pass
        with changed:
            state["opened"] = state["opened"] or opened
            state["finished"] += 1
            changed.notify_all()

    for host, port in addresses:
        threading.Thread(target=_attempt, args=(host, port), name=f"probe-{host}", daemon=True).start()
    with changed:
        changed.wait_for(lambda: state["opened"] or state["finished"] == len(addresses), timeout)
        return bool(state["opened"])


def url_host(url: str) -> tuple[str, int]:
    """(host, port) a download URL connects to."""
    parts = urlsplit(url)
    default_port = 80 if parts.scheme == "http" else 443
    return parts.hostname or "", parts.port or default_port


def download_blocker(urls: Sequence[str]) -> Optional[str]:
    """None when a download may be tried; else the reason it may not (offline mode, no network)."""
    if environment.offline():
        return f"downloads are disabled (${environment.OFFLINE_VARIABLE} is set)"
    addresses = [url_host(url) for url in urls]
    if any_reachable([(host, port) for host, port in addresses if host]):
        return None
    hosts = ", ".join(f"{host}:{port}" for host, port in addresses)
    return f"the download host ({hosts}) did not answer a TCP connect within {PROBE_TIMEOUT_S:g} s"


def first_writable(roots: Sequence[SearchRoot]) -> Optional[str]:
    """The first root that exists (or can be created) and is writable; None when there is none."""
    for root in roots:
        try:
            os.makedirs(root.path, exist_ok=True)
        except OSError:
            continue
        if os.access(root.path, os.W_OK | os.X_OK):
            return root.path
    return None


def find_root(roots: Sequence[SearchRoot], present: Callable[[str], bool]) -> Optional[str]:
    """The first root for which `present(root)` holds."""
    for root in roots:
        if present(root.path):
            return root.path
    return None


def download_into_first_writable(
    roots: Sequence[SearchRoot],
    urls: Sequence[str],
    download: Callable[[str], None],
    not_found: Callable[[str], DatasetNotFoundError],
) -> str:
    """Downloads with `download(root)` into the first writable root and returns that root.

    Raises `not_found(reason)` when downloading is impossible or fails.
    """
    blocker = download_blocker(urls)
    if blocker is not None:
        raise not_found(blocker)
    target = first_writable(roots)
    if target is None:
        raise not_found("none of the searched directories is writable, so nothing could be downloaded")
    try:
        download(target)
    except Exception as error:  # urllib, tarfile and checksum errors all mean "not downloaded"
        raise not_found(f"downloading into {target} failed: {error!r}") from error
    return target


def not_found_error(
    dataset: str, what_to_put: str, roots: Sequence[SearchRoot], reason: str, extra: str = ""
) -> DatasetNotFoundError:
    """The error for a dataset found nowhere: every searched directory and what to put there."""
    searched = "\n".join(f"  - {root.path}  ({root.origin})" for root in roots)
    return DatasetNotFoundError(
        f"{dataset} not found, and it was not downloaded because {reason}.\n"
        f"Searched these directories, in order:\n{searched}\n"
        f"Put {what_to_put} in one of them, or set {environment.DATA_DIR_VARIABLE}=/some/dir "
        f"and put it there.{extra}"
    )


def has_marker(folder: str) -> bool:
    """True when `folder` holds the marker file of generated (test) data."""
    return os.path.isfile(os.path.join(folder, GENERATED_MARKER))
