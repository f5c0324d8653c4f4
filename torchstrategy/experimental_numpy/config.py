"""`tnp.experimental_enable_numpy_behavior`: what of TF's switch applies to torch tensors (prefer_float32 for
tnp's own dtype inference), and a warning naming what cannot (patching every torch.Tensor of the process)."""
from __future__ import annotations

import warnings

from torchstrategy.experimental_numpy import _dtypes

__all__ = ["experimental_enable_numpy_behavior"]

_MODES = ("legacy", "off")


def experimental_enable_numpy_behavior(prefer_float32: bool = False, dtype_conversion_mode: str = "legacy") -> None:
    """TF's switch for NumPy behaviour on tensors. Here it sets `prefer_float32` (tnp reads Python floats as
    float32 and complexes as complex64 instead of float64/complex128, as TF does) and otherwise changes nothing:
    results are torch tensors, which already have `.T`, `.reshape`, `.ravel`, `.clip`, `.tolist`, `.numpy()`
    and NumPy-style indexing, but no `.astype` (use `tnp.asarray(x, dtype)`), and whose operators keep torch's
    promotion (int32 + float32 -> float32, where NumPy and TF's enabled mode give float64). Patching
    torch.Tensor for every user of the process is not done, so a UserWarning says so once per call.
    `dtype_conversion_mode` 'safe' / 'all' (TF's WeakTensor promotion for all TF ops) is not supported."""
    if dtype_conversion_mode not in _MODES:
        if dtype_conversion_mode in ("safe", "all"):
            raise NotImplementedError(
                f"tnp.experimental_enable_numpy_behavior(dtype_conversion_mode={dtype_conversion_mode!r}): TF's "
                "auto dtype conversion for every op is not supported by torchstrategy; tnp functions follow "
                "NumPy's promotion ('legacy'), torch operators torch's.")
        raise ValueError(f"tnp.experimental_enable_numpy_behavior: dtype_conversion_mode must be one of 'off', "
                         f"'legacy', 'safe', 'all', got {dtype_conversion_mode!r}.")
    _dtypes.set_prefer_float32(bool(prefer_float32))
    warnings.warn(
        "tnp.experimental_enable_numpy_behavior: tensors here are torch tensors and are not patched: they have "
        ".T/.reshape/.ravel/.clip/.tolist/.numpy() already, but no .astype (use tnp.asarray(x, dtype)), and "
        "their operators keep torch's dtype promotion; the tnp functions follow NumPy's (prefer_float32="
        f"{bool(prefer_float32)} applied).", UserWarning, stacklevel=2)
