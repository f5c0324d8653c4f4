"""`keras.utils.image_dataset_from_directory`, `text_dataset_from_directory`, `timeseries_dataset_from_array`.
Index files and split them exactly as Keras 3 does (sorted walk, RandomState(seed) shuffle), then build torchstrategy Datasets."""
from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from torchstrategy.data.dataset import Dataset

IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
TEXT_FORMATS = (".txt",)
#: Interpolations whose values match tf.image.resize (half-pixel centres, no antialiasing).
SUPPORTED_INTERPOLATIONS = ("bilinear", "nearest")
_KERAS_ONLY_INTERPOLATIONS = ("bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")
_LABEL_MODES = ("int", "categorical", "binary", None)
_COLOR_CHANNELS = {"rgb": 3, "rgba": 4, "grayscale": 1}


# --------------------------------------------------------------------------- directory indexing


def _index_directory(
    directory: Any, labels: Any, formats: tuple[str, ...], class_names: Sequence[str] | None,
    shuffle: bool, seed: int | None, follow_links: bool, verbose: bool,
) -> tuple[list[str], np.ndarray | None, list[str] | None]:
    """(file paths, labels, class names) in Keras 3's order: classes sorted, files sorted per folder."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise ValueError(f"`directory` {directory!r} is not an existing directory. Pass the folder holding the files "
                         "(with one subfolder per class when labels='inferred').")
    if labels == "inferred":
        subdirs = [name for name in sorted(os.listdir(directory))
                   if os.path.isdir(os.path.join(directory, name)) and not name.startswith(".")]
        if class_names is not None:
            if not set(class_names).issubset(subdirs):
                raise ValueError(
                    "The `class_names` passed did not match the names of the subdirectories of the target "
                    f"directory. Expected: {subdirs} (or a subset of it), but received: class_names={class_names}"
                )
            subdirs = list(class_names)  # the caller's order sets the class indices
    else:
        subdirs = [""]
        if class_names is not None:
            raise ValueError(
                "When `labels=None` (no labels), argument `class_names` cannot be specified." if labels is None else
                "When argument `labels` is specified, argument `class_names` cannot be specified "
                "(the `class_names` will be the sorted list of labels)."
            )
    file_paths: list[str] = []
    inferred: list[int] = []
    for class_index, subdir in enumerate(subdirs):
        folder = os.path.join(directory, subdir)
        for root, _, files in sorted(os.walk(folder, followlinks=follow_links), key=lambda entry: entry[0]):
            for name in sorted(files):
                if name.lower().endswith(formats):
                    relative = os.path.join(os.path.basename(folder), os.path.relpath(os.path.join(root, name), folder))
                    file_paths.append(os.path.join(directory, relative))
                    inferred.append(class_index)

    label_array: Any
    names: list[str] | None = list(subdirs)
    if labels == "inferred":
        label_array = np.asarray(inferred, dtype="int32")
    elif labels is None:
        label_array, names = None, None
    else:
        if len(labels) != len(file_paths):
            raise ValueError(
                "Expected the lengths of `labels` to match the number of files in the target directory. "
                f"len(labels) is {len(labels)} while we found {len(file_paths)} files in directory {directory}."
            )
        label_array = list(labels)
        names = [str(label) for label in sorted(set(label_array))]
    if verbose:
        if label_array is None:
            print(f"Found {len(file_paths)} files.")
        else:
            print(f"Found {len(file_paths)} files belonging to {len(names or [])} classes.")
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        # Two generators with one seed give paths and labels the same permutation, as in Keras.
        np.random.RandomState(seed).shuffle(file_paths)
        if label_array is not None:
            np.random.RandomState(seed).shuffle(label_array)
    return file_paths, label_array, names


def _check_validation_split(validation_split: Any, subset: Any, shuffle: bool, seed: Any) -> None:
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1, received: {validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError(f'`subset` must be either "training", "validation" or "both", received: {subset}')
    if validation_split and shuffle and seed is None:
        raise ValueError(
            "If using `validation_split` and shuffling the data, you must provide a `seed` argument, to make "
            "sure that there is no overlap between the training and validation subset."
        )


def _split(samples: list, labels: Any, validation_split: float | None, subset: str) -> tuple[list, Any]:
    """The training part (all but the last `int(split * n)`) or the validation part (those last ones)."""
    if not validation_split:
        return samples, labels
    num_val = int(validation_split * len(samples))
    if subset == "training":
        print(f"Using {len(samples) - num_val} files for training.")
        # As in Keras, a split that rounds to zero validation files leaves nothing for training ([:-0]).
        return samples[:-num_val], None if labels is None else labels[:-num_val]
    print(f"Using {num_val} files for validation.")
    return samples[-num_val:], None if labels is None else labels[-num_val:]


def _check_labels_arguments(labels: Any, label_mode: Any, class_names: Any, what: str) -> None:
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError(
                f"`labels` argument should be a list/tuple of integer labels, of the same size as the number of {what} "
                "files in the target directory. If you wish to infer the labels from the subdirectory names in the "
                "target directory, pass `labels=\"inferred\"`. If you wish to get a dataset that only contains "
                f"samples (no labels), pass `labels=None`. Received: labels={labels}"
            )
        if class_names:
            raise ValueError(f'You can only pass `class_names` if `labels="inferred"`. Received: labels={labels}, '
                             f"and class_names={class_names}")
    if label_mode not in _LABEL_MODES:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", or None. '
                         f"Received: label_mode={label_mode}")


def _encode_label(label: Any, label_mode: str, num_classes: int) -> torch.Tensor:
    """A label as Keras yields it: int32 for 'int', float32 (1,) for 'binary', float32 one-hot otherwise."""
    value = torch.as_tensor(label)
    if label_mode == "binary":
        return value.to(torch.float32).reshape(1)
    if label_mode == "categorical":
        return torch.nn.functional.one_hot(value.to(torch.int64), num_classes).to(torch.float32)
    return value if value.is_floating_point() else value.to(torch.int32)


def _from_files(
    paths: list[str], labels: Any, label_mode: str | None, num_classes: int, load: Any,
    shuffle: bool, buffer_size: int, seed: int | None, batch_size: int | None,
) -> Dataset:
    """A Dataset of `load(path)` (and the encoded label), shuffled with a buffer like Keras's, then batched."""
    positions = Dataset.from_tensor_slices(np.arange(len(paths), dtype=np.int64))
    if shuffle:
        positions = positions.shuffle(buffer_size=buffer_size, seed=seed)
    if label_mode:
        label_values = list(labels)

        def element(position: torch.Tensor) -> tuple[Any, torch.Tensor]:
            index = int(position)
            return load(paths[index]), _encode_label(label_values[index], label_mode, num_classes)
    else:
        def element(position: torch.Tensor) -> Any:
            return load(paths[int(position)])
    dataset = positions.map(element)
    return dataset.batch(batch_size) if batch_size is not None else dataset


