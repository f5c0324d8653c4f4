"""The Keras `Metric` base (plain object holding torch state tensors that replicas combine by summing)
and the reduction metrics built on it: `Sum`, `Mean` and `MeanMetricWrapper`."""
from __future__ import annotations

import functools
import re
import threading
from typing import Any, Callable, Optional, Sequence

import torch

from torchstrategy import _context
from torchstrategy.keras import backend
from torchstrategy.keras.losses import _checks


def _snake_case(name: str) -> str:
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def _device_of(*values: Any) -> torch.device:
    for value in values:
        if isinstance(value, torch.Tensor):
            return value.device
    return torch.device("cpu")


# Replica threads of one process update the same metric objects (TF sums per-replica states on read;
# one shared state updated under a lock is the same sum).
_UPDATE_LOCK = threading.RLock()


def _locked(update: Callable) -> Callable:
    @functools.wraps(update)
    def locked_update(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _UPDATE_LOCK:
            return update(self, *args, **kwargs)

    locked_update._locked = True  # type: ignore[attr-defined]
    return locked_update


class Metric:
    """Base of Keras metrics: `update_state` accumulates, `result` reads, `reset_state` zeroes.

    State lives in tensors made by `add_weight`; they follow the inputs' device lazily and are
    combined across replicas by summing (`_state_tensors` / `_load_state_tensors`). Updates never
    call `.item()`, so a training step is not synchronised with the host.

    >>> class Count(Metric):
    ...     def __init__(self, name=None):
    ...         super().__init__(name=name)
    ...         self.seen = self.add_weight(name="seen")
    ...     def update_state(self, values):
    ...         self.seen.add_(torch.as_tensor(values).numel())
    ...     def result(self):
    ...         return self.seen.clone()
    >>> Count()([1, 2, 3])
    tensor(3.)
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        update = cls.__dict__.get("update_state")
        if update is not None and not getattr(update, "_locked", False):
            cls.update_state = _locked(update)

    def __init__(self, dtype: Any = None, name: Optional[str] = None) -> None:
        # unnamed metrics get unique Keras-style names ('auc', 'auc_1', ...), as Keras 2 does
        self.name = name or _context.unique_name(_snake_case(type(self).__name__))
        self._dtype = backend.to_torch_dtype(dtype)
        self._state_names: list[str] = []
        self._device = torch.device("cpu")

    @property
    def dtype(self) -> str:
        """The state/result dtype name, e.g. 'float32'."""
        return str(self._dtype).replace("torch.", "")

    def add_weight(self, shape: Sequence[int] = (), initializer: Any = None, dtype: Any = None,
                   name: Optional[str] = None) -> torch.Tensor:
        """Creates a zero-initialised state tensor, stored as attribute `name`."""
        if name is None:
            name = f"variable_{len(self._state_names)}" if self._state_names else "variable"
        if initializer not in ("zeros", None):
            raise ValueError(f"Metric states start at zero; got initializer={initializer!r}. Use 'zeros'.")
        tensor = torch.zeros(tuple(shape), dtype=backend.to_torch_dtype(dtype) if dtype else self._dtype,
                             device=self._device)
        setattr(self, name, tensor)
        if name not in self._state_names:
            self._state_names.append(name)
        return tensor

    def add_variable(self, shape: Sequence[int], initializer: Any, dtype: Any = None, aggregation: str = "sum",
                     name: Optional[str] = None) -> torch.Tensor:
        """Keras 3's spelling of add_weight; states combine over replicas by summing (aggregation='sum')."""
        if aggregation != "sum":
            raise NotImplementedError(f"Metric.add_variable(aggregation={aggregation!r}) is not supported: metric "
                                      "states combine over replicas by summing (aggregation='sum').")
        return self.add_weight(shape=shape, initializer=initializer, dtype=dtype, name=name)

    @property
    def variables(self) -> list[torch.Tensor]:
        return self._state_tensors()

    def _follow_device(self, device: torch.device) -> torch.device:
        """Moves the states to `device` the first time inputs arrive there; returns the device."""
        if device != self._device:
            for name in self._state_names:
                current = getattr(self, name)
                if device.type == "xla" and not current.any():  # zeros: made there (no upload in the graph)
                    setattr(self, name, torch.zeros(tuple(current.shape), dtype=current.dtype, device=device))
                else:
                    setattr(self, name, current.to(device))
            self._device = device
        return device

    def _state_tensors(self) -> list[torch.Tensor]:
        """The state tensors, in a fixed order; replicas combine them by summing."""
        return [getattr(self, name) for name in self._state_names]

    def _load_state_tensors(self, tensors: Sequence[Any]) -> None:
        """Replaces the states with (summed) values in `_state_tensors` order."""
        if len(tensors) != len(self._state_names):
            raise ValueError(f"Metric {self.name!r} has {len(self._state_names)} state tensors "
                             f"({self._state_names}); got {len(tensors)} values.")
        for name, value in zip(self._state_names, tensors):
            current = getattr(self, name)
            value = backend.to_tensor(value).to(device=current.device, dtype=current.dtype)
            setattr(self, name, value.reshape(current.shape).clone())

    def reset_state(self) -> None:
        """Sets every state back to zero."""
        if self._device.type == "xla":
            # fresh zeros made on the device, as the first epoch's states were: zeroing in place would give
            # the next epoch's first step a graph of its own, compiled again
            for name in self._state_names:
                current = getattr(self, name)
                setattr(self, name, torch.zeros(tuple(current.shape), dtype=current.dtype, device=self._device))
            return
        for tensor in self._state_tensors():
            tensor.zero_()

    def reset_states(self) -> None:
        """Alias of `reset_state` (the Keras 2 name)."""
        self.reset_state()

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement update_state().")

    def result(self) -> torch.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement result().")

    def __call__(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        """Updates with one batch, then returns the running result (as Keras does)."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config: dict) -> "Metric":
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"


def _divide_no_nan(numerator: torch.Tensor, denominator: torch.Tensor) -> torch.Tensor:
    """numerator / denominator, and 0 where the denominator is 0 (tf.math.divide_no_nan)."""
    safe = torch.where(denominator == 0, torch.ones_like(denominator), denominator)
    return torch.where(denominator == 0, torch.zeros_like(numerator), numerator / safe)


def _state_mean(total: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """`_divide_no_nan(total, count)` for a mean's own states, which carry no gradient: the quotient's inf or
    nan where the count is 0 is never selected, so no safe denominator is made."""
    return torch.where(count == 0, torch.zeros_like(total), total / count)


def _weights_for(values: torch.Tensor, sample_weight: Any,
                 reduce_by_sum: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Keras's weight handling: squeeze/expand a trailing axis, broadcast the weights to the values,
    or else reduce (mean, or sum for `Sum`) the values down to the weights' rank."""
    weights = backend.to_tensor(sample_weight).to(device=values.device, dtype=values.dtype, non_blocking=True)
    if weights.ndim and weights.ndim == values.ndim + 1 and weights.shape[-1] == 1:
        weights = weights.squeeze(-1)
    elif weights.ndim and values.ndim == weights.ndim + 1:
        weights = weights.unsqueeze(-1)
    try:
        return values, torch.broadcast_to(weights, values.shape)
    except RuntimeError:
        pass
    if weights.ndim <= values.ndim and tuple(values.shape[:weights.ndim]) == tuple(weights.shape):
        axes = tuple(range(weights.ndim, values.ndim))
        return (values.sum(dim=axes) if reduce_by_sum else values.mean(dim=axes)), weights
    raise ValueError(f"sample_weight of shape {tuple(weights.shape)} does not fit values of shape "
                     f"{tuple(values.shape)}: pass one weight per sample (shape (batch,)).")


class _Reduce(Metric):
    """Accumulates a weighted sum (and, for a mean, the total weight)."""

    def __init__(self, with_count: bool, name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_weight(name="total")
        self._with_count = with_count
        if with_count:
            self.count = self.add_weight(name="count")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        device = self._follow_device(_device_of(values))
        values = backend.to_tensor(values).detach().to(device=device, dtype=self._dtype, non_blocking=True)
        if sample_weight is None:
            self.total.add_(values.sum())
            if self._with_count:
                self.count.add_(values.numel())
            return
        if type(sample_weight) is int and values.ndim == 0 and abs(sample_weight) < 2 ** 24 \
                and values.dtype in (torch.float32, torch.float64):
            # one value weighted by a count (the loss tracker, by the batch size): exact in float32, so the
            # same numbers as the tensor path below without making a weight tensor every step
            self.total.add_(values * sample_weight)
            if self._with_count:
                self.count.add_(sample_weight)
            return
        values, weights = _weights_for(values, sample_weight, reduce_by_sum=not self._with_count)
        self.total.add_((values * weights).sum())
        if self._with_count:
            self.count.add_(weights.sum())


class Sum(_Reduce):
    """Running (weighted) sum of the values given."""

    def __init__(self, name: str = "sum", dtype: Any = None) -> None:
        super().__init__(with_count=False, name=name, dtype=dtype)

    def result(self) -> torch.Tensor:
        return self.total.clone()


class Mean(_Reduce):
    """Running (weighted) mean: sum(values * weights) / sum(weights).

    >>> m = Mean(); m.update_state([1.0, 3.0]); m.update_state([5.0], sample_weight=[2.0]); m.result()
    tensor(3.5000)
    """

    def __init__(self, name: str = "mean", dtype: Any = None) -> None:
        super().__init__(with_count=True, name=name, dtype=dtype)

    def result(self) -> torch.Tensor:
        return _state_mean(self.total, self.count)


class MeanMetricWrapper(Mean):
    """Mean over samples of `fn(y_true, y_pred, **kwargs)` (a per-sample metric or loss function).

    y_true and y_pred are cast to the metric dtype first, as Keras does.
    """

    def __init__(self, fn: Callable, name: Optional[str] = None, dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(name=name or getattr(fn, "__name__", None) or "mean_metric_wrapper", dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def _inputs(self, y_true: Any, y_pred: Any) -> tuple[torch.Tensor, torch.Tensor]:
        device = self._follow_device(_device_of(y_pred, y_true))
        y_pred = backend.to_tensor(y_pred).detach().to(device=device, dtype=self._dtype, non_blocking=True)
        y_true = backend.to_tensor(y_true).detach().to(device=device, dtype=self._dtype, non_blocking=True)
        return _checks.align_ranks(y_true, y_pred)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = self._inputs(y_true, y_pred)
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight=sample_weight)

    def get_config(self) -> dict:
        config = {**super().get_config(), **self._fn_kwargs}
        if type(self) is MeanMetricWrapper:  # built-in functions are saved by name
            config["fn"] = getattr(self._fn, "__name__", self._fn)
        return config

    @classmethod
    def from_config(cls, config: dict) -> "Metric":
        config = dict(config)
        if cls is MeanMetricWrapper and isinstance(config.get("fn"), str):
            from torchstrategy.keras import metrics

            fn = getattr(metrics, config["fn"], None)
            if not callable(fn):
                raise ValueError(f"Unknown metric function {config['fn']!r} in MeanMetricWrapper config; pass "
                                 "the function itself.")
            config["fn"] = fn
        return cls(**config)
