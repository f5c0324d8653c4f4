"""Writers of small CIFAR-10/100, (Fashion-)MNIST and Boston Housing datasets in the real on-disk formats.
Each writes a marker file so load_data() accepts the folder without the real files' md5 sums."""
from __future__ import annotations

import os
import struct
from typing import Any

import numpy as np

from torchstrategy.keras.datasets import _locate

CIFAR10_LABEL_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
NUM_CLASSES = 10
_NUM_TRAIN_BATCHES = 5
# Distinct mean colours, one per CIFAR-10 class (RGB), far enough apart to separate under noise.
_CLASS_COLOURS = np.array(
    [[200, 40, 40], [40, 200, 40], [40, 40, 200], [200, 200, 40], [200, 40, 200],
     [40, 200, 200], [120, 120, 120], [230, 140, 30], [30, 110, 230], [150, 60, 150]],
    dtype=np.float32,
)


def write_cifar10(
    root: str | os.PathLike, num_train: int = 5000, num_test: int = 1000, learnable: bool = True, seed: int = 0
) -> str:
    """Writes `<root>/cifar-10-batches-py/` in the real CIFAR-10 python format; returns that folder.

    Files: data_batch_1..5 (num_train rows split over the five, earlier batches one row larger when
    it does not divide), test_batch, batches.meta, as Python-2 protocol-2 pickles of dicts with
    b'data' (uint8 (n, 3072), each row the 1024 red, then green, then blue values of a 32x32 image
    in row order), b'labels' (list of int), b'batch_label' and b'filenames', exactly like the
    originals: `pickle.load(f, encoding='bytes')` and torchvision's reader both read them. A marker
    file `TORCHSTRATEGY_GENERATED` is added so `cifar10.load_data()` skips the md5 check.

    With `learnable=True` each image is its class's mean colour plus Gaussian noise (std 48), so a
    small CNN's accuracy rises well above chance (10%) within an epoch or two on a few thousand
    samples; with `learnable=False` pixels and labels are independent uniform noise.

    Example:
        >>> write_cifar10(tmp_dir, num_train=500, num_test=100)  # doctest: +SKIP
    """
    _check_counts(num_train, num_test)
    rng = np.random.default_rng(seed)
    folder = os.path.join(os.fspath(root), "cifar-10-batches-py")
    os.makedirs(folder, exist_ok=True)
    sizes = [len(part) for part in np.array_split(np.arange(num_train), _NUM_TRAIN_BATCHES)]
    batches = [(f"data_batch_{i + 1}", f"training batch {i + 1} of 5", n) for i, n in enumerate(sizes)]
    batches.append(("test_batch", "testing batch 1 of 1", num_test))
    for file_name, batch_label, count in batches:
        labels = rng.integers(0, NUM_CLASSES, size=count)
        images = _cifar_images(rng, labels, learnable)  # (n, 32, 32, 3)
        rows = images.transpose(0, 3, 1, 2).reshape(count, 3072)  # channel-major, as the real files
        filenames = [f"generated_{file_name}_{index:05d}.png".encode() for index in range(count)]
        record = {
            _Py2Str(b"batch_label"): _Py2Str(batch_label.encode()),
            _Py2Str(b"labels"): [int(label) for label in labels],
            _Py2Str(b"data"): rows,
            _Py2Str(b"filenames"): [_Py2Str(name) for name in filenames],
        }
        _write_file(os.path.join(folder, file_name), _py2_pickle(record))
    meta = {
        _Py2Str(b"num_cases_per_batch"): max(sizes + [num_test]),
        _Py2Str(b"label_names"): [_Py2Str(name.encode()) for name in CIFAR10_LABEL_NAMES],
        _Py2Str(b"num_vis"): 3072,
    }
    _write_file(os.path.join(folder, "batches.meta"), _py2_pickle(meta))
    _write_marker(folder)
    return folder


