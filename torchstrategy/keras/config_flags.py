"""The `keras.config` switches beyond floatx/epsilon/data format: flash attention, traceback filtering, the
debugging caps on fit's epochs and on steps per epoch, the global dtype policy, backend and NNX queries."""
from __future__ import annotations

import warnings
from typing import Any, Optional

from torchstrategy import _context


def enable_flash_attention() -> None:
    """Lets attention layers pick flash attention where it applies (the default, `None`: automatic)."""
    _context.set_keras_setting("flash_attention", None)


def disable_flash_attention() -> None:
    """Turns flash attention off for attention layers that were not told otherwise."""
    _context.set_keras_setting("flash_attention", False)


def is_flash_attention_enabled() -> Optional[bool]:
    """None (automatic, the default) or False after `disable_flash_attention()`."""
    return _context.keras_setting("flash_attention")


def enable_traceback_filtering() -> None:
    """Records that Keras-internal frames should be hidden from tracebacks (the default)."""
    _context.set_keras_setting("traceback_filtering", True)


def disable_traceback_filtering() -> None:
    """Records that tracebacks should show every frame."""
    _context.set_keras_setting("traceback_filtering", False)


def is_traceback_filtering_enabled() -> bool:
    """Whether traceback filtering is on (True by default)."""
    return bool(_context.keras_setting("traceback_filtering"))


def _cap(name: str, value: Optional[int]) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be a positive integer or None; got {value!r}.")
    _context.set_keras_setting(name, value)


def set_max_epochs(max_epochs: Optional[int]) -> None:
    """Caps the epochs of every later `fit()` (a debugging aid; None removes the cap)."""
    _cap("max_epochs", max_epochs)


def max_epochs() -> Optional[int]:
    """The cap `set_max_epochs` set, or None."""
    return _context.keras_setting("max_epochs")


def set_max_steps_per_epoch(max_steps_per_epoch: Optional[int]) -> None:
    """Caps the steps of each epoch of later fit/evaluate/predict calls (None removes the cap)."""
    _cap("max_steps_per_epoch", max_steps_per_epoch)


def max_steps_per_epoch() -> Optional[int]:
    """The cap `set_max_steps_per_epoch` set, or None."""
    return _context.keras_setting("max_steps_per_epoch")


def capped_epochs(epochs: int) -> int:
    """`epochs` under the `max_epochs` cap, warning as Keras does when the cap applies."""
    cap = max_epochs()
    if cap and cap < epochs:
        warnings.warn("Limiting epochs to %d" % cap, stacklevel=3)
        return cap
    return epochs


def capped_steps(steps: Optional[int]) -> Optional[int]:
    """`steps` (None: the whole data) under the `max_steps_per_epoch` cap, warning when the cap applies."""
    cap = max_steps_per_epoch()
    if cap and (not steps or cap < steps):
        warnings.warn("Limiting steps_per_epoch to %d" % cap, stacklevel=3)
        return cap
    return steps


def dtype_policy() -> Any:
    """The global DTypePolicy (`keras.config.dtype_policy()`)."""
    from torchstrategy.keras import dtype_policies

    return dtype_policies.global_policy()


def set_dtype_policy(policy: Any) -> None:
    """Sets the global dtype policy ('mixed_float16', a DTypePolicy, None for the default)."""
    from torchstrategy.keras import dtype_policies

    dtype_policies.set_global_policy(policy)


def set_backend(backend: str) -> None:
    """Keras switches backends here; this package is the TensorFlow backend's stand-in, so only
    'tensorflow' is accepted (a no-op)."""
    if backend != "tensorflow":
        raise ValueError(f"keras.config.set_backend({backend!r}): torchstrategy provides Keras's 'tensorflow' "
                         f"backend only (it runs on PyTorch underneath); remove the call or pass 'tensorflow'.")


def is_nnx_enabled() -> bool:
    """Flax NNX integration (JAX backend only): always False here."""
    return False
