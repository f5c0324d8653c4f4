"""Keras 3's ScheduleFreeAdamW (Defazio et al., 2024: no learning-rate schedule, iterate averaging folded into
the weights) and Muon (Newton-Schulz orthogonalized momentum for 2-D weights, AdamW for the others)."""
from __future__ import annotations

import math
import re
from typing import Any, Iterable, Optional

import torch

from torchstrategy.keras.optimizers.base import LearningRate, Optimizer
from torchstrategy.keras.optimizers.gradient_descent import _COMMON_DOC, _zeros


class ScheduleFreeAdamW(Optimizer):
    __doc__ = """Schedule-free AdamW, Keras's form. Slots: `momentum` (the base sequence z, starting at the
    weights) and `velocity`. With `t = iterations + 1` (and a linear warm-up of lr over `warmup_steps`):
    `v += (g^2 - v)(1 - beta_2)`, `z -= lr g / (sqrt(v / (1 - beta_2^t)) + epsilon)`,
    `x = (w - (1 - beta_1) z) / beta_1` (z already updated, as Keras reads it), `x = (1 - 1/t) x + z / t`, `w = (1 - beta_1) z + beta_1 x`.
    """ + _COMMON_DOC

    def __init__(
        self, learning_rate: LearningRate = 0.0025, beta_1: float = 0.9, beta_2: float = 0.999,
        epsilon: float = 1e-8, warmup_steps: int = 0, weight_decay: Optional[float] = None,
        clipnorm: Optional[float] = None, clipvalue: Optional[float] = None, global_clipnorm: Optional[float] = None,
        use_ema: bool = False, ema_momentum: float = 0.99, ema_overwrite_frequency: Optional[int] = None,
        loss_scale_factor: Optional[float] = None, gradient_accumulation_steps: Optional[int] = None,
        name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        self.beta_1, self.beta_2, self.epsilon, self.warmup_steps = beta_1, beta_2, epsilon, warmup_steps
        super().__init__(
            learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm, clipvalue=clipvalue,
            global_clipnorm=global_clipnorm, use_ema=use_ema, ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency, loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps, name=name, **kwargs,
        )

    def _init_slots(self, param: torch.Tensor) -> dict:
        return {"momentum": param.detach().clone(), "velocity": _zeros(param)}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        if self.warmup_steps > 0:
            lr = lr * min(step / self.warmup_steps, 1.0)
        correction = 1.0 - self.beta_2 ** step
        weight = 1.0 / step
        for param, grad, state in zip(params, grads, states):
            z, v = state["momentum"], state["velocity"]
            v.add_((grad.square() - v) * (1.0 - self.beta_2))
            z.sub_(lr * grad / ((v / correction).sqrt() + self.epsilon))
            # Keras reads the momentum variable after its update here (its "old" value is the live variable)
            x_old = (param - (1.0 - self.beta_1) * z) / self.beta_1
            x_new = (1.0 - weight) * x_old + weight * z
            param.copy_((1.0 - self.beta_1) * z + self.beta_1 * x_new)

    def _get_hyper_config(self) -> dict:
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                "warmup_steps": self.warmup_steps}


