"""Keras learning-rate schedules (`keras.optimizers.schedules`): step -> learning rate as a Python float.
Owns the schedule classes, their configs, and `serialize`/`deserialize` of schedules."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import torch


def _as_step(step: Any) -> float:
    """Accepts Python/NumPy numbers and 0-d tensors (the optimizer's `iterations`)."""
    if isinstance(step, torch.Tensor):
        if step.numel() != 1:
            raise ValueError(f"A learning-rate schedule needs a scalar step; got a tensor of shape {tuple(step.shape)}.")
        return float(step.item())
    try:
        return float(step)
    except (TypeError, ValueError):
        raise TypeError(f"A learning-rate schedule needs an integer step; got {step!r}.") from None


def _store(schedule: Any, **config: Any) -> None:
    """Sets each constructor argument as an attribute and remembers the names: `get_config` reads them back."""
    schedule.__dict__.update(config)
    schedule._config_keys = tuple(config)


def _check_positive(name: str, value: Any) -> None:
    if value <= 0:
        raise ValueError(f"Argument `{name}` must be > 0. Received: {name}={value}")


class LearningRateSchedule:
    """Base class of learning-rate schedules: subclass it and define `__call__(step)` and `get_config()`.

    An instance passed as an optimizer's `learning_rate` is evaluated at `optimizer.iterations`
    before every update.

    >>> class Halving(LearningRateSchedule):
    ...     def __call__(self, step):
    ...         return 0.1 * 0.5 ** int(step)
    ...     def get_config(self):
    ...         return {}
    >>> Halving()(2)
    0.025
    """

    def __call__(self, step: Any) -> float:
        raise NotImplementedError(f"Learning rate schedule '{type(self).__name__}' must override `__call__(self, step)`.")

    def get_config(self) -> dict:
        keys = self.__dict__.get("_config_keys")
        if keys is None:
            raise NotImplementedError(
                f"Learning rate schedule '{type(self).__name__}' must override `get_config()` to be serializable."
            )
        return {key: getattr(self, key) for key in keys}

    @classmethod
    def from_config(cls, config: dict) -> "LearningRateSchedule":
        """Instantiates the schedule from the output of `get_config()`."""
        return cls(**config)

    def __repr__(self) -> str:
        try:
            args = ", ".join(f"{key}={value!r}" for key, value in self.get_config().items())
        except NotImplementedError:
            args = ""
        return f"{type(self).__name__}({args})"


class ExponentialDecay(LearningRateSchedule):
    """`initial_learning_rate * decay_rate ** (step / decay_steps)`; with `staircase` the exponent is floored.

    >>> ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)(20)
    0.025
    """

    def __init__(
        self, initial_learning_rate: float, decay_steps: float, decay_rate: float,
        staircase: bool = False, name: str = "ExponentialDecay",
    ) -> None:
        _check_positive("decay_steps", decay_steps)
        _store(self, initial_learning_rate=initial_learning_rate, decay_steps=decay_steps, decay_rate=decay_rate,
               staircase=staircase, name=name)

    def __call__(self, step: Any) -> float:
        exponent = _as_step(step) / self.decay_steps
        if self.staircase:
            exponent = math.floor(exponent)
        return float(self.initial_learning_rate) * float(self.decay_rate) ** exponent



class PiecewiseConstantDecay(LearningRateSchedule):
    """`values[0]` while `step <= boundaries[0]`, `values[i]` while `boundaries[i-1] < step <= boundaries[i]`,
    `values[-1]` after the last boundary.

    >>> schedule = PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
    >>> schedule(10), schedule(11), schedule(21)
    (1.0, 0.5, 0.1)
    """

    def __init__(self, boundaries: Sequence[float], values: Sequence[float], name: str = "PiecewiseConstant") -> None:
        boundaries, values = list(boundaries), list(values)
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. Received: "
                f"boundaries={boundaries} of length {len(boundaries)}, and values={values} of length {len(values)}."
            )
        if any(low >= high for low, high in zip(boundaries, boundaries[1:])):
            raise ValueError(f"`boundaries` must be strictly increasing. Received: boundaries={boundaries}")
        _store(self, boundaries=boundaries, values=values, name=name)

    def __call__(self, step: Any) -> float:
        current = _as_step(step)
        for boundary, value in zip(self.boundaries, self.values):
            if current <= boundary:
                return float(value)
        return float(self.values[-1])


