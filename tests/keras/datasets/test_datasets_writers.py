"""testing.write_cifar10 / write_mnist / write_mnist_npz: real on-disk formats and learnable labels."""
from __future__ import annotations

import os
import pathlib
import pickle
import pickletools
import struct

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from torchstrategy.keras.datasets import _locate, testing


def test_cifar10_files_are_python2_pickles_like_the_originals(tmp_path):
    folder = pathlib.Path(testing.write_cifar10(tmp_path, num_train=23, num_test=4))
    expected = {"batches.meta", "test_batch", _locate.GENERATED_MARKER} | {f"data_batch_{i}" for i in range(1, 6)}
    assert set(os.listdir(folder)) == expected
    raw = (folder / "data_batch_2").read_bytes()
    opcodes = {op.name for op, _, _ in pickletools.genops(raw)}
    assert raw[:2] == b"\x80\x02"  # protocol 2, as cPickle wrote the real files
    assert "SHORT_BINSTRING" in opcodes and "BINSTRING" in opcodes  # Python 2 str, not bytes/unicode
    assert not opcodes & {"BINUNICODE", "SHORT_BINBYTES", "BINBYTES"}
    as_bytes = pickle.loads(raw, encoding="bytes")
    as_latin1 = pickle.loads(raw, encoding="latin1")
    assert set(as_bytes) == {b"data", b"labels", b"batch_label", b"filenames"}
    assert set(as_latin1) == {"data", "labels", "batch_label", "filenames"}
    assert as_bytes[b"data"].dtype == np.uint8 and as_bytes[b"data"].shape == (5, 3072)
    np.testing.assert_array_equal(as_bytes[b"data"], as_latin1["data"])
    assert as_bytes[b"batch_label"] == b"training batch 2 of 5"
    assert len(as_bytes[b"labels"]) == len(as_bytes[b"filenames"]) == 5
    assert all(isinstance(label, int) and 0 <= label < 10 for label in as_bytes[b"labels"])


def test_cifar10_rows_split_over_five_batches_and_meta(tmp_path):
    folder = pathlib.Path(testing.write_cifar10(tmp_path, num_train=23, num_test=4))
    sizes = []
    for i in range(1, 6):
        with open(folder / f"data_batch_{i}", "rb") as batch_file:
            sizes.append(len(pickle.load(batch_file, encoding="bytes")[b"labels"]))
    assert sizes == [5, 5, 5, 4, 4]
    with open(folder / "test_batch", "rb") as batch_file:
        assert pickle.load(batch_file, encoding="bytes")[b"batch_label"] == b"testing batch 1 of 1"
    with open(folder / "batches.meta", "rb") as meta_file:
        meta = pickle.load(meta_file, encoding="latin1")
    assert meta["label_names"][0] == "airplane" and meta["label_names"][9] == "truck"


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    first = pathlib.Path(testing.write_cifar10(tmp_path / "a", num_train=5, num_test=1, seed=9))
    again = pathlib.Path(testing.write_cifar10(tmp_path / "b", num_train=5, num_test=1, seed=9))
    other = pathlib.Path(testing.write_cifar10(tmp_path / "c", num_train=5, num_test=1, seed=10))
    assert (first / "data_batch_1").read_bytes() == (again / "data_batch_1").read_bytes()
    assert (first / "data_batch_1").read_bytes() != (other / "data_batch_1").read_bytes()


def test_mnist_idx_headers(tmp_path):
    raw = pathlib.Path(testing.write_mnist(tmp_path, num_train=7, num_test=3))
    assert raw == tmp_path / "MNIST" / "raw"
    images = (raw / "train-images-idx3-ubyte").read_bytes()
    labels = (raw / "t10k-labels-idx1-ubyte").read_bytes()
    assert struct.unpack(">iiii", images[:16]) == (2051, 7, 28, 28)
    assert len(images) == 16 + 7 * 28 * 28
    assert struct.unpack(">ii", labels[:8]) == (2049, 3)
    assert len(labels) == 8 + 3 and max(labels[8:]) < 10


