"""`keras.dtype_policies`, the one home of dtype policies: the dtype a layer computes in and the dtype its
variables are stored in (float32, mixed_float16, mixed_bfloat16, int8_from_float32, ...), the global policy and
casting scopes. The quantized policies live in quantized_policies.py and the path map in dtype_policy_map.py."""
from __future__ import annotations

import functools
from typing import Any, Optional, Union

import torch

from torchstrategy import _context, dtypes
from torchstrategy.keras import backend

QUANTIZATION_MODES = ("int8", "float8", "int4", "gptq", "awq")  # Keras 3.15's, in its order
_LAZY = {name: "quantized_policies" for name in ("QuantizedDTypePolicy", "QuantizedFloat8DTypePolicy",
                                                 "Int4DTypePolicy", "GPTQDTypePolicy", "AWQDTypePolicy")}
_LAZY["DTypePolicyMap"] = "dtype_policy_map"


def __getattr__(name: str) -> Any:
    """The quantized policies and DTypePolicyMap, imported on first use (their modules import this one)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"torchstrategy.keras.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# Mixed policies: (compute dtype, variable dtype). Every other policy is one dtype for both.
_MIXED = {
    "mixed_float16": (torch.float16, torch.float32),
    "mixed_bfloat16": (torch.bfloat16, torch.float32),
}
POLICY_NAMES = ("float32", "mixed_float16", "mixed_bfloat16", "float16", "bfloat16", "float64")
_LOW_PRECISION = (torch.float16, torch.bfloat16)
_INTEGER_AND_BOOL = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def dtype_name(dtype: torch.dtype) -> str:
    """The short name of a torch dtype: 'float32', 'bfloat16', ..."""
    return str(dtype).replace("torch.", "")


def _parse_name(value: Any) -> tuple[str, torch.dtype, torch.dtype]:
    """(name, compute dtype, variable dtype) of a policy name, a torch/NumPy dtype or a dtype name."""
    if isinstance(value, str) and value in _MIXED:
        compute, variable = _MIXED[value]
        return value, compute, variable
    try:
        dtype = None if value is None or isinstance(value, bool) else dtypes.as_dtype(value)
    except TypeError:
        dtype = None
    if dtype is None or not (dtype.is_floating_point or dtype in _INTEGER_AND_BOOL):
        valid = ", ".join(repr(name) for name in POLICY_NAMES)
        raise ValueError(
            f"Cannot convert {value!r} to a mixed precision policy. Valid policies: {valid} "
            "(integer dtype names such as 'int32' are accepted only for inputs)."
        )
    return dtype_name(dtype), dtype, dtype


class DTypePolicy:
    """A layer's dtype policy: `compute_dtype` for its math, `variable_dtype` for its weights (Keras's
    `keras.DTypePolicy`, also `keras.mixed_precision.Policy`). Immutable and hashable.

    'mixed_float16' and 'mixed_bfloat16' compute in float16 / bfloat16 with float32 weights; any
    float dtype name ('float32', 'bfloat16', ...) uses that dtype for both. Non-float dtype names
    ('int32', 'bool') give a non-floating policy, which only pass-through layers (an integer `Input`) accept.

    >>> policy = DTypePolicy("mixed_bfloat16")
    >>> policy.compute_dtype, policy.variable_dtype, policy.is_mixed
    ('bfloat16', 'float32', True)
    """

    __slots__ = ("_name", "_compute", "_variable")

    def __init__(self, name: Optional[str] = None) -> None:
        if name is None:
            name = backend.floatx()
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, such as 'mixed_float16'. Received: name={name!r} "
                            f"(of type {type(name).__name__})")
        self._name, self._compute, self._variable = _parse_name(name)

    @property
    def name(self) -> str:
        """The policy's name, e.g. 'mixed_float16'."""
        return self._name

    @property
    def compute_dtype(self) -> str:
        """The dtype layer computations run in, e.g. 'float16' for 'mixed_float16'."""
        return dtype_name(self._compute)

    @property
    def variable_dtype(self) -> str:
        """The dtype layer weights are created in, e.g. 'float32' for 'mixed_float16'."""
        return dtype_name(self._variable)

    @property
    def quantization_mode(self) -> Optional[str]:
        """Keras's quantization mode ('int8', 'int4', ...); None for a float policy."""
        return None

    @property
    def torch_compute_dtype(self) -> torch.dtype:
        """`compute_dtype` as a torch dtype."""
        return self._compute

    @property
    def torch_variable_dtype(self) -> torch.dtype:
        """`variable_dtype` as a torch dtype."""
        return self._variable

    @property
    def is_mixed(self) -> bool:
        """Computes in a different dtype than it stores weights in (mixed_float16, mixed_bfloat16)."""
        return self._compute != self._variable

    @property
    def is_floating(self) -> bool:
        """Computes in a floating dtype (every policy a float layer accepts)."""
        return self._compute.is_floating_point

    @property
    def is_low_precision(self) -> bool:
        """Computes in float16 or bfloat16."""
        return self._compute in _LOW_PRECISION

    def convert_input(self, x: Any, autocast: bool, dtype: Any) -> Any:
        """`x` cast to `dtype` when `autocast` is set and `x` is a float tensor of another dtype (Keras)."""
        target = dtypes.as_dtype(dtype)
        if autocast and isinstance(x, torch.Tensor) and x.is_floating_point() and x.dtype != target:
            return x.to(target)
        return x

    def get_config(self) -> dict:
        """{'name': ...}, what `from_config` takes."""
        return {"name": self._name}

    @classmethod
    def from_config(cls, config: dict) -> "DTypePolicy":
        """The policy `get_config` described."""
        return cls(**config)

    def __eq__(self, other: Any) -> bool:
        # Keras: equal only to a policy of the very same class (a quantized policy never equals a float one)
        return type(other) is type(self) and other._name == self._name

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return f'<{type(self).__name__} "{self._name}">'