class PolynomialDecay(LearningRateSchedule):
    """`(initial - end) * (1 - step / decay_steps) ** power + end`, with `step` capped at `decay_steps`;
    with `cycle`, `decay_steps` grows to the first multiple of itself that is >= step instead.

    >>> PolynomialDecay(0.1, 10, end_learning_rate=0.0)(5)
    0.05
    """

    def __init__(
        self, initial_learning_rate: float, decay_steps: float, end_learning_rate: float = 0.0001,
        power: float = 1.0, cycle: bool = False, name: str = "PolynomialDecay",
    ) -> None:
        _check_positive("decay_steps", decay_steps)
        _store(self, initial_learning_rate=initial_learning_rate, decay_steps=decay_steps,
               end_learning_rate=end_learning_rate, power=power, cycle=cycle, name=name)

    def __call__(self, step: Any) -> float:
        current = _as_step(step)
        decay_steps = float(self.decay_steps)
        if self.cycle:
            # At step 0 Keras uses one period (ceil(0) would give a zero-length period).
            multiplier = 1.0 if current == 0 else math.ceil(current / decay_steps)
            decay_steps *= multiplier
        else:
            current = min(current, decay_steps)
        fraction = current / decay_steps
        start, end = float(self.initial_learning_rate), float(self.end_learning_rate)
        return (start - end) * (1.0 - fraction) ** self.power + end


class InverseTimeDecay(LearningRateSchedule):
    """`initial_learning_rate / (1 + decay_rate * step / decay_steps)`; with `staircase` the ratio is floored.

    >>> InverseTimeDecay(0.1, decay_steps=1, decay_rate=0.5)(2)
    0.05
    """

    def __init__(
        self, initial_learning_rate: float, decay_steps: float, decay_rate: float,
        staircase: bool = False, name: str = "InverseTimeDecay",
    ) -> None:
        _check_positive("decay_steps", decay_steps)
        _store(self, initial_learning_rate=initial_learning_rate, decay_steps=decay_steps, decay_rate=decay_rate,
               staircase=staircase, name=name)

    def __call__(self, step: Any) -> float:
        ratio = _as_step(step) / self.decay_steps
        if self.staircase:
            ratio = math.floor(ratio)
        return float(self.initial_learning_rate) / (1.0 + float(self.decay_rate) * ratio)



def _cosine_factor(fraction: float, alpha: float) -> float:
    return (1.0 - alpha) * 0.5 * (1.0 + math.cos(math.pi * fraction)) + alpha


class CosineDecay(LearningRateSchedule):
    """Cosine decay from the start rate to `alpha` times it over `decay_steps`, optionally after a linear
    warmup from `initial_learning_rate` to `warmup_target` over `warmup_steps` (then decaying from the target).

    >>> CosineDecay(1.0, decay_steps=10)(5)
    0.5
    """

    def __init__(
        self, initial_learning_rate: float, decay_steps: float, alpha: float = 0.0, name: str = "CosineDecay",
        warmup_target: Optional[float] = None, warmup_steps: float = 0,
    ) -> None:
        _check_positive("decay_steps", decay_steps)
        if warmup_steps < 0:
            raise ValueError(f"Argument `warmup_steps` must be >= 0. Received: warmup_steps={warmup_steps}")
        _store(self, initial_learning_rate=initial_learning_rate, decay_steps=decay_steps, alpha=alpha, name=name,
               warmup_target=warmup_target, warmup_steps=warmup_steps)

    def __call__(self, step: Any) -> float:
        current = _as_step(step)
        initial = float(self.initial_learning_rate)
        if self.warmup_target is None:
            current = min(current, float(self.decay_steps))
            return initial * _cosine_factor(current / self.decay_steps, self.alpha)
        target = float(self.warmup_target)
        current = min(current, float(self.decay_steps) + self.warmup_steps)
        if current < self.warmup_steps:
            return (target - initial) * (current / self.warmup_steps) + initial
        return target * _cosine_factor((current - self.warmup_steps) / self.decay_steps, self.alpha)


