"""`keras.preprocessing.image`'s legacy iterators: Iterator (a PyDataset of index batches), NumpyArrayIterator
(`ImageDataGenerator.flow`) and DirectoryIterator (`flow_from_directory`), with Keras 3.15's seeding and order."""
from __future__ import annotations

import os
import threading
import warnings
from typing import Any, Optional, Sequence

import numpy as np

from torchstrategy import _context
from torchstrategy.keras.backend import floatx
from torchstrategy.keras.preprocessing.image import array_to_img, img_to_array, load_img
from torchstrategy.keras.py_dataset import PyDataset

_SUBSETS = ("training", "validation")


def _default_format(data_format: Optional[str], dtype: Any) -> tuple:
    return (data_format or _context.keras_setting("image_data_format")), (dtype or floatx())


class Iterator(PyDataset):
    """Base class of the image iterators: `n` samples read in batches of `batch_size` (the last one short),
    shuffled again after each epoch when `shuffle`; with a `seed`, batch k draws from NumPy's global
    generator seeded with `seed + batches seen`. Subclasses define `_get_batches_of_transformed_samples`."""

    white_list_formats = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")

    def __init__(self, n: int, batch_size: int, shuffle: bool, seed: Optional[int], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.n = n
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.batch_index = 0
        self.total_batches_seen = 0
        self.lock = threading.Lock()
        self.index_array = None
        self.index_generator = self._flow_index()

    def _set_index_array(self) -> None:
        self.index_array = np.random.permutation(self.n) if self.shuffle else np.arange(self.n)

    def __getitem__(self, idx: int) -> Any:
        if idx >= len(self):
            raise ValueError(f"Asked to retrieve element {idx}, but the Sequence has length {len(self)}")
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        index_array = self.index_array[self.batch_size * idx:self.batch_size * (idx + 1)]
        return self._get_batches_of_transformed_samples(index_array)

    def __len__(self) -> int:
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self) -> None:
        """Draws the next epoch's order (a new permutation when shuffling)."""
        self._set_index_array()

    def reset(self) -> None:
        """Restarts `next()` iteration at the first batch."""
        self.batch_index = 0

    def _flow_index(self) -> Any:
        self.reset()
        while True:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            current = 0 if self.n == 0 else (self.batch_index * self.batch_size) % self.n
            self.batch_index = self.batch_index + 1 if self.n > current + self.batch_size else 0
            self.total_batches_seen += 1
            yield self.index_array[current:current + self.batch_size]

    def __iter__(self) -> "Iterator":
        return self

    def __next__(self) -> Any:
        with self.lock:
            index_array = next(self.index_generator)
        return self._get_batches_of_transformed_samples(index_array)

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define _get_batches_of_transformed_samples.")


def _transform_one(generator: Any, x: np.ndarray) -> np.ndarray:
    params = generator.get_random_transform(x.shape)
    return generator.standardize(generator.apply_transform(x, params))


def _save_batch(batch_x: np.ndarray, index_array: np.ndarray, data_format: str, save_to_dir: str,
                save_prefix: str, save_format: str, hash_range: float) -> None:
    for i, j in enumerate(index_array):
        img = array_to_img(batch_x[i], data_format, scale=True)
        name = f"{save_prefix}_{j}_{np.random.randint(hash_range)}.{save_format}"
        img.save(os.path.join(save_to_dir, name))


