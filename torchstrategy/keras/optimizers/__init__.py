"""`keras.optimizers`: Keras optimizers that are `torch.optim.Optimizer`s, plus `get`/`serialize`/`deserialize`
and the `schedules` submodule. Each optimizer follows Keras's argument names, defaults and update formulas."""
from __future__ import annotations

from typing import Optional, Union

from torchstrategy.keras.optimizers import legacy, schedules
from torchstrategy.keras.optimizers.adam import Adam, Adamax, AdamW, Nadam
from torchstrategy.keras.optimizers.base import Optimizer
from torchstrategy.keras.optimizers.loss_scale import LossScaleOptimizer
from torchstrategy.keras.optimizers.gradient_descent import SGD, Adadelta, Adagrad, RMSprop
from torchstrategy.keras.optimizers.schedules import LearningRateSchedule
from torchstrategy.keras.optimizers.more_optimizers import Adafactor, Ftrl, Lamb, Lion
from torchstrategy.keras.optimizers.schedule_free_and_muon import Muon, ScheduleFreeAdamW
from torchstrategy.keras.optimizers.multi_optimizer import MultiOptimizer, OptimizerMap

_BUILTIN = {cls.__name__.lower(): cls for cls in (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, Nadam)}
_BUILTIN.update({cls.__name__.lower(): cls for cls in (Adafactor, Ftrl, Lamb, Lion)})
_BUILTIN.update({cls.__name__.lower(): cls for cls in (Muon, ScheduleFreeAdamW)})


def serialize(optimizer: Optimizer) -> dict:
    """The optimizer's class and config as a JSON-compatible dict (Keras's layout)."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"serialize() expects a Keras optimizer; got {type(optimizer).__name__}.")
    return {
        "module": "keras.optimizers", "class_name": type(optimizer).__name__,
        "config": optimizer.get_config(), "registered_name": None,
    }


def deserialize(config: dict, custom_objects: Optional[dict] = None) -> Optimizer:
    """Builds an optimizer from `serialize()` output; built-in class names match case-insensitively.

    >>> deserialize({"class_name": "adam", "config": {"learning_rate": 0.01}}).learning_rate
    0.01
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"An optimizer config must be a dict with 'class_name' and 'config' keys; got {config!r}.")
    name = config["class_name"]
    custom = custom_objects or {}
    cls = custom.get(name) or (_BUILTIN.get(name.lower()) if isinstance(name, str) else None)
    if cls is None and name in ("LossScaleOptimizer", "MultiOptimizer"):
        cls = LossScaleOptimizer if name == "LossScaleOptimizer" else MultiOptimizer
    if cls is None:
        raise ValueError(
            f"Could not interpret optimizer identifier: '{name}'. Valid names: {sorted(_BUILTIN)} (any case), "
            "or pass your own optimizer class through `custom_objects`."
        )
    return cls.from_config(dict(config.get("config") or {}), custom_objects=custom_objects)


def get(identifier: Union[None, str, dict, Optimizer]) -> Optional[Optimizer]:
    """Resolves what `model.compile(optimizer=...)` accepts: a name ('adam', 'SGD', ...), a config dict,
    or an optimizer instance (returned as is).

    >>> type(get("RMSprop")).__name__
    'RMSprop'
    """
    if identifier is None or isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        return deserialize({"class_name": identifier, "config": {}})
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(
        f"Could not interpret optimizer identifier: {identifier!r}. Pass an optimizer name "
        f"({sorted(_BUILTIN)}), a config dict or an optimizer instance."
    )


__all__ = [
    "Optimizer", "LossScaleOptimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam",
    "LearningRateSchedule", "schedules", "legacy", "get", "serialize", "deserialize",
]
__all__ += ["Adafactor", "Ftrl", "Lamb", "Lion", "Muon", "ScheduleFreeAdamW", "MultiOptimizer", "OptimizerMap"]

