"""Keras's Adam family with Keras's update formulas (epsilon outside the square root, bias correction
folded into the step size): Adam (with AMSGrad), AdamW, Adamax and Nadam, as multi-tensor updates (Adam
and AdamW through torch's fused CPU kernel where the tensors allow it)."""
from __future__ import annotations

import math
import sys
from typing import Any, Optional

import torch

from torchstrategy.keras.optimizers.base import LearningRate, Optimizer
from torchstrategy.keras.optimizers.gradient_descent import _COMMON_DOC, _check_unit_interval, _zeros


def _fused_kernel_applies(params: list, grads: list, slots: list) -> bool:
    """Whether torch's fused CPU Adam kernel takes these tensors: plain CPU float tensors (not DTensor or
    XLA shards) with gradients of their parameter's dtype, each parameter dense in memory and its slots
    (`slots`: one list per kind, each parallel to `params`) laid out like it. The kernel walks every
    tensor's memory as one flat run from its data pointer, so tensors with different strides would pair
    the wrong elements (`_in_parameter_layout` fixes gradients). Runs every step: plain loops, no imports."""
    if not params:
        return False
    dtensors = sys.modules.get("torch.distributed.tensor")  # not imported: no parameter can be a DTensor
    dtensor = dtensors.DTensor if dtensors is not None else ()
    for param, grad in zip(params, grads):
        dtype = param.dtype
        if type(grad) is not torch.Tensor or grad.dtype != dtype or dtype not in _FUSED_DTYPES \
                or param.device.type != "cpu" or param.is_sparse or grad.is_sparse or isinstance(param, dtensor) \
                or not _dense(param):
            return False
    for kind in slots:
        for slot, param in zip(kind, params):
            if slot.stride() != param.stride():
                return False
    return True


# float16/bfloat16 variables keep the multi-tensor form: it computes in the variable's dtype, as Keras does (the
# fused kernel's float32 arithmetic gave other numbers: for float16 further from TF 2.21's, where v underflows)
_FUSED_DTYPES = (torch.float32, torch.float64)


