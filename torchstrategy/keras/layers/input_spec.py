"""keras.InputSpec: what a layer accepts (dtype, shape, rank bounds, fixed axis sizes), with Keras 3's argument
checks, and the check of one input against it (the layer's message wraps what `problem` finds)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from torchstrategy.dtypes import as_dtype


def _dtype_name(dtype: Any) -> str:
    """A dtype (name, NumPy or torch dtype) as Keras's name for it, e.g. 'float32'."""
    return str(as_dtype(dtype)).replace("torch.", "")


class InputSpec:
    """The rank, dtype and shape a layer's input must have, as keras.InputSpec.

    `shape` (batch included, None for any size) sets `ndim`; `axes` maps axis -> required size;
    `allow_last_axis_squeeze` lets a trailing axis of size 1 be present or absent; `name` is the key of
    this input in a dict of inputs; an `optional` input may be None.

    >>> InputSpec(ndim=4, axes={-1: 3})
    InputSpec(ndim=4, axes={-1: 3})
    """

    def __init__(self, dtype: Any = None, shape: Optional[Sequence[Optional[int]]] = None,
                 ndim: Optional[int] = None, max_ndim: Optional[int] = None, min_ndim: Optional[int] = None,
                 axes: Optional[dict] = None, allow_last_axis_squeeze: bool = False, name: Optional[str] = None,
                 optional: bool = False) -> None:
        self.dtype = _dtype_name(dtype) if dtype is not None else None
        if shape is not None:
            self.shape: Optional[tuple] = tuple(None if d is None else int(d) for d in shape)
            self.ndim = len(self.shape)
        else:
            self.shape = None
            self.ndim = ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.optional = optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            given = axes or {}
            self.axes = {int(key): given[key] for key in given}
        except (ValueError, TypeError):
            raise TypeError(f"Argument `axes` must be a dict with integer keys. Received: axes={axes}") from None
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            highest = (self.ndim if self.ndim else self.max_ndim) - 1
            if max(self.axes) > highest:
                raise ValueError(f"Axis {max(self.axes)} is greater than the maximum allowed value: {highest}")

    def __repr__(self) -> str:
        parts = [f"{key}={value}" for key, value in (
            ("dtype", self.dtype), ("shape", self.shape), ("ndim", self.ndim), ("max_ndim", self.max_ndim),
            ("min_ndim", self.min_ndim), ("axes", self.axes)) if value]
        return f"InputSpec({', '.join(parts)})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, InputSpec) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  (mutable, as Keras's)

    def get_config(self) -> dict:
        """Keras's config keys (allow_last_axis_squeeze and name are not part of it, as in Keras)."""
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim, "max_ndim": self.max_ndim,
                "min_ndim": self.min_ndim, "axes": self.axes, "optional": self.optional}

    @classmethod
    def from_config(cls, config: dict) -> "InputSpec":
        return cls(**config)


def problem(spec: InputSpec, shape: tuple, dtype: Any) -> Optional[str]:
    """What about an input of `shape` and `dtype` breaks `spec` (Keras's order of checks), or None."""
    ndim = len(shape)
    if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
        return f"expected ndim={spec.ndim}, found ndim={ndim}"
    if spec.max_ndim is not None and ndim > spec.max_ndim:
        return f"expected max_ndim={spec.max_ndim}, found ndim={ndim}"
    if spec.min_ndim is not None and ndim < spec.min_ndim:
        return f"expected min_ndim={spec.min_ndim}, found ndim={ndim}"
    if spec.dtype is not None and _dtype_name(dtype) != spec.dtype:
        return f"expected dtype={spec.dtype}, found dtype={_dtype_name(dtype)}"
    for axis, size in spec.axes.items():
        if size is not None and -ndim <= axis < ndim and shape[axis] not in (size, None):
            return f"expected axis {axis} of input shape to have value {size}"
    if spec.shape is not None:
        wanted, got = spec.shape, tuple(shape)
        if spec.allow_last_axis_squeeze:
            got = got[:-1] if got and got[-1] == 1 else got
            wanted = wanted[:-1] if wanted and wanted[-1] == 1 else wanted
        if any(w is not None and g is not None and w != g for w, g in zip(wanted, got)):
            return f"expected shape={spec.shape}, found shape={tuple(shape)}"
    return None


__all__ = ["InputSpec"]
