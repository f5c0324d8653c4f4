"""`ImageDataGenerator.flow_from_dataframe`'s reader (Keras 3.15's DataFrameIterator): image files named by a
pandas DataFrame column, labelled by another, with Keras's checks, class filtering and split."""
from __future__ import annotations

import os
import warnings
from typing import Any, Optional, Sequence

import numpy as np

from torchstrategy.keras.preprocessing.image_iterators import (
    Iterator,
    _default_format,
    file_batch,
    set_file_processing_attrs,
)


def _require_pandas() -> Any:
    try:
        import pandas
    except ImportError as error:
        raise ImportError(f"flow_from_dataframe reads a pandas DataFrame, and pandas is not installed ({error}). "
                          "Install it with: pip install pandas") from error
    return pandas


def _validate_filename(path: str, formats: Sequence[str]) -> bool:
    return path.lower().endswith(tuple(formats)) and os.path.isfile(path)


class DataFrameIterator(Iterator):
    """Batches of the images `dataframe[x_col]` (joined to `directory`) with labels from `y_col` as
    `class_mode` asks ('categorical', 'binary', 'sparse', 'input', 'multi_output', 'raw' or None)."""

    allowed_class_modes = {"binary", "categorical", "input", "multi_output", "raw", "sparse", None}

    def __init__(self, dataframe: Any, directory: Optional[str] = None, image_data_generator: Any = None,
                 x_col: str = "filename", y_col: Any = "class", weight_col: Optional[str] = None,
                 target_size: Sequence[int] = (256, 256), color_mode: str = "rgb",
                 classes: Optional[Sequence[str]] = None, class_mode: Optional[str] = "categorical",
                 batch_size: int = 32, shuffle: bool = True, seed: Optional[int] = None,
                 data_format: Optional[str] = "channels_last", save_to_dir: Optional[str] = None,
                 save_prefix: str = "", save_format: str = "png", subset: Optional[str] = None,
                 interpolation: str = "nearest", keep_aspect_ratio: bool = False, dtype: Any = None,
                 validate_filenames: bool = True) -> None:
        _require_pandas()
        data_format, dtype = _default_format(data_format, dtype)
        set_file_processing_attrs(self, image_data_generator, target_size, color_mode, data_format, save_to_dir,
                                  save_prefix, save_format, subset, interpolation, keep_aspect_ratio)
        df = dataframe.copy()
        self.directory = directory or ""
        self.class_mode = class_mode
        self.dtype = dtype
        self._check_params(df, x_col, y_col, weight_col, classes)
        if validate_filenames:
            df = self._filter_valid_filepaths(df, x_col)
        labelled = class_mode not in ("input", "multi_output", "raw", None)
        if labelled:
            df, classes = self._filter_classes(df, y_col, classes)
            self.class_indices = dict(zip(classes, range(len(classes))))
        if self.split:
            start, stop = int(self.split[0] * len(df)), int(self.split[1] * len(df))
            df = df.iloc[start:stop, :]
        if labelled:
            self.classes = [[self.class_indices[c] for c in label] if isinstance(label, (list, tuple))
                            else self.class_indices[label] for label in df[y_col]]
        self.filenames = df[x_col].tolist()
        self._sample_weight = df[weight_col].values if weight_col else None
        if class_mode == "multi_output":
            self._targets = [np.array(df[col].tolist()) for col in y_col]
        if class_mode == "raw":
            self._targets = df[y_col].values
        self.samples = len(self.filenames)
        checked = "validated" if validate_filenames else "non-validated"
        suffix = f" belonging to {len(classes)} classes." if labelled else "."
        print(f"Found {self.samples} {checked} image filenames{suffix}")
        self._filepaths = [os.path.join(self.directory, name) for name in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    def _check_params(self, df: Any, x_col: str, y_col: Any, weight_col: Optional[str], classes: Any) -> None:
        mode = self.class_mode
        if mode not in self.allowed_class_modes:
            raise ValueError(f"Invalid class_mode: {mode}; expected one of: {self.allowed_class_modes}")
        if mode == "multi_output" and not isinstance(y_col, list):
            raise TypeError(f'If class_mode="{mode}", y_col must be a list. Received {type(y_col).__name__}.')
        if not all(isinstance(v, str) for v in df[x_col]):
            raise TypeError(f"All values in column x_col={x_col} must be strings.")
        if mode in ("binary", "sparse") and not all(isinstance(v, str) for v in df[y_col]):
            raise TypeError(f'If class_mode="{mode}", y_col="{y_col}" column values must be strings.')
        if mode == "binary":
            if classes and len(set(classes)) != 2:
                raise ValueError(f'If class_mode="binary" there must be 2 classes. {len(set(classes))} class/es '
                                 "were given.")
            if not classes and df[y_col].nunique() != 2:
                raise ValueError(f'If class_mode="binary" there must be 2 classes. Found '
                                 f"{df[y_col].nunique()} classes.")
        if mode == "categorical" and not all(isinstance(v, (str, list, tuple)) for v in df[y_col]):
            raise TypeError(f'If class_mode="{mode}", y_col="{y_col}" column values must be type string, list or '
                            "tuple.")
        if classes and mode in ("input", "multi_output", "raw", None):
            warnings.warn(f'`classes` will be ignored given the class_mode="{mode}"')
        if weight_col and not issubclass(df[weight_col].dtype.type, np.number):
            raise TypeError(f"Column weight_col={weight_col} must be numeric.")

    @staticmethod
    def _filter_classes(df: Any, y_col: str, classes: Any) -> tuple:
        df = df.copy()

        def keep(labels: Any) -> Any:
            if isinstance(labels, (list, tuple)):
                return [c for c in labels if c in classes] or None
            if isinstance(labels, str):
                return labels if labels in classes else None
            raise TypeError(f"Expect string, list or tuple but found {type(labels)} in {y_col} column ")

        if classes:
            classes = list(dict.fromkeys(classes))
            df[y_col] = df[y_col].apply(keep)
        else:
            found: set = set()
            for value in df[y_col]:
                found.update(value) if isinstance(value, (list, tuple)) else found.add(value)
            classes = sorted(found)
        return df.dropna(subset=[y_col]), classes

    def _filter_valid_filepaths(self, df: Any, x_col: str) -> Any:
        mask = df[x_col].map(lambda name: _validate_filename(os.path.join(self.directory, name),
                                                             self.white_list_formats))
        invalid = int((~mask).sum())
        if invalid:
            warnings.warn(f'Found {invalid} invalid image filename(s) in x_col="{x_col}". These filename(s) will be '
                          "ignored.")
        return df[mask]

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        return file_batch(self, index_array)

    @property
    def filepaths(self) -> list:
        """Paths of the image files, in sample order."""
        return self._filepaths

    @property
    def labels(self) -> Any:
        """The targets ('raw' / 'multi_output') or class indices of every sample."""
        return self._targets if self.class_mode in ("multi_output", "raw") else self.classes

    @property
    def sample_weight(self) -> Any:
        """The `weight_col` values, or None."""
        return self._sample_weight
