"""tf.data options: `Options` (mutable, merged by `Dataset.with_options`), its nested
`DistributeOptions` / `OptimizationOptions` / `ThreadingOptions` / `AutotuneOptions`, and `AutoShardPolicy`."""
from __future__ import annotations

import enum
from typing import Any


class AutoShardPolicy(enum.IntEnum):
    """How a distributed dataset is split between workers (values as in tf.data)."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.IntEnum):
    """What to do with stateful functions when a dataset is serialized (accepted, unused)."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


def _option_getter(name: str) -> Any:
    def get(self: "_OptionsBase") -> Any:
        return self.__dict__["_set"].get(name, type(self)._DEFAULTS[name])
    return get


def _option_setter(name: str) -> Any:
    def put(self: "_OptionsBase", value: Any) -> None:
        self.__dict__["_set"][name] = value
    return put


def _nested_getter(name: str) -> Any:
    def get(self: "_OptionsBase") -> Any:
        return self.__dict__[name]
    return get


def _nested_setter(name: str, kind: type) -> Any:
    def put(self: "_OptionsBase", value: Any) -> None:
        if not isinstance(value, kind):
            raise TypeError(f"{type(self).__name__}.{name} must be a {kind.__name__}, got {value!r}.")
        self.__dict__[name] = value
    return put


class _OptionsBase:
    """Attribute bag with fixed option names; remembers which options were set, for merging."""

    _DEFAULTS: dict = {}
    _NESTED: dict = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Each option becomes a property of the class (as TF's option classes have them)."""
        super().__init_subclass__(**kwargs)
        for name in cls.__dict__.get("_DEFAULTS", {}):
            setattr(cls, name, property(_option_getter(name), _option_setter(name)))
        for name, kind in cls.__dict__.get("_NESTED", {}).items():
            setattr(cls, name, property(_nested_getter(name), _nested_setter(name, kind)))

    def __init__(self) -> None:
        object.__setattr__(self, "_set", {})
        for name, cls in self._NESTED.items():
            object.__setattr__(self, name, cls())

    def __getattr__(self, name: str) -> Any:
        defaults = type(self)._DEFAULTS
        if name in defaults:
            return self.__dict__["_set"].get(name, defaults[name])
        raise AttributeError(f"{type(self).__name__} has no option {name!r}. Valid options: {self._names()}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._NESTED:
            if not isinstance(value, self._NESTED[name]):
                raise TypeError(f"{type(self).__name__}.{name} must be a {self._NESTED[name].__name__}, got {value!r}.")
            object.__setattr__(self, name, value)
        elif name in self._DEFAULTS:
            self._set[name] = value
        else:
            raise AttributeError(
                f"Cannot set option {name!r} on {type(self).__name__}. Valid options: {self._names()}"
            )

    @classmethod
    def _names(cls) -> list:
        return sorted(list(cls._DEFAULTS) + list(cls._NESTED))

    def _merge(self, newer: "_OptionsBase") -> "_OptionsBase":
        """A new object: this one's settings overridden by those set on `newer`."""
        merged = type(self)()
        merged._set.update(self._set)
        merged._set.update(newer._set)
        for name in self._NESTED:
            object.__setattr__(merged, name, getattr(self, name)._merge(getattr(newer, name)))
        return merged

    def _state(self) -> tuple:
        return tuple((name, getattr(self, name)) for name in self._DEFAULTS) + tuple(
            (name, getattr(self, name)._state()) for name in self._NESTED
        )

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and self._state() == other._state()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._names())
        return f"{type(self).__name__}({fields})"


class DistributeOptions(_OptionsBase):
    """`auto_shard_policy` (default AUTO) and `num_devices` for distributed datasets."""

    _DEFAULTS = {"auto_shard_policy": AutoShardPolicy.AUTO, "num_devices": None}


class OptimizationOptions(_OptionsBase):
    """Static-optimization switches tf.data knows; accepted for compatibility, not acted on."""

    _DEFAULTS = {
        name: None
        for name in (
            "apply_default_optimizations", "filter_fusion", "filter_parallelization", "inject_prefetch",
            "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion", "map_parallelization",
            "noop_elimination", "parallel_batch", "seq_interleave_prefetch", "shuffle_and_repeat_fusion", "warm_start",
        )
    }


class ThreadingOptions(_OptionsBase):
    """Thread-pool sizes (`private_threadpool_size` bounds `map(num_parallel_calls=AUTOTUNE)`)."""

    _DEFAULTS = {"max_intra_op_parallelism": None, "private_threadpool_size": None}


class AutotuneOptions(_OptionsBase):
    """Autotuning knobs (accepted; AUTOTUNE picks fixed sensible values here)."""

    _DEFAULTS = {"enabled": None, "cpu_budget": None, "ram_budget": None, "autotune_algorithm": None,
                 "initial_parallelism": None, "min_parallelism": None}


class AutotuneAlgorithm(enum.IntEnum):
    """The autotuning algorithm tf.data would use (AutotuneOptions.autotune_algorithm; accepted, not acted on)."""

    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class ServiceOptions(_OptionsBase):
    """tf.data service options (`pinned`); accepted: tf.data service itself is not provided here."""

    _DEFAULTS = {"pinned": None}


class Options(_OptionsBase):
    """Dataset options, as tf.data.Options.

    >>> options = Options()
    >>> options.experimental_distribute.auto_shard_policy = AutoShardPolicy.DATA
    >>> options.deterministic = True
    """

    _DEFAULTS = {
        "dataset_name": None,
        "deterministic": None,
        "experimental_deterministic": None,
        "experimental_external_state_policy": None,
        "experimental_slack": None,
        "experimental_symbolic_checkpoint": None,
        "experimental_warm_start": None,
        "framework_type": None,
    }
    _NESTED = {
        "experimental_distribute": DistributeOptions,
        "experimental_optimization": OptimizationOptions,
        "threading": ThreadingOptions,
        "autotune": AutotuneOptions,
        "experimental_service": ServiceOptions,
    }

    @property
    def experimental_threading(self) -> ThreadingOptions:
        """Old name of `threading`."""
        return self.threading

    def merge(self, options: "Options") -> "Options":
        """A new Options: these settings, overridden by those set on `options` (as with_options merges)."""
        if not isinstance(options, Options):
            raise TypeError(f"Options.merge expects a tf.data.Options, got {type(options).__name__}.")
        return self._merge(options)
