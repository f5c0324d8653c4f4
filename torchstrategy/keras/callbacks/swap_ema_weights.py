"""`keras.callbacks.SwapEMAWeights`: evaluation and prediction (and, with `swap_on_epoch`, the end of each
epoch) use the optimizer's moving averages of the weights instead of the weights themselves."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras.callbacks.base import Callback


class SwapEMAWeights(Callback):
    """Swaps the model's weights with the optimizer's EMA copies (`use_ema=True`) for `evaluate` / `predict`
    and validation, and back afterwards. With `swap_on_epoch=True`, the EMA weights are also in the model
    from each epoch's end to the next epoch's start (so checkpoints save them), and after the last epoch the
    averages are made equal to the final (EMA) weights.

    >>> callback = SwapEMAWeights(swap_on_epoch=True)
    """

    def __init__(self, swap_on_epoch: bool = False) -> None:
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _optimizer(self) -> Any:
        optimizer = self.model.optimizer
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # LossScaleOptimizer wraps the real one
        if not getattr(optimizer, "use_ema", False):
            raise ValueError("SwapEMAWeights must be used when `use_ema=True` is set on the optimizer. "
                             f"Received: use_ema={getattr(optimizer, 'use_ema', None)}")
        return optimizer

    def _pairs(self) -> list:
        optimizer = self._optimizer()
        pairs = []
        for param in optimizer._all_params():
            average = optimizer.state[param].get("average") if param in optimizer.state else None
            if average is not None:
                pairs.append((param, average))
        return pairs

    @torch.no_grad()
    def _swap_variables(self) -> None:
        for param, average in self._pairs():
            held = param.detach().clone()
            param.copy_(average)
            average.copy_(held)

    @torch.no_grad()
    def _finalize_ema_values(self) -> None:
        for param, average in self._pairs():
            average.copy_(param)

    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None:
        if self.swap_on_epoch and self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None:
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True
            if epoch == self.params["epochs"] - 1:
                self._finalize_ema_values()

    def on_test_begin(self, logs: Optional[dict] = None) -> None:
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_test_end(self, logs: Optional[dict] = None) -> None:
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_predict_begin(self, logs: Optional[dict] = None) -> None:
        self.on_test_begin(logs)

    def on_predict_end(self, logs: Optional[dict] = None) -> None:
        self.on_test_end(logs)