class NumpyArrayIterator(Iterator):
    """Batches of `(x, y[, sample_weight])` from rank-4 arrays, each image augmented and standardized by
    `image_data_generator`; `x` may be `(images, extra_array_or_list)` (extras are batched untouched)."""

    def __init__(self, x: Any, y: Any, image_data_generator: Any, batch_size: int = 32, shuffle: bool = False,
                 sample_weight: Any = None, seed: Optional[int] = None, data_format: Optional[str] = None,
                 save_to_dir: Optional[str] = None, save_prefix: str = "", save_format: str = "png",
                 subset: Optional[str] = None, ignore_class_split: bool = False, dtype: Any = None) -> None:
        data_format, self.dtype = _default_format(data_format, dtype)
        x_misc: list = []
        if isinstance(x, (tuple, list)):
            x_misc = [np.asarray(x[1])] if not isinstance(x[1], list) else [np.asarray(xx) for xx in x[1]]
            x = x[0]
            for extra in x_misc:
                if len(x) != len(extra):
                    raise ValueError(f"All of the arrays in `x` should have the same length. Found a pair with: "
                                     f"len(x[0]) = {len(x)}, len(x[?]) = {len(extra)}")
        if y is not None and len(x) != len(y):
            raise ValueError(f"`x` (images tensor) and `y` (labels) should have the same length. Found: "
                             f"x.shape = {np.asarray(x).shape}, y.shape = {np.asarray(y).shape}")
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError(f"`x` (images tensor) and `sample_weight` should have the same length. Found: "
                             f"x.shape = {np.asarray(x).shape}, sample_weight.shape = "
                             f"{np.asarray(sample_weight).shape}")
        if subset is not None:
            if subset not in _SUBSETS:
                raise ValueError(f'Invalid subset name: {subset}; expected "training" or "validation".')
            split_idx = int(len(x) * image_data_generator._validation_split)
            y = None if y is None else np.asarray(y)
            if (y is not None and not ignore_class_split
                    and not np.array_equal(np.unique(y[:split_idx]), np.unique(y[split_idx:]))):
                raise ValueError("Training and validation subsets have different number of classes after the "
                                 "split. If your numpy arrays are sorted by the label, you might want to shuffle "
                                 "them (or pass ignore_class_split=True).")
            part = slice(None, split_idx) if subset == "validation" else slice(split_idx, None)
            x = x[part]
            x_misc = [np.asarray(extra[part]) for extra in x_misc]
            y = None if y is None else y[part]
            sample_weight = None if sample_weight is None else np.asarray(sample_weight)[part]
        self.x = np.asarray(x, dtype=self.dtype)
        self.x_misc = x_misc
        if self.x.ndim != 4:
            raise ValueError(f"Input data in `NumpyArrayIterator` should have rank 4. You passed an array with "
                             f"shape {self.x.shape}")
        channels_axis = 3 if data_format == "channels_last" else 1
        if self.x.shape[channels_axis] not in (1, 3, 4):
            warnings.warn(f'NumpyArrayIterator is set to use the data format convention "{data_format}" (channels '
                          f"on axis {channels_axis}), i.e. expected either 1, 3, or 4 channels on axis "
                          f"{channels_axis}. However, it was passed an array with shape {self.x.shape} "
                          f"({self.x.shape[channels_axis]} channels).")
        self.y = None if y is None else np.asarray(y)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.image_data_generator = image_data_generator
        self.data_format = data_format
        self.save_to_dir = save_to_dir
        self.save_prefix = save_prefix
        self.save_format = save_format
        super().__init__(self.x.shape[0], batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        batch_x = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.dtype)
        for i, j in enumerate(index_array):
            batch_x[i] = _transform_one(self.image_data_generator, self.x[j].astype(self.dtype))
        if self.save_to_dir:
            _save_batch(batch_x, index_array, self.data_format, self.save_to_dir, self.save_prefix,
                        self.save_format, 1e4)
        extras = [extra[index_array] for extra in self.x_misc]
        output: tuple = (batch_x if not extras else [batch_x] + extras,)
        if self.y is None:
            return output[0]
        output += (self.y[index_array],)
        if self.sample_weight is not None:
            output += (self.sample_weight[index_array],)
        return output


def _valid_files(directory: str, formats: Sequence[str], follow_links: bool) -> list:
    """(root, name) of every image file under `directory`, folders and names sorted, as Keras lists them."""
    found = []
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links), key=lambda entry: entry[0]):
        for name in sorted(files):
            if name.lower().endswith(".tiff"):
                warnings.warn('Using ".tiff" files with multiple bands will cause distortion. Please verify your '
                              "output.")
            if name.lower().endswith(tuple(formats)):
                found.append((root, name))
    return found


def _image_shape(target_size: tuple, color_mode: str, data_format: str) -> tuple:
    channels = {"rgba": 4, "rgb": 3, "grayscale": 1}[color_mode]
    return target_size + (channels,) if data_format == "channels_last" else (channels,) + target_size


def file_batch(owner: Any, index_array: np.ndarray) -> Any:
    """A batch `(x, y[, sample_weight])` of the image files `owner.filepaths[index_array]`, loaded, augmented
    and standardized, with labels as `owner.class_mode` asks (shared by the directory and dataframe readers)."""
    batch_x = np.zeros((len(index_array),) + owner.image_shape, dtype=owner.dtype)
    paths = owner.filepaths
    for i, j in enumerate(index_array):
        img = load_img(paths[j], color_mode=owner.color_mode, target_size=owner.target_size,
                                   interpolation=owner.interpolation, keep_aspect_ratio=owner.keep_aspect_ratio)
        x = img_to_array(img, data_format=owner.data_format)
        img.close()
        batch_x[i] = _transform_one(owner.image_data_generator, x) if owner.image_data_generator else x
    if owner.save_to_dir:
        _save_batch(batch_x, index_array, owner.data_format, owner.save_to_dir, owner.save_prefix,
                    owner.save_format, 1e7)
    mode = owner.class_mode
    if mode == "input":
        batch_y = batch_x.copy()
    elif mode in ("binary", "sparse"):
        batch_y = np.asarray([owner.classes[j] for j in index_array], dtype=owner.dtype)
    elif mode == "categorical":
        batch_y = np.zeros((len(batch_x), len(owner.class_indices)), dtype=owner.dtype)
        for i, j in enumerate(index_array):
            batch_y[i, owner.classes[j]] = 1.0
    elif mode == "multi_output":
        batch_y = [output[index_array] for output in owner.labels]
    elif mode == "raw":
        batch_y = owner.labels[index_array]
    else:
        return batch_x
    if owner.sample_weight is None:
        return batch_x, batch_y
    return batch_x, batch_y, owner.sample_weight[index_array]


