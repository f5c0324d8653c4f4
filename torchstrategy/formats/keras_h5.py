"""Keras 3's HDF5 weights layout (`.weights.h5`, and `model.weights.h5` inside a `.keras` zip): one group per
saved object, `<path>/vars` holding its variables as datasets "0", "1", ... with the object's name as attribute."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, BinaryIO, Optional, Union

import numpy as np

from torchstrategy.formats.base import HDF5_MAGIC, FileFormat, FormatError


@dataclass
class VarGroup:
    """The variables one object saved (a layer, a layer's cell, the optimizer), in its own order."""

    name: str
    values: list = field(default_factory=list)
    keys: Optional[list] = None  # the datasets' names when not "0", "1", ... (a file edited by KerasFileEditor)


def _h5py() -> Any:
    import h5py

    return h5py


def is_keras_h5(head: bytes, path: str) -> bool:
    """An HDF5 file in Keras 3's layout (not a legacy Keras 2 `.h5`, which has `model_weights`/`layer_names`)."""
    from torchstrategy.formats.legacy_h5 import is_legacy_h5

    return head.startswith(HDF5_MAGIC) and not is_legacy_h5(head, path)


def read_tree(source: Union[str, BinaryIO]) -> dict:
    """{object path ("layers/dense", "optimizer", "" for the model): VarGroup} of a Keras 3 weights file."""
    h5py = _h5py()
    where = getattr(source, "name", source)
    try:
        handle = h5py.File(source, "r")
    except OSError as error:
        raise FormatError(f"'{where}' is not a readable HDF5 weights file ({error}).") from None
    tree: dict = {}
    with handle:
        def visit(name: str, item: Any) -> None:
            if isinstance(item, h5py.Group) and (name == "vars" or name.endswith("/vars")):
                path = name[:-len("vars")].rstrip("/")
                keys = sorted(item.keys(), key=lambda k: int(k) if k.isdigit() else 1 << 30)
                label = item.attrs.get("name", "")
                tree[path] = VarGroup(label.decode() if isinstance(label, bytes) else str(label),
                                      [np.array(item[k]) for k in keys])
        handle.visititems(visit)
        if "vars" in handle and "" not in tree:
            visit("vars", handle["vars"])
    return tree


def write_tree(target: Union[str, BinaryIO], tree: dict) -> None:
    """Writes {path: VarGroup} in Keras 3's layout (groups in path order, as Keras creates them)."""
    h5py = _h5py()
    with h5py.File(target, "w") as handle:
        for path, group in tree.items():
            vars_group = handle.require_group(f"{path}/vars" if path else "vars")
            vars_group.attrs["name"] = group.name
            names = group.keys if group.keys is not None else [str(i) for i in range(len(group.values))]
            for name, value in zip(names, group.values):
                vars_group.create_dataset(name, data=np.asarray(value))


def _read(path: str) -> dict:
    return read_tree(path)


KERAS_H5 = FileFormat("weights.h5", (".weights.h5",), is_keras_h5, _read, write_tree,
                      "Keras 3 weights (HDF5: layers/<name>/vars/0, optimizer/vars/...)")
