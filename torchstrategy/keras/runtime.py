"""A model's training-time objects (its strategy, the module a step calls, the built optimizer), set up
once per model and strategy by the loops and by a sharding strategy's first call; looked up by the steps."""
from __future__ import annotations

import contextlib
import weakref
from typing import Any, Iterator, Optional

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy._machinery.host_memory import keep_freed_memory
from torchstrategy.distribute.values import PerReplica
from torchstrategy.nest import map_structure

_RUNTIMES: "weakref.WeakKeyDictionary[Any, Runtime]" = weakref.WeakKeyDictionary()


class Runtime:
    """A model's training-time objects: its strategy, the module a step calls, the built optimizer.

    Setting up gives the model's strategy to every layer and to the optimizer, so that none of them
    looks a strategy up while a step runs (fit() may be called outside `strategy.scope()`)."""

    def __init__(self, model: Any, sample_x: Any) -> None:
        self.strategy = model.distribute_strategy
        if self.strategy.device.type == "cpu":
            keep_freed_memory()  # CPU steps reuse freed host memory instead of refaulting it (_host_memory.py)
        _build_if_needed(model, sample_x)
        model._set_distribute_strategy(self.strategy)
        if model.optimizer is not None and hasattr(model.optimizer, "_set_distribute_strategy"):
            model.optimizer._set_distribute_strategy(self.strategy)
        self.module = self.strategy.setup(model, model.optimizer)
        if model._compiled is not None and model._compiled.jit_compile:
            self.module = torch.compile(self.module)
        if model.optimizer is not None and hasattr(model.optimizer, "build"):
            model.optimizer.build(model.trainable_variables)
        self.device = self.strategy.device


def first_replica(value: Any) -> Any:
    """Replica 0's part of a per-replica value (what logs and model building look at)."""
    return value.values[0] if isinstance(value, PerReplica) else value


@contextlib.contextmanager
def eval_mode(model: Any) -> Iterator[None]:
    """torch modules nested in the model (nn.Dropout, nn.BatchNorm) follow inference mode too."""
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        yield
    finally:
        for module, mode in modes:
            module.training = mode


def call_on_one_row(model: Any, x: Any, context: Any) -> Any:
    """The model on the first row of `x` (replica 0's part), without gradients, inside the model's strategy
    scope and `context` (building weights, or checking shapes in inference mode)."""
    x = first_replica(x)
    params = list(model.parameters())
    device = params[0].device if params else torch.device("cpu")

    def row(leaf: Any) -> Any:
        if isinstance(leaf, np.ndarray):
            leaf = torch.from_numpy(np.ascontiguousarray(leaf))
        return leaf[:1].to(device) if isinstance(leaf, torch.Tensor) else leaf

    strategy = model.distribute_strategy
    scope = contextlib.nullcontext() if _context.get_strategy() is strategy else strategy.scope()
    with torch.no_grad(), scope, context:
        return model(map_structure(row, x), training=False)


def _build_if_needed(model: Any, sample_x: Any) -> None:
    unbuilt = [layer for layer in model._flatten_layers() if not layer.built]
    if not unbuilt and model.built:
        return
    if sample_x is None:
        raise ValueError(f"Model '{model.name}' is not built and there is no batch to build it from: give its first "
                         f"layer input_shape=, or call model.build(input_shape) before fit().")
    # weights created here are mirrored (or sharded) like ones created in scope
    call_on_one_row(model, sample_x, model.distribute_strategy.init_context())


def runtime_of(model: Any) -> Optional[Runtime]:
    """The model's runtime for its current strategy, or None before a loop (or first sharded call) set it up."""
    runtime = _RUNTIMES.get(model)
    return runtime if runtime is not None and runtime.strategy is model.distribute_strategy else None


def set_up(model: Any, sample_x: Any) -> Runtime:
    """The model's runtime, set up now (built from `sample_x` if needed) when it has none for its strategy."""
    runtime = runtime_of(model)
    if runtime is None:
        _refuse_another_multi_process_strategy(model, _RUNTIMES.get(model))
        runtime = Runtime(model, sample_x)
        _RUNTIMES[model] = runtime
    return runtime


def _refuse_another_multi_process_strategy(model: Any, earlier: Optional[Runtime]) -> None:
    """A model set up (trained, its optimizer built) under one strategy cannot move to a multi-process one:
    the processes would hold different copies and its optimizer is built for the old variables."""
    if earlier is None or model.optimizer is None:
        return
    strategy = model.distribute_strategy
    if strategy.num_processes == 1 or earlier.strategy.num_processes > 1:
        return
    raise ValueError(
        f"Model '{model.name}' was already set up (trained, or its optimizer built) under "
        f"{type(earlier.strategy).__name__} and is now used under {type(strategy).__name__} ({strategy.num_processes} "
        "processes): a Keras distribution set, or a strategy made, after the model was built cannot take it over. "
        "Call `keras.distribution.set_distribution(...)` (or build inside `with strategy.scope():`) before "
        "building the model.")


def forget(model: Any) -> None:
    """Drops the model's runtime (compile() starts over: a new optimizer, maybe jit_compile)."""
    _RUNTIMES.pop(model, None)
