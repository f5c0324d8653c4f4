"""`tf.train.load_checkpoint` / `list_variables` / `load_variable` and the CheckpointReader they use: the
tensors of a TF-written checkpoint (tensor bundle) or of one of ours, by checkpoint key."""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from torchstrategy import dtypes
from torchstrategy.errors import NotFoundError
from torchstrategy.formats.tf_bundle import BundleReader, is_bundle


def _flatten(node: dict, path: str, out: dict) -> None:
    """Our format's saved objects -> {key: tensor}, keys like 'model/dense.kernel' or 'step'."""
    if node.get("kind") == "alias":
        return
    state = node.get("state")
    if isinstance(state, torch.Tensor):
        out[path] = state
    elif isinstance(state, dict):
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                out[f"{path}/{key}" if path else str(key)] = value
    for name, child in node.get("children", {}).items():
        _flatten(child, f"{path}/{name}" if path else name, out)


def _as_numpy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        return value if value.dtype == torch.bfloat16 else value.numpy()
    return value


class CheckpointReader:
    """Reads the tensors of one checkpoint (what `tf.train.load_checkpoint` returns).

    A TF-written checkpoint is read by its keys (e.g. 'model/layer_with_weights-0/kernel/.ATTRIBUTES/
    VARIABLE_VALUE'); one written by this library by the paths of its objects ('model/dense.kernel').
    """

    def __init__(self, filepattern: str) -> None:
        self._path = os.fspath(filepattern)
        self._bundle = None
        self._tensors: dict = {}
        if is_bundle(self._path) and not os.path.isfile(self._path):
            self._bundle = BundleReader(self._path)
        elif os.path.isfile(self._path) or os.path.isdir(self._path):
            from torchstrategy.checkpoint import _io, _sharded

            if _sharded.is_sharded_checkpoint(self._path):
                raise NotImplementedError(f"'{self._path}' is a sharded checkpoint directory; restore it with "
                                          f"tf.train.Checkpoint(...).restore().")
            payload = _io.load_state(self._path)
            if not isinstance(payload, dict) or "objects" not in payload:
                raise ValueError(f"'{self._path}' is not a tf.train.Checkpoint file.")
            _flatten(payload["objects"], "", self._tensors)
        else:
            raise NotFoundError(None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                                            f"matching files for {self._path}")

    def _keys(self) -> list:
        return sorted(self._bundle.entries) if self._bundle is not None else sorted(self._tensors)

    def has_tensor(self, tensor_str: str) -> bool:
        """Whether the checkpoint holds a tensor under this key."""
        return tensor_str in (self._bundle.entries if self._bundle is not None else self._tensors)

    def get_tensor(self, tensor_str: str) -> Any:
        """The tensor as a NumPy array (a NumPy scalar for 0-d tensors); NotFoundError for an unknown key."""
        if not self.has_tensor(tensor_str):
            raise NotFoundError(None, None, f"Key {tensor_str} not found in checkpoint")
        value = self._bundle.tensor(tensor_str) if self._bundle is not None else _as_numpy(self._tensors[tensor_str])
        return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value

    def get_variable_to_shape_map(self) -> dict:
        """{key: shape as a list of ints}."""
        if self._bundle is not None:
            return {key: list(entry.shape) for key, entry in self._bundle.entries.items()}
        return {key: list(value.shape) for key, value in self._tensors.items()}

    def get_variable_to_dtype_map(self) -> dict:
        """{key: dtype} (torch dtypes, as tf.float32 etc. are here; tf.string for strings)."""
        if self._bundle is not None:
            out = {}
            for key, entry in self._bundle.entries.items():
                name = entry.dtype_name
                out[key] = dtypes.string if name == "string" else getattr(torch, name, name)
            return out
        return {key: value.dtype for key, value in self._tensors.items()}

    def debug_string(self) -> bytes:
        """One line per tensor: 'key (dtype) [shape]'."""
        shapes, kinds = self.get_variable_to_shape_map(), self.get_variable_to_dtype_map()
        return "".join(f"{key} ({kinds[key]}) {shapes[key]}\n" for key in self._keys()).encode("utf-8")


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A CheckpointReader for a checkpoint, or for the latest checkpoint of a directory."""
    from torchstrategy.checkpoint.manager import latest_checkpoint

    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        from torchstrategy.checkpoint import _sharded

        if not _sharded.is_sharded_checkpoint(path):
            latest = latest_checkpoint(path)
            if latest is None:
                raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
            path = latest
    return CheckpointReader(path)


def list_variables(ckpt_dir_or_file: str) -> list:
    """[(key, shape)] of every tensor in the checkpoint, sorted by key."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(key, shapes[key]) for key in sorted(shapes)]


def load_variable(ckpt_dir_or_file: str, name: str) -> Any:
    """The value of one tensor of the checkpoint (a trailing ':0' in `name` is ignored)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
