"""What Keras optimizers do around the update itself: the EMA of every variable (`use_ema`), its overwrite and
finalization, and the weight constraints applied after each update."""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import torch


def update_moving_averages(optimizer: Any, first_step: bool) -> None:
    """average = m * average + (1 - m) * variable for every variable (also those without a gradient
    this step), with m = 0 on the very first step so that the average starts at the updated value."""
    buckets: dict = {}
    for param in optimizer._all_params():
        average = optimizer.state[param].get("average")
        if average is None:  # state restored from an optimizer without EMA: start from the variable
            average = optimizer.state[param]["average"] = param.detach().clone()
        params, averages = buckets.setdefault((param.device, param.dtype), ([], []))
        params.append(param)
        averages.append(average)
    for (_, dtype), (params, averages) in buckets.items():
        # Keras computes momentum and 1 - momentum in the variable's dtype: the same rounding here
        momentum = torch.tensor(0.0 if first_step else optimizer.ema_momentum, dtype=dtype)
        torch._foreach_mul_(averages, float(momentum))
        torch._foreach_add_(averages, params, alpha=float(torch.tensor(1.0, dtype=dtype) - momentum))


def overwrite_with_averages(optimizer: Any, var_list: Sequence[torch.Tensor]) -> None:
    """Copies each variable's moving average into it (variables without one are left as they are)."""
    for param in var_list:
        average = optimizer.state[param].get("average") if param in optimizer.state else None
        if average is not None:
            param.copy_(average)


def check_remote_update(optimizer: Any, params: list) -> None:
    """A parameter-server worker hands the update to the ps tasks: they keep no EMA or constraints here."""
    if optimizer.use_ema:
        raise NotImplementedError(
            f"Optimizer '{optimizer.name}' has use_ema=True, which is not supported when the variables live on "
            "parameter servers (ParameterServerStrategy); create the optimizer with use_ema=False.")
    if not optimizer._warned_remote_constraints and any(getattr(p, "constraint", None) is not None for p in params):
        optimizer._warned_remote_constraints = True
        warnings.warn("Weight constraints are not applied when the variables live on parameter servers "
                      "(ParameterServerStrategy); the updates run unconstrained.", stacklevel=4)


def check_ema_args(use_ema: Any, ema_momentum: Any, ema_overwrite_frequency: Any) -> None:
    """Keras's checks: momentum in [0, 1]; overwrite frequency an int >= 1, or None/0 (never overwrite)."""
    if not use_ema:
        return
    if isinstance(ema_momentum, bool) or not isinstance(ema_momentum, (int, float)) or not 0 <= ema_momentum <= 1:
        raise ValueError(f"`ema_momentum` must be in the range [0, 1]. Received: ema_momentum={ema_momentum!r}")
    if ema_overwrite_frequency and (
            isinstance(ema_overwrite_frequency, bool) or not isinstance(ema_overwrite_frequency, int)
            or ema_overwrite_frequency < 1):
        raise ValueError("`ema_overwrite_frequency` must be an integer >= 1 or None. Received: "
                         f"ema_overwrite_frequency={ema_overwrite_frequency!r}")


def apply_constraints(params: Sequence[torch.Tensor]) -> None:
    """Keras: after the update, each variable with a `constraint` becomes `constraint(variable)`."""
    for param in params:
        constraint = getattr(param, "constraint", None)
        if constraint is not None:
            projected = constraint(param.detach())
            if tuple(projected.shape) != tuple(param.shape):
                raise ValueError(f"A constraint must return a tensor of its variable's shape {tuple(param.shape)}; "
                                 f"{constraint!r} returned shape {tuple(projected.shape)}.")
            param.copy_(projected)