def _dense(tensor: torch.Tensor) -> bool:
    """Whether `tensor`'s elements fill one gap-free run of memory in some order of its dimensions."""
    if tensor.is_contiguous():
        return True
    expected = 1
    for stride, size in sorted((stride, size) for size, stride in zip(tensor.shape, tensor.stride()) if size != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _in_parameter_layout(grads: list, params: list) -> list:
    """`grads`, each copied into its parameter's memory layout where the strides differ (a tape's gradient
    through a transposed view, e.g. a Conv2D kernel used as (out, in, h, w), keeps the view's layout)."""
    return [grad if grad.stride() == param.stride() else torch.empty_like(param, dtype=grad.dtype).copy_(grad)
            for grad, param in zip(grads, params)]


class _AdamBase(Optimizer):
    """Shared constructor of the optimizers with `beta_1`, `beta_2` and `epsilon`."""

    def __init__(
        self, learning_rate: LearningRate, beta_1: float, beta_2: float, epsilon: float, name: str, **kwargs: Any,
    ) -> None:
        _check_unit_interval("beta_1", beta_1)
        _check_unit_interval("beta_2", beta_2)
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)

    def _get_hyper_config(self) -> dict:
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class Adam(_AdamBase):
    __doc__ = """Adam, Keras's form: with `t = iterations + 1`,
    `alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)`, `m += (g - m) * (1 - beta_1)`,
    `v += (g^2 - v) * (1 - beta_2)`, `w -= alpha * m / (sqrt(v) + epsilon)`; with `amsgrad`,
    `v_hat = max(v_hat, v)` replaces `v` in the denominator.
    """ + _COMMON_DOC

    def build(self, var_list: Any) -> None:
        """Attaches the variables to update (Keras's subclasses name the argument `var_list`)."""
        super().build(var_list)

    def __init__(
        self, learning_rate: LearningRate = 0.001, beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
        amsgrad: bool = False, weight_decay: Optional[float] = None, clipnorm: Optional[float] = None,
        clipvalue: Optional[float] = None, global_clipnorm: Optional[float] = None, use_ema: bool = False,
        ema_momentum: float = 0.99, ema_overwrite_frequency: Optional[int] = None,
        loss_scale_factor: Optional[float] = None, gradient_accumulation_steps: Optional[int] = None,
        name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        self.amsgrad = bool(amsgrad)
        super().__init__(
            learning_rate, beta_1, beta_2, epsilon, name, weight_decay=weight_decay, clipnorm=clipnorm,
            clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema, ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency, loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps, **kwargs,
        )

    def _init_slots(self, param: torch.Tensor) -> dict:
        slots = {"momentum": _zeros(param), "velocity": _zeros(param)}
        if self.amsgrad:
            slots["velocity_hat"] = _zeros(param)
        return slots

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        momenta = [state["momentum"] for state in states]
        velocities = [state["velocity"] for state in states]
        velocity_hats = [state["velocity_hat"] for state in states] if self.amsgrad else []
        if _fused_kernel_applies(params, grads, [momenta, velocities, velocity_hats]):
            # torch's fused CPU kernel divides sqrt(v) by sqrt(1 - beta_2^t) before adding its epsilon: with
            # epsilon / sqrt(1 - beta_2^t) it computes Keras's alpha * m / (sqrt(v) + epsilon), in one pass
            correction = math.sqrt(1.0 - self.beta_2**step)
            step_tensor = self.__dict__.get("_fused_step")  # the kernel only reads it: one tensor, refilled
            if step_tensor is None:
                step_tensor = self.__dict__["_fused_step"] = torch.zeros(())
            step_tensor.fill_(float(step))
            torch._fused_adam_(
                params, _in_parameter_layout(grads, params), momenta, velocities, velocity_hats,
                [step_tensor] * len(params), lr=lr, beta1=self.beta_1, beta2=self.beta_2,
                weight_decay=0.0, eps=self.epsilon / correction, amsgrad=self.amsgrad, maximize=False)
            return
        alpha = lr * math.sqrt(1.0 - self.beta_2**step) / (1.0 - self.beta_1**step)
        torch._foreach_lerp_(momenta, grads, 1.0 - self.beta_1)
        torch._foreach_lerp_(velocities, torch._foreach_mul(grads, grads), 1.0 - self.beta_2)
        if self.amsgrad:
            velocity_hats = [state["velocity_hat"] for state in states]
            torch._foreach_maximum_(velocity_hats, velocities)
            velocities = velocity_hats
        denominators = torch._foreach_sqrt(velocities)
        torch._foreach_add_(denominators, self.epsilon)
        torch._foreach_addcdiv_(params, momenta, denominators, value=-alpha)

    def _get_hyper_config(self) -> dict:
        return {**super()._get_hyper_config(), "amsgrad": self.amsgrad}


class AdamW(Adam):
    __doc__ = """Adam with decoupled weight decay (Loshchilov & Hutter): each step first does
    `w -= w * weight_decay * lr`, then the Adam update. `weight_decay` defaults to 0.004 and is required.
    """ + _COMMON_DOC

    def __init__(
        self, learning_rate: LearningRate = 0.001, weight_decay: float = 0.004, beta_1: float = 0.9,
        beta_2: float = 0.999, epsilon: float = 1e-7, amsgrad: bool = False, clipnorm: Optional[float] = None,
        clipvalue: Optional[float] = None, global_clipnorm: Optional[float] = None, use_ema: bool = False,
        ema_momentum: float = 0.99, ema_overwrite_frequency: Optional[int] = None,
        loss_scale_factor: Optional[float] = None, gradient_accumulation_steps: Optional[int] = None,
        name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(
            learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, amsgrad=amsgrad,
            weight_decay=weight_decay, clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
            use_ema=use_ema, ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
            loss_scale_factor=loss_scale_factor, gradient_accumulation_steps=gradient_accumulation_steps,
            name=name, **kwargs,
        )


class Adamax(_AdamBase):
    __doc__ = """Adamax (Adam with the infinity norm), Keras's form: `m += (g - m) * (1 - beta_1)`,
    `u = max(beta_2 * u, |g|)`, `w -= lr * m / ((1 - beta_1^t) * (u + epsilon))`.
    """ + _COMMON_DOC

    def build(self, var_list: Any) -> None:
        """Attaches the variables to update (Keras's subclasses name the argument `var_list`)."""
        super().build(var_list)

    def __init__(
        self, learning_rate: LearningRate = 0.001, beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
        weight_decay: Optional[float] = None, clipnorm: Optional[float] = None, clipvalue: Optional[float] = None,
        global_clipnorm: Optional[float] = None, use_ema: bool = False, ema_momentum: float = 0.99,
        ema_overwrite_frequency: Optional[int] = None, loss_scale_factor: Optional[float] = None,
        gradient_accumulation_steps: Optional[int] = None, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        super().__init__(
            learning_rate, beta_1, beta_2, epsilon, name, weight_decay=weight_decay, clipnorm=clipnorm,
            clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema, ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency, loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps, **kwargs,
        )

    def _init_slots(self, param: torch.Tensor) -> dict:
        return {"momentum": _zeros(param), "norm": _zeros(param)}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        momenta = [state["momentum"] for state in states]
        norms = [state["norm"] for state in states]
        torch._foreach_lerp_(momenta, grads, 1.0 - self.beta_1)
        torch._foreach_mul_(norms, self.beta_2)
        torch._foreach_maximum_(norms, torch._foreach_abs(grads))
        denominators = torch._foreach_add(norms, self.epsilon)
        torch._foreach_addcdiv_(params, momenta, denominators, value=-lr / (1.0 - self.beta_1**step))


class Nadam(_AdamBase):
    __doc__ = """Nadam (Adam with Nesterov momentum, Dozat 2015), Keras's form with the momentum schedule
    `u_t = beta_1 * (1 - 0.5 * 0.96^t)` and its running product.
    """ + _COMMON_DOC

    def build(self, var_list: Any) -> None:
        """Attaches the variables to update (Keras's subclasses name the argument `var_list`)."""
        super().build(var_list)

    def __init__(
        self, learning_rate: LearningRate = 0.001, beta_1: float = 0.9, beta_2: float = 0.999, epsilon: float = 1e-7,
        weight_decay: Optional[float] = None, clipnorm: Optional[float] = None, clipvalue: Optional[float] = None,
        global_clipnorm: Optional[float] = None, use_ema: bool = False, ema_momentum: float = 0.99,
        ema_overwrite_frequency: Optional[int] = None, loss_scale_factor: Optional[float] = None,
        gradient_accumulation_steps: Optional[int] = None, name: Optional[str] = None, **kwargs: Any,
    ) -> None:
        self._u_product_cache = (0, 1.0)  # (step, product of u_1..u_step); derived from iterations, so no state
        super().__init__(
            learning_rate, beta_1, beta_2, epsilon, name, weight_decay=weight_decay, clipnorm=clipnorm,
            clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema, ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency, loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps, **kwargs,
        )

    def _u(self, step: int) -> float:
        return self.beta_1 * (1.0 - 0.5 * 0.96**step)

    def _u_product(self, step: int) -> float:
        cached_step, product = self._u_product_cache
        if cached_step > step:  # iterations were rewound (checkpoint restore): start over
            cached_step, product = 0, 1.0
        for index in range(cached_step + 1, step + 1):
            product *= self._u(index)
        self._u_product_cache = (step, product)
        return product

    def _init_slots(self, param: torch.Tensor) -> dict:
        return {"momentum": _zeros(param), "velocity": _zeros(param)}

    def _update(self, params: list, grads: list, states: list, lr: float, step: int) -> None:
        u_t, u_next = self._u(step), self._u(step + 1)
        u_product = self._u_product(step)
        u_product_next = u_product * u_next
        momenta = [state["momentum"] for state in states]
        velocities = [state["velocity"] for state in states]
        torch._foreach_lerp_(momenta, grads, 1.0 - self.beta_1)
        torch._foreach_lerp_(velocities, torch._foreach_mul(grads, grads), 1.0 - self.beta_2)
        m_hat = torch._foreach_mul(momenta, u_next / (1.0 - u_product_next))
        torch._foreach_add_(m_hat, grads, alpha=(1.0 - u_t) / (1.0 - u_product))
        # sqrt(v / (1 - beta_2^t)) == sqrt(v) / sqrt(1 - beta_2^t)
        denominators = torch._foreach_sqrt(velocities)
        torch._foreach_div_(denominators, math.sqrt(1.0 - self.beta_2**step))
        torch._foreach_add_(denominators, self.epsilon)
        torch._foreach_addcdiv_(params, m_hat, denominators, value=-lr)
