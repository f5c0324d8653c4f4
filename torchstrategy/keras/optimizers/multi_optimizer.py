"""Keras 3.15's `MultiOptimizer` and `OptimizerMap`: each variable is updated by the optimizer its path maps to
(exact key, else one regular expression by full match, else a default), or by the one a callable picks."""
from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import Any, Callable, Iterable, Iterator, Optional, Union

import torch

from torchstrategy.keras.optimizers.base import Optimizer
from torchstrategy.keras.optimizers.loss_scale import LossScaleOptimizer


def _serialize(obj: Any) -> Any:
    from torchstrategy.keras import serialization_lib

    return serialization_lib.serialize_keras_object(obj)


def _deserialize(config: Any, custom_objects: Optional[dict]) -> Any:
    from torchstrategy.keras import optimizers, serialization_lib

    if isinstance(config, dict) and config.get("class_name") == "OptimizerMap":
        return OptimizerMap.from_config(config["config"], custom_objects)
    if isinstance(config, dict) and "class_name" in config and "config" in config:
        return optimizers.deserialize(config, custom_objects=custom_objects)
    if isinstance(config, dict):
        return {key: _deserialize(value, custom_objects) for key, value in config.items()}
    return serialization_lib.deserialize_keras_object(config, custom_objects=custom_objects)


