"""The legacy backend's settings (set_floatx, set_epsilon, the image data format, dtype names), Keras 3's
`keras.config` and `keras.version`, and the conversion helpers the other legacy backend modules share."""
from __future__ import annotations

from typing import Any

import torch

from torchstrategy import _context
from torchstrategy._tensor_convert import to_tensor as _tf_tensor
from torchstrategy.dtypes import as_dtype
from torchstrategy.keras import config_flags, progress

_FLOAT_NAMES = ("float16", "float32", "float64", "bfloat16")


def _config() -> Any:
    # Imported on use: backend.py re-exports this module at its end, so a top-level import would be circular.
    from torchstrategy.keras import backend as keras_backend

    return keras_backend


def _t(x: Any, op: str) -> torch.Tensor:
    return _tf_tensor(x, op=f"keras.backend.{op}")


def _floatx_dtype() -> torch.dtype:
    return as_dtype(_config().floatx())


# ----- configuration ------------------------------------------------------------------------------------------


def set_floatx(value: str) -> None:
    """Sets the default float type ('float16', 'bfloat16', 'float32' or 'float64')."""
    if value not in _FLOAT_NAMES:
        raise ValueError(f"Unknown `floatx` value: {value!r}. Expected one of {list(_FLOAT_NAMES)}.")
    _context.set_keras_setting("floatx", str(value))


def set_epsilon(value: float) -> None:
    """Sets the fuzz factor `epsilon()` returns (losses and metrics read it at each call)."""
    _context.set_keras_setting("epsilon", float(value))


def image_data_format() -> str:
    """'channels_last' (the default) or 'channels_first'."""
    return _context.keras_setting("image_data_format")


def set_image_data_format(data_format: str) -> None:
    """Sets `image_data_format()`: 'channels_last' or 'channels_first'."""
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                         f"Received: data_format={data_format!r}")
    _context.set_keras_setting("image_data_format", str(data_format))


def backend() -> str:
    """The backend name a TF script sees: 'tensorflow' (torchstrategy stands in for TF; the real engine is torch)."""
    return "tensorflow"


def standardize_dtype(dtype: Any) -> str:
    """A dtype (torch, NumPy, string; None = floatx) as Keras's string name, e.g. 'float32'."""
    return str(as_dtype(_config().floatx() if dtype is None else dtype)).replace("torch.", "")


def is_float_dtype(dtype: Any) -> bool:
    """True for float16/bfloat16/float32/float64."""
    return as_dtype(dtype).is_floating_point


def is_int_dtype(dtype: Any) -> bool:
    """True for the signed and unsigned integer dtypes."""
    d = as_dtype(dtype)
    return not d.is_floating_point and not d.is_complex and d is not torch.bool


# ----- keras.config and keras.version (Keras 3's top-level names) ---------------------------------------------

_KERAS_VERSION = "3.15.1"  # the Keras that TF 2.21 ships with, whose API this package follows


def version() -> str:
    """The Keras version a TF 2.21 script sees: '3.15.1'."""
    return _KERAS_VERSION


def _enable_unsafe_deserialization() -> None:
    # Nothing to unlock: this package's deserialization never runs Python lambdas from files.
    return None


class _KerasConfig:
    """`keras.config`: floatx, epsilon, image data format, the backend name (see `backend()`) and the switches
    of config_flags (flash attention, traceback filtering, epoch/step caps, dtype policy) and progress."""

    floatx = staticmethod(lambda: _config().floatx())
    set_floatx = staticmethod(set_floatx)
    epsilon = staticmethod(lambda: _config().epsilon())
    set_epsilon = staticmethod(set_epsilon)
    image_data_format = staticmethod(image_data_format)
    set_image_data_format = staticmethod(set_image_data_format)
    backend = staticmethod(backend)
    enable_unsafe_deserialization = staticmethod(_enable_unsafe_deserialization)
    disable_interactive_logging = staticmethod(progress.disable_interactive_logging)
    enable_interactive_logging = staticmethod(progress.enable_interactive_logging)
    is_interactive_logging_enabled = staticmethod(progress.is_interactive_logging_enabled)
    enable_flash_attention = staticmethod(config_flags.enable_flash_attention)
    disable_flash_attention = staticmethod(config_flags.disable_flash_attention)
    is_flash_attention_enabled = staticmethod(config_flags.is_flash_attention_enabled)
    enable_traceback_filtering = staticmethod(config_flags.enable_traceback_filtering)
    disable_traceback_filtering = staticmethod(config_flags.disable_traceback_filtering)
    is_traceback_filtering_enabled = staticmethod(config_flags.is_traceback_filtering_enabled)
    max_epochs = staticmethod(config_flags.max_epochs)
    set_max_epochs = staticmethod(config_flags.set_max_epochs)
    max_steps_per_epoch = staticmethod(config_flags.max_steps_per_epoch)
    set_max_steps_per_epoch = staticmethod(config_flags.set_max_steps_per_epoch)
    dtype_policy = staticmethod(config_flags.dtype_policy)
    set_dtype_policy = staticmethod(config_flags.set_dtype_policy)
    set_backend = staticmethod(config_flags.set_backend)
    is_nnx_enabled = staticmethod(config_flags.is_nnx_enabled)


config = _KerasConfig()
