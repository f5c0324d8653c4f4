"""Keras 2's HDF5 file (`.h5`/`.hdf5`, full model or weights only): `model_config`/`training_config` JSON
attributes, `model_weights/<layer>/.../<weight>` datasets listed by `layer_names`/`weight_names`, `optimizer_weights`."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Optional

import numpy as np

from torchstrategy.formats.base import HDF5_MAGIC, FileFormat, FormatError


@dataclass
class LegacyH5:
    """A legacy Keras file: configs (None for weights only), [(layer name, [(weight name, array)])] in the
    file's layer order, [(name, array)] optimizer weights, and the root attributes (backend, keras_version)."""

    model_config: Optional[dict]
    training_config: Optional[dict]
    layers: list
    optimizer_weights: list = field(default_factory=list)
    attrs: dict = field(default_factory=dict)


def _text(value: Any) -> str:
    return value.decode("utf8") if isinstance(value, bytes) else str(value)


def _names(attrs: Any, key: str) -> list[str]:
    if key not in attrs:
        return []
    return [_text(v) for v in np.asarray(attrs[key]).reshape(-1).tolist()]


def is_legacy_h5(head: bytes, path: str) -> bool:
    """An HDF5 file with Keras 2's `layer_names` (weights only) or `model_weights` (full model)."""
    if not head.startswith(HDF5_MAGIC):
        return False
    import h5py

    try:
        with h5py.File(path, "r") as handle:
            return "layer_names" in handle.attrs or "model_weights" in handle
    except OSError:
        return False


def read(path: str) -> LegacyH5:
    """Reads a whole legacy file: every layer's weights in `weight_names` order."""
    import h5py

    try:
        handle = h5py.File(path, "r")
    except OSError as error:
        raise FormatError(f"'{path}' is not a readable HDF5 file ({error}).") from None
    with handle:
        root = handle["model_weights"] if "model_weights" in handle else handle
        if "layer_names" not in root.attrs:
            raise FormatError(f"'{path}' is an HDF5 file but not a Keras one: it has no 'layer_names' attribute.")
        layers = []
        for layer_name in _names(root.attrs, "layer_names"):
            group = root[layer_name]
            layers.append((layer_name, [(w, np.array(group[w])) for w in _names(group.attrs, "weight_names")]))
        optimizer = []
        if "optimizer_weights" in handle:
            group = handle["optimizer_weights"]
            optimizer = [(w, np.array(group[w])) for w in _names(group.attrs, "weight_names")]
        configs = {}
        for key in ("model_config", "training_config"):
            configs[key] = json.loads(_text(handle.attrs[key])) if key in handle.attrs else None
        attrs = {k: _text(handle.attrs[k]) for k in ("backend", "keras_version") if k in handle.attrs}
    return LegacyH5(configs["model_config"], configs["training_config"], layers, optimizer, attrs)


def _string_array(values: list[str]) -> np.ndarray:
    import h5py

    # Keras 3 writes variable-length strings (an empty list as an empty float array); Keras 2 wrote bytes: both read
    return np.array(values, dtype=h5py.string_dtype()) if values else np.array([], dtype="float64")


def write(handle: BinaryIO, content: LegacyH5) -> None:
    """Writes Keras's legacy layout: a full model when `model_config` is set, else weights only at the root."""
    import h5py

    with h5py.File(handle, "w") as out:
        for key, value in content.attrs.items():
            out.attrs[key] = value
        root = out
        if content.model_config is not None:
            out.attrs["model_config"] = json.dumps(content.model_config)
            if content.training_config is not None:
                out.attrs["training_config"] = json.dumps(content.training_config)
            root = out.create_group("model_weights")
            for key, value in content.attrs.items():
                root.attrs[key] = value
        root.attrs["layer_names"] = _string_array([name for name, _ in content.layers])
        for layer_name, weights in content.layers:
            group = root.create_group(layer_name)
            group.attrs["weight_names"] = _string_array([name for name, _ in weights])
            for name, value in weights:
                group.create_dataset(name, data=np.asarray(value))
        if content.optimizer_weights:
            group = out.create_group("optimizer_weights")
            group.attrs["weight_names"] = _string_array([name for name, _ in content.optimizer_weights])
            for name, value in content.optimizer_weights:
                group.create_dataset(name, data=np.asarray(value))


LEGACY_H5 = FileFormat("h5", (".h5", ".hdf5"), is_legacy_h5, read, write,
                       "Keras 2 HDF5 (model_weights/<layer>/<layer>/kernel:0, layer_names/weight_names)")
