"""`tf.keras.mixed_precision`: dtype policies (`Policy`/`DTypePolicy`, the global policy a new layer
takes), and `LossScaleOptimizer` (it lives in keras/optimizers/loss_scale.py) that compile adds for float16."""
from __future__ import annotations

from typing import Any, Optional, Union


from torchstrategy import _context
from torchstrategy.keras import dtype_policies as precision
from torchstrategy.keras import backend
from torchstrategy.keras.optimizers.base import Optimizer
from torchstrategy.keras.optimizers.loss_scale import LossScaleOptimizer


# ----- policies ----------------------------------------------------------------------------------
class DTypePolicy:
    """A layer's dtype policy: `compute_dtype` for its math, `variable_dtype` for its weights.

    'mixed_float16' and 'mixed_bfloat16' compute in float16 / bfloat16 with float32 weights; any
    float dtype name ('float32', 'bfloat16', ...) uses that dtype for both.

    >>> policy = Policy("mixed_bfloat16")
    >>> policy.compute_dtype, policy.variable_dtype
    ('bfloat16', 'float32')
    """

    def __init__(self, name: Optional[str] = None) -> None:
        if name is None:
            name = backend.floatx()
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, such as 'mixed_float16'. Received: name={name!r} "
                            f"(of type {type(name).__name__})")
        self._policy = precision.parse_policy(name)

    @property
    def name(self) -> str:
        return self._policy.name

    @property
    def compute_dtype(self) -> str:
        """The dtype layer computations run in, e.g. 'float16' for 'mixed_float16'."""
        return precision.dtype_name(self._policy.compute_dtype)

    @property
    def variable_dtype(self) -> str:
        """The dtype layer weights are created in, e.g. 'float32' for 'mixed_float16'."""
        return precision.dtype_name(self._policy.variable_dtype)

    def get_config(self) -> dict:
        return {"name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> "DTypePolicy":
        return cls(**config)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, DTypePolicy) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f'<DTypePolicy "{self.name}">'


Policy = DTypePolicy  # Keras 2's name; Keras 3 keeps it as an alias


def global_policy() -> DTypePolicy:
    """The policy layers get when created without `dtype=`: the one `set_global_policy` set, else floatx.

    >>> global_policy()
    <DTypePolicy "float32">
    """
    policy = _context.global_dtype_policy()
    return policy if policy is not None else DTypePolicy(backend.floatx())


def set_global_policy(policy: Union[None, str, DTypePolicy]) -> None:
    """Sets the policy of layers created from now on, e.g. `set_global_policy('mixed_float16')`.

    None puts back the default (floatx, 'float32'). Existing layers keep their policy. Models
    created under 'mixed_float16' get a LossScaleOptimizer at `compile()`, as in Keras.
    """
    if policy is None:
        _context.set_global_dtype_policy(None)
        return
    if isinstance(policy, str):
        policy = DTypePolicy(policy)
    elif not isinstance(policy, DTypePolicy):
        raise ValueError("Invalid `policy` argument. Expected the string name of a policy (such as "
                         f"'mixed_float16') or a `DTypePolicy` instance. Received: policy={policy!r} "
                         f"(of type {type(policy).__name__})")
    if not policy._policy.is_floating:
        raise ValueError("set_global_policy can only be used to set the global policy to floating-point "
                         f"policies, such as 'float32' and 'mixed_float16', but got policy: {policy.name}. "
                         "Give integer inputs their dtype with Input(dtype=...) instead.")
    _context.set_global_dtype_policy(policy)


dtype_policy = global_policy  # Keras 3 names
set_dtype_policy = set_global_policy


def _policy_from(value: Any) -> DTypePolicy:
    """What a layer's `dtype=` may be: None (the global policy), a DTypePolicy, a policy or dtype name,
    a torch/NumPy dtype, or a serialized policy ({'class_name': 'DTypePolicy', 'config': {'name': ...}})."""
    if value is None:
        return global_policy()
    if isinstance(value, DTypePolicy):
        return value
    if isinstance(value, dict) and isinstance(value.get("config"), dict) and "name" in value["config"]:
        return DTypePolicy(value["config"]["name"])
    return DTypePolicy(value if isinstance(value, str) else precision.parse_policy(value).name)


def _wrap_for_policy(policy: DTypePolicy, optimizer: Any) -> Any:
    """What `Model.compile` does under 'mixed_float16' (the model's policy, as Keras checks it):
    wraps a Keras optimizer in a LossScaleOptimizer unless it already is one."""
    if policy.name == "mixed_float16" and isinstance(optimizer, Optimizer) \
            and not isinstance(optimizer, LossScaleOptimizer):
        return LossScaleOptimizer(optimizer)
    return optimizer


__all__ = ["DTypePolicy", "Policy", "global_policy", "set_global_policy", "dtype_policy", "set_dtype_policy",
           "LossScaleOptimizer"]