class OptimizerMap(MutableMapping):
    """Variable path -> optimizer: `map[path]` is the optimizer of that exact key, else of the one key that
    matches the path as a regular expression (`re.fullmatch`; 'encoder/.*' for everything under encoder),
    else `default_optimizer`. Keys are set once; a path two patterns match is an error."""

    def __init__(self, default_optimizer: Optimizer, optimizer_map: Optional[dict] = None) -> None:
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError(f"default_optimizer must be a Keras Optimizer instance. Received: {default_optimizer}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = optimizer_map or {}

    @property
    def default_optimizer(self) -> Optimizer:
        """The optimizer of every path no key matches."""
        return self._default_optimizer

    def __getitem__(self, key: str) -> Optimizer:
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [pattern for pattern in self._optimizer_map if re.fullmatch(pattern, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        return self._optimizer_map[matching[0]] if matching else self._default_optimizer

    def __setitem__(self, key: str, optimizer: Optimizer) -> None:
        if key in self._optimizer_map:
            raise ValueError(f"'{key}' already exists in the OptimizerMap with value {self._optimizer_map[key]}. "
                             "Please make sure to not use duplicated keys.")
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if not isinstance(optimizer, Optimizer):
            raise ValueError(f"optimizer must be a Keras Optimizer instance. Received: {optimizer}")
        if isinstance(optimizer, LossScaleOptimizer):
            raise ValueError("optimizer cannot be LossScaleOptimizer.")
        if isinstance(optimizer, MultiOptimizer):
            raise ValueError("optimizer cannot be MultiOptimizer.")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key: str) -> None:
        del self._optimizer_map[key]

    def __len__(self) -> int:
        return len(self._optimizer_map)

    def __iter__(self) -> Iterator[str]:
        return iter(self._optimizer_map)

    def __call__(self, variable: Any) -> Optimizer:
        """The optimizer of `variable` (by its Keras path, e.g. 'dense/kernel')."""
        return self[variable.path]

    def get_config(self) -> dict:
        return {"default_optimizer": _serialize(self._default_optimizer),
                "optimizer_map": {key: _serialize(value) for key, value in self._optimizer_map.items()}}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "OptimizerMap":
        return cls(_deserialize(config["default_optimizer"], custom_objects),
                   _deserialize(config["optimizer_map"], custom_objects))


class MultiOptimizer(Optimizer):
    """Updates each variable with the optimizer `optimizer_map` gives it: an OptimizerMap (by variable path)
    or a callable `variable -> optimizer`. Each sub-optimizer keeps its own learning rate, slots and
    iterations; `loss_scale_factor` is handed to all of them. Like Keras, it has no `learning_rate` of its own.

    >>> from torchstrategy.keras.optimizers import SGD, Adam
    >>> optimizer = MultiOptimizer(OptimizerMap(SGD(0.1), {"encoder/.*": Adam()}))
    """

    def __init__(self, optimizer_map: Union[OptimizerMap, Callable[[Any], Optimizer]],
                 loss_scale_factor: Optional[float] = None, name: Optional[str] = None) -> None:
        self._inner_optimizers: list = []
        super().__init__(learning_rate=0.0, loss_scale_factor=None, name=name)
        self._optimizer_map = optimizer_map
        self._multi_loss_scale = loss_scale_factor
        if isinstance(optimizer_map, OptimizerMap):
            for optimizer in list(optimizer_map.values()) + [optimizer_map.default_optimizer]:
                self._adopt(optimizer)
        elif not callable(optimizer_map):
            raise TypeError("optimizer_map must be an OptimizerMap or a callable returning an optimizer for a "
                            f"variable. Received: {optimizer_map!r}")
        self._assignment: dict = {}  # id(variable) -> index of its optimizer

    def _adopt(self, optimizer: Optimizer) -> int:
        if optimizer not in self._inner_optimizers:
            optimizer.loss_scale_factor = self._multi_loss_scale
            self._inner_optimizers.append(optimizer)
        return self._inner_optimizers.index(optimizer)

    @property
    def optimizers(self) -> list:
        """The sub-optimizers, in the order they were first met."""
        return self._inner_optimizers

    @property
    def learning_rate(self) -> Any:
        raise AttributeError("Learning rate cannot be accessed on a MultiOptimizer. Access the learning rate on the "
                             "individual sub-optimizers instead.")

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        raise AttributeError("Learning rate cannot be set on a MultiOptimizer. Set the learning rate on the "
                             "individual sub-optimizers instead.")

    lr = learning_rate

    @property
    def loss_scale_factor(self) -> Optional[float]:
        return self.__dict__.get("_multi_loss_scale")

    @loss_scale_factor.setter
    def loss_scale_factor(self, value: Optional[float]) -> None:
        self.__dict__["_multi_loss_scale"] = value
        for optimizer in self.__dict__.get("_inner_optimizers", ()):
            optimizer.loss_scale_factor = value

    def build(self, var_list: Iterable[Any]) -> None:
        """Assigns each variable its optimizer and builds every sub-optimizer on its own variables."""
        variables = list(var_list)
        if self.built:
            super().build(variables)  # the same variables again: nothing to do; others: the base's error
            return
        groups: list = [[] for _ in self._inner_optimizers]
        for variable in variables:
            optimizer = self._optimizer_map(variable)
            if not isinstance(optimizer, Optimizer):
                raise ValueError(f"Optimizer for variable {getattr(variable, 'path', variable)} is not an Optimizer "
                                 "instance.")
            if isinstance(optimizer, LossScaleOptimizer):
                raise ValueError("LossScaleOptimizer cannot be used inside an MultiOptimizer.")
            if isinstance(optimizer, MultiOptimizer):
                raise ValueError("MultiOptimizer cannot be used inside an MultiOptimizer.")
            index = self._adopt(optimizer)
            groups.extend([] for _ in range(len(self._inner_optimizers) - len(groups)))
            groups[index].append(variable)
            self._assignment[id(variable)] = index
        for optimizer, own in zip(self._inner_optimizers, groups):
            if own:
                optimizer.build(own)
        super().build(variables)

    def _set_distribute_strategy(self, strategy: Any) -> None:
        super()._set_distribute_strategy(strategy)
        for optimizer in self._inner_optimizers:
            optimizer._set_distribute_strategy(strategy)

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """Each sub-optimizer updates its variables that have a gradient; then `iterations += 1`."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._require_built()
        for optimizer in self._inner_optimizers:
            if any(p.grad is not None for p in optimizer._all_params()):
                optimizer.step()
        self._iterations += 1
        return loss

    @property
    def variables(self) -> list:
        """`iterations`, then every sub-optimizer's variables (Keras's order)."""
        out = [self._iterations]
        for optimizer in self._inner_optimizers:
            out.extend(optimizer.variables)
        return out

    def set_weights(self, weights: list) -> None:
        """Assigns `weights` to `variables` in order (iterations, then each sub-optimizer's variables)."""
        if not self.built:
            raise ValueError("You are calling `set_weights()` on an optimizer that has not yet been built. Please "
                             "call `optimizer.build(trainable_variables)` to create the optimizer weights before "
                             "calling `set_weights()`.")
        variables = self.variables
        if len(weights) != len(variables):
            raise ValueError(f"MultiOptimizer '{self.name}' has {len(variables)} variables (iterations, then each "
                             f"sub-optimizer's), but set_weights got {len(weights)} values.")
        with torch.no_grad():
            for index, (variable, value) in enumerate(zip(variables, weights)):
                value = torch.as_tensor(value)
                if tuple(value.shape) != tuple(variable.shape):
                    raise ValueError(f"MultiOptimizer '{self.name}': variable #{index} has shape "
                                     f"{tuple(variable.shape)}, but set_weights got shape {tuple(value.shape)}.")
                variable.copy_(value.to(variable.dtype))

    def get_config(self) -> dict:
        return {"optimizer_map": _serialize(self._optimizer_map), "loss_scale_factor": self.loss_scale_factor,
                "name": self.name}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "MultiOptimizer":
        config = dict(config)
        config["optimizer_map"] = _deserialize(config["optimizer_map"], custom_objects)
        return cls(**config)
