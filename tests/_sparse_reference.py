"""Runs the TF 2.21 cases of tf.sparse, tf.sets and tf.lookup frozen in sparse_reference.json (written by
tools/tf_reference/sparse_reference.py) on torchstrategy: the same expressions, in order (tables keep state),
compared with TF's indices, values, dtypes and shapes; where TF raised, ours must raise a matching error."""
from __future__ import annotations

import json
import math
import os
from typing import Any, Callable, Optional

import numpy as np
import torch

import torchstrategy as tf
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.indexed_slices import IndexedSlices
from torchstrategy.sparse_tensor import SparseTensor

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sparse_reference.json")
# The classes a TF error may be here (TF raises InvalidArgumentError from kernels; ours may find it earlier).
_ERRORS = {"InvalidArgumentError": (InvalidArgumentError, ValueError), "ValueError": (ValueError, InvalidArgumentError),
           "TypeError": (TypeError,)}


def is_sparse_case(case: str) -> bool:
    return case.startswith(("st.", "tf.sparse.", "tf.SparseTensor("))


def is_text_file_case(case: str) -> bool:
    return "VOCAB" in case or case.startswith(("text.", "cols.", "voc_file.", "tf.lookup.TextFileIndex"))


def is_table_case(case: str) -> bool:
    return not (is_sparse_case(case) or case.startswith("tf.sets.") or is_text_file_case(case))


def load() -> dict:
    with open(PATH, encoding="utf-8") as handle:
        return json.load(handle)


def _name(dtype: Any) -> str:
    if isinstance(dtype, np.dtype):
        return "string" if dtype.kind in "OSU" else dtype.name
    return str(dtype).replace("torch.", "")


def _decoded(array: np.ndarray) -> list:
    flat = [v.decode() if isinstance(v, bytes) else v for v in array.reshape(-1)]
    return np.array(flat, dtype=object).reshape(array.shape).tolist()


def normalize(value: Any) -> Any:
    """Our result in the reference file's form."""
    if isinstance(value, SparseTensor):
        values = value.values
        listed = _decoded(values) if isinstance(values, np.ndarray) else values.tolist()
        return {"sparse": {"indices": value.indices.tolist(), "values": listed, "dtype": _name(value.dtype),
                           "dense_shape": value.dense_shape.tolist()}}
    if isinstance(value, IndexedSlices):
        return {"indexed_slices": {"values": value.values.tolist(), "indices": value.indices.tolist()}}
    if isinstance(value, torch.Size):
        return {"shape": list(value)}
    if isinstance(value, (tuple, list)):
        return {"seq": [normalize(v) for v in value]}
    if isinstance(value, torch.dtype) or isinstance(value, np.dtype):
        return {"dtype": _name(value)}
    if isinstance(value, torch.Tensor):
        return {"tensor": {"dtype": _name(value.dtype), "value": value.detach().cpu().tolist()}}
    if isinstance(value, np.ndarray):
        return {"tensor": {"dtype": _name(value.dtype), "value": _decoded(value) if value.dtype == object
                           else value.tolist()}}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"py": value}
    return {"type": type(value).__name__}


def _close(ours: Any, theirs: Any) -> bool:
    if isinstance(theirs, float) and isinstance(ours, (int, float)):
        return math.isclose(ours, theirs, rel_tol=1e-6, abs_tol=1e-7)
    if isinstance(theirs, list) and isinstance(ours, list):
        return len(ours) == len(theirs) and all(_close(a, b) for a, b in zip(ours, theirs))
    if isinstance(theirs, dict) and isinstance(ours, dict):
        return ours.keys() == theirs.keys() and all(_close(ours[k], theirs[k]) for k in theirs)
    return ours == theirs


def _unordered(result: dict) -> Any:
    keys, values = (item["tensor"]["value"] for item in result["seq"])
    return sorted(zip(keys, values))


def run(select: Callable[[str], bool], overrides: Optional[dict] = None) -> list:
    """Runs every case `select` picks (and the set-up statements before them), returning the failures."""
    data = load()
    namespace: dict = {"tf": tf}
    vocab = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"tnp_vocab_{os.getpid()}.txt")
    with open(vocab, "w", encoding="utf-8") as handle:
        handle.write(data["vocab"])
    namespace["VOCAB"] = vocab
    exec(data["setup"], namespace)  # noqa: S102 - the reference file's fixed set-up text
    failures = []
    overrides = overrides or {}
    try:
        for case, expected in data["cases"]:
            if not select(case):
                continue
            expected = overrides.get(case, expected)
            statement = " = " in case.split("(")[0]
            try:
                if statement:
                    exec(case, namespace)  # noqa: S102
                    got = {"py": None}
                else:
                    got = normalize(eval(case, namespace))  # noqa: S307
            except Exception as error:  # noqa: BLE001 - compared with what TF raised
                if "error" not in expected:
                    failures.append(f"{case}: raised {type(error).__name__}: {error}; TF gave {expected}")
                elif not isinstance(error, _ERRORS.get(expected["error"], (Exception,))):
                    failures.append(f"{case}: raised {type(error).__name__}, TF raised {expected['error']}")
                continue
            if "error" in expected:
                failures.append(f"{case}: gave {got}, TF raised {expected['error']}: {expected['message']}")
            elif case.endswith(".export()"):
                if _unordered(got) != _unordered(expected):
                    failures.append(f"{case}: {got} != {expected} (as sets of pairs)")
            elif not _close(got, expected):
                failures.append(f"{case}: {got} != TF's {expected}")
    finally:
        os.remove(vocab)
    return failures
