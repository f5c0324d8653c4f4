"""Gradient handling shared by every Keras optimizer: checks of (gradient, variable) pairs, cross-replica
aggregation, Keras's clipnorm / global_clipnorm / clipvalue (foreach ops), bucketing, weight-decay filter."""
from __future__ import annotations

import re
from typing import Any, Iterable, Optional, Sequence

import torch


def _same_device(tensors: Sequence[torch.Tensor]) -> bool:
    first = tensors[0].device
    return all(t.device == first for t in tensors)


def split_pairs(grads_and_vars: Iterable[Any]) -> tuple[list, list]:
    """[(g0, v0), (g1, v1), ...] -> ([g0, g1, ...], [v0, v1, ...]) with a clear error for anything else."""
    grads, variables = [], []
    for index, pair in enumerate(grads_and_vars):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"apply_gradients() expects (gradient, variable) pairs; item #{index} is {pair!r}.")
        grads.append(pair[0])
        variables.append(pair[1])
    return grads, variables


def check_pairs(grads: Sequence[Any], variables: Sequence[Any]) -> None:
    """Raises a ValueError naming the first gradient/variable that cannot be applied."""
    if len(grads) != len(variables):
        raise ValueError(
            f"Got {len(grads)} gradients for {len(variables)} variables; pass exactly one gradient (or None) "
            "per variable, e.g. `optimizer.apply_gradients(zip(grads, model.trainable_variables))`."
        )
    for index, (grad, variable) in enumerate(zip(grads, variables)):
        if not isinstance(variable, torch.Tensor):
            raise ValueError(f"Variable #{index} is a {type(variable).__name__}, not a tensor/Parameter.")
        if grad is None:
            continue
        if not isinstance(grad, torch.Tensor):
            raise ValueError(f"Gradient #{index} is a {type(grad).__name__}; expected a tensor or None.")
        if tuple(grad.shape) != tuple(variable.shape):
            raise ValueError(
                f"Gradient #{index} has shape {tuple(grad.shape)} but its variable has shape "
                f"{tuple(variable.shape)}; gradients must match their variables one-to-one."
            )


def reduce_across_replicas(strategy: Any, grads: list) -> list:
    """Sums gradients over the replicas of `strategy` (tf.distribute semantics); a one-replica strategy
    hands them back unchanged. None entries stay None."""
    return grads if strategy is None else list(strategy.reduce_gradients(grads))


def global_norm(grads: Sequence[torch.Tensor]) -> torch.Tensor:
    """sqrt(sum of squares of every gradient), as a 0-d tensor on the first gradient's device."""
    device = grads[0].device
    norms = torch._foreach_norm(list(grads))
    squares = torch.stack([norm.to(device) for norm in norms]) ** 2
    return torch.sqrt(squares.sum())


def clip_gradients(
    grads: list[torch.Tensor],
    clipnorm: Optional[float],
    global_clipnorm: Optional[float],
    clipvalue: Optional[float],
    norm_of: Optional[Any] = None,
) -> list[torch.Tensor]:
    """Keras's clipping rules; returns new tensors (the `.grad` attributes are left untouched).
    `norm_of(grads)` gives the global norm (the strategy's: over every shard when it shards them)."""
    if clipnorm and clipnorm > 0:
        # Each gradient: g * c / max(||g||, c); a zero gradient stays zero.
        norms = torch._foreach_norm(grads)
        denominators = torch._foreach_clamp_min(norms, float(clipnorm))
        return [grad * clipnorm / denom.to(grad.dtype) for grad, denom in zip(grads, denominators)]
    if global_clipnorm and global_clipnorm > 0:
        total = (norm_of or global_norm)(grads).to(grads[0].device)
        # Keras: c * min(1/n, 1/c), plus (n - n) so that an inf/NaN norm poisons every gradient.
        scale = torch.clamp(1.0 / total, max=1.0 / global_clipnorm) * global_clipnorm + (total - total)
        if _same_device(grads):
            return list(torch._foreach_mul(grads, scale.to(grads[0].dtype)))
        return [grad * scale.to(grad.device, grad.dtype) for grad in grads]
    if clipvalue and clipvalue > 0:
        clipped = torch._foreach_clamp_min(grads, -float(clipvalue))
        torch._foreach_clamp_max_(clipped, float(clipvalue))
        return list(clipped)
    return grads


