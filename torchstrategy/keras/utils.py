"""`keras.utils`: the data helpers scripts call (to_categorical, normalize, set_random_seed, get_file).
`get_file`, `SidecarEvaluator` and `experimental.DatasetCreator` live in their own modules and are re-exported here."""
from __future__ import annotations

import types
from typing import Any, Optional

import numpy as np

from torchstrategy.keras.dataset_creator import DatasetCreator
from torchstrategy.keras.audio_dataset import audio_dataset_from_directory  # noqa: F401  (keras.utils)
from torchstrategy.keras.dataset_utils import (  # noqa: F401  (keras.utils.*_dataset_from_*)
    image_dataset_from_directory,
    text_dataset_from_directory,
    timeseries_dataset_from_array,
)
from torchstrategy.keras.feature_space import FeatureSpace  # noqa: F401  (keras.utils.FeatureSpace)
from torchstrategy.keras.file_utils import get_file  # noqa: F401  (keras.utils.get_file)
from torchstrategy.keras.preprocessing.image import (  # noqa: F401  (keras.utils.load_img, ...)
    array_to_img,
    img_to_array,
    load_img,
    save_img,
)
from torchstrategy.keras.preprocessing.sequence import pad_sequences  # noqa: F401  (keras.utils.pad_sequences)
from torchstrategy.keras.sidecar_evaluator import SidecarEvaluator  # noqa: F401  (keras.utils.SidecarEvaluator)
from torchstrategy.random import set_seed as set_random_seed  # noqa: F401  (keras.utils.set_random_seed)
from torchstrategy.keras.object_registration import (  # noqa: F401  (keras.utils's copies of keras.saving's names)
    CustomObjectScope, custom_object_scope, get_custom_objects, get_registered_name, get_registered_object,
    register_keras_serializable,
)
from torchstrategy.keras.serialization_lib import deserialize_keras_object, serialize_keras_object  # noqa: F401
from torchstrategy.keras import legacy_serialization as legacy  # noqa: F401  (keras.utils.legacy)
from torchstrategy._machinery.lazy import mark_namespace
from torchstrategy.keras import bounding_boxes  # noqa: F401  (keras.utils.bounding_boxes)
from torchstrategy.keras.py_dataset import PyDataset, Sequence  # noqa: F401  (keras.utils.PyDataset / Sequence)
from torchstrategy.keras.dataset_splitting import split_dataset  # noqa: F401  (keras.utils.split_dataset)
from torchstrategy.keras.model_utils import (  # noqa: F401  (keras.utils helpers around models and data)
    Config, clear_session, get_source_inputs, is_keras_tensor, pack_x_y_sample_weight, standardize_dtype,
    unpack_x_y_sample_weight,
)
from torchstrategy.keras.model_visualization import model_to_dot, plot_model  # noqa: F401
from torchstrategy.keras.progress import (  # noqa: F401  (keras.utils.Progbar, interactive logging)
    Progbar, disable_interactive_logging, enable_interactive_logging, is_interactive_logging_enabled,
)


def to_categorical(x: Any, num_classes: Optional[int] = None) -> np.ndarray:
    """One-hot encodes integer class labels; a trailing axis of size 1 is dropped as Keras does.

    >>> to_categorical([0, 2], num_classes=3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    labels = np.asarray(x, dtype="int64")
    shape = labels.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    labels = labels.reshape(-1)
    if labels.size and labels.min() < 0:
        raise ValueError(f"to_categorical needs non-negative class indices; found {labels.min()}.")
    num_classes = int(labels.max()) + 1 if num_classes is None else int(num_classes)
    if labels.size and labels.max() >= num_classes:
        raise ValueError(f"Label {labels.max()} does not fit num_classes={num_classes}.")
    out = np.zeros((labels.size, num_classes), dtype="float64")  # float64, as Keras 3.15 returns
    out[np.arange(labels.size), labels] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x: Any, axis: int = -1, order: int = 2) -> np.ndarray:
    """Scales `x` to unit `order`-norm along `axis`."""
    x = np.asarray(x, dtype="float32")
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


experimental = types.SimpleNamespace(DatasetCreator=DatasetCreator)  # keras.utils.experimental
# keras.utils.bounding_boxes lives in keras/bounding_boxes.py: mark it as that namespace, so that a Keras name it
# lacks (affine_transform, ...) raises the manifest-aware error like every other namespace
mark_namespace(bounding_boxes, ("keras.utils.bounding_boxes", "tf.keras.utils.bounding_boxes"))