def test_mnist_npz_has_keras_keys(tmp_path):
    path = testing.write_mnist_npz(tmp_path / "sub" / "mnist.npz", num_train=4, num_test=2)
    with np.load(path) as archive:
        assert sorted(archive.files) == ["x_test", "x_train", "y_test", "y_train"]
        assert archive["x_train"].shape == (4, 28, 28) and archive["x_train"].dtype == np.uint8
        assert archive["y_test"].shape == (2,) and archive["y_test"].dtype == np.uint8


@pytest.mark.parametrize("bad", [-1, 2.5, True, "10"])
def test_bad_counts_are_rejected(tmp_path, bad):
    with pytest.raises(ValueError, match="num_train must be a non-negative integer"):
        testing.write_cifar10(tmp_path, num_train=bad)
    with pytest.raises(ValueError, match="num_test must be a non-negative integer"):
        testing.write_mnist(tmp_path, num_test=bad)


def train_small_cnn(x_train, y_train, x_test, y_test, conv: torch.nn.Module, head_in: int) -> tuple[float, float]:
    """Plain torch: conv -> relu -> pool -> linear, Adam, 2 epochs; returns (acc before, acc after)."""
    torch.manual_seed(0)
    head = torch.nn.Linear(head_in, 10)
    params = [*conv.parameters(), *head.parameters()]
    optimizer = torch.optim.Adam(params, lr=1e-2)

    def logits(x):
        return head(F.max_pool2d(F.relu(conv(x)), 4).flatten(1))

    def accuracy() -> float:
        with torch.no_grad():
            return (logits(x_test).argmax(1) == y_test).float().mean().item()

    before = accuracy()
    for _ in range(2):
        order = torch.randperm(len(x_train))
        for start in range(0, len(x_train), 64):
            index = order[start : start + 64]
            loss = F.cross_entropy(logits(x_train[index]), y_train[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return before, accuracy()


def to_tensors(x: np.ndarray, y: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.from_numpy(x).float() / 255.0
    x = x.permute(0, 3, 1, 2) if x.ndim == 4 else x[:, None]
    return x, torch.from_numpy(np.asarray(y).reshape(-1).astype(np.int64))


def test_learnable_cifar10_is_learned_by_a_small_cnn(tmp_path, monkeypatch):
    from torchstrategy.keras.datasets import cifar10

    testing.write_cifar10(tmp_path / "data", num_train=2000, num_test=500, seed=0)
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    (x_train, y_train), (x_test, y_test) = cifar10.load_data()
    before, after = train_small_cnn(*to_tensors(x_train, y_train), *to_tensors(x_test, y_test),
                                    conv=torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), head_in=8 * 4 * 4)
    assert before < 0.3 and after > 0.8, (before, after)


def test_learnable_mnist_is_learned_by_a_small_cnn(tmp_path, monkeypatch):
    from torchstrategy.keras.datasets import mnist

    testing.write_mnist(tmp_path / "data", num_train=2000, num_test=500, seed=0)
    monkeypatch.setenv("TORCHSTRATEGY_DATA", str(tmp_path / "data"))
    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    before, after = train_small_cnn(*to_tensors(x_train, y_train), *to_tensors(x_test, y_test),
                                    conv=torch.nn.Conv2d(1, 8, 3, stride=1, padding=1), head_in=8 * 7 * 7)
    assert before < 0.3 and after > 0.8, (before, after)


def test_unlearnable_labels_do_not_follow_the_images(tmp_path):
    folder = pathlib.Path(testing.write_cifar10(tmp_path, num_train=2000, num_test=0, learnable=False))
    images, labels = [], []
    for i in range(1, 6):
        with open(folder / f"data_batch_{i}", "rb") as batch_file:
            batch = pickle.load(batch_file, encoding="bytes")
        images.append(batch[b"data"].reshape(-1, 3, 1024).mean(axis=2))
        labels.extend(batch[b"labels"])
    mean_colour = np.concatenate(images)
    labels = np.array(labels)
    per_class = np.stack([mean_colour[labels == k].mean(axis=0) for k in range(10)])
    assert np.ptp(per_class) < 3.0  # every class averages to the same grey (~127.5)
