"""Keras 3's further optimizers with Keras's update formulas and slot names: Lion (sign of interpolated
momentum), Lamb (layer-wise trust ratio over Adam), Ftrl (follow the regularized leader) and Adafactor
(factored second moments)."""
from __future__ import annotations

import math
from typing import Any, Optional

import torch

from torchstrategy.keras.optimizers.base import LearningRate, Optimizer
from torchstrategy.keras.optimizers.gradient_descent import _COMMON_DOC, _zeros

_COMMON_ARGS = ("weight_decay", "clipnorm", "clipvalue", "global_clipnorm", "use_ema", "ema_momentum",
                "ema_overwrite_frequency", "loss_scale_factor", "gradient_accumulation_steps", "name")


def _common(values: dict) -> dict:
    return {key: values[key] for key in _COMMON_ARGS}


class Lion(Optimizer):
    __doc__ = """Lion (Chen et al., 2023): `w -= lr * sign(beta_1 * m + (1 - beta_1) * g)`, then
    `m = beta_2 * m + (1 - beta_2) * g`. Slot: `momentum`.
    """ + _COMMON_DOC

    def __init__(
        self, learning_rate: LearningRate = 0.001, beta_1: float = 0.9, beta_2: float = 0.99,
        weight_decay: Optional[float] = None, clipnorm: Optional[float] = None, clipvalue: Optional[float] = None,
        global_clipnorm: Optional[float] = None, use_ema: bool = False, ema_momentum: float = 0.99,
        ema_overwrite_frequency: Optional[int] = None, loss_scale_factor: Optional[float] = None,
        gradient_accumulation_steps: Optional[int] = None, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer degenerates "
                             f"to SignSGD. Received: beta_1={beta_1}.")
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)
        super().__init__(learning_rate=learning_rate, **_common(locals()), **kwargs)

    def _init_slots(self, param: torch.Tensor) -> dict:
        return {"momentum": _zeros(param)}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        momenta = [state["momentum"] for state in states]
        direction = torch._foreach_mul(momenta, self.beta_1)
        torch._foreach_add_(direction, grads, alpha=1.0 - self.beta_1)
        torch._foreach_sign_(direction)
        torch._foreach_add_(params, direction, alpha=-lr)
        torch._foreach_mul_(momenta, self.beta_2)
        torch._foreach_add_(momenta, grads, alpha=1.0 - self.beta_2)

    def _get_hyper_config(self) -> dict:
        return {"beta_1": self.beta_1, "beta_2": self.beta_2}