def write_mnist(
    root: str | os.PathLike, num_train: int = 6000, num_test: int = 1000, learnable: bool = True, seed: int = 0
) -> str:
    """Writes `<root>/MNIST/raw/` with the four gunzipped MNIST idx files; returns that folder.

    train-images-idx3-ubyte / t10k-images-idx3-ubyte: big-endian int32 magic 2051, then the dims
    (n, 28, 28) as big-endian int32, then n*784 uint8 pixels; train-labels-idx1-ubyte /
    t10k-labels-idx1-ubyte: magic 2049, n, then n uint8 labels. torchvision's MNIST reader reads
    these without any md5 check; a `TORCHSTRATEGY_GENERATED` marker is still written to say the
    data is synthetic.

    With `learnable=True` each digit class k is a bright 8x8 square at its own place on a dark,
    noisy background, so a small CNN learns it within an epoch or two; `learnable=False` gives
    independent uniform noise images and labels.
    """
    _check_counts(num_train, num_test)
    rng = np.random.default_rng(seed)
    folder = os.path.join(os.fspath(root), "MNIST", "raw")
    os.makedirs(folder, exist_ok=True)
    for prefix, count in (("train", num_train), ("t10k", num_test)):
        labels = rng.integers(0, NUM_CLASSES, size=count).astype(np.uint8)
        images = _mnist_images(rng, labels, learnable)
        _write_file(os.path.join(folder, f"{prefix}-images-idx3-ubyte"), _idx_bytes(images, magic=2051))
        _write_file(os.path.join(folder, f"{prefix}-labels-idx1-ubyte"), _idx_bytes(labels, magic=2049))
    _write_marker(folder)
    return folder


def write_mnist_npz(
    path: str | os.PathLike, num_train: int = 6000, num_test: int = 1000, learnable: bool = True, seed: int = 0
) -> str:
    """Writes a Keras-style `mnist.npz` (keys x_train, y_train, x_test, y_test; uint8) at `path`."""
    _check_counts(num_train, num_test)
    rng = np.random.default_rng(seed)
    arrays = {}
    for split, count in (("train", num_train), ("test", num_test)):
        labels = rng.integers(0, NUM_CLASSES, size=count).astype(np.uint8)
        arrays[f"x_{split}"] = _mnist_images(rng, labels, learnable)
        arrays[f"y_{split}"] = labels
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as npz_file:
        np.savez_compressed(npz_file, **arrays)
    return path


