"""`tf.train.ExponentialMovingAverage`: shadow variables that follow variables by exponential decay, updated
eagerly by `apply`, with TF's num_updates decay cap."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

import torch

from torchstrategy.variables import Variable

__all__ = ["ExponentialMovingAverage"]


def _value(value: Any) -> torch.Tensor:
    if isinstance(value, Variable):
        return value.read_value().detach()
    return torch.as_tensor(value).detach()


def _base_name(var: Any, fallback: str) -> str:
    name = getattr(var, "name", None) if isinstance(var, Variable) else None
    if not name:
        return fallback
    return name[:-2] if name.endswith(":0") else name


class ExponentialMovingAverage:
    """Keeps `shadow = decay * shadow + (1 - decay) * value` for each variable given to `apply`.

    A shadow starts at its variable's value when first applied. zero_debias is accepted: TF applies it only to
    averages of plain tensors, which eager TF refuses as this class does. With num_updates (a number or a
    variable, read at each apply) the decay used is min(decay, (1 + num_updates) / (10 + num_updates)).

    >>> w = tf.Variable(1.0)
    >>> ema = ExponentialMovingAverage(decay=0.9)
    >>> ema.apply([w]); w.assign(2.0); ema.apply([w])
    >>> float(ema.average(w))
    1.1
    """

    def __init__(self, decay: Any, num_updates: Any = None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage"):
        self._decay, self._num_updates = decay, num_updates
        self._zero_debias, self._name = bool(zero_debias), name
        self._averages: Dict[int, Variable] = {}
        self._sources: Dict[int, Any] = {}  # id -> the variable/tensor, kept so ids stay unique

    @property
    def name(self) -> str:
        """The name of this averager (the suffix of the shadow variables' names)."""
        return self._name

    def _current_decay(self) -> torch.Tensor:
        decay = _value(self._decay).to(torch.float32)
        if self._num_updates is not None:
            steps = _value(self._num_updates).to(torch.float32)
            decay = torch.minimum(decay, (1.0 + steps) / (10.0 + steps))
        return decay

    def apply(self, var_list: Optional[Iterable[Any]] = None) -> None:
        """Creates the shadow of each variable in `var_list` on first sight (starting at the variable's value),
        then moves every shadow toward its variable's current value. Variables must be floating point; plain
        tensors are refused, as TF refuses them in eager mode."""
        items = list(var_list) if var_list is not None else []
        for var in items:
            if not isinstance(var, Variable):
                raise TypeError("tf.train.ExponentialMovingAverage does not support non-Variable tensors when eager "
                                f"execution is enabled (got {type(var).__name__}); wrap the value in a tf.Variable.")
            if not var.dtype.is_floating_point:
                raise TypeError(f"ExponentialMovingAverage.apply: the variables must be floating point; got "
                                f"{_base_name(var, 'a variable')} of dtype {var.dtype}.")
            if id(var) not in self._averages:
                shadow = Variable(_value(var).clone(), trainable=False, name=self.average_name(var))
                self._averages[id(var)], self._sources[id(var)] = shadow, var
        decay = self._current_decay()
        for var in items:
            shadow = self._averages[id(var)]
            value = _value(var).to(shadow.dtype)
            shadow.assign_sub((_value(shadow) - value) * (1.0 - decay).to(value.dtype))

    def average(self, var: Any) -> Optional[Variable]:
        """The shadow variable of `var`, or None when `apply` has not seen it."""
        return self._averages.get(id(var)) if self._sources.get(id(var)) is var else None

    def average_name(self, var: Any) -> str:
        """The name of `var`'s shadow: '<variable name>/<this averager's name>'."""
        return f"{_base_name(var, 'tensor')}/{self._name}"

    def variables_to_restore(self, moving_avg_variables: Optional[Iterable[Any]] = None) -> dict:
        """{average_name(v): v} for the averaged variables (or `moving_avg_variables`): a map that restores the
        averages into the variables themselves when a checkpoint is read by name."""
        chosen = list(moving_avg_variables) if moving_avg_variables is not None else [
            source for source in self._sources.values() if isinstance(source, Variable)]
        return {self.average_name(var): var for var in chosen}
