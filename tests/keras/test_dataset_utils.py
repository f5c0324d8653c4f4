"""image/text_dataset_from_directory and timeseries_dataset_from_array against frozen Keras 3 (TF 2.21) outputs."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.keras import dataset_utils

PIL = pytest.importorskip("PIL.Image")

# keras.utils.image_dataset_from_directory outputs (TF 2.21) for the one PNG written by `pixel_folder`.
RESIZE_REFERENCE = json.loads((pathlib.Path(__file__).parent / "keras_image_resize_reference.json").read_text())


def _save(path: pathlib.Path, height: int, width: int, mode: str, image_format: str, seed: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    channels = {"RGB": 3, "RGBA": 4, "L": 1}[mode]
    pixels = np.random.RandomState(seed).randint(0, 256, size=(height, width, channels)).astype(np.uint8)
    PIL.fromarray(pixels[:, :, 0] if channels == 1 else pixels, mode).save(path, image_format)


@pytest.fixture
def image_tree(tmp_path):
    """The tree the Keras reference listings were taken on: 3 classes, a nested folder, a hidden one, noise."""
    root = tmp_path / "images"
    files = [("cats/b.png", 7, 5, "RGB", "PNG"), ("cats/a.PNG", 4, 9, "RGB", "PNG"),
             ("cats/deep/c.jpg", 16, 12, "RGB", "JPEG"), ("dogs/z.png", 6, 6, "L", "PNG"),
             ("dogs/y.jpeg", 9, 13, "RGB", "JPEG"), ("dogs/x.png", 3, 4, "RGBA", "PNG"),
             ("dogs/w.bmp", 5, 7, "RGB", "BMP"), ("dogs/v.gif", 6, 5, "RGB", "GIF"),
             ("birds/q.png", 10, 3, "RGB", "PNG"), ("birds/r.png", 2, 2, "RGB", "PNG"),
             (".hidden/h.png", 3, 3, "RGB", "PNG"), ("top.png", 2, 2, "RGB", "PNG")]
    for seed, (name, height, width, mode, image_format) in enumerate(files):
        _save(root / name, height, width, mode, image_format, seed)
    (root / "cats" / "notes.txt").write_text("not an image")
    return root


@pytest.fixture
def text_tree(tmp_path):
    root = tmp_path / "texts"
    for name, count in (("neg", 4), ("pos", 5), ("zzz", 2)):
        (root / name / "sub").mkdir(parents=True)
        for i in range(count):
            folder = root / name / "sub" if i == 0 else root / name
            (folder / f"f{i}.txt").write_bytes(f"{name} text {i} ".encode() * (i + 1) + "é".encode())
        (root / name / "skip.md").write_text("x")
    return root


def _relative(dataset, root) -> list[str]:
    return [str(pathlib.Path(path).relative_to(root)) for path in dataset.file_paths]


def _unbatch(dataset) -> list:
    elements = []
    for batch in dataset:
        parts = batch if isinstance(batch, tuple) else (batch,)
        elements.extend(tuple(part[i] for part in parts) for i in range(len(parts[0])))
    return elements


def test_unshuffled_listing_classes_and_labels_match_keras(image_tree):
    dataset = tf.keras.utils.image_dataset_from_directory(image_tree, image_size=(8, 6), shuffle=False, verbose=False)
    assert dataset.class_names == ["birds", "cats", "dogs"]
    assert _relative(dataset, image_tree) == ["birds/q.png", "birds/r.png", "cats/a.PNG", "cats/b.png",
                                              "cats/deep/c.jpg", "dogs/v.gif", "dogs/w.bmp", "dogs/x.png",
                                              "dogs/y.jpeg", "dogs/z.png"]
    images, labels = next(iter(dataset))
    assert images.shape == (10, 8, 6, 3) and images.dtype == torch.float32
    assert labels.dtype == torch.int32 and labels.tolist() == [0, 0, 1, 1, 1, 2, 2, 2, 2, 2]


def test_seeded_validation_split_picks_the_files_keras_picks(image_tree):
    train, val = dataset_utils.image_dataset_from_directory(
        image_tree, image_size=(4, 4), seed=7, validation_split=0.3, subset="both", batch_size=2, verbose=False)
    assert _relative(train, image_tree) == ["dogs/y.jpeg", "dogs/v.gif", "birds/q.png", "cats/a.PNG",
                                            "birds/r.png", "dogs/z.png", "dogs/x.png"]
    assert _relative(val, image_tree) == ["cats/b.png", "dogs/w.bmp", "cats/deep/c.jpg"]
    # The shuffle buffer reorders training elements, but keeps each image with its label.
    class_of = {"birds": 0, "cats": 1, "dogs": 2}
    assert sorted(int(label) for _, label in _unbatch(train)) == sorted(class_of[p.split("/")[0]]
                                                                       for p in _relative(train, image_tree))
    assert [int(label) for _, label in _unbatch(val)] == [1, 2, 1]  # validation is never shuffled
    only_val = dataset_utils.image_dataset_from_directory(
        image_tree, label_mode=None, image_size=4, seed=11, validation_split=0.4, subset="validation",
        verbose=False)
    assert _relative(only_val, image_tree) == ["dogs/v.gif", ".hidden/h.png", "top.png", "dogs/x.png"]
    assert only_val.class_names is None and next(iter(only_val)).shape == (4, 4, 4, 3)


def test_explicit_labels_list_and_no_batching(image_tree):
    labels = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]
    dataset = dataset_utils.image_dataset_from_directory(
        image_tree, labels=labels, image_size=(9, 9), shuffle=False, batch_size=None, verbose=False)
    assert dataset.class_names == ["1", "2", "3", "4", "5", "6", "8", "9"]
    assert _relative(dataset, image_tree)[:3] == ["top.png", ".hidden/h.png", "birds/q.png"]
    elements = list(dataset)
    assert [int(label) for _, label in elements] == labels and elements[0][0].shape == (9, 9, 3)


def test_label_modes_and_class_names_order(image_tree):
    dataset = dataset_utils.image_dataset_from_directory(
        image_tree, image_size=(6, 6), shuffle=False, color_mode="grayscale", class_names=["cats", "birds"],
        label_mode="binary", verbose=False)
    images, labels = next(iter(dataset))
    assert images.shape == (5, 6, 6, 1) and labels.dtype == torch.float32
    assert labels.tolist() == [[0.0], [0.0], [0.0], [1.0], [1.0]]
    dataset = dataset_utils.image_dataset_from_directory(
        image_tree, image_size=(3, 11), shuffle=False, interpolation="nearest", label_mode="categorical",
        verbose=False)
    images, labels = next(iter(dataset))
    assert images.dtype == torch.uint8  # tf.image.resize keeps the dtype for nearest neighbour
    assert labels.tolist()[:3] == [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


@pytest.fixture
def pixel_folder(tmp_path):
    pixels = ((np.arange(4 * 5 * 3).reshape(4, 5, 3) * 37) % 256).astype(np.uint8)
    (tmp_path / "px" / "one").mkdir(parents=True)
    PIL.fromarray(pixels).save(tmp_path / "px" / "one" / "p.png")
    return tmp_path / "px"


@pytest.mark.parametrize("case", RESIZE_REFERENCE, ids=[json.dumps(case[0]) for case in RESIZE_REFERENCE])
def test_resized_values_match_keras(pixel_folder, case):
    kwargs, dtype, expected = case
    kwargs = {key: tuple(value) if isinstance(value, list) else value for key, value in kwargs.items()}
    dataset = dataset_utils.image_dataset_from_directory(pixel_folder, shuffle=False, label_mode=None,
                                                         verbose=False, **kwargs)
    image = next(iter(dataset))[0].numpy()
    assert image.dtype == np.dtype(dtype)
    # Measured against TF 2.21: at most 6.1e-5 apart on the 0-255 scale (float32 rounding order).
    np.testing.assert_allclose(image, np.asarray(expected, dtype=image.dtype), rtol=0, atol=1e-4)


def test_bad_image_arguments(image_tree, tmp_path):
    with pytest.raises(ValueError, match="interpolation.*does not offer"):
        dataset_utils.image_dataset_from_directory(image_tree, interpolation="bicubic")
    with pytest.raises(ValueError, match="must provide a `seed`"):
        dataset_utils.image_dataset_from_directory(image_tree, validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="`color_mode` must be one of"):
        dataset_utils.image_dataset_from_directory(image_tree, color_mode="cmyk")
    with pytest.raises(ValueError, match="exactly 2 class_names"):
        dataset_utils.image_dataset_from_directory(image_tree, label_mode="binary", verbose=False)
    with pytest.raises(ValueError, match="did not match the names of the subdirectories"):
        dataset_utils.image_dataset_from_directory(image_tree, class_names=["cows"], verbose=False)
    with pytest.raises(ValueError, match="not an existing directory"):
        dataset_utils.image_dataset_from_directory(tmp_path / "nowhere")
    (tmp_path / "empty" / "a").mkdir(parents=True)
    with pytest.raises(ValueError, match="No image files found"):
        dataset_utils.image_dataset_from_directory(tmp_path / "empty", verbose=False)


def test_undecodable_image_names_the_file(tmp_path):
    (tmp_path / "d" / "a").mkdir(parents=True)
    (tmp_path / "d" / "a" / "broken.png").write_bytes(b"not a png")
    dataset = dataset_utils.image_dataset_from_directory(tmp_path / "d", verbose=False)
    with pytest.raises(ValueError, match="Could not decode image file .*broken.png"):
        next(iter(dataset))


def test_text_listing_max_length_and_labels_match_keras(text_tree):
    dataset = tf.keras.utils.text_dataset_from_directory(text_tree, shuffle=False, verbose=False)
    assert dataset.class_names == ["neg", "pos", "zzz"]
    texts, labels = next(iter(dataset))
    assert texts[:2].tolist() == [b"neg text 1 neg text 1 \xc3\xa9", b"neg text 2 neg text 2 neg text 2 \xc3\xa9"]
    assert labels.dtype == torch.int32 and labels.tolist() == [0] * 4 + [1] * 5 + [2] * 2
    assert _relative(dataset, text_tree)[3] == "neg/sub/f0.txt"  # sorted walk: the root's files, then sub/
    cut = dataset_utils.text_dataset_from_directory(text_tree, shuffle=False, max_length=7,
                                                    label_mode="categorical", batch_size=3, verbose=False)
    texts, labels = next(iter(cut))
    assert texts.tolist() == [b"neg tex"] * 3 and labels.tolist()[0] == [1.0, 0.0, 0.0]


def test_text_seeded_split_matches_keras(text_tree):
    train, val = dataset_utils.text_dataset_from_directory(
        text_tree, seed=3, validation_split=0.25, subset="both", verbose=False)
    val_texts, val_labels = next(iter(val))
    assert val_texts.tolist() == [b"pos text 0 \xc3\xa9", b"zzz text 0 \xc3\xa9"] and val_labels.tolist() == [1, 2]
    train_texts, _ = next(iter(train))
    assert len(train_texts) == 9 and not set(train_texts.tolist()) & set(val_texts.tolist())


# --------------------------------------------------------------------------- timeseries

DATA = np.arange(40, dtype="float64").reshape(20, 2) * 1.5
TARGETS = np.arange(20) * 10
# Keras 3 / TF 2.21 batches for DATA and TARGETS, each window written as the row indices it holds.
TIMESERIES_REFERENCE = [
    (dict(sequence_length=3, sequence_stride=2, sampling_rate=3, batch_size=2),
     [([[0, 3, 6], [2, 5, 8]], [0, 20]), ([[4, 7, 10], [6, 9, 12]], [40, 60]),
      ([[8, 11, 14], [10, 13, 16]], [80, 100]), ([[12, 15, 18]], [120])]),
    (dict(sequence_length=5, start_index=3, end_index=17, batch_size=3),
     [([[3, 4, 5, 6, 7], [4, 5, 6, 7, 8], [5, 6, 7, 8, 9]], [30, 40, 50]),
      ([[6, 7, 8, 9, 10], [7, 8, 9, 10, 11], [8, 9, 10, 11, 12]], [60, 70, 80]),
      ([[9, 10, 11, 12, 13], [10, 11, 12, 13, 14], [11, 12, 13, 14, 15]], [90, 100, 110]),
      ([[12, 13, 14, 15, 16]], [120])]),
    (dict(sequence_length=3, targets=TARGETS[:6], batch_size=4),
     [([[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5]], [0, 10, 20, 30]), ([[4, 5, 6], [5, 6, 7]], [40, 50])]),
]


def _rows(windows: torch.Tensor) -> list:
    return (windows[..., 0] / 3).to(torch.int64).tolist()


@pytest.mark.parametrize("kwargs, expected", TIMESERIES_REFERENCE)
def test_timeseries_windows_match_keras(kwargs, expected):
    kwargs = dict(kwargs)
    targets = kwargs.pop("targets", TARGETS)
    batches = list(tf.keras.utils.timeseries_dataset_from_array(DATA, targets, **kwargs))
    assert [(_rows(windows), target.tolist()) for windows, target in batches] == expected
    assert batches[0][0].dtype == torch.float64 and batches[0][1].dtype == torch.int64
    np.testing.assert_array_equal(batches[0][0][0].numpy(), DATA[expected[0][0][0]])


def test_timeseries_without_targets_or_batching():
    windows = list(dataset_utils.timeseries_dataset_from_array(DATA, None, 2, sequence_stride=3, batch_size=None))
    assert [_rows(window) for window in windows] == [[0, 1], [3, 4], [6, 7], [9, 10], [12, 13], [15, 16], [18, 19]]


def test_timeseries_shuffle_uses_keras_window_set_and_seed():
    # Keras 3 with seed=1, start_index=2, batch_size=None yields these 13 windows (first rows), shuffled.
    dataset = dataset_utils.timeseries_dataset_from_array(DATA, TARGETS, 6, shuffle=True, seed=1, batch_size=None,
                                                          start_index=2)
    elements = list(dataset)
    assert sorted(_rows(window)[0] for window, _ in elements) == list(range(2, 15))
    assert all(int(target) == 10 * _rows(window)[0] for window, target in elements)
    again = [_rows(window)[0] for window, _ in dataset_utils.timeseries_dataset_from_array(
        DATA, TARGETS, 6, shuffle=True, seed=1, batch_size=None, start_index=2)]
    assert again == [_rows(window)[0] for window, _ in elements] != list(range(2, 15))


@pytest.mark.parametrize("kwargs, message", [
    (dict(start_index=-1), "`start_index` must be 0 or greater"),
    (dict(start_index=5, end_index=4), "`end_index` must be higher than `start_index`"),
    (dict(end_index=20), "`end_index` must be lower than the length"),
    (dict(sampling_rate=0), "`sampling_rate` must be higher than 0"),
    (dict(sequence_stride=20), "`sequence_stride` must be lower than the length"),
    (dict(batch_size=0), "`batch_size` must be a positive integer"),
])
def test_timeseries_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dataset_utils.timeseries_dataset_from_array(DATA, TARGETS, 3, **kwargs)
