"""Precision policies: the dtype a computation runs in and the dtype its variables are stored in
(float32, mixed_float16, mixed_bfloat16, ...), and the scope in which float weights are read cast."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Optional

import torch

from torchstrategy import _context, dtypes

# Mixed policies: (compute dtype, variable dtype). Every other policy is one dtype for both.
_MIXED = {
    "mixed_float16": (torch.float16, torch.float32),
    "mixed_bfloat16": (torch.bfloat16, torch.float32),
}
POLICY_NAMES = ("float32", "mixed_float16", "mixed_bfloat16", "float16", "bfloat16", "float64")
_LOW_PRECISION = (torch.float16, torch.bfloat16)
_INTEGER_AND_BOOL = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def dtype_name(dtype: torch.dtype) -> str:
    """The short name of a torch dtype: 'float32', 'bfloat16', ..."""
    return str(dtype).replace("torch.", "")


@dataclass(frozen=True)
class Policy:
    """A precision policy: `compute_dtype` for the math, `variable_dtype` for stored weights.

    >>> policy = parse_policy("mixed_bfloat16")
    >>> policy.compute_dtype, policy.variable_dtype, policy.is_mixed
    (torch.bfloat16, torch.float32, True)
    """

    name: str
    compute_dtype: torch.dtype
    variable_dtype: torch.dtype

    @property
    def is_mixed(self) -> bool:
        """Computes in a different dtype than it stores weights in (mixed_float16, mixed_bfloat16)."""
        return self.compute_dtype != self.variable_dtype

    @property
    def is_floating(self) -> bool:
        """Computes in a floating dtype (every policy a float layer accepts)."""
        return self.compute_dtype.is_floating_point

    @property
    def is_low_precision(self) -> bool:
        """Computes in float16 or bfloat16."""
        return self.compute_dtype in _LOW_PRECISION


def parse_policy(value: Any) -> Policy:
    """A Policy from a name ('mixed_float16', 'float32', 'int32', ...), a torch/NumPy dtype, or a Policy.

    Dtype names that are not floats ('int32', 'bool') give a non-floating policy, which only layers
    that pass values through (an `Input` of integers) accept. Unknown names raise a ValueError that
    lists the valid ones.
    """
    if isinstance(value, Policy):
        return value
    if isinstance(value, str) and value in _MIXED:
        compute, variable = _MIXED[value]
        return Policy(value, compute, variable)
    try:
        dtype = None if value is None or isinstance(value, bool) else dtypes.as_dtype(value)
    except TypeError:
        dtype = None
    if dtype is None or not (dtype.is_floating_point or dtype in _INTEGER_AND_BOOL):
        valid = ", ".join(repr(name) for name in POLICY_NAMES)
        raise ValueError(
            f"Cannot convert {value!r} to a mixed precision policy. Valid policies: {valid} "
            "(integer dtype names such as 'int32' are accepted only for inputs)."
        )
    return Policy(dtype_name(dtype), dtype, dtype)


class _AutocastScope:
    """Sets this thread's autocast dtype for a `with` block and puts the previous one back."""

    __slots__ = ("_dtype", "_previous")

    def __init__(self, dtype: Optional[torch.dtype]) -> None:
        self._dtype = dtype
        self._previous: Optional[torch.dtype] = None

    def __enter__(self) -> None:
        self._previous = _context.set_autocast_dtype(self._dtype)

    def __exit__(self, *exc: Any) -> None:
        _context.set_autocast_dtype(self._previous)


class _Unchanged:
    """The scope when nothing changes (the common float32 case): no thread-state writes at all."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


_UNCHANGED = _Unchanged()


def compute_context(policy: Policy, autocast: bool = True) -> Any:
    """The context a layer's computation runs in under `policy`: weights read in the compute dtype.

    Inside it, `cast_on_read(weight)` gives float weights in the compute dtype (a differentiable cast,
    so gradients reach the float32 weights, and DDP's hooks on them fire as usual). Nesting follows
    Keras: a mixed policy opens a scope; inside an open scope, a layer with another float compute
    dtype switches it, and a non-float or `autocast=False` layer turns casting off for its call.
    Explicit casts rather than `torch.autocast`: they give Keras's result dtypes on every device type
    (autocast keeps some ops in float32 and its CPU op list differs from CUDA's), and they cost one
    cast per weight read. Costs nothing when neither the policy nor an outer scope asks for casts.

    >>> with compute_context(parse_policy("mixed_bfloat16")):
    ...     cast_on_read(torch.nn.Parameter(torch.ones(2))).dtype
    torch.bfloat16
    """
    current = _context.autocast_dtype()
    if current is not None:
        if not autocast or not policy.is_floating:
            return _AutocastScope(None)
        if current != policy.compute_dtype:
            return _AutocastScope(policy.compute_dtype)
        return _UNCHANGED
    if policy.is_mixed:
        return _AutocastScope(policy.compute_dtype)
    return _UNCHANGED


def no_autocast() -> Any:
    """A context in which weights are read as stored (layer builds run in it: in-place initialisation
    must reach the weight itself, not a cast copy)."""
    return _AutocastScope(None) if _context.autocast_dtype() is not None else _UNCHANGED


def cast_on_read(weight: torch.Tensor) -> torch.Tensor:
    """`weight` in this thread's autocast dtype if one is set and it is a float of another dtype."""
    dtype = _context.autocast_dtype()
    if dtype is None or weight.dtype == dtype or not weight.is_floating_point():
        return weight
    return weight.to(dtype)


@functools.lru_cache(maxsize=None)
def check_device_support(policy: Policy, device_type: str) -> None:
    """Raises a clear error when `device_type` cannot compute in the policy's dtype (checked once)."""
    if policy.compute_dtype == torch.bfloat16 and device_type == "cuda" and torch.cuda.is_available():
        if not torch.cuda.is_bf16_supported(including_emulation=False):
            raise ValueError(
                f"Policy '{policy.name}' computes in bfloat16, which this GPU "
                f"({torch.cuda.get_device_name()}) does not support natively (it needs compute capability "
                "8.0 or newer). Use 'mixed_float16' on this GPU."
            )
