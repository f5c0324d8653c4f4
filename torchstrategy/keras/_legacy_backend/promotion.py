"""`keras.backend.result_type`: Keras 3's dtype promotion (a JAX-style lattice with weak Python int/float),
as the TensorFlow backend resolves it (64-bit int/float kept, uint64 -> uint32, complex128 -> complex64)."""
from __future__ import annotations

import functools
from typing import Any

from torchstrategy.keras._legacy_backend.settings import _config, standardize_dtype

# Each dtype and the dtypes directly above it; "int"/"float" are the weak types of Python scalars.
_ABOVE = {
    "bool": ("int",), "int": ("uint8", "int8", "complex64"),
    "uint8": ("int16", "uint16"), "uint16": ("int32", "uint32"), "uint32": ("int64", "uint64"), "uint64": ("float",),
    "int8": ("int16",), "int16": ("int32",), "int32": ("int64",), "int64": ("float",),
    "float": ("bfloat16", "float16"), "bfloat16": ("float32",), "float16": ("float32",),
    "float32": ("float64", "complex64"), "float64": ("complex128",), "complex64": ("complex128",), "complex128": (),
}
_TF_BACKEND_NARROWING = {"uint64": "uint32", "complex128": "complex64"}
_PYTHON = {bool: "bool", int: "int64", float: "float32", complex: "complex128"}


@functools.lru_cache(maxsize=None)
def _upper_set(node: str) -> frozenset:
    found, frontier = {node}, [node]
    while frontier:
        for above in _ABOVE[frontier.pop()]:
            if above not in found:
                found.add(above)
                frontier.append(above)
    return frozenset(found)


def _least_upper_bound(nodes: set) -> str:
    common = frozenset.intersection(*(_upper_set(n) for n in nodes))
    best = (common & nodes) or {c for c in common if common <= _upper_set(c)}
    if len(best) != 1:
        raise ValueError(f"Input dtypes {tuple(sorted(nodes))} have no implicit promotion path in Keras's rules; "
                         "cast the inputs to the dtype you want first.")
    return next(iter(best))


def _weak(dtype: str) -> str:
    if dtype == "bool":
        return dtype
    return "float" if "float" in dtype else ("complex" if "complex" in dtype else "int")


def _name(value: Any) -> tuple:
    """(standard dtype name, whether it is a weak Python scalar type)."""
    if value in _PYTHON:
        return _PYTHON[value], value in (int, float)
    name = standardize_dtype(value)
    if "float8" in name:
        raise ValueError(f"float8 dtypes never promote implicitly; cast them explicitly first. Received: {value}")
    if name not in _ABOVE:
        raise ValueError(f"{value!r} is not a dtype Keras's promotion rules know; use one of {sorted(_ABOVE)[3:]}.")
    return name, False


def result_type(*dtypes: Any) -> str:
    """The dtype Keras 3 promotes `dtypes` to ('int32' with 'float16' gives 'float16', 'int8' with 'uint8'
    gives 'int16'); Python `int`/`float` are weak and take the other side's width; no dtypes gives floatx().

    >>> result_type("int8", "uint8")
    'int16'
    """
    floatx = _config().floatx()
    if not dtypes:
        return floatx
    names, weak = zip(*(_name(floatx if d is None else d) for d in dtypes))
    if len(names) == 1:
        out, out_weak = names[0], weak[0]
    elif len(set(names)) == 1 and not all(weak):
        out, out_weak = names[0], False
    elif all(weak):
        out, out_weak = _least_upper_bound(set(names)), True
    else:
        out = _least_upper_bound({_weak(n) if w else n for n, w in zip(names, weak)})
        out_weak = out in ("int", "float", "complex")
    if out_weak and out != "bool":
        bits = floatx[-2:]
        kind = "f" if out == "bfloat16" else out[:1]
        out = {"i": f"int{bits}", "u": f"uint{bits}", "b": "bool"}.get(kind, f"float{bits}")
    return _TF_BACKEND_NARROWING.get(out, out)