def _build(
    directory: Any, labels: Any, label_mode: str | None, class_names: Any, formats: tuple[str, ...], what: str,
    load: Any, batch_size: int | None, shuffle: bool, seed: int | None, validation_split: float | None,
    subset: str | None, follow_links: bool, verbose: bool, batch_elements: bool = True,
) -> Dataset | list[Dataset]:
    """The dataset(s) of `load(path)` (and labels); `batch_elements=False` leaves batching to the caller
    (the shuffle buffer still follows `batch_size`, as in Keras)."""
    _check_labels_arguments(labels, label_mode, class_names, what)
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral)
                                   or batch_size < 1):
        raise ValueError(f"`batch_size` must be a positive integer or None, got {batch_size!r}.")
    _check_validation_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, label_array, names = _index_directory(directory, labels, formats, class_names, shuffle, seed,
                                                 follow_links, verbose)
    if label_mode == "binary" and len(names or []) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. '
                         f"Received: class_names={names}")
    buffer_size = batch_size * 8 if batch_size is not None else 1024
    num_classes = len(names) if names else 0

    def make(part_paths: list[str], part_labels: Any, part_shuffle: bool, which: str) -> Dataset:
        if not part_paths:
            raise ValueError(f"No {which}{what} files found in directory {directory}. Allowed formats: {formats}")
        dataset = _from_files(part_paths, part_labels, label_mode, num_classes, load, part_shuffle, buffer_size,
                              seed, batch_size if batch_elements else None)
        dataset.class_names = names
        dataset.file_paths = part_paths
        return dataset

    if subset == "both":
        train = make(*_split(paths, label_array, validation_split, "training"), shuffle, "training ")
        validation = make(*_split(paths, label_array, validation_split, "validation"), False, "validation ")
        return [train, validation]
    return make(*_split(paths, label_array, validation_split, subset), shuffle, "")