def _check_counts(num_train: int, num_test: int) -> None:
    for name, value in (("num_train", num_train), ("num_test", num_test)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer number of images, got {value!r}")


def _cifar_images(rng: np.random.Generator, labels: np.ndarray, learnable: bool) -> np.ndarray:
    if not learnable:
        return rng.integers(0, 256, size=(len(labels), 32, 32, 3), dtype=np.uint8)
    noise = rng.normal(0.0, 48.0, size=(len(labels), 32, 32, 3))
    images = _CLASS_COLOURS[labels][:, None, None, :] + noise
    return np.clip(np.rint(images), 0, 255).astype(np.uint8)


def _mnist_images(rng: np.random.Generator, labels: np.ndarray, learnable: bool) -> np.ndarray:
    if not learnable:
        return rng.integers(0, 256, size=(len(labels), 28, 28), dtype=np.uint8)
    images = rng.normal(30.0, 25.0, size=(len(labels), 28, 28))
    for index, label in enumerate(labels):
        top, left = 2 + 9 * (int(label) // 4), 1 + 7 * (int(label) % 4)  # a 3x4 grid of places
        images[index, top : top + 8, left : left + 6] += 180.0
    return np.clip(np.rint(images), 0, 255).astype(np.uint8)


def _idx_bytes(array: np.ndarray, magic: int) -> bytes:
    header = struct.pack(">i", magic) + b"".join(struct.pack(">i", dim) for dim in array.shape)
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()


def _write_file(path: str, payload: bytes) -> None:
    with open(path, "wb") as out:
        out.write(payload)


def _write_marker(folder: str) -> None:
    _write_file(
        os.path.join(folder, _locate.GENERATED_MARKER),
        b"Synthetic data written by torchstrategy.keras.datasets.testing; not the real dataset.\n",
    )


class _Py2Str(bytes):
    """Bytes that pickle as a Python 2 `str`: read back as bytes with encoding='bytes', as str with 'latin1'."""


def _py2_pickle(obj: Any) -> bytes:
    """Protocol-2 pickle as Python 2 wrote the CIFAR-10 files (no memo; py2 str opcodes)."""
    out = bytearray(b"\x80\x02")
    _emit(out, obj)
    out += b"."
    return bytes(out)


def _emit(out: bytearray, obj: Any) -> None:
    if obj is None:
        out += b"N"
    elif isinstance(obj, bool):
        out += b"\x88" if obj else b"\x89"
    elif isinstance(obj, int):
        _emit_int(out, obj)
    elif isinstance(obj, _Py2Str):
        raw = bytes(obj)
        out += (b"U" + bytes([len(raw)])) if len(raw) < 256 else (b"T" + struct.pack("<I", len(raw)))
        out += raw
    elif isinstance(obj, dict):
        out += b"}"
        if obj:
            out += b"("
            for key, value in obj.items():
                _emit(out, key)
                _emit(out, value)
            out += b"u"
    elif isinstance(obj, list):
        out += b"]"
        if obj:
            out += b"("
            for item in obj:
                _emit(out, item)
            out += b"e"
    elif isinstance(obj, tuple):
        out += b"("
        for item in obj:
            _emit(out, item)
        out += b"t"
    elif isinstance(obj, np.ndarray) and obj.dtype == np.uint8:
        _emit_uint8_array(out, obj)
    else:
        raise TypeError(f"cannot write {type(obj).__name__} in the CIFAR-10 pickle format")


def _emit_int(out: bytearray, value: int) -> None:
    if 0 <= value < 256:
        out += b"K" + bytes([value])
    elif 0 <= value < 65536:
        out += b"M" + struct.pack("<H", value)
    else:
        out += b"J" + struct.pack("<i", value)


def _emit_uint8_array(out: bytearray, array: np.ndarray) -> None:
    """numpy.core.multiarray._reconstruct(ndarray, (0,), 'b') then BUILD with the array's state."""
    out += b"cnumpy.core.multiarray\n_reconstruct\n" + b"cnumpy\nndarray\n"
    _emit(out, (0,))
    _emit(out, _Py2Str(b"b"))
    out += b"\x87R"  # TUPLE3, REDUCE
    dtype_state = (3, _Py2Str(b"|"), None, None, None, -1, -1, 0)
    out += b"("  # state: (version, shape, dtype, fortran_order, raw bytes)
    _emit(out, 1)
    _emit(out, tuple(array.shape))
    out += b"cnumpy\ndtype\n"
    _emit(out, (_Py2Str(b"u1"), 0, 1))
    out += b"R"
    _emit(out, dtype_state)
    out += b"b"  # BUILD the dtype
    _emit(out, False)
    _emit(out, _Py2Str(np.ascontiguousarray(array).tobytes()))
    out += b"tb"  # close the state tuple, BUILD the array


CIFAR100_NUM_FINE = 100
CIFAR100_NUM_COARSE = 20


def write_fashion_mnist(
    root: str | os.PathLike, num_train: int = 6000, num_test: int = 1000, learnable: bool = True, seed: int = 0
) -> str:
    """Writes `<root>/fashion-mnist/` as Keras caches it; returns that folder.

    Four gzip files, each holding an idx file as in `write_mnist`: train-labels-idx1-ubyte.gz,
    train-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz.
    Keras's cache folder is `~/.keras/datasets/fashion-mnist/`, so pass `~/.keras/datasets` as root.
    """
    import gzip

    _check_counts(num_train, num_test)
    rng = np.random.default_rng(seed)
    folder = os.path.join(os.fspath(root), "fashion-mnist")
    os.makedirs(folder, exist_ok=True)
    for prefix, count in (("train", num_train), ("t10k", num_test)):
        labels = rng.integers(0, NUM_CLASSES, size=count).astype(np.uint8)
        images = _mnist_images(rng, labels, learnable)
        for kind, array, magic in (("images-idx3", images, 2051), ("labels-idx1", labels, 2049)):
            # mtime=0 keeps the bytes a function of the seed alone
            payload = gzip.compress(_idx_bytes(array, magic=magic), mtime=0)
            _write_file(os.path.join(folder, f"{prefix}-{kind}-ubyte.gz"), payload)
    _write_marker(folder)
    return folder


def write_cifar100(root: str | os.PathLike, num_train: int = 500, num_test: int = 100, seed: int = 0) -> str:
    """Writes `<root>/cifar-100-python/` in the real CIFAR-100 python format; returns that folder.

    Files train, test and meta, Python-2 protocol-2 pickles like the originals: train/test dicts
    with b'data' (uint8 (n, 3072), channel-major rows), b'fine_labels' (0-99), b'coarse_labels'
    (0-19, here fine // 5), b'batch_label' and b'filenames'; meta with b'fine_label_names' and
    b'coarse_label_names'. Keras 3 extracts the archive into `cifar-100-python-target/`, so
    `write_cifar100(keras_home / 'datasets' / 'cifar-100-python-target')` mirrors its cache.
    """
    _check_counts(num_train, num_test)
    rng = np.random.default_rng(seed)
    folder = os.path.join(os.fspath(root), "cifar-100-python")
    os.makedirs(folder, exist_ok=True)
    for file_name, batch_label, count in (("train", "training batch 1 of 1", num_train),
                                          ("test", "testing batch 1 of 1", num_test)):
        fine = rng.integers(0, CIFAR100_NUM_FINE, size=count)
        rows = rng.integers(0, 256, size=(count, 3072), dtype=np.uint8)
        record = {
            _Py2Str(b"filenames"): [_Py2Str(f"generated_{file_name}_{i:05d}.png".encode()) for i in range(count)],
            _Py2Str(b"batch_label"): _Py2Str(batch_label.encode()),
            _Py2Str(b"fine_labels"): [int(label) for label in fine],
            _Py2Str(b"coarse_labels"): [int(label) // 5 for label in fine],
            _Py2Str(b"data"): rows,
        }
        _write_file(os.path.join(folder, file_name), _py2_pickle(record))
    meta = {
        _Py2Str(b"fine_label_names"): [_Py2Str(f"fine_{k}".encode()) for k in range(CIFAR100_NUM_FINE)],
        _Py2Str(b"coarse_label_names"): [_Py2Str(f"coarse_{k}".encode()) for k in range(CIFAR100_NUM_COARSE)],
    }
    _write_file(os.path.join(folder, "meta"), _py2_pickle(meta))
    _write_marker(folder)
    return folder


def write_boston_housing(path: str | os.PathLike, num_samples: int = 506, seed: int = 0) -> str:
    """Writes a Keras-style `boston_housing.npz` at `path`: x float64 (n, 13), y float64 (n,); returns path.

    y is a noisy linear function of x, so a regression model can fit it.
    """
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)) or num_samples < 0:
        raise ValueError(f"num_samples must be a non-negative integer, got {num_samples!r}")
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 100.0, size=(num_samples, 13))
    y = x @ rng.uniform(-0.2, 0.2, size=13) + 22.0 + rng.normal(0.0, 1.0, size=num_samples)
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as npz_file:
        np.savez(npz_file, x=x, y=y)
    return path
