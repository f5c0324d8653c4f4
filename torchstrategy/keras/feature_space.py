"""`keras.utils.FeatureSpace`: structured-data preprocessing built from the preprocessing layers (Normalization,
Rescaling, Discretization, IntegerLookup/StringLookup, Hashing, HashedCrossing, CategoryEncoding): per-feature
encoding, crosses, `adapt` on a dataset, concat or dict output, the symbolic inputs and encoded features of a
model, config and `.keras` saving, as Keras 3's."""
from __future__ import annotations

import builtins
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy._machinery.eager import eager_outputs
from torchstrategy.keras.layers.base import Layer
from torchstrategy.nest import flatten

_MODULE = "keras.src.layers.preprocessing.feature_space"
_FEATURE_TYPES = ("float", "float_normalized", "float_rescaled", "float_discretized", "integer_categorical",
                  "string_categorical", "integer_hashed", "string_hashed")


def _entry(class_name: str, config: dict) -> dict:
    return {"module": _MODULE, "class_name": class_name, "config": config, "registered_name": class_name}


class TFDIdentity(Layer):
    """A plain float feature's preprocessor: passes the values on (Keras's class of this name)."""

    def call(self, inputs: Any) -> Any:
        return inputs


def _serialize_preprocessor(layer: Any) -> dict:
    if isinstance(layer, TFDIdentity):
        from torchstrategy.keras import keras_config

        entry = _entry("TFDIdentity", {"name": layer.name, "dtype": keras_config.dtype_policy_config(layer.dtype),
                                       "trainable": layer.trainable})
        entry["build_config"] = {"input_shape": [None, 1]}
        return entry
    from torchstrategy.keras import saving

    return saving.serialize_layer(layer)


