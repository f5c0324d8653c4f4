"""The layouts replication part: lays a module's parameters out as DTensors on a device mesh (tensor
parallelism, e.g. a kernel split over a "model" axis) and makes the module compute with them."""
from __future__ import annotations

import re
import warnings
from typing import Any, Mapping, Optional, Sequence

import torch
import torch.distributed as dist
from torch import nn

from torchstrategy.distribute.parts.replication import LocalReplication


def parameter_paths(module: nn.Module) -> list[tuple[str, nn.Module, str]]:
    """(path, owner, attribute) of every parameter; the path is the owner's `name` attribute (a Keras layer's
    name) + "/" + the attribute, e.g. "dense_1/kernel", else torch's dotted name."""
    found, seen = [], set()
    for qualified, owner in module.named_modules():
        for attr, param in owner.named_parameters(recurse=False):
            if id(param) in seen:
                continue
            seen.add(id(param))
            prefix = getattr(owner, "name", None)
            path = f"{prefix}/{attr}" if isinstance(prefix, str) else ".".join(filter(None, (qualified, attr)))
            found.append((path, owner, attr))
    return found


def placements_for(axes: Sequence[Optional[str]], axis_names: Sequence[str], path: str, ndim: int) -> list:
    """The DTensor placements (one per mesh axis) of a tensor laid out as `axes` (one entry per tensor dim)."""
    from torch.distributed.tensor import Replicate, Shard

    axes = tuple(axes)
    if len(axes) != ndim:
        raise ValueError(f"The layout {axes} for '{path}' has {len(axes)} entries, but the tensor has {ndim} "
                         f"dimension(s): give one mesh axis name (or None) per dimension.")
    unknown = sorted({a for a in axes if a is not None} - set(axis_names))
    if unknown:
        raise ValueError(f"The layout {axes} for '{path}' names axis {unknown}, which is not an axis of the "
                         f"mesh {tuple(axis_names)}: use one of those names or None.")
    placements = []
    for name in axis_names:
        dims = [dim for dim, axis in enumerate(axes) if axis == name]
        if len(dims) > 1:
            raise ValueError(f"The layout {axes} for '{path}' shards two dimensions over mesh axis '{name}'.")
        placements.append(Shard(dims[0]) if dims else Replicate())
    return placements


