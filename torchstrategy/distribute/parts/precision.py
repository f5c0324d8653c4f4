"""The precision part: the context a forward pass runs in and how a loss is scaled before backward
(Keras layers carry their own dtype policies; this covers the step around them)."""
from __future__ import annotations

import contextlib
from typing import Any, ContextManager, Optional

import torch


class Precision:
    """Runs forward passes as they are and backward on the optimizer's scaled loss.

    `loss_multiplier` folds in what the collectives need (1/N when N replica threads sum their
    gradients into shared parameters, so the step sees the mean as with DDP).
    """

    def __init__(self, loss_multiplier: float = 1.0) -> None:
        self.loss_multiplier = float(loss_multiplier)

    def forward_context(self) -> ContextManager[None]:
        return contextlib.nullcontext()

    def backward(self, loss: torch.Tensor, optimizer: Optional[Any] = None) -> None:
        scale = getattr(optimizer, "scale_loss", None)
        if scale is not None:
            loss = scale(loss)
        if self.loss_multiplier != 1.0:
            loss = loss * self.loss_multiplier
        loss.backward()