class Muon(Optimizer):
    __doc__ = """Muon, Keras's form: 2-D weights (not embeddings, nor layers matching `exclude_layers`) follow
    `m += g + m (momentum - 1)`, the Newton-Schulz orthogonalization (`ns_steps` quintic steps with
    muon_a/b/c) of `g + momentum m` (nesterov) or `m`, scaled by `sqrt(max(rows, cols)) * rms_rate`, with
    `weight_decay`; every other weight follows Adam at `lr * adam_lr_ratio` with `adam_weight_decay`.
    Slots: `momentum` for all, `velocity` for the Adam ones.
    """ + _COMMON_DOC

    def __init__(
        self, learning_rate: LearningRate = 0.001, adam_beta_1: float = 0.9, adam_beta_2: float = 0.999,
        adam_weight_decay: float = 0.004, epsilon: float = 1e-7, weight_decay: float = 0.004,
        clipnorm: Optional[float] = None, clipvalue: Optional[float] = None, global_clipnorm: Optional[float] = None,
        use_ema: bool = False, ema_momentum: float = 0.99, ema_overwrite_frequency: Optional[int] = None,
        loss_scale_factor: Optional[float] = None, gradient_accumulation_steps: Optional[int] = None,
        name: Optional[str] = None, exclude_layers: Optional[Iterable[str]] = None, exclude_embeddings: bool = True,
        muon_a: float = 3.4445, muon_b: float = -4.775, muon_c: float = 2.0315, adam_lr_ratio: float = 1,
        momentum: float = 0.95, ns_steps: int = 5, nesterov: bool = True, rms_rate: Optional[float] = 0.2,
        **kwargs: Any,
    ) -> None:
        self.adam_beta_1, self.adam_beta_2, self.epsilon = adam_beta_1, adam_beta_2, epsilon
        self.muon_a, self.muon_b, self.muon_c = muon_a, muon_b, muon_c
        self.adam_lr_ratio, self.momentum, self.ns_steps = adam_lr_ratio, momentum, ns_steps
        self.nesterov, self.exclude_embeddings = nesterov, exclude_embeddings
        self.exclude_layers = list(exclude_layers or [])
        self.adam_weight_decay, self.rms_rate = adam_weight_decay, rms_rate
        self._muon_weight_decay = weight_decay
        super().__init__(
            learning_rate=learning_rate, weight_decay=None, clipnorm=clipnorm, clipvalue=clipvalue,
            global_clipnorm=global_clipnorm, use_ema=use_ema, ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency, loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps, name=name, **kwargs,
        )

    def _path(self, param: torch.Tensor) -> str:
        return str(self._variable_names.get(param) or getattr(param, "path", None) or getattr(param, "name", "")
                   or "")

    def _uses_adam(self, param: torch.Tensor) -> bool:
        if param.ndim != 2:
            return True
        path = self._path(param)
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def _init_slots(self, param: torch.Tensor) -> dict:
        slots = {"momentum": _zeros(param)}
        if self._uses_adam(param):
            slots["velocity"] = _zeros(param)
        return slots

    def _orthogonalize(self, x: torch.Tensor) -> torch.Tensor:
        tall = x.shape[-2] > x.shape[-1]
        if tall:
            x = x.transpose(-2, -1)
        x = x / (torch.linalg.norm(x, dim=(-2, -1), keepdim=True) + 1e-7)
        for _ in range(self.ns_steps):
            gram = x @ x.transpose(-2, -1)
            x = self.muon_a * x + (self.muon_b * gram + self.muon_c * gram @ gram) @ x
        return x.transpose(-2, -1) if tall else x

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        for param, grad, state in zip(params, grads, states):
            adam = "velocity" in state
            decay = self.adam_weight_decay if adam else self._muon_weight_decay
            if decay is not None and self._decay_filter.applies(param, self._variable_names):
                param.sub_(param * decay * lr)
            m = state["momentum"]
            if adam:
                rate = lr * self.adam_lr_ratio
                alpha = rate * math.sqrt(1.0 - self.adam_beta_2 ** step) / (1.0 - self.adam_beta_1 ** step)
                v = state["velocity"]
                m.add_((grad - m) * (1.0 - self.adam_beta_1))
                v.add_((grad.square() - v) * (1.0 - self.adam_beta_2))
                param.sub_(m * alpha / (v.sqrt() + self.epsilon))
                continue
            m.add_(grad + m * (self.momentum - 1.0))
            direction = grad + self.momentum * m if self.nesterov else m
            update = lr * self._orthogonalize(direction)
            if self.rms_rate is not None:
                update = update * math.sqrt(max(update.shape[0], update.shape[1])) * self.rms_rate
            param.sub_(update)

    def get_config(self) -> dict:
        """Keras's config; `weight_decay` is Muon's (the base's decay stays off: `_update` decays Muon and
        Adam weights at their own rates)."""
        config = super().get_config()
        config["weight_decay"] = self._muon_weight_decay
        return config

    def _get_hyper_config(self) -> dict:
        return {"adam_beta_1": self.adam_beta_1, "adam_beta_2": self.adam_beta_2, "epsilon": self.epsilon,
                "exclude_layers": self.exclude_layers, "muon_a": self.muon_a, "muon_b": self.muon_b,
                "muon_c": self.muon_c, "adam_lr_ratio": self.adam_lr_ratio, "momentum": self.momentum,
                "ns_steps": self.ns_steps, "nesterov": self.nesterov, "exclude_embeddings": self.exclude_embeddings,
                "adam_weight_decay": self.adam_weight_decay, "rms_rate": self.rms_rate}
