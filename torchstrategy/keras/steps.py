"""Keras's overridable steps: the built-in `train_step`, `test_step` and `predict_step` a Model runs
once per replica and batch, and the `compute_loss` / `compute_metrics` pieces a custom step reuses."""
from __future__ import annotations

from typing import Any

import torch

from torchstrategy.data.distribute import batch_size_of
from torchstrategy.keras.data_adapter import unpack
from torchstrategy.keras.runtime import runtime_of


def _strategy(model: Any) -> Any:
    runtime = runtime_of(model)
    return runtime.strategy if runtime is not None else model.distribute_strategy


def _replicas(model: Any) -> int:
    """How many replica steps share a global batch's loss (1 on an SPMD mesh: one program, whole batch)."""
    return int(_strategy(model).num_step_replicas)


def scale_for_distribution(model: Any, loss: torch.Tensor) -> torch.Tensor:
    """A replica's share of the loss: divided by the replica count, as Keras does under a strategy, so that
    gradients summed over replicas are the gradient of the mean loss."""
    replicas = _replicas(model)
    return loss if replicas == 1 else loss / replicas


def compute_loss(model: Any, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None,
                 training: bool = True) -> torch.Tensor:
    """The compiled loss of one batch plus the model's regularization losses (Keras `compute_loss`),
    scaled for distribution (divided by the replica count under a multi-replica strategy)."""
    compiled = model._require_compiled("computing the loss")
    return scale_for_distribution(model, compiled.compute_loss(y, y_pred, sample_weight, model.losses))


def compute_metrics(model: Any, x: Any, y: Any, y_pred: Any, sample_weight: Any = None) -> dict:
    """Updates the compiled metrics with one batch and returns every metric's result (Keras)."""
    compiled = model._require_compiled("computing metrics")
    compiled.update_compiled_metrics(y, y_pred, sample_weight)
    return compiled.results()


def _step_parts(model: Any) -> tuple:
    """(strategy, what a step calls for the forward pass: the strategy's wrapper, e.g. DDP, once fit set it
    up), from one runtime lookup."""
    runtime = runtime_of(model)
    return (runtime.strategy, runtime.module) if runtime is not None else (model.distribute_strategy, model)


def _full_loss(loss: torch.Tensor, strategy: Any) -> torch.Tensor:
    """A replica's share of the loss back to the whole batch's (what the logs show)."""
    replicas = int(strategy.num_step_replicas)
    return loss if replicas == 1 else loss * replicas


def train_step(model: Any, data: Any, with_logs: bool = True) -> dict:
    """Forward, loss, backward and one optimizer update through the model's strategy; returns the logs
    (without `with_logs`, for fit when nothing reads them: the metrics are updated, {} is returned)."""
    x, y, sample_weight = unpack(data)
    strategy, module = _step_parts(model)
    with strategy.forward_context():
        y_pred = module(x, training=True)
    loss = model.compute_loss(x, y, y_pred, sample_weight)
    strategy.backward(loss, model.optimizer)
    strategy.optimizer_step(model.optimizer)
    model._compiled.update_loss_trackers(_full_loss(loss, strategy), batch_size_of(x))
    if not with_logs:
        model._compiled.update_compiled_metrics(y, y_pred, sample_weight)
        return {}
    return model.compute_metrics(x, y, y_pred, sample_weight)


def test_step(model: Any, data: Any) -> dict:
    """Forward in inference mode, loss and metrics; returns the logs."""
    x, y, sample_weight = unpack(data)
    strategy, module = _step_parts(model)
    with torch.no_grad(), strategy.forward_context():
        y_pred = module(x, training=False)
        loss = model.compute_loss(x, y, y_pred, sample_weight)
        model._compiled.update_loss_trackers(_full_loss(loss, strategy), batch_size_of(x))
        return model.compute_metrics(x, y, y_pred, sample_weight)


def predict_step(model: Any, data: Any) -> Any:
    """The model's outputs for the inputs of one batch."""
    x = unpack(data)[0]
    strategy, module = _step_parts(model)
    with torch.no_grad(), strategy.forward_context():
        return module(x, training=False)


def compiled_loss(model: Any, y_true: Any, y_pred: Any, sample_weight: Any = None) -> torch.Tensor:
    """`model.compiled_loss(y, y_pred, sample_weight)`: `compute_loss` of a batch (scaled for distribution),
    also recorded in the 'loss' metric as Keras 2 does."""
    compiled = model._require_compiled("computing the loss")
    total = compiled.compute_loss(y_true, y_pred, sample_weight, model.losses)
    compiled.update_loss_trackers(total, batch_size_of(y_pred))
    return scale_for_distribution(model, total)


class CompiledMetrics:
    """Keras 2's `model.compiled_metrics`: update_state/result/reset_state over compile()'s metrics."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        self._model._require_compiled("updating metrics").update_compiled_metrics(y_true, y_pred, sample_weight)

    @property
    def metrics(self) -> list:
        compiled = self._model._compiled
        return [metric for _, metric, _ in (compiled._metrics or [])] if compiled is not None else []

    def result(self) -> dict:
        return {metric.name: metric.result() for metric in self.metrics}

    def reset_state(self) -> None:
        for metric in self.metrics:
            metric.reset_state()