# --------------------------------------------------------------------------- images


def _import_pil() -> Any:
    try:
        from PIL import Image
    except ImportError as error:
        raise ImportError(
            f"image_dataset_from_directory decodes images with Pillow, which is not installed ({error}). "
            "Install it with: pip install torchstrategy[vision]  (or: pip install pillow)"
        ) from error
    return Image


def _crop_box(height: int, width: int, target_height: int, target_width: int) -> tuple[int, int, int, int]:
    """The centred crop with the target aspect ratio (keras.preprocessing.image.smart_resize's box)."""
    crop_height = max(min(height, int(float(width * target_height) / target_width)), 1)
    crop_width = max(min(width, int(float(height * target_width) / target_height)), 1)
    top = int(float(height - crop_height) / 2)
    left = int(float(width - crop_width) / 2)
    return top, left, crop_height, crop_width


def _decode(path: str, color_mode: str) -> np.ndarray:
    """uint8 (height, width, channels) pixels of one file, decoded the way tf.image.decode_image does.

    Grayscale from colour uses libpng's fixed-point weights for 0.299/0.587/0.114 rounded down, which
    is what TF's PNG decoder returns; a JPEG is converted to gray inside the JPEG decoder, as in TF.
    """
    image_module = _import_pil()
    try:
        with image_module.open(path) as image:
            image.seek(0)  # the first frame of an animation (expand_animations=False)
            if color_mode == "grayscale" and image.format == "JPEG":
                image.draft("L", image.size)
            if color_mode != "grayscale":
                return np.asarray(image.convert("RGB" if color_mode == "rgb" else "RGBA"), dtype=np.uint8)
            if image.mode in ("L", "LA"):
                return np.asarray(image.convert("L"), dtype=np.uint8)[:, :, None]
            rgb = np.asarray(image.convert("RGB"), dtype=np.int64)
    except (OSError, ValueError) as error:
        raise ValueError(f"Could not decode image file {path} ({error}). Remove it from the directory or replace it "
                         f"with a valid {', '.join(IMAGE_FORMATS)} file.") from error
    gray = (9797 * rgb[:, :, 0] + 19234 * rgb[:, :, 1] + 3737 * rgb[:, :, 2]) >> 15
    return gray.astype(np.uint8)[:, :, None]