class CosineDecayRestarts(LearningRateSchedule):
    """SGDR: cosine decay over `first_decay_steps`, then warm restarts; period i lasts `t_mul**i` times the
    first one and starts from `m_mul**i` times the initial rate (floored at `alpha` of it).

    >>> schedule = CosineDecayRestarts(1.0, first_decay_steps=10, t_mul=1.0)
    >>> schedule(0), schedule(10)
    (1.0, 1.0)
    """

    def __init__(
        self, initial_learning_rate: float, first_decay_steps: float, t_mul: float = 2.0, m_mul: float = 1.0,
        alpha: float = 0.0, name: str = "SGDRDecay",
    ) -> None:
        _check_positive("first_decay_steps", first_decay_steps)
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step: Any) -> float:
        fraction = _as_step(step) / self.first_decay_steps
        t_mul, m_mul = float(self._t_mul), float(self._m_mul)
        if t_mul == 1.0:
            restart = math.floor(fraction)
            fraction -= restart
        else:
            # Periods grow geometrically: restart i begins at (1 - t_mul**i) / (1 - t_mul) first-periods.
            restart = math.floor(math.log(1.0 - fraction * (1.0 - t_mul)) / math.log(t_mul))
            elapsed = (1.0 - t_mul**restart) / (1.0 - t_mul)
            fraction = (fraction - elapsed) / t_mul**restart
        cosine = 0.5 * m_mul**restart * (1.0 + math.cos(math.pi * fraction))
        return float(self.initial_learning_rate) * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self) -> dict:
        return {
            "initial_learning_rate": self.initial_learning_rate, "first_decay_steps": self.first_decay_steps,
            "t_mul": self._t_mul, "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name,
        }


_BUILTIN_SCHEDULES = {
    cls.__name__: cls
    for cls in (
        ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay, CosineDecay, CosineDecayRestarts,
    )
}


def serialize(learning_rate_schedule: LearningRateSchedule) -> dict:
    """The schedule as a JSON-compatible dict (`class_name` + `config`), as Keras writes it."""
    if not isinstance(learning_rate_schedule, LearningRateSchedule):
        raise TypeError(
            f"serialize() expects a LearningRateSchedule; got {type(learning_rate_schedule).__name__}."
        )
    return {
        "module": "keras.optimizers.schedules",
        "class_name": type(learning_rate_schedule).__name__,
        "config": learning_rate_schedule.get_config(),
        "registered_name": None,
    }


def deserialize(config: dict, custom_objects: Optional[dict] = None) -> LearningRateSchedule:
    """Rebuilds a schedule from `serialize()` output; `custom_objects` maps names of your own classes.

    >>> deserialize({"class_name": "ExponentialDecay",
    ...              "config": {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5}})(10)
    0.05
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"A schedule config must be a dict with 'class_name' and 'config' keys; got {config!r}.")
    name = config["class_name"]
    known = {**_BUILTIN_SCHEDULES, **(custom_objects or {})}
    if name not in known:
        raise ValueError(
            f"Unknown learning rate schedule: '{name}'. Known: {sorted(_BUILTIN_SCHEDULES)}; pass your own "
            "classes through `custom_objects={'Name': Class}`."
        )
    return known[name].from_config(dict(config.get("config", {})))


__all__ = [
    "LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay", "PolynomialDecay", "InverseTimeDecay",
    "CosineDecay", "CosineDecayRestarts", "serialize", "deserialize",
]
