"""TF's graph-era top-level names in their eager form: tf.Assert, tf.gradients / tf.hessians (refused eagerly as
TF refuses them), tf.no_gradient, tf.UnconnectedGradients and tf.AggregationMethod."""
from __future__ import annotations

import enum
from typing import Any, Optional

import numpy as np
import torch

from torchstrategy.errors import InvalidArgumentError

__all__ = ["Assert", "gradients", "hessians", "no_gradient", "UnconnectedGradients", "AggregationMethod"]


class UnconnectedGradients(enum.Enum):
    """What GradientTape.gradient returns for a source the target does not depend on: None or zeros."""

    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """How graph-mode gradients add partial sums (kept for TF code; autograd sums them one way)."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def Assert(condition: Any, data: Any, summarize: Optional[int] = None, name: Optional[str] = None) -> None:  # noqa: N802
    """Raises InvalidArgumentError showing `data` when the scalar bool `condition` is false (TF's eager Assert).

    >>> Assert(torch.tensor(True), ["never shown"])
    """
    value = condition if isinstance(condition, torch.Tensor) else torch.as_tensor(condition)
    if value.dtype != torch.bool or value.numel() != 1:
        raise TypeError(f"tf.Assert: condition must be a scalar bool, got {condition!r}.")
    if bool(value.reshape(())):
        return None
    from torchstrategy._machinery.print_format import format_value

    limit = 3 if summarize is None else (None if summarize < 0 else summarize)
    shown = ", ".join(format_value(item, limit) for item in (data if isinstance(data, (list, tuple)) else [data]))
    raise InvalidArgumentError(None, None, f"assertion failed: [{shown}]")


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients", gate_gradients: bool = False,
              aggregation_method: Any = None, stop_gradients: Any = None,
              unconnected_gradients: Any = UnconnectedGradients.NONE) -> list:
    """Symbolic gradients exist only in TF graphs; eagerly this raises as TF does: use tf.GradientTape."""
    raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead.")


def hessians(ys: Any, xs: Any, gate_gradients: bool = False, aggregation_method: Any = None,
             name: str = "hessians") -> list:
    """As tf.gradients: graph-only; use nested tf.GradientTape (or torch.autograd.functional.hessian)."""
    raise RuntimeError("tf.hessians is not supported when eager execution is enabled. Use nested tf.GradientTape "
                       "instead.")


def no_gradient(op_type: str) -> None:
    """Declares a graph op type as having no gradient; there are no op types to register here."""
    if not isinstance(op_type, str):
        raise TypeError(f"op_type must be a string, got {type(op_type).__name__}.")
    return None
