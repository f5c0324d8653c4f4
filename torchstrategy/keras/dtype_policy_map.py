"""`keras.dtype_policies.DTypePolicyMap`: layer paths (exact, else one regular expression by full match) to
dtype policies, with a default; it is itself a policy (the default's dtypes), as in Keras 3.15."""
from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import Any, Iterator, Optional

import torch

from torchstrategy.keras import dtype_policies
from torchstrategy.keras.dtype_policies import DTypePolicy


class DTypePolicyMap(DTypePolicy, MutableMapping):
    """A dict of layer path -> policy. `map[path]` is the policy of that exact key, else of the one key that
    matches `path` as a regular expression (`re.fullmatch`), else `default_policy`; a path two patterns
    match is an error. Keys are set once (a second assignment raises). As a policy it reports the default's
    dtypes and is named 'map_<default name>'.

    >>> policies = DTypePolicyMap("mixed_bfloat16")
    >>> policies["encoder/.*"] = "int8_from_mixed_bfloat16"
    >>> policies["encoder/attention/query"].name, policies["decoder"].name
    ('int8_from_mixed_bfloat16', 'mixed_bfloat16')
    """

    __slots__ = ("_default_policy_arg", "_default_policy", "_policy_map")

    def __init__(self, default_policy: Any = None, policy_map: Optional[dict] = None) -> None:
        if isinstance(default_policy, DTypePolicyMap):
            raise ValueError("`default_policy` cannot be a `DTypePolicyMap`.")
        if policy_map is not None and not isinstance(policy_map, dict):
            raise TypeError(f"If specified, `policy_map` must be a dict. Received: policy_map={policy_map} of type "
                            f"{type(policy_map)}")
        self._default_policy_arg = default_policy
        self._default_policy = dtype_policies.get(default_policy)
        self._policy_map: dict = {}
        for key, policy in (policy_map or {}).items():
            self[key] = policy

    # ----- as a policy: the default's -------------------------------------------------------------
    @property
    def default_policy(self) -> DTypePolicy:
        """The policy of every path no key matches."""
        return self._default_policy

    @property
    def name(self) -> str:
        return f"map_{self._default_policy.name}"

    @property
    def compute_dtype(self) -> str:
        return self._default_policy.compute_dtype

    @property
    def variable_dtype(self) -> str:
        return self._default_policy.variable_dtype

    @property
    def quantization_mode(self) -> Optional[str]:
        return self._default_policy.quantization_mode

    @property
    def torch_compute_dtype(self) -> torch.dtype:
        return self._default_policy.torch_compute_dtype

    @property
    def torch_variable_dtype(self) -> torch.dtype:
        return self._default_policy.torch_variable_dtype

    # ----- as a mapping ---------------------------------------------------------------------------
    def __getitem__(self, key: str) -> DTypePolicy:
        if key in self._policy_map:
            return self._policy_map[key]
        matching = [pattern for pattern in self._policy_map if re.fullmatch(pattern, key)]
        if len(matching) > 1:
            raise ValueError(f"Path '{key}' matches multiple dtype policy specification keys: {matching}. Please "
                             "make sure each path only matches at most one dtype policy specification key in the "
                             "DTypePolicyMap.")
        return self._policy_map[matching[0]] if matching else self._default_policy

    def __setitem__(self, key: str, policy: Any) -> None:
        if key in self._policy_map:
            raise ValueError(f"{key} already exist in the DTypePolicyMap with value {self._policy_map[key]}. "
                             "Please make sure to not use duplicated keys.")
        try:
            policy = dtype_policies.get(policy)
        except Exception:  # noqa: BLE001 - Keras reports any unreadable value the same way
            raise ValueError("Cannot interpret the assigned value by `keras.dtype_policies.get`. Received: "
                             f"{policy} of type {type(policy)}") from None
        self._policy_map[key] = policy

    def __delitem__(self, key: str) -> None:
        del self._policy_map[key]

    def __contains__(self, key: Any) -> bool:  # exact keys only, as Keras (not the patterns' matches)
        return key in self._policy_map

    def __len__(self) -> int:
        return len(self._policy_map)

    def __iter__(self) -> Iterator[str]:
        return iter(self._policy_map)

    def __eq__(self, other: Any) -> bool:
        return type(other) is DTypePolicyMap and other._default_policy == self._default_policy \
            and other._policy_map == self._policy_map

    def __hash__(self) -> int:  # mutable: hashed by identity
        return id(self)

    # ----- config ---------------------------------------------------------------------------------
    def get_config(self) -> dict:
        """{'default_policy': the argument given, 'policy_map': each policy serialized}. Without a default,
        the policies are written without their source (Keras: they then follow the global policy)."""
        serialized = {}
        for key, policy in self._policy_map.items():
            item = dtype_policies.serialize(policy)
            if self._default_policy_arg is None:
                config = dict(item["config"])
                config.update({"name": None} if "name" in config else {"source_name": None})
                item = {**item, "config": config}
            serialized[key] = item
        default = self._default_policy_arg
        return {"default_policy": dtype_policies.serialize(default) if isinstance(default, DTypePolicy) else default,
                "policy_map": serialized}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Optional[dict] = None) -> "DTypePolicyMap":
        """The map `get_config` described."""
        config = dict(config)
        policy_map = {key: dtype_policies.deserialize(value, custom_objects)
                      for key, value in (config.pop("policy_map", None) or {}).items()}
        default = config.pop("default_policy", None)
        if isinstance(default, dict):
            default = dtype_policies.deserialize(default, custom_objects)
        return cls(default, policy_map, **config)

    def __repr__(self) -> str:
        mapping = [(key, policy.name) for key, policy in self._policy_map.items()]
        return (f"<DTypePolicyMap at {hex(id(self))} default_policy={self._default_policy.name}, "
                f"mapping={mapping}>")