def load_image(
    path: str, image_size: tuple[int, int], color_mode: str = "rgb", interpolation: str = "bilinear",
    crop_to_aspect_ratio: bool = False,
) -> torch.Tensor:
    """One image file as a (height, width, channels) tensor resized to `image_size` like Keras does.

    Bilinear gives float32 0-255 values; nearest keeps uint8, as tf.image.resize does. Resizing
    uses half-pixel centres without antialiasing (tf.image.resize's definition); with
    `crop_to_aspect_ratio` the centred crop of the target aspect ratio is resized.
    """
    tensor = torch.from_numpy(np.array(_decode(path, color_mode), copy=True))
    if crop_to_aspect_ratio:
        top, left, crop_height, crop_width = _crop_box(tensor.shape[0], tensor.shape[1], *image_size)
        tensor = tensor[top:top + crop_height, left:left + crop_width]
    batch = tensor.permute(2, 0, 1).unsqueeze(0)
    if interpolation == "bilinear":
        resized = torch.nn.functional.interpolate(batch.to(torch.float32), size=tuple(image_size), mode="bilinear",
                                                  align_corners=False, antialias=False)
    else:
        # nearest-exact samples floor((i + 0.5) * scale): TF's half-pixel nearest neighbour.
        resized = torch.nn.functional.interpolate(batch, size=tuple(image_size), mode="nearest-exact")
    return resized.squeeze(0).permute(1, 2, 0).contiguous()


def _check_format(format: str, fn: str) -> None:  # noqa: A002
    """Keras 3's `format`: 'tf' is a tf.data Dataset (what this returns); 'grain' is not available here."""
    if format != "tf":
        raise NotImplementedError(f"{fn}(format={format!r}) is not supported: only 'tf' (a tf.data Dataset).")


def image_dataset_from_directory(
    directory: str | os.PathLike,
    labels: Any = "inferred",
    label_mode: str | None = "int",
    class_names: Sequence[str] | None = None,
    color_mode: str = "rgb",
    batch_size: int | None = 32,
    image_size: int | tuple[int, int] = (256, 256),
    shuffle: bool = True,
    seed: int | None = None,
    validation_split: float | None = None,
    subset: str | None = None,
    interpolation: str = "bilinear",
    follow_links: bool = False,
    crop_to_aspect_ratio: bool = False,
    pad_to_aspect_ratio: bool = False,
    data_format: str | None = None,
    format: str = "tf",  # noqa: A002
    verbose: bool = True,
) -> Dataset | list[Dataset]:
    """A Dataset of `(images, labels)` batches from a folder of images, like `keras.utils.image_dataset_from_directory`.

    With `labels='inferred'` each subfolder of `directory` is a class (sorted names, or the order
    of `class_names`); files are taken sorted per folder, recursively, with the extensions of
    IMAGE_FORMATS. Images are float32 NHWC tensors of 0-255 values resized to `image_size`; labels
    are int32 (`'int'`), float32 one-hot (`'categorical'`) or float32 (1,) (`'binary'`). The
    dataset carries `.class_names` and `.file_paths`. `subset='both'` returns `[train, val]`.

    Which files land in which subset, and their order before the shuffle buffer, match Keras
    exactly (the same `np.random.RandomState(seed)` shuffle); the shuffle buffer of
    `batch_size * 8` elements is torchstrategy's (`Dataset.shuffle`), so the order inside it
    differs from TF's. Only 'bilinear' and 'nearest' interpolation are offered: their values
    match tf.image.resize (bilinear within 1e-4 on the 0-255 scale, nearest exactly); the other
    Keras methods are refused rather than approximated. PNG, BMP and GIF pixels decode exactly
    as in TF; JPEG pixels may differ by a few levels (up to 5 measured on noise images), since TF
    decodes with libjpeg's fast integer IDCT by default and Pillow with the accurate one (equal
    to TF's `dct_method='INTEGER_ACCURATE'`). Grayscale GIFs and RGBA JPEGs, which TF refuses to
    decode, are converted.

    Example:
        >>> train, val = image_dataset_from_directory(  # doctest: +SKIP
        ...     "photos", image_size=(64, 64), validation_split=0.2, subset="both", seed=1)
        >>> images, labels = next(iter(train))  # doctest: +SKIP
        >>> images.shape, train.class_names  # doctest: +SKIP
        (torch.Size([32, 64, 64, 3]), ['cats', 'dogs'])
    """
    _check_format(format, "image_dataset_from_directory")
    if pad_to_aspect_ratio:
        raise NotImplementedError("image_dataset_from_directory(pad_to_aspect_ratio=True) is not supported; use "
                                  "crop_to_aspect_ratio=True or plain resizing.")
    if data_format not in (None, "channels_last"):
        raise NotImplementedError("image_dataset_from_directory: only data_format='channels_last' is supported.")
    if color_mode not in _COLOR_CHANNELS:
        raise ValueError(f'`color_mode` must be one of {{"rgb", "rgba", "grayscale"}}. Received: color_mode={color_mode}')
    if isinstance(image_size, numbers.Integral) and not isinstance(image_size, bool):
        image_size = (int(image_size), int(image_size))
    elif (not isinstance(image_size, (list, tuple)) or len(image_size) != 2
          or not all(isinstance(side, numbers.Integral) and side > 0 for side in image_size)):
        raise ValueError(f"Invalid `image_size` value. Expected a tuple of 2 positive integers. "
                         f"Received: image_size={image_size}")
    size = (int(image_size[0]), int(image_size[1]))
    method = str(interpolation).lower()
    if method not in SUPPORTED_INTERPOLATIONS:
        known = "is a Keras method torchstrategy does not offer" if method in _KERAS_ONLY_INTERPOLATIONS else "is unknown"
        raise ValueError(f"Argument `interpolation` should be one of {SUPPORTED_INTERPOLATIONS} ({interpolation!r} "
                         f"{known}). Received: interpolation={interpolation}")
    _import_pil()  # a missing Pillow should fail here, not inside the first batch

    def load(path: str) -> torch.Tensor:
        return load_image(path, size, color_mode, method, crop_to_aspect_ratio)

    return _build(directory, labels, label_mode, class_names, IMAGE_FORMATS, "image", load, batch_size, shuffle,
                  seed, validation_split, subset, follow_links, verbose)