def set_file_processing_attrs(owner: Any, image_data_generator: Any, target_size: Sequence[int], color_mode: str,
                              data_format: str, save_to_dir: Optional[str], save_prefix: str, save_format: str,
                              subset: Optional[str], interpolation: str, keep_aspect_ratio: bool) -> None:
    """Sets on `owner` (a file-reading iterator) how files become a batch and its validation-split range."""
    owner.image_data_generator = image_data_generator
    owner.target_size = tuple(target_size)
    owner.keep_aspect_ratio = keep_aspect_ratio
    if color_mode not in ("rgb", "rgba", "grayscale"):
        raise ValueError(f'Invalid color mode: {color_mode}; expected "rgb", "rgba", or "grayscale".')
    owner.color_mode = color_mode
    owner.data_format = data_format
    owner.image_shape = _image_shape(owner.target_size, color_mode, data_format)
    owner.save_to_dir = save_to_dir
    owner.save_prefix = save_prefix
    owner.save_format = save_format
    owner.interpolation = interpolation
    split = None
    if subset is not None:
        validation_split = image_data_generator._validation_split
        if subset == "validation":
            split = (0, validation_split)
        elif subset == "training":
            split = (validation_split, 1)
        else:
            raise ValueError(f'Invalid subset name: {subset};expected "training" or "validation"')
    owner.split = split
    owner.subset = subset


class DirectoryIterator(Iterator):
    """Batches of images read from `directory/<class>/**/<image file>` (classes: sorted subfolders, or
    `classes`), resized to `target_size`, augmented and standardized by `image_data_generator`."""

    allowed_class_modes = {"categorical", "binary", "sparse", "input", None}

    def __init__(self, directory: str, image_data_generator: Any, target_size: Sequence[int] = (256, 256),
                 color_mode: str = "rgb", classes: Optional[Sequence[str]] = None,
                 class_mode: Optional[str] = "categorical", batch_size: int = 32, shuffle: bool = True,
                 seed: Optional[int] = None, data_format: Optional[str] = None, save_to_dir: Optional[str] = None,
                 save_prefix: str = "", save_format: str = "png", follow_links: bool = False,
                 subset: Optional[str] = None, interpolation: str = "nearest", keep_aspect_ratio: bool = False,
                 dtype: Any = None) -> None:
        data_format, dtype = _default_format(data_format, dtype)
        self.set_processing_attrs(image_data_generator, target_size, color_mode, data_format, save_to_dir,
                                  save_prefix, save_format, subset, interpolation, keep_aspect_ratio)
        if class_mode not in self.allowed_class_modes:
            raise ValueError(f"Invalid class_mode: {class_mode}; expected one of: {self.allowed_class_modes}")
        if not os.path.isdir(directory):
            raise ValueError(f"flow_from_directory: {directory!r} is not a directory; pass a folder holding one "
                             "subfolder of images per class.")
        self.directory = directory
        self.class_mode = class_mode
        self.dtype = dtype
        if not classes:
            classes = [d for d in sorted(os.listdir(directory)) if os.path.isdir(os.path.join(directory, d))]
        self.num_classes = len(classes)
        self.class_indices = dict(zip(classes, range(len(classes))))
        labels: list = []
        self.filenames = []
        for name in classes:
            folder = os.path.join(directory, name)
            files = _valid_files(folder, self.white_list_formats, follow_links)
            if self.split:
                files = files[int(self.split[0] * len(files)):int(self.split[1] * len(files))]
            for root, fname in files:
                labels.append(self.class_indices[name])
                self.filenames.append(os.path.join(name, os.path.relpath(os.path.join(root, fname), folder)))
        self.samples = len(self.filenames)
        self.classes = np.asarray(labels, dtype="int32")
        print(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        self._filepaths = [os.path.join(directory, fname) for fname in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    def set_processing_attrs(self, image_data_generator: Any, target_size: Sequence[int], color_mode: str,
                             data_format: str, save_to_dir: Optional[str], save_prefix: str, save_format: str,
                             subset: Optional[str], interpolation: str, keep_aspect_ratio: bool) -> None:
        """Stores how files become a batch (size, colour mode, layout, saving, the validation-split range)."""
        set_file_processing_attrs(self, image_data_generator, target_size, color_mode, data_format, save_to_dir,
                                  save_prefix, save_format, subset, interpolation, keep_aspect_ratio)

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        return file_batch(self, index_array)

    @property
    def filepaths(self) -> list:
        """Absolute paths of the image files, in sample order."""
        return self._filepaths

    @property
    def labels(self) -> np.ndarray:
        """The class index of every sample."""
        return self.classes

    @property
    def sample_weight(self) -> None:
        """Always None (a directory carries no sample weights)."""
        return None