def _map_tensors(value: Any, fn: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        mapped = [_map_tensors(v, fn) for v in value]
        return type(value)(*mapped) if hasattr(value, "_fields") else type(value)(mapped)
    if isinstance(value, dict):
        return {k: _map_tensors(v, fn) for k, v in value.items()}
    return value


class MeshLayouts(LocalReplication):
    """Lays out the parameters whose path matches a regex of `layouts` ({regex: axes}, read with re.search),
    on `mesh` (a torch DeviceMesh; None for a one-device mesh, where the layouts are only checked).

    A layer holding a laid-out parameter has all its parameters made DTensors (the others replicated) and
    computes on replicated DTensor inputs; its outputs come back as plain full tensors, so the layers
    around it are untouched. Each process of a batch-axis group sees the same rows, so the layer's
    work is split over the model axes only. With `average_gradients`, every parameter's gradient is
    averaged over all processes after backward (a mesh whose only axis above 1 is the batch axis).
    """

    forward_syncs = True  # a laid-out layer computes on DTensors, whose ops run collectives over the model axes

    def __init__(self, mesh: Any, axis_names: Sequence[str], batch_axis: str, layouts: Mapping[str, Sequence],
                 device: torch.device, average_gradients: bool = False) -> None:
        super().__init__(device)
        self.mesh = mesh
        self.axis_names = tuple(axis_names)
        self.batch_axis = batch_axis
        self.layouts = layouts
        self._average = average_gradients
        self._set_up: set[int] = set()

    def _matches(self, module: nn.Module) -> list[tuple[str, nn.Module, str, tuple]]:
        layouts = {key: tuple(axes) for key, axes in self.layouts.items()}
        matched, used = [], set()
        for path, owner, attr in parameter_paths(module):
            keys = [path] if path in layouts else [key for key in layouts if re.search(key, path)]
            if len(keys) > 1:
                raise ValueError(f"Variable path '{path}' matches several layout keys {keys}: make each path "
                                 f"match at most one key of the LayoutMap.")
            if keys:
                used.add(keys[0])
                matched.append((path, owner, attr, layouts[keys[0]]))
        for key in layouts:
            if key not in used:
                warnings.warn(f"The layout key '{key}' matches no variable of model '{getattr(module, 'name', '')}'"
                              f" (paths look like {[p for p, _, _ in parameter_paths(module)][:4]}); its weights "
                              f"stay replicated.", stacklevel=4)
        return matched

    def setup(self, module: nn.Module, optimizer: Any = None) -> nn.Module:
        module.to(self.device)
        if id(module) in self._set_up:
            return module
        self._set_up.add(id(module))
        matched = self._matches(module)
        for path, owner, attr, axes in matched:
            param = owner._parameters[attr]
            placements_for(axes, self.axis_names, path, param.dim())  # checks, even without a mesh
            if self.batch_axis in axes and self.mesh is not None and self.mesh[self.batch_axis].size() > 1:
                raise ValueError(f"The layout {axes} for '{path}' shards it over the batch axis "
                                 f"'{self.batch_axis}'; only the other mesh axes can hold weight shards.")
        if self.mesh is not None:
            owners = {id(owner): owner for _, owner, _, _ in matched}
            layout_of = {(id(owner), attr): axes for _, owner, attr, axes in matched}
            for owner in owners.values():
                self._lay_out(owner, layout_of)
        if self._average:
            for param in module.parameters():
                if param.requires_grad:
                    param.register_post_accumulate_grad_hook(self._average_grad)
        return module

    def _lay_out(self, owner: nn.Module, layout_of: dict) -> None:
        from torch.distributed.tensor import DTensor, Replicate, distribute_tensor

        for attr, param in list(owner.named_parameters(recurse=False)):
            axes = layout_of.get((id(owner), attr), (None,) * param.dim())
            placements = placements_for(axes, self.axis_names, f"{getattr(owner, 'name', '')}/{attr}", param.dim())
            laid_out = distribute_tensor(param.detach(), self.mesh, placements)
            owner._parameters[attr] = nn.Parameter(laid_out, requires_grad=param.requires_grad)
        replicated = [Replicate()] * len(self.axis_names)

        def to_dtensor(tensor: torch.Tensor) -> torch.Tensor:
            if isinstance(tensor, DTensor):
                return tensor
            return DTensor.from_local(tensor, self.mesh, replicated, run_check=False)

        def to_full(tensor: torch.Tensor) -> torch.Tensor:
            return tensor.full_tensor() if isinstance(tensor, DTensor) else tensor

        owner.register_forward_pre_hook(
            lambda _m, args, kwargs: (_map_tensors(args, to_dtensor), _map_tensors(kwargs, to_dtensor)),
            with_kwargs=True)
        owner.register_forward_hook(lambda _m, _args, output: _map_tensors(output, to_full))

    @staticmethod
    def _average_grad(param: torch.Tensor) -> None:
        grad = param.grad
        local = grad._local_tensor if hasattr(grad, "_local_tensor") else grad  # in place, in the DTensor
        dist.all_reduce(local)
        local.div_(dist.get_world_size())

    def global_norm(self, grads: Sequence[torch.Tensor]) -> torch.Tensor:
        """The norm of all gradients together, a sharded gradient counting all its shards."""
        squares = []
        for grad in grads:
            square = (grad.detach().float() * grad.detach().float()).sum()
            squares.append(square.full_tensor() if hasattr(square, "full_tensor") else square)
        return torch.stack([s.to(self.device) for s in squares]).sum().sqrt()