# --------------------------------------------------------------------------- text


def text_dataset_from_directory(
    directory: str | os.PathLike,
    labels: Any = "inferred",
    label_mode: str | None = "int",
    class_names: Sequence[str] | None = None,
    batch_size: int | None = 32,
    max_length: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    validation_split: float | None = None,
    subset: str | None = None,
    follow_links: bool = False,
    format: str = "tf",  # noqa: A002
    verbose: bool = True,
) -> Dataset | list[Dataset]:
    """A Dataset of `(texts, labels)` batches from a folder of `.txt` files, like Keras's loader.

    Files, classes, subsets and labels are chosen exactly as by `image_dataset_from_directory`.
    Each text is the file's raw bytes (`np.bytes_`, batched into a numpy bytes array, where
    tf.data gives a tf.string tensor), cut to its first `max_length` bytes when that is set.

    Example:
        >>> ds = text_dataset_from_directory("reviews", batch_size=2, shuffle=False)  # doctest: +SKIP
        >>> texts, labels = next(iter(ds))  # doctest: +SKIP
        >>> texts[0][:5], labels.tolist(), ds.class_names  # doctest: +SKIP
        (b'great', [0, 0], ['neg', 'pos'])
    """
    _check_format(format, "text_dataset_from_directory")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, numbers.Integral)
                                   or max_length < 0):
        raise ValueError(f"`max_length` must be a non-negative integer or None, got {max_length!r}.")

    def load(path: str) -> np.bytes_:
        with open(path, "rb") as source:
            content = source.read() if max_length is None else source.read(max_length)
        return np.bytes_(content)

    return _build(directory, labels, label_mode, class_names, TEXT_FORMATS, "text", load, batch_size, shuffle,
                  seed, validation_split, subset, follow_links, verbose)


# --------------------------------------------------------------------------- timeseries


def _check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"`{name}` must be an integer, got {value!r}.")
    return int(value)