def check_clip_args(clipnorm: Any, clipvalue: Any, global_clipnorm: Any) -> None:
    """Keras allows at most one clipping argument, each a number >= 0."""
    given = {"clipnorm": clipnorm, "clipvalue": clipvalue, "global_clipnorm": global_clipnorm}
    if sum(value is not None for value in given.values()) > 1:
        raise ValueError(
            "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
            + ", ".join(f"{key}={value}" for key, value in given.items())
        )
    for key, value in given.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            raise ValueError(f"`{key}` must be a number >= 0 or None. Received: {key}={value!r}")


def as_param_list(var_list: Iterable[Any]) -> tuple[list[dict], dict]:
    """Splits what `build()` accepts (tensors, (name, tensor) pairs from `named_parameters()`, or torch
    param-group dicts) into torch param groups plus a {tensor: name} map."""
    if isinstance(var_list, torch.Tensor):
        var_list = [var_list]
    items = list(var_list)
    names: dict = {}
    groups: list[dict] = []
    loose: list[torch.Tensor] = []
    for item in items:
        if isinstance(item, dict):
            group = dict(item)
            params, group_names = as_param_list(group.get("params", []))
            group["params"] = params[0]["params"] if params else []
            names.update(group_names)
            groups.append(group)
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            names[item[1]] = item[0]
            loose.append(item[1])
        elif isinstance(item, torch.Tensor):
            loose.append(item)
        else:
            raise TypeError(f"An optimizer can only update tensors/Parameters; got a {type(item).__name__}.")
    if loose:
        groups.insert(0, {"params": loose})
    return groups, names


def step_with(optimizer: torch.optim.Optimizer, pairs: list) -> None:
    """Runs `optimizer.step()` on exactly these (gradient, variable) pairs, leaving every `.grad` as it was."""
    saved = {p: p.grad for group in optimizer.param_groups for p in group["params"]}
    try:
        for param in saved:
            param.grad = None
        for grad, variable in pairs:
            variable.grad = grad.detach().to(device=variable.device, dtype=variable.dtype)
        optimizer.step()
    finally:
        for param, grad in saved.items():
            param.grad = grad


def bucket(entries: list, grads: list) -> list:
    """Groups (group index, param) entries and their gradients by (group, device, dtype) so that each
    bucket can go through multi-tensor kernels; gradients are cast to their parameter's dtype."""
    buckets: dict = {}
    for (group_index, param), grad in zip(entries, grads):
        params, bucket_grads = buckets.setdefault((group_index, param.device, param.dtype), ([], []))
        params.append(param)
        bucket_grads.append(grad if grad.dtype == param.dtype else grad.to(param.dtype))
    return [(key[0], params, bucket_grads) for key, (params, bucket_grads) in buckets.items()]


class WeightDecayFilter:
    """Which variables weight decay skips: listed ones, and those whose name matches any of `var_names`
    (names come from `build(model.named_parameters())`, or a tensor's `path`/`name` attribute)."""

    def __init__(self, var_list: Optional[Iterable] = None, var_names: Optional[Iterable[str]] = None) -> None:
        self._excluded = list(var_list or [])
        names = sorted(set(var_names or []))
        self._pattern = re.compile("|".join(names)) if names else None
        self._cache: dict = {}

    def applies(self, param: torch.Tensor, names: dict) -> bool:
        key = id(param)
        if key not in self._cache:
            name = names.get(param) or getattr(param, "path", None) or getattr(param, "name", None)
            excluded = any(param is var for var in self._excluded) or (
                self._pattern is not None and name is not None and self._pattern.search(str(name)) is not None
            )
            self._cache[key] = not excluded
        return self._cache[key]

    def __copy__(self) -> "WeightDecayFilter":
        fresh = WeightDecayFilter.__new__(WeightDecayFilter)
        fresh._excluded, fresh._pattern, fresh._cache = self._excluded, self._pattern, {}
        return fresh