class Lamb(Optimizer):
    __doc__ = """Lamb (You et al., 2019): Adam's bias-corrected `m_hat / (sqrt(v_hat) + epsilon)` scaled per
    variable by the trust ratio `||w|| / ||update||` (1 when either norm is 0). Slots: `momentum`, `velocity`.
    """ + _COMMON_DOC

    def __init__(
        self, learning_rate: LearningRate = 0.001, beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
        weight_decay: Optional[float] = None, clipnorm: Optional[float] = None, clipvalue: Optional[float] = None,
        global_clipnorm: Optional[float] = None, use_ema: bool = False, ema_momentum: float = 0.99,
        ema_overwrite_frequency: Optional[int] = None, loss_scale_factor: Optional[float] = None,
        gradient_accumulation_steps: Optional[int] = None, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        super().__init__(learning_rate=learning_rate, **_common(locals()), **kwargs)

    def _init_slots(self, param: torch.Tensor) -> dict:
        return {"momentum": _zeros(param), "velocity": _zeros(param)}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        momenta = [state["momentum"] for state in states]
        velocities = [state["velocity"] for state in states]
        torch._foreach_lerp_(momenta, grads, 1.0 - self.beta_1)
        torch._foreach_lerp_(velocities, torch._foreach_mul(grads, grads), 1.0 - self.beta_2)
        m_hat = torch._foreach_div(momenta, 1.0 - self.beta_1**step)
        denominators = torch._foreach_div(velocities, 1.0 - self.beta_2**step)
        torch._foreach_sqrt_(denominators)
        torch._foreach_add_(denominators, self.epsilon)
        updates = torch._foreach_div(m_hat, denominators)
        for param, update in zip(params, updates):
            w_norm, u_norm = param.norm(), update.norm()
            ratio = torch.where(w_norm > 0, torch.where(u_norm > 0, w_norm / u_norm, 1.0), 1.0)
            param.sub_(ratio * lr * update)

    def _get_hyper_config(self) -> dict:
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class Ftrl(Optimizer):
    __doc__ = """FTRL-proximal (McMahan et al., 2013), Keras's form with `l2_shrinkage_regularization_strength`
    and `beta`. Slots: `accumulator` (starting at `initial_accumulator_value`) and `linear`.
    """ + _COMMON_DOC

    def __init__(
        self, learning_rate: LearningRate = 0.001, learning_rate_power: float = -0.5,
        initial_accumulator_value: float = 0.1, l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0, l2_shrinkage_regularization_strength: float = 0.0, beta: float = 0.0,
        weight_decay: Optional[float] = None, clipnorm: Optional[float] = None, clipvalue: Optional[float] = None,
        global_clipnorm: Optional[float] = None, use_ema: bool = False, ema_momentum: float = 0.99,
        ema_overwrite_frequency: Optional[int] = None, loss_scale_factor: Optional[float] = None,
        gradient_accumulation_steps: Optional[int] = None, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        for arg, value in (("initial_accumulator_value", initial_accumulator_value),
                           ("l1_regularization_strength", l1_regularization_strength),
                           ("l2_regularization_strength", l2_regularization_strength),
                           ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"`{arg}` needs to be positive or zero. Received: {arg}={value}.")
        if learning_rate_power > 0.0:
            raise ValueError("`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta
        super().__init__(learning_rate=learning_rate, **_common(locals()), **kwargs)

    def _init_slots(self, param: torch.Tensor) -> dict:
        return {"accumulator": torch.full_like(param, self.initial_accumulator_value), "linear": _zeros(param)}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        power = -self.learning_rate_power
        l1 = self.l1_regularization_strength
        l2 = self.l2_regularization_strength + self.beta / (2.0 * lr)
        for param, grad, state in zip(params, grads, states):
            accum, linear = state["accumulator"], state["linear"]
            new_accum = accum + grad.square()
            shrunk = grad + 2.0 * self.l2_shrinkage_regularization_strength * param
            linear.add_(shrunk - (new_accum.pow(power) - accum.pow(power)) / lr * param)
            quadratic = new_accum.pow(power) / lr + 2.0 * l2
            param.copy_((linear.clamp(-l1, l1) - linear) / quadratic)
            accum.copy_(new_accum)

    def _get_hyper_config(self) -> dict:
        return {"learning_rate_power": self.learning_rate_power,
                "initial_accumulator_value": self.initial_accumulator_value,
                "l1_regularization_strength": self.l1_regularization_strength,
                "l2_regularization_strength": self.l2_regularization_strength,
                "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
                "beta": self.beta}


class Adafactor(Optimizer):
    __doc__ = """Adafactor (Shazeer & Stern, 2018), Keras's form: second moments factored into row (`r`) and
    column (`c`) means for variables of rank >= 2 (`velocity` is their outer product), a full `velocity` for
    others; step size `max(epsilon_2, rms(w)) * min(lr, 1 / sqrt(t))`; updates clipped by `clip_threshold`.
    """ + _COMMON_DOC

    def __init__(
        self, learning_rate: LearningRate = 0.001, beta_2_decay: float = -0.8, epsilon_1: float = 1e-30,
        epsilon_2: float = 0.001, clip_threshold: float = 1.0, relative_step: bool = True,
        weight_decay: Optional[float] = None, clipnorm: Optional[float] = None, clipvalue: Optional[float] = None,
        global_clipnorm: Optional[float] = None, use_ema: bool = False, ema_momentum: float = 0.99,
        ema_overwrite_frequency: Optional[int] = None, loss_scale_factor: Optional[float] = None,
        gradient_accumulation_steps: Optional[int] = None, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        self.beta_2_decay, self.epsilon_1, self.epsilon_2 = beta_2_decay, epsilon_1, epsilon_2
        self.clip_threshold, self.relative_step = clip_threshold, relative_step
        super().__init__(learning_rate=learning_rate, **_common(locals()), **kwargs)

    def _init_slots(self, param: torch.Tensor) -> dict:
        if param.ndim < 2:  # Keras keeps scalar placeholders for the factors of low-rank variables
            r, c = param.new_zeros(()), param.new_zeros(())
        else:
            r = param.new_zeros(tuple(param.shape[:-1]))
            c = param.new_zeros(tuple(param.shape[:-2]) + (param.shape[-1],))
        return {"r": r, "c": c, "velocity": _zeros(param)}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        rho = min(lr, 1.0 / math.sqrt(step))
        beta_2 = 1.0 - step ** self.beta_2_decay
        for param, grad, state in zip(params, grads, states):
            alpha = torch.clamp_min(param.square().mean().sqrt(), self.epsilon_2) * rho
            squared = grad.square() + self.epsilon_1
            v = state["velocity"]
            if param.ndim >= 2:
                r, c = state["r"], state["c"]
                r.mul_(beta_2).add_(squared.mean(dim=-1), alpha=1.0 - beta_2)
                c.mul_(beta_2).add_(squared.mean(dim=-2), alpha=1.0 - beta_2)
                v.copy_((r / r.mean(dim=-1, keepdim=True)).unsqueeze(-1) * c.unsqueeze(-2))
            else:
                v.mul_(beta_2).add_(squared, alpha=1.0 - beta_2)
            u = grad / v.sqrt()
            u = u / torch.clamp_min(u.square().mean().sqrt() / self.clip_threshold, 1.0)
            param.sub_(alpha * u)

    def _get_hyper_config(self) -> dict:
        return {"beta_2_decay": self.beta_2_decay, "epsilon_1": self.epsilon_1, "epsilon_2": self.epsilon_2,
                "clip_threshold": self.clip_threshold, "relative_step": self.relative_step}
