"""`keras.utils.get_file`: Keras's file cache (~/.keras or $KERAS_HOME), hash checks and archive extraction.
Downloads go through urllib only when the cached file is missing, stale or `force_download` is set."""
from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile
from collections.abc import Sequence

from torchstrategy.cluster import environment

_HASH_ALGORITHMS = ("auto", "sha256", "md5")
_ARCHIVE_TYPES = ("tar", "zip")
_CHUNK_BYTES = 1 << 16


class DownloadFailedError(OSError):
    """`get_file` found no usable cached file and could not download it."""


def get_file(
    fname: str | os.PathLike | None = None,
    origin: str | None = None,
    untar: bool = False,
    md5_hash: str | None = None,
    file_hash: str | None = None,
    cache_subdir: str = "datasets",
    hash_algorithm: str = "auto",
    extract: bool = False,
    archive_format: str | Sequence[str] | None = "auto",
    cache_dir: str | os.PathLike | None = None,
    force_download: bool = False,
) -> str:
    """Returns the local path of `origin`, downloading it into Keras's cache only when needed.

    As in Keras 3: the file is `<cache_dir>/<cache_subdir>/<fname>`, with `cache_dir` defaulting to
    `$KERAS_HOME` or `~/.keras` (and `/tmp/.keras` when that is not an existing writable directory); `fname` defaults to
    the last part of the URL's path. A cached file is used without touching the network; when
    `file_hash` (or the legacy `md5_hash`) is given and the cached file does not match, it is
    downloaded again. `hash_algorithm='auto'` means sha256 for a 64-character hash, else md5.
    With `extract=True` (or `untar=True`) a tar/zip archive is saved as `<fname>` when `fname`
    has a dot (extracted into `<fname up to its first dot>_extracted`), else as `<fname>_archive`
    (extracted into `<fname>`), and the extraction folder is returned.

    When the file is missing and the download fails (or `$TORCHSTRATEGY_OFFLINE` is set),
    `DownloadFailedError` names the file, the origin, the cache path and what to do.

    Example:
        >>> path = get_file("data.csv", origin="https://example.com/data.csv")  # doctest: +SKIP
        >>> path  # doctest: +SKIP
        '/home/me/.keras/datasets/data.csv'
    """
    if not origin:
        raise ValueError('Please specify the "origin" argument (URL of the file to download); got None.')
    if not isinstance(origin, str):
        raise TypeError(f"origin must be a URL string such as 'https://host/file.npz', got {origin!r}")
    if hash_algorithm not in _HASH_ALGORITHMS:
        raise ValueError(f"hash_algorithm must be one of {list(_HASH_ALGORITHMS)}, got {hash_algorithm!r}")
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    if cache_dir is None:
        cache_root = environment.keras_home()
        # Keras creates its home when it is imported; the default root therefore always exists there
        try:
            os.makedirs(cache_root, exist_ok=True)
        except OSError:
            pass  # not creatable: the /tmp/.keras fallback below takes over
    else:
        cache_root = os.path.expanduser(os.fspath(cache_dir))
    cache_root = _writable_cache_root(cache_root)
    cache_folder = os.path.join(cache_root, cache_subdir)
    os.makedirs(cache_folder, exist_ok=True)

    given_name = os.fspath(fname) if fname is not None else ""
    name = given_name or os.path.basename(urllib.parse.urlsplit(origin).path)
    if not name:
        raise ValueError(f"Can't parse the file name from the origin {origin!r}; pass the `fname` argument.")
    if os.sep in name:
        raise ValueError(
            "fname must be a file name, not a path; put the parent folder in `cache_dir` (or "
            f"`cache_subdir`) instead. Received: fname={name!r}"
        )
    unpack = extract or untar
    if unpack and given_name and "." in name:
        target = os.path.join(cache_folder, name)
        extraction_dir = os.path.join(cache_folder, f"{name[: name.find('.')]}_extracted")
    elif unpack:
        target = os.path.join(cache_folder, f"{name}_archive")
        extraction_dir = os.path.join(cache_folder, name)
    else:
        target, extraction_dir = os.path.join(cache_folder, name), ""

    if force_download or not os.path.exists(target):
        _download(origin, target)
    elif file_hash is not None and not validate_file(target, file_hash, hash_algorithm):
        algorithm = _algorithm_for(hash_algorithm, file_hash)
        found = hash_file(target, algorithm)
        print(f"A local file was found ({target}), but its {algorithm} hash does not match {file_hash}, so it is "
              "downloaded again.")
        _download(origin, target, mismatch=f"the cached copy at {target} has {algorithm} hash {found}, not the "
                                           f"expected {file_hash}")
    else:
        file_hash = None  # a cached file that passed (or needs no) check is not checked twice
    if file_hash is not None and not validate_file(target, file_hash, hash_algorithm):
        raise ValueError(
            f"Incomplete or corrupted file detected: the {_algorithm_for(hash_algorithm, file_hash)} hash "
            f"of {target} (downloaded from {origin}) does not match the provided value {file_hash}."
        )

    if unpack:
        if not extract_archive(target, extraction_dir, "tar" if untar else archive_format):
            warnings.warn(f"Could not extract archive {target}: it is not a {archive_format} archive.", stacklevel=2)
        return extraction_dir
    return target