FloatDTypePolicy = DTypePolicy  # Keras 3 names the float policies' class so; one class serves both here


def parse_policy(value: Any) -> DTypePolicy:
    """A policy from a policy, a policy or dtype name ('mixed_float16', 'half', 'int32') or a torch/NumPy
    dtype; anything else (None included) raises a ValueError that lists the valid names."""
    if isinstance(value, DTypePolicy):
        return value
    return DTypePolicy(_parse_name(value)[0])


def _is_quantized_name(identifier: Any) -> bool:
    """A quantized policy's name ('int8_from_float32', 'int4/128_from_bfloat16'): a quantization mode first.
    A bare 'int8' stays the integer dtype (an Input's dtype), where Keras's `get` would refuse it."""
    return isinstance(identifier, str) and identifier.startswith(QUANTIZATION_MODES) and identifier != "int8"


def get(identifier: Any) -> DTypePolicy:
    """A policy from a policy, a policy or dtype name ('mixed_float16', 'int8_from_float32'), a torch/NumPy
    dtype, or a serialized policy ({'class_name': 'QuantizedDTypePolicy', 'config': {...}}); None gives the
    global policy."""
    if identifier is None:
        return global_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if _is_quantized_name(identifier):
        from torchstrategy.keras import quantized_policies

        return quantized_policies.from_name(identifier)
    return parse_policy(identifier)


def serialize(dtype_policy: DTypePolicy) -> dict:
    """The policy as Keras serializes it: {'module': 'keras', 'class_name': 'DTypePolicy', 'config': ...}
    (module 'keras.dtype_policies' for the quantized policies and DTypePolicyMap)."""
    plain = type(dtype_policy) is DTypePolicy
    return {"module": "keras" if plain else "keras.dtype_policies", "class_name": type(dtype_policy).__name__,
            "config": dtype_policy.get_config(), "registered_name": None}


def deserialize(config: dict, custom_objects: Optional[dict] = None) -> DTypePolicy:
    """The policy `serialize` described (any class of keras.dtype_policies)."""
    if not isinstance(config, dict) or not isinstance(config.get("config"), dict):
        raise ValueError("Cannot interpret `dtype` argument. Expected a serialized policy such as "
                         f"{{'class_name': 'DTypePolicy', 'config': {{'name': 'float32'}}}}. Received: {config!r}")
    class_name = config.get("class_name", "DTypePolicy")
    if class_name in ("DTypePolicy", "FloatDTypePolicy", "Policy"):
        return DTypePolicy(config["config"].get("name"))
    if class_name not in _LAZY:
        raise ValueError(f"Unknown dtype policy class {class_name!r}. Expected one of "
                         f"{['DTypePolicy', 'FloatDTypePolicy', *_LAZY]}.")
    return __getattr__(class_name).from_config(dict(config["config"]), **(
        {"custom_objects": custom_objects} if class_name == "DTypePolicyMap" else {}))


def global_policy() -> DTypePolicy:
    """The policy layers get when created without `dtype=`: the one `set_global_policy` set, else floatx.

    >>> global_policy()
    <DTypePolicy "float32">
    """
    policy = _context.global_dtype_policy()
    return policy if policy is not None else DTypePolicy()


