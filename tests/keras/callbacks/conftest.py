"""Shared test helpers for keras.callbacks: a small real model (torch Linear + torch.optim.SGD)
and a driver that calls the hooks in the order Keras's fit() loop does."""
from __future__ import annotations

import io
import sys
from typing import Any, Optional, Sequence

import numpy as np
import pytest
import torch

from torchstrategy.keras.callbacks import CallbackList


class LearningRateOptimizer:
    """A real torch.optim.SGD seen through a Keras-like `learning_rate` float property."""

    def __init__(self, params: Any, learning_rate: float) -> None:
        self.torch_optimizer = torch.optim.SGD(params, lr=learning_rate)
        self.iterations = 0

    @property
    def learning_rate(self) -> float:
        return self.torch_optimizer.param_groups[0]["lr"]

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        for group in self.torch_optimizer.param_groups:
            group["lr"] = float(value)


class ChiefFlag:
    """What a strategy exposes for output decisions: `is_chief`."""

    def __init__(self, is_chief: bool) -> None:
        self.is_chief = is_chief


class TinyModel:
    """A 3->2 linear regression trained by SGD, with Keras-style weights and flags."""

    def __init__(self, learning_rate: float = 0.1, is_chief: Optional[bool] = None, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.layer = torch.nn.Linear(3, 2)
        with torch.no_grad():
            self.layer.weight.copy_(torch.randn(2, 3, generator=generator))
            self.layer.bias.zero_()
        self.optimizer = LearningRateOptimizer(self.layer.parameters(), learning_rate)
        self.stop_training = False
        self.history = None
        if is_chief is not None:
            self.distribute_strategy = ChiefFlag(is_chief)
        self._inputs = torch.randn(8, 3, generator=generator)
        self._targets = torch.randn(8, 2, generator=generator)

    def get_weights(self) -> list:
        # Keras order and layout: Dense kernel (in, out), then bias.
        return [self.layer.weight.detach().T.numpy().copy(), self.layer.bias.detach().numpy().copy()]

    def set_weights(self, weights: Sequence[np.ndarray]) -> None:
        kernel, bias = weights
        with torch.no_grad():
            self.layer.weight.copy_(torch.from_numpy(np.asarray(kernel)).T)
            self.layer.bias.copy_(torch.from_numpy(np.asarray(bias)))

    def train_step(self) -> torch.Tensor:
        self.optimizer.torch_optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.layer(self._inputs), self._targets)
        loss.backward()
        self.optimizer.torch_optimizer.step()
        self.optimizer.iterations += 1
        return loss.detach()


def drive_fit(
    model: TinyModel,
    callbacks: list,
    epoch_logs: Sequence[dict],
    steps: Optional[int] = 2,
    batch_logs: Optional[Sequence[Sequence[dict]]] = None,
    verbose: Any = 0,
    actual_steps: int = 2,
) -> dict:
    """Runs hooks as Keras's fit() does; returns {'history', 'weights_at_epoch_end', 'lr_during_epoch'}.

    epoch_logs[e] are the epoch-end logs; batch_logs[e][s] the step logs (default: the real loss).
    """
    callback_list = CallbackList(
        callbacks, add_history=True, add_progbar=verbose != 0, model=model,
        verbose=verbose, epochs=len(epoch_logs), steps=steps,
    )
    model.stop_training = False
    weights_at_epoch_end, lr_during_epoch = [], []
    callback_list.on_train_begin()
    for epoch, logs in enumerate(epoch_logs):
        callback_list.on_epoch_begin(epoch)
        lr_during_epoch.append(model.optimizer.learning_rate)
        for step in range(actual_steps):
            callback_list.on_train_batch_begin(step)
            loss = model.train_step()
            step_logs = dict(batch_logs[epoch][step]) if batch_logs else {"loss": loss}
            callback_list.on_train_batch_end(step, step_logs)
            if model.stop_training:
                break
        weights_at_epoch_end.append(model.get_weights())
        callback_list.on_epoch_end(epoch, dict(logs))
        if model.stop_training:
            break
    callback_list.on_train_end()
    return {
        "history": model.history,
        "weights_at_epoch_end": weights_at_epoch_end,
        "lr_during_epoch": lr_during_epoch,
    }


class TtyStream(io.StringIO):
    """A real in-memory text stream that reports itself as a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def tty_stdout(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Call it inside the test to point sys.stdout at a TtyStream (pytest re-installs its own
    capture between setup and call, so a fixture cannot swap sys.stdout ahead of time)."""

    def install() -> TtyStream:
        stream = TtyStream()
        monkeypatch.setattr(sys, "stdout", stream)
        return stream

    return install


@pytest.fixture
def make_model() -> type:
    """The TinyModel class: `make_model(learning_rate=..., is_chief=...)`."""
    return TinyModel


@pytest.fixture
def fit() -> Any:
    """The Keras-order hook driver `drive_fit`."""
    return drive_fit