def timeseries_dataset_from_array(
    data: Any,
    targets: Any,
    sequence_length: int,
    sequence_stride: int = 1,
    sampling_rate: int = 1,
    batch_size: int | None = 128,
    shuffle: bool = False,
    seed: int | None = None,
    start_index: int | None = None,
    end_index: int | None = None,
    format: str = "tf",  # noqa: A002
) -> Dataset:
    """A Dataset of sliding windows over `data` (and their targets), like `keras.utils.timeseries_dataset_from_array`.

    Window i starts at `start_index + p_i` with `p_i = i * sequence_stride` and holds the rows
    `p_i, p_i + sampling_rate, ...` (`sequence_length` of them) of `data[start_index:end_index]`;
    its target is `targets[start_index + p_i]`. As in Keras, the number of windows is
    `end - start - (sequence_length - 1) * sampling_rate`, capped by `len(targets)`, taken every
    `sequence_stride`. With `shuffle=True` the start positions are shuffled with
    `np.random.RandomState(seed)` exactly as Keras does, then a buffer of `batch_size * 8` shuffles
    again (torchstrategy's `Dataset.shuffle`, so that last order differs from TF's).

    Example:
        >>> ds = timeseries_dataset_from_array(np.arange(10), np.arange(10) * 10, sequence_length=3, batch_size=4)
        >>> windows, targets = next(iter(ds))
        >>> windows[1].tolist(), targets.tolist()
        ([1, 2, 3], [0, 10, 20, 30])
    """
    _check_format(format, "timeseries_dataset_from_array")
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= len(data):
            raise ValueError("`start_index` must be lower than the length of the data. Received: "
                             f"start_index={start_index}, for data of length {len(data)}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError("`end_index` must be higher than `start_index`. Received: "
                             f"start_index={start_index}, and end_index={end_index} ")
        if end_index >= len(data):
            raise ValueError("`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {len(data)}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    sequence_length = _check_positive_int("sequence_length", sequence_length)
    sampling_rate = _check_positive_int("sampling_rate", sampling_rate)
    sequence_stride = _check_positive_int("sequence_stride", sequence_stride)
    if sampling_rate <= 0:
        raise ValueError(f"`sampling_rate` must be higher than 0. Received: sampling_rate={sampling_rate}")
    if sampling_rate >= len(data):
        raise ValueError("`sampling_rate` must be lower than the length of the data. Received: "
                         f"sampling_rate={sampling_rate}, for data of length {len(data)}")
    if sequence_stride <= 0:
        raise ValueError(f"`sequence_stride` must be higher than 0. Received: sequence_stride={sequence_stride}")
    if sequence_stride >= len(data):
        raise ValueError("`sequence_stride` must be lower than the length of the data. Received: "
                         f"sequence_stride={sequence_stride}, for data of length {len(data)}")
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral)
                                   or batch_size < 1):
        raise ValueError(f"`batch_size` must be a positive integer or None, got {batch_size!r}.")
    start = start_index or 0
    end = len(data) if end_index is None else end_index

    num_windows = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num_windows = min(num_windows, len(targets))
    window_starts = np.arange(0, num_windows, sequence_stride, dtype="int32" if num_windows < 2**31 - 1 else "int64")
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(window_starts)

    steps = torch.as_tensor(np.asarray(data[start:end]))
    offsets = torch.arange(sequence_length, dtype=torch.int64) * sampling_rate
    starts = torch.from_numpy(window_starts.astype(np.int64))
    target_steps = None if targets is None else torch.as_tensor(np.asarray(targets[start:end]))

    def window(i: torch.Tensor) -> Any:
        first = starts[int(i)]
        rows = steps[first + offsets]
        return rows if target_steps is None else (rows, target_steps[first])

    dataset = Dataset.range(len(window_starts)).map(window)
    if batch_size is not None:
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 8, seed=seed)
        return dataset.batch(batch_size)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=1024, seed=seed)
    return dataset
