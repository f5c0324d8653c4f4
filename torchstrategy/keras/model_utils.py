"""Small `keras.utils` helpers around models and data: `get_source_inputs`, `is_keras_tensor`,
`pack_x_y_sample_weight` / `unpack_x_y_sample_weight`, `standardize_dtype`, `clear_session` and `Config`."""
from __future__ import annotations

import gc
from typing import Any

import torch

from torchstrategy.keras import backend
from torchstrategy.keras.functional import InputLayer
from torchstrategy.keras.layers.input_layer import KerasTensor


def is_keras_tensor(x: Any) -> bool:
    """True for the symbolic tensors of the functional API (`keras.Input(...)` and layer outputs on them)."""
    return isinstance(x, KerasTensor)


def get_source_inputs(tensor: Any) -> list:
    """The `keras.Input` tensors that `tensor` was computed from, in the order they are first reached."""
    if not isinstance(tensor, KerasTensor):
        raise ValueError(f"get_source_inputs expects a KerasTensor (a functional-API tensor); got {tensor!r}.")
    found: list = []
    seen: set = set()
    stack = [tensor]
    while stack:
        current = stack.pop(0)
        node = current.node
        if node is None or isinstance(node.layer, InputLayer) or not node.input_tensors:
            if id(current) not in seen:
                seen.add(id(current))
                found.append(current)
            continue
        stack.extend(node.input_tensors)
    return found


def pack_x_y_sample_weight(x: Any, y: Any = None, sample_weight: Any = None) -> tuple:
    """(x,), (x, y) or (x, y, sample_weight) as a data tuple; a tuple/list `x` alone is wrapped as `(x,)`."""
    if y is None:
        return x if not isinstance(x, (tuple, list)) else (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def unpack_x_y_sample_weight(data: Any) -> tuple:
    """(x, y, sample_weight) from a data tuple of 1-3 items (missing ones None), or (data, None, None)."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return (data, None, None)
    if len(data) == 1:
        return (data[0], None, None)
    if len(data) == 2:
        return (data[0], data[1], None)
    if len(data) == 3:
        return (data[0], data[1], data[2])
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
                     f"found: {data}")


_DTYPE_NAMES = {"float": "float32", "int": "int64", "double": "float64", "bool": "bool", "uint": "uint32"}


def standardize_dtype(dtype: Any) -> str:
    """A dtype (a name, NumPy or torch dtype, Python type) as Keras's dtype name, e.g. 'float32'."""
    if dtype is None:
        return backend.floatx()
    if dtype is float:
        return "float32"
    if dtype is int:
        return "int64"
    if dtype is bool:
        return "bool"
    if isinstance(dtype, str) and dtype in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype]
    if isinstance(dtype, torch.dtype):
        return str(dtype).replace("torch.", "")
    name = getattr(dtype, "name", None)
    if isinstance(name, str):
        dtype = name
    try:
        import numpy as np

        return np.dtype(dtype).name if not isinstance(dtype, str) or dtype != "bfloat16" else "bfloat16"
    except TypeError:
        raise ValueError(f"Invalid dtype: {dtype}") from None


def clear_session(free_memory: bool = True) -> None:
    """Resets Keras's layer-name counters; with `free_memory`, also collects garbage and empties torch's CUDA
    cache."""
    backend.clear_session()
    if free_memory:
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


class Config:
    """A dict whose keys are also attributes (`config.learning_rate`), which `freeze()` makes read-only.

    >>> config = Config(learning_rate=0.1); config.momentum = 0.9; sorted(config.keys())
    ['learning_rate', 'momentum']
    """

    def __init__(self, **kwargs: Any) -> None:
        object.__setattr__(self, "_config", dict(kwargs))
        object.__setattr__(self, "_frozen", False)

    def __getattr__(self, name: str) -> Any:
        config = object.__getattribute__(self, "_config")
        if name in config:
            return config[name]
        raise AttributeError(f"Unknown attribute: '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        self._check_frozen()
        self._config[name] = value

    def __delattr__(self, name: str) -> None:
        self._check_frozen()
        del self._config[name]

    def _check_frozen(self) -> None:
        if self._frozen:
            raise AttributeError("Cannot mutate attribute(s) because the config is frozen.")

    @property
    def frozen(self) -> bool:
        """Whether the config is read-only."""
        return self._frozen

    def freeze(self) -> None:
        """Makes the config read-only."""
        object.__setattr__(self, "_frozen", True)

    def unfreeze(self) -> None:
        """Makes the config writable again."""
        object.__setattr__(self, "_frozen", False)

    def as_dict(self) -> dict:
        """A copy of the config as a plain dict."""
        return dict(self._config)

    def to_json(self) -> str:
        """The config as a JSON string."""
        import json

        return json.dumps(self._config)

    def keys(self) -> Any:
        return self._config.keys()

    def values(self) -> Any:
        return self._config.values()

    def items(self) -> Any:
        return self._config.items()

    def get(self, key: str, default: Any = None) -> Any:
        return self._config.get(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._check_frozen()
        self._config.update(*args, **kwargs)

    def pop(self, *args: Any) -> Any:
        self._check_frozen()
        return self._config.pop(*args)

    def __getitem__(self, key: str) -> Any:
        return self._config[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._check_frozen()
        self._config[key] = value

    def __delitem__(self, key: str) -> None:
        self._check_frozen()
        del self._config[key]

    def __contains__(self, item: str) -> bool:
        return item in self._config

    def __len__(self) -> int:
        return len(self._config)

    def __iter__(self) -> Any:
        return iter(self._config)

    def __repr__(self) -> str:
        return f"<Config {self._config}>"
