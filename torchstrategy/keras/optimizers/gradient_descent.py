"""Keras's non-Adam optimizers with Keras's update formulas: SGD (momentum, Nesterov), RMSprop (centered,
momentum), Adagrad and Adadelta, each as a multi-tensor (torch._foreach_*) update."""
from __future__ import annotations

from typing import Any, Optional

import torch

from torchstrategy.keras.optimizers.base import LearningRate, Optimizer

_COMMON_DOC = """
    Common arguments (as every Keras optimizer): `weight_decay` (decoupled: `w -= w * weight_decay * lr`
    before the update), one of `clipnorm` / `clipvalue` / `global_clipnorm`, `loss_scale_factor`, `name`,
    and `params=` (torch-style: attach parameters now instead of at `build()` / first `apply_gradients`).
"""


def _check_unit_interval(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"`{name}` must be a float between [0, 1]. Received: {name}={value!r}")


def _zeros(param: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(param, memory_format=torch.preserve_format)


class SGD(Optimizer):
    __doc__ = """Gradient descent with optional (Nesterov) momentum, Keras's form.

    `velocity = momentum * velocity - lr * g`, then `w += velocity`; with `nesterov=True`,
    `w += momentum * velocity - lr * g`. Without momentum, `w -= lr * g`.
    """ + _COMMON_DOC

    def __init__(
        self, learning_rate: LearningRate = 0.01, momentum: float = 0.0, nesterov: bool = False,
        weight_decay: Optional[float] = None, clipnorm: Optional[float] = None, clipvalue: Optional[float] = None,
        global_clipnorm: Optional[float] = None, use_ema: bool = False, ema_momentum: float = 0.99,
        ema_overwrite_frequency: Optional[int] = None, loss_scale_factor: Optional[float] = None,
        gradient_accumulation_steps: Optional[int] = None, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        _check_unit_interval("momentum", momentum)
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)
        super().__init__(
            learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm, clipvalue=clipvalue,
            global_clipnorm=global_clipnorm, use_ema=use_ema, ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency, loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps, name=name, **kwargs,
        )

    def _init_slots(self, param: torch.Tensor) -> dict:
        return {"momentum": _zeros(param)} if self.momentum != 0 else {}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        if self.momentum == 0:
            torch._foreach_add_(params, grads, alpha=-lr)
            return
        velocities = [state["momentum"] for state in states]
        torch._foreach_mul_(velocities, self.momentum)
        torch._foreach_add_(velocities, grads, alpha=-lr)
        if self.nesterov:
            torch._foreach_add_(params, velocities, alpha=self.momentum)
            torch._foreach_add_(params, grads, alpha=-lr)
        else:
            torch._foreach_add_(params, velocities)

    def _get_hyper_config(self) -> dict:
        return {"momentum": self.momentum, "nesterov": self.nesterov}


class RMSprop(Optimizer):
    __doc__ = """RMSprop, Keras's form (zero-initialised accumulators, epsilon inside the square root).

    `v = rho * v + (1 - rho) * g^2`; centered: `a = rho * a + (1 - rho) * g`, `denom = v - a^2 + eps`,
    else `denom = v + eps`; `inc = lr * g / sqrt(denom)`; with momentum `mom = momentum * mom + inc`,
    `w -= mom`, else `w -= inc`.
    """ + _COMMON_DOC

    def build(self, var_list: Any) -> None:
        """Attaches the variables to update (Keras's subclasses name the argument `var_list`)."""
        super().build(var_list)

    def __init__(
        self, learning_rate: LearningRate = 0.001, rho: float = 0.9, momentum: float = 0.0, epsilon: float = 1e-7,
        centered: bool = False, weight_decay: Optional[float] = None, clipnorm: Optional[float] = None,
        clipvalue: Optional[float] = None, global_clipnorm: Optional[float] = None, use_ema: bool = False,
        ema_momentum: float = 0.99, ema_overwrite_frequency: Optional[int] = None,
        loss_scale_factor: Optional[float] = None, gradient_accumulation_steps: Optional[int] = None,
        name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        _check_unit_interval("rho", rho)
        _check_unit_interval("momentum", momentum)
        self.rho, self.momentum, self.epsilon, self.centered = float(rho), float(momentum), float(epsilon), bool(centered)
        super().__init__(
            learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm, clipvalue=clipvalue,
            global_clipnorm=global_clipnorm, use_ema=use_ema, ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency, loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps, name=name, **kwargs,
        )

    def _init_slots(self, param: torch.Tensor) -> dict:
        slots = {"velocity": _zeros(param)}
        if self.momentum > 0:
            slots["momentum"] = _zeros(param)
        if self.centered:
            slots["average_gradient"] = _zeros(param)
        return slots

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        velocities = [state["velocity"] for state in states]
        torch._foreach_mul_(velocities, self.rho)
        torch._foreach_addcmul_(velocities, grads, grads, value=1.0 - self.rho)
        if self.centered:
            averages = [state["average_gradient"] for state in states]
            torch._foreach_mul_(averages, self.rho)
            torch._foreach_add_(averages, grads, alpha=1.0 - self.rho)
            denominators = torch._foreach_addcmul(velocities, averages, averages, value=-1.0)
            torch._foreach_add_(denominators, self.epsilon)
        else:
            denominators = torch._foreach_add(velocities, self.epsilon)
        torch._foreach_sqrt_(denominators)
        if self.momentum > 0:
            momenta = [state["momentum"] for state in states]
            torch._foreach_mul_(momenta, self.momentum)
            torch._foreach_addcdiv_(momenta, grads, denominators, value=lr)
            torch._foreach_sub_(params, momenta)
        else:
            torch._foreach_addcdiv_(params, grads, denominators, value=-lr)

    def _get_hyper_config(self) -> dict:
        return {"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon, "centered": self.centered}


class Adagrad(Optimizer):
    __doc__ = """Adagrad, Keras's form: `acc += g^2`, `w -= lr * g / sqrt(acc + eps)`, with the accumulators
    starting at `initial_accumulator_value`.
    """ + _COMMON_DOC

    def build(self, var_list: Any) -> None:
        """Attaches the variables to update (Keras's subclasses name the argument `var_list`)."""
        super().build(var_list)

    def __init__(
        self, learning_rate: LearningRate = 0.001, initial_accumulator_value: float = 0.1, epsilon: float = 1e-7,
        weight_decay: Optional[float] = None, clipnorm: Optional[float] = None, clipvalue: Optional[float] = None,
        global_clipnorm: Optional[float] = None, use_ema: bool = False, ema_momentum: float = 0.99,
        ema_overwrite_frequency: Optional[int] = None, loss_scale_factor: Optional[float] = None,
        gradient_accumulation_steps: Optional[int] = None, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        if initial_accumulator_value < 0:
            raise ValueError(
                f"`initial_accumulator_value` must be >= 0. Received: initial_accumulator_value={initial_accumulator_value}"
            )
        self.initial_accumulator_value, self.epsilon = float(initial_accumulator_value), float(epsilon)
        super().__init__(
            learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm, clipvalue=clipvalue,
            global_clipnorm=global_clipnorm, use_ema=use_ema, ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency, loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps, name=name, **kwargs,
        )

    def _init_slots(self, param: torch.Tensor) -> dict:
        return {"accumulator": torch.full_like(param, self.initial_accumulator_value, memory_format=torch.preserve_format)}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        accumulators = [state["accumulator"] for state in states]
        torch._foreach_addcmul_(accumulators, grads, grads)
        denominators = torch._foreach_add(accumulators, self.epsilon)
        torch._foreach_sqrt_(denominators)
        torch._foreach_addcdiv_(params, grads, denominators, value=-lr)

    def _get_hyper_config(self) -> dict:
        return {"initial_accumulator_value": self.initial_accumulator_value, "epsilon": self.epsilon}


class Adadelta(Optimizer):
    __doc__ = """Adadelta, Keras's form (with a learning rate, default 0.001):
    `ag = rho * ag + (1 - rho) * g^2`, `delta = -sqrt(ad + eps) / sqrt(ag + eps) * g`,
    `ad = rho * ad + (1 - rho) * delta^2`, `w += lr * delta`.
    """ + _COMMON_DOC

    def build(self, var_list: Any) -> None:
        """Attaches the variables to update (Keras's subclasses name the argument `var_list`)."""
        super().build(var_list)

    def __init__(
        self, learning_rate: LearningRate = 0.001, rho: float = 0.95, epsilon: float = 1e-7,
        weight_decay: Optional[float] = None, clipnorm: Optional[float] = None, clipvalue: Optional[float] = None,
        global_clipnorm: Optional[float] = None, use_ema: bool = False, ema_momentum: float = 0.99,
        ema_overwrite_frequency: Optional[int] = None, loss_scale_factor: Optional[float] = None,
        gradient_accumulation_steps: Optional[int] = None, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        _check_unit_interval("rho", rho)
        self.rho, self.epsilon = float(rho), float(epsilon)
        super().__init__(
            learning_rate=learning_rate, weight_decay=weight_decay, clipnorm=clipnorm, clipvalue=clipvalue,
            global_clipnorm=global_clipnorm, use_ema=use_ema, ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency, loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps, name=name, **kwargs,
        )

    def _init_slots(self, param: torch.Tensor) -> dict:
        return {"accumulated_grad": _zeros(param), "accumulated_delta_var": _zeros(param)}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        grad_accs = [state["accumulated_grad"] for state in states]
        delta_accs = [state["accumulated_delta_var"] for state in states]
        torch._foreach_mul_(grad_accs, self.rho)
        torch._foreach_addcmul_(grad_accs, grads, grads, value=1.0 - self.rho)
        deltas = torch._foreach_add(delta_accs, self.epsilon)
        torch._foreach_sqrt_(deltas)
        denominators = torch._foreach_add(grad_accs, self.epsilon)
        torch._foreach_sqrt_(denominators)
        torch._foreach_div_(deltas, denominators)
        torch._foreach_mul_(deltas, grads)
        torch._foreach_neg_(deltas)
        torch._foreach_mul_(delta_accs, self.rho)
        torch._foreach_addcmul_(delta_accs, deltas, deltas, value=1.0 - self.rho)
        torch._foreach_add_(params, deltas, alpha=lr)

    def _get_hyper_config(self) -> dict:
        return {"rho": self.rho, "epsilon": self.epsilon}