def _deserialize_preprocessor(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry
    if entry.get("class_name") == "TFDIdentity":
        return TFDIdentity(**{k: v for k, v in (entry.get("config") or {}).items() if k in ("name", "trainable")})
    from torchstrategy.keras import saving

    return saving.deserialize_layer(entry)


class Cross:
    """A crossing of features, hashed into `crossing_dim` bins (FeatureSpace.cross)."""

    def __init__(self, feature_names: Any, crossing_dim: int, output_mode: str = "one_hot") -> None:
        if output_mode not in {"int", "one_hot"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot'}. "
                             f"Received: output_mode={output_mode}")
        self.feature_names = tuple(feature_names)
        self.crossing_dim = crossing_dim
        self.output_mode = output_mode

    @property
    def name(self) -> str:
        return "_X_".join(self.feature_names)

    def get_config(self) -> dict:
        return {"feature_names": self.feature_names, "crossing_dim": self.crossing_dim,
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config: dict) -> "Cross":
        return cls(**config)


class FeatureSpec:
    """One feature: its input dtype, its preprocessing layer and how it is encoded (FeatureSpace.feature; Keras's
    class `Feature`, the name its configs carry)."""

    def __init__(self, dtype: str, preprocessor: Any, output_mode: str) -> None:
        if output_mode not in {"int", "one_hot", "float"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'int', 'one_hot', "
                             f"'float'}}. Received: output_mode={output_mode}")
        self.dtype = dtype
        self.preprocessor = _deserialize_preprocessor(preprocessor)
        self.output_mode = output_mode

    def get_config(self) -> dict:
        return {"dtype": self.dtype, "preprocessor": _serialize_preprocessor(self.preprocessor),
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config: dict) -> "FeatureSpec":
        return cls(**config)


def _from_entry(entry: Any, kind: type, class_name: str) -> Any:
    """`entry` rebuilt as `kind` when it is the config entry Keras writes for it (class `class_name`)."""
    if isinstance(entry, dict) and entry.get("class_name") == class_name:
        return kind.from_config(entry["config"])
    return entry


def _name(name: Optional[str], kind: str) -> str:
    return name or _context.unique_name(kind)


def _as_value(x: Any) -> Any:
    """A feature's values as the layers take them: strings as a NumPy object array, numbers as a tensor (Python
    floats as float32 and ints as int32, as Keras converts them)."""
    if isinstance(x, torch.Tensor):
        return x
    array = x if isinstance(x, np.ndarray) else np.asarray(x)
    if array.dtype.kind in "USO":
        return array.astype(object)
    from torchstrategy.keras.ops._core import convert_to_tensor

    return convert_to_tensor(x if isinstance(x, (list, tuple, int, float)) else array)


def _rank(x: Any) -> int:
    return len(x.shape)


def _expand_last(x: Any) -> Any:
    return np.expand_dims(x, -1) if isinstance(x, np.ndarray) else x.unsqueeze(-1)


def _is_string(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in "USO"


def _dtype_name(x: Any) -> str:
    if _is_string(x) or getattr(x, "dtype", None) == "string":
        return "string"
    return str(x.dtype).replace("torch.", "")


class FeatureSpace(Layer):
    """Preprocesses and encodes a dict of structured features: each feature by its type (or a `FeatureSpec`), then
    crosses, then one vector (`output_mode='concat'`, features in sorted name order, crosses last) or a dict.

    >>> space = FeatureSpace({"size": "float_rescaled", "kind": FeatureSpace.integer_categorical(max_tokens=4)})
    >>> space.adapt({"size": [1.0, 2.0], "kind": [3, 5]})
    >>> space({"size": [1.0], "kind": [5]}).shape
    torch.Size([1, 4])
    """

    # ----- feature types ---------------------------------------------------------------------------------
    @classmethod
    def cross(cls, feature_names: Any, crossing_dim: int, output_mode: str = "one_hot") -> Cross:
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype: str, preprocessor: Any, output_mode: str) -> FeatureSpec:
        return FeatureSpec(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name: Optional[str] = None) -> FeatureSpec:
        name = _name(name, "float")
        return FeatureSpec("float32", TFDIdentity(dtype="float32", name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_rescaled(cls, scale: builtins.float = 1.0, offset: builtins.float = 0.0,
                       name: Optional[str] = None) -> FeatureSpec:
        from torchstrategy.keras.layers.preprocessing import Rescaling

        name = _name(name, "float_rescaled")
        return FeatureSpec("float32", Rescaling(scale=scale, offset=offset, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_normalized(cls, name: Optional[str] = None) -> FeatureSpec:
        from torchstrategy.keras.layers.preprocessing import Normalization

        name = _name(name, "float_normalized")
        return FeatureSpec("float32", Normalization(axis=-1, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_discretized(cls, num_bins: int, bin_boundaries: Any = None, output_mode: str = "one_hot",
                          name: Optional[str] = None) -> FeatureSpec:
        from torchstrategy.keras.layers.categorical import Discretization

        name = _name(name, "float_discretized")
        layer = Discretization(num_bins=num_bins, bin_boundaries=bin_boundaries, name=f"{name}_preprocessor")
        return FeatureSpec("float32", layer, output_mode)

    @classmethod
    def integer_categorical(cls, max_tokens: Optional[int] = None, num_oov_indices: int = 1,
                            output_mode: str = "one_hot", name: Optional[str] = None) -> FeatureSpec:
        from torchstrategy.keras.layers.preprocessing_text import IntegerLookup

        name = _name(name, "integer_categorical")
        layer = IntegerLookup(name=f"{name}_preprocessor", max_tokens=max_tokens, num_oov_indices=num_oov_indices)
        return FeatureSpec("int32", layer, output_mode)

    @classmethod
    def string_categorical(cls, max_tokens: Optional[int] = None, num_oov_indices: int = 1,
                           output_mode: str = "one_hot", name: Optional[str] = None) -> FeatureSpec:
        from torchstrategy.keras.layers.preprocessing_text import StringLookup

        name = _name(name, "string_categorical")
        layer = StringLookup(name=f"{name}_preprocessor", max_tokens=max_tokens, num_oov_indices=num_oov_indices)
        return FeatureSpec("string", layer, output_mode)

    @classmethod
    def string_hashed(cls, num_bins: int, output_mode: str = "one_hot", name: Optional[str] = None) -> FeatureSpec:
        from torchstrategy.keras.layers.hashing import Hashing

        name = _name(name, "string_hashed")
        return FeatureSpec("string", Hashing(name=f"{name}_preprocessor", num_bins=num_bins), output_mode)

    @classmethod
    def integer_hashed(cls, num_bins: int, output_mode: str = "one_hot", name: Optional[str] = None) -> FeatureSpec:
        from torchstrategy.keras.layers.hashing import Hashing

        name = _name(name, "integer_hashed")
        return FeatureSpec("int32", Hashing(name=f"{name}_preprocessor", num_bins=num_bins), output_mode)

    # ----- construction ----------------------------------------------------------------------------------
    def __init__(self, features: dict, output_mode: str = "concat", crosses: Any = None, crossing_dim: int = 32,
                 hashing_dim: int = 32, num_discretization_bins: int = 32, name: Optional[str] = None) -> None:
        super().__init__(name=name)
        if not features:
            raise ValueError("The `features` argument cannot be None or empty.")
        self.crossing_dim, self.hashing_dim = crossing_dim, hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.features = {key: self._standardize_feature(key, value) for key, value in features.items()}
        self.crosses = [self._standardize_cross(cross, set(features), crossing_dim) for cross in crosses or []]
        self.crosses_by_name = {cross.name: cross for cross in self.crosses}
        if output_mode not in {"dict", "concat"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of {'dict', 'concat'}. "
                             f"Received: output_mode={output_mode}")
        self.output_mode = output_mode
        from torchstrategy.keras.layers.hashing import HashedCrossing

        self.preprocessors = {key: f.preprocessor for key, f in self.features.items()}
        # the preprocessors are modules of this layer (in feature order), so adapted statistics save with it
        self._preprocessor_layers = torch.nn.ModuleList(list(self.preprocessors.values()))
        self.crossers = {c.name: HashedCrossing(c.crossing_dim, name=c.name) for c in self.crosses}
        self.one_hot_encoders: dict = {}
        self._is_adapted = False
        self.inputs: Optional[dict] = None
        self.encoded_features: Any = None

    def _standardize_feature(self, name: str, feature: Any) -> FeatureSpec:
        feature = _from_entry(feature, FeatureSpec, "Feature")
        if isinstance(feature, FeatureSpec):
            return feature
        if feature == "float_discretized":
            return self.float_discretized(name=name, num_bins=self.num_discretization_bins)
        if feature in ("integer_hashed", "string_hashed"):
            return getattr(self, feature)(self.hashing_dim, name=name)
        if feature in _FEATURE_TYPES:
            return getattr(self, feature)(name=name)
        raise ValueError(f"Invalid feature type: {feature}")

    @staticmethod
    def _standardize_cross(cross: Any, names: set, crossing_dim: Optional[int]) -> Cross:
        cross = _from_entry(cross, Cross, "Cross")
        if isinstance(cross, Cross):
            return cross
        if not crossing_dim:
            raise ValueError("When specifying `crosses`, the argument `crossing_dim` (dimensionality of the crossing "
                             "space) should be specified as well.")
        if any(key not in names for key in cross):
            raise ValueError("All features referenced in the `crosses` argument should be present in the "
                             f"`features` dict. Received unknown features: {cross}")
        return Cross(cross, crossing_dim=crossing_dim)

    # ----- adapting ----------------------------------------------------------------------------------------
    def _adaptable(self) -> list:
        from torchstrategy.keras.layers.preprocessing import Normalization
        from torchstrategy.keras.layers.preprocessing_text import TextVectorization

        names = []
        for name, layer in self.preprocessors.items():
            if isinstance(layer, Normalization) and layer.input_mean is not None:
                continue
            if isinstance(layer, TextVectorization) and layer.vocabulary_size() > 0:
                continue  # Keras: a TextVectorization given its vocabulary is not adapted again
            if hasattr(layer, "adapt"):
                names.append(name)
        return names

    def adapt(self, dataset: Any) -> None:
        """Adapts each feature's preprocessor (vocabularies, mean/variance, bin boundaries) to `dataset`: a
        tf.data Dataset of feature dicts, or a dict of arrays/lists."""
        from torchstrategy.data import Dataset

        if not isinstance(dataset, Dataset):
            if not isinstance(dataset, dict):
                raise ValueError("`adapt()` can only be called on a tf.data.Dataset or a dict of arrays/lists. "
                                 f"Received instead: {dataset} (of type {type(dataset)})")
            dataset = Dataset.from_tensor_slices({k: np.asarray(v) for k, v in dataset.items()})
        for name in self._adaptable():
            column = dataset.map(lambda element, key=name: element[key])
            first = next(iter(column))
            if _rank(first) == 0:  # unbatched scalars: batch them
                column = column.batch(32)
            if _rank(first) in (0, 1):
                column = column.map(_expand_last)
            self.preprocessors[name].adapt(column)
        self._is_adapted = True
        self._build()

    def _build(self) -> None:
        """Builds every preprocessor for (batch, 1) values (as Keras does once adapted) and the encoders."""
        for layer in self.preprocessors.values():
            if not layer.built or layer._build_input_shape is None:
                layer._maybe_build(np.empty((1, 1), dtype=object))
        self._build_encoders()
        self.built = True

    def _check_if_adapted(self) -> None:
        if not self._is_adapted:
            if self._adaptable():
                raise ValueError("You need to call `.adapt(dataset)` on the FeatureSpace before you can start "
                                 "using it.")
            self._is_adapted = True
        if not self.built:
            self._build()

    # ----- encoding ------------------------------------------------------------------------------------------
    def _cardinality(self, name: str, spec: Any) -> int:
        from torchstrategy.keras.layers.categorical import CategoryEncoding, Discretization
        from torchstrategy.keras.layers.hashing import HashedCrossing, Hashing
        from torchstrategy.keras.layers.preprocessing_text import IntegerLookup, StringLookup

        layer = self.preprocessors[name] if name in self.preprocessors else self.crossers[name]
        if isinstance(layer, (IntegerLookup, StringLookup)):
            return layer.vocabulary_size()
        if isinstance(layer, CategoryEncoding):
            return layer.num_tokens
        if isinstance(layer, Discretization):
            return layer.num_bins if layer.num_bins is not None else len(layer.bin_boundaries) + 1
        if isinstance(layer, (HashedCrossing, Hashing)):
            return layer.num_bins
        raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. However it isn't a standard feature and the "
                         "dimensionality of its output space is not known, thus it cannot be one-hot encoded. Try "
                         "using `output_mode='int'`.")

    def _names(self) -> list:
        return sorted(self.features) + sorted(self.crosses_by_name)

    def _spec(self, name: str) -> Any:
        return self.features[name] if name in self.features else self.crosses_by_name[name]

    def _build_encoders(self) -> None:
        """Makes the one-hot encoders (CategoryEncoding, multi_hot) of the one_hot features and crosses."""
        from torchstrategy.keras.layers.categorical import CategoryEncoding

        for name in self._names():
            if self._spec(name).output_mode == "one_hot" and name not in self.one_hot_encoders:
                self.one_hot_encoders[name] = CategoryEncoding(num_tokens=self._cardinality(name, self._spec(name)),
                                                               output_mode="multi_hot")

    def _encode(self, data: dict) -> Any:
        """Preprocesses, crosses and merges a dict of (batch, 1) values (tensors, arrays or KerasTensors)."""
        self._build_encoders()
        values = {name: self.preprocessors[name](data[name]) for name in data}
        for cross in self.crosses:
            values[cross.name] = self.crossers[cross.name]([values[n] for n in cross.feature_names])
        merged = {}
        for name in self._names():
            value = values[name]
            if self._spec(name).output_mode == "one_hot":
                dtype = _dtype_name(flatten(value)[0])
                if not dtype.startswith(("int", "uint")):
                    raise ValueError(f"Feature '{name}' has `output_mode='one_hot'`. Thus its preprocessor should "
                                     f"return an integer dtype. Instead it returns a {dtype} dtype.")
                value = self.one_hot_encoders[name](value)
            if self.output_mode == "concat":
                dtype = _dtype_name(value)
                if dtype.startswith(("int", "uint")) or dtype == "string":
                    raise ValueError(f"Cannot concatenate features because feature '{name}' has not been encoded "
                                     f"(it has dtype {dtype}). Consider using `output_mode='dict'`.")
            merged[name] = value
        if self.output_mode == "dict":
            return merged
        from torchstrategy.keras import ops

        return ops.concatenate([merged[name] for name in self._names()], axis=-1)

    def __call__(self, data: Any) -> Any:
        """Encodes a dict of features (one example of scalars, or a batch); returns a tensor or a dict."""
        self._check_if_adapted()
        if not isinstance(data, dict):
            raise ValueError(f"A FeatureSpace can only be called with a dict. Received: data={data} (of type "
                             f"{type(data)}")
        data = {key: _as_value(value) for key, value in data.items()}
        rebatched = False
        for name, value in data.items():
            if _rank(value) == 0:
                data[name] = value.reshape(1, 1)
                rebatched = True
            elif _rank(value) == 1:
                data[name] = _expand_last(value)
        merged = self._encode(data)
        if rebatched:
            if self.output_mode == "concat":
                if merged.shape[0] != 1:
                    raise ValueError(f"Expected rebatched data to have batch size 1. Received: shape={merged.shape}")
                merged = merged.squeeze(0)
            else:
                merged = {k: v.squeeze(0) if v.dim() == 2 and v.shape[0] == 1 else v for k, v in merged.items()}
        return eager_outputs(merged)

    # ----- the symbolic model side ---------------------------------------------------------------------------
    def get_inputs(self) -> dict:
        """A keras.Input of shape (1,) per feature, named after it (the inference model's inputs)."""
        self._check_if_adapted()
        if self.inputs is None:
            from torchstrategy.keras.layers.input_layer import Input

            self.inputs = {name: Input(shape=(1,), dtype=f.dtype, name=name) for name, f in self.features.items()}
        return self.inputs

    def get_encoded_features(self) -> Any:
        """The encoded features computed from `get_inputs()`: what a model's layers take (a KerasTensor, or a
        dict of them in dict mode)."""
        self._check_if_adapted()
        if self.encoded_features is None:
            self.encoded_features = self._encode(self.get_inputs())
        return self.encoded_features

    # ----- config and saving ---------------------------------------------------------------------------------
    def get_config(self) -> dict:
        return {"features": {name: _entry("Feature", f.get_config()) for name, f in self.features.items()},
                "output_mode": self.output_mode,
                "crosses": [_entry("Cross", {**c.get_config(), "feature_names": list(c.feature_names)})
                            for c in self.crosses],
                "crossing_dim": self.crossing_dim, "hashing_dim": self.hashing_dim,
                "num_discretization_bins": self.num_discretization_bins}

    @classmethod
    def from_config(cls, config: dict) -> "FeatureSpace":
        """A FeatureSpace from `get_config()`; its preprocessors are built for (batch, 1) values, so a saved file's
        adapted statistics load into them."""
        space = cls(**config)
        space._is_adapted = True
        space._build()
        return space

    def save(self, filepath: str) -> None:
        """Writes this FeatureSpace to a `.keras` file; `keras.models.load_model` reads it back."""
        from torchstrategy.keras import saving

        saving.save_layer(self, filepath)