def hash_file(fpath: str | os.PathLike, algorithm: str = "sha256", chunk_size: int = 65535) -> str:
    """The hex sha256 (or md5) digest of a file, read in chunks.

    >>> hash_file('/path/to/empty')  # doctest: +SKIP
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    """
    hasher = hashlib.sha256() if algorithm in ("sha256", "auto") else hashlib.md5()
    with open(fpath, "rb") as source:
        for chunk in iter(lambda: source.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath: str | os.PathLike, file_hash: str, algorithm: str = "auto") -> bool:
    """Whether the file's hash equals `file_hash` ('auto': sha256 for 64 hex characters, else md5)."""
    return hash_file(fpath, _algorithm_for(algorithm, file_hash)) == str(file_hash)


def extract_archive(
    file_path: str | os.PathLike, path: str | os.PathLike = ".", archive_format="auto"
) -> bool:
    """Extracts a tar (.tar, .tar.gz, .tar.bz2) or zip archive into `path`; False when it is neither.

    Members that would land outside `path` (absolute names, `..`, links out) are refused, as Keras does.
    """
    if archive_format is None:
        return False
    formats = list(_ARCHIVE_TYPES) if archive_format == "auto" else (
        [archive_format] if isinstance(archive_format, str) else list(archive_format)
    )
    for archive_type in formats:
        if archive_type not in _ARCHIVE_TYPES:
            raise ValueError(f"archive_format must be 'auto', 'tar', 'zip', a list of those or None; got {archive_type!r}")
    file_path, path = os.fspath(file_path), os.fspath(path)
    for archive_type in formats:
        if archive_type == "tar" and tarfile.is_tarfile(file_path):
            with tarfile.open(file_path) as archive:
                _unpack(lambda: archive.extractall(path, filter="data"), path)
            return True
        if archive_type == "zip" and zipfile.is_zipfile(file_path):
            with zipfile.ZipFile(file_path) as archive:
                _unpack(lambda: archive.extractall(path, members=_safe_zip_members(archive, path)), path)
            return True
    return False


def _unpack(extract_all, path: str) -> None:
    try:
        extract_all()
    except (tarfile.TarError, RuntimeError, KeyboardInterrupt):
        # a half-written extraction would be mistaken for a complete one next time
        if os.path.isfile(path):
            os.remove(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)
        raise


def _safe_zip_members(archive: zipfile.ZipFile, base: str) -> list[zipfile.ZipInfo]:
    base_real = os.path.realpath(base)
    safe = []
    for info in archive.infolist():
        landing = os.path.realpath(os.path.join(base_real, info.filename))
        if os.path.commonpath([base_real, landing]) == base_real:
            safe.append(info)
        else:
            warnings.warn(f"Skipping {info.filename!r}: it would be extracted outside {base}.", stacklevel=3)
    return safe


def _algorithm_for(algorithm: str, file_hash: str | None) -> str:
    if algorithm == "auto":
        return "sha256" if file_hash is not None and len(str(file_hash)) == 64 else "md5"
    return algorithm


def _writable_cache_root(cache_root: str) -> str:
    """`cache_root`, or `/tmp/.keras` when it is not a writable existing directory.

    Keras 3 (TF 2.21) falls back to /tmp/.keras also for a `cache_dir` that does not exist yet;
    this keeps that, so files land where a Keras script expects them.
    """
    if os.access(cache_root, os.W_OK):
        return cache_root
    return os.path.join("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir(), ".keras")


def _download(origin: str, target: str, mismatch: str = "") -> None:
    def failed(reason: str) -> DownloadFailedError:
        if mismatch:  # the file is there, but not the one asked for
            return DownloadFailedError(
                f"get_file could not fetch {os.path.basename(target)!r}: {mismatch} (an old or damaged copy), and "
                f"downloading it again from {origin} failed ({reason}). Connect to the network and call again, "
                f"replace {target} with the right file, or pass the hash of the file you have as file_hash."
            )
        return DownloadFailedError(
            f"get_file could not fetch {os.path.basename(target)!r}: it is not in the cache at {target} "
            f"and downloading it from {origin} failed ({reason}). Either connect to the network and "
            f"call again, or copy the file to {target} by hand (get_file then uses it offline)."
        )

    if environment.offline():
        raise failed(f"downloads are disabled because ${environment.OFFLINE_VARIABLE} is set")
    print(f"Downloading data from {origin}")
    partial = f"{target}.part"
    try:
        urllib.request.urlretrieve(origin, partial)
        os.replace(partial, target)  # a broken transfer never leaves a file that looks cached
    except urllib.error.HTTPError as error:
        raise failed(f"HTTP {error.code} {error.msg}") from error
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise failed(f"{type(error).__name__}: {getattr(error, 'reason', error)}") from error
    finally:
        if os.path.exists(partial):
            os.remove(partial)