def set_global_policy(policy: Union[None, str, DTypePolicy]) -> None:
    """Sets the policy of layers created from now on, e.g. `set_global_policy('mixed_float16')`.

    None puts back the default (floatx, 'float32'). Existing layers keep their policy. Models
    created under 'mixed_float16' get a LossScaleOptimizer at `compile()`, as in Keras.
    """
    if policy is None:
        _context.set_global_dtype_policy(None)
        return
    if isinstance(policy, str):
        policy = get(policy) if _is_quantized_name(policy) else DTypePolicy(policy)
    elif not isinstance(policy, DTypePolicy):
        raise ValueError("Invalid `policy` argument. Expected the string name of a policy (such as "
                         f"'mixed_float16') or a `DTypePolicy` instance. Received: policy={policy!r} "
                         f"(of type {type(policy).__name__})")
    if not policy.is_floating:
        raise ValueError("set_global_policy can only be used to set the global policy to floating-point "
                         f"policies, such as 'float32' and 'mixed_float16', but got policy: {policy.name}. "
                         "Give integer inputs their dtype with Input(dtype=...) instead.")
    _context.set_global_dtype_policy(policy)


class _AutocastScope:
    """Sets this thread's autocast dtype for a `with` block and puts the previous one back."""

    __slots__ = ("_dtype", "_previous")

    def __init__(self, dtype: Optional[torch.dtype]) -> None:
        self._dtype = dtype
        self._previous: Optional[torch.dtype] = None

    def __enter__(self) -> None:
        self._previous = _context.set_autocast_dtype(self._dtype)

    def __exit__(self, *exc: Any) -> None:
        _context.set_autocast_dtype(self._previous)


class _Unchanged:
    """The scope when nothing changes (the common float32 case): no thread-state writes at all."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


_UNCHANGED = _Unchanged()


def compute_context(policy: DTypePolicy, autocast: bool = True) -> Any:
    """The context a layer's computation runs in under `policy`: weights read in the compute dtype.

    Inside it, `cast_on_read(weight)` gives float weights in the compute dtype (a differentiable cast,
    so gradients reach the float32 weights, and DDP's hooks on them fire as usual). Nesting follows
    Keras: a mixed policy opens a scope; inside an open scope, a layer with another float compute
    dtype switches it, and a non-float or `autocast=False` layer turns casting off for its call.
    Explicit casts rather than `torch.autocast`: they give Keras's result dtypes on every device type
    (autocast keeps some ops in float32 and its CPU op list differs from CUDA's), and they cost one
    cast per weight read. Costs nothing when neither the policy nor an outer scope asks for casts.

    >>> with compute_context(DTypePolicy("mixed_bfloat16")):
    ...     cast_on_read(torch.nn.Parameter(torch.ones(2))).dtype
    torch.bfloat16
    """
    current = _context.autocast_dtype()
    if current is not None:
        if not autocast or not policy.is_floating:
            return _AutocastScope(None)
        if current != policy.torch_compute_dtype:
            return _AutocastScope(policy.torch_compute_dtype)
        return _UNCHANGED
    if policy.is_mixed:
        return _AutocastScope(policy.torch_compute_dtype)
    return _UNCHANGED


def no_autocast() -> Any:
    """A context in which weights are read as stored (layer builds run in it: in-place initialisation
    must reach the weight itself, not a cast copy)."""
    return _AutocastScope(None) if _context.autocast_dtype() is not None else _UNCHANGED


def cast_on_read(weight: torch.Tensor) -> torch.Tensor:
    """`weight` in this thread's autocast dtype if one is set and it is a float of another dtype."""
    dtype = _context.autocast_dtype()
    if dtype is None or weight.dtype == dtype or not weight.is_floating_point():
        return weight
    return weight.to(dtype)


@functools.lru_cache(maxsize=None)
def check_device_support(policy: DTypePolicy, device_type: str) -> None:
    """Raises a clear error when `device_type` cannot compute in the policy's dtype (checked once)."""
    if policy.torch_compute_dtype == torch.bfloat16 and device_type == "cuda" and torch.cuda.is_available():
        if not torch.cuda.is_bf16_supported(including_emulation=False):
            raise ValueError(
                f"Policy '{policy.name}' computes in bfloat16, which this GPU "
                f"({torch.cuda.get_device_name()}) does not support natively (it needs compute capability "
                "8.0 or newer). Use 'mixed_float16' on this GPU."
            )
