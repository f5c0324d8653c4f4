"""The precision part: the context a forward pass runs in and how a loss is scaled before backward
(Keras layers carry their own dtype policies; this covers the step around them)."""
from __future__ import annotations

import contextlib
from typing import Any, ContextManager, Optional

import torch


class StepPrecision:
    """Runs forward passes as they are (Keras layers cast to their dtype policies themselves) and backward
    on the loss scaled as the optimizer asks (a LossScaleOptimizer's dynamic loss scale)."""

    def forward_context(self) -> ContextManager[None]:
        return contextlib.nullcontext()

    def backward(self, loss: torch.Tensor, optimizer: Optional[Any] = None) -> None:
        scale = getattr(optimizer, "scale_loss", None)
        if scale is not None:
            loss = scale(loss)
        loss.backward()
