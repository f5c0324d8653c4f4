"""Writes torchstrategy/keras/keras_op_classes.json: for each public `keras.ops` function of Keras 3.15, the
Operation class that records it on KerasTensors and how the function's arguments split between that class's
constructor (its config) and its call (the graph node's args), read by torchstrategy/keras/operation.py.

Run with the TF reference env: `/work/tf-venv/bin/python tools/keras_op_classes.py`. Facts only (names,
parameter names, defaults), found by reading each function's `Cls(...).symbolic_call(...)` expression.

Layout (sorted keys, so the file is reproducible):
  {"keras": version, "ops": {public name: entry}}; public name is the function's name under keras.ops
  ("sum", "softmax") or under its submodule when keras.ops does not have it ("image.resize"); entry is
    {"class_name": "Sum", "module": "keras.src.ops.numpy",
     "init": [[constructor parameter, function parameter or null, default], ...],
     "args": [function parameter, or "*name" for one spread with *],
     "kwargs": [[call keyword, function parameter], ...] plus ["**", name] for one spread with **}
"""
from __future__ import annotations

import ast
import inspect
import json
import os
import sys
import textwrap
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "torchstrategy", "keras", "keras_op_classes.json")
_JSON = (type(None), bool, int, float, str)


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value] if all(isinstance(v, _JSON) for v in value) else None
    return value if isinstance(value, _JSON) else None


def _symbolic_calls(function):
    """(class, constructor call node, call node) for each `Cls(...).symbolic_call(...)` or `Cls(...)(...)`."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    for node in ast.walk(tree):
        ctor = node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "symbolic_call" else node.func if isinstance(node, ast.Call) else None
        if isinstance(ctor, ast.Call) and isinstance(ctor.func, ast.Name):
            cls = function.__globals__.get(ctor.func.id)
            if isinstance(cls, type):
                yield cls, ctor, node


def _name(expr, params):
    return expr.id if isinstance(expr, ast.Name) and expr.id in params else None


def _entry(function):
    params = list(inspect.signature(function).parameters)
    found = list(_symbolic_calls(function))
    if not found:
        return None
    cls, ctor, call = found[0]
    init_params = [p for p in inspect.signature(cls.__init__).parameters.values()
                   if p.name not in ("self", "name") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    fed = {}
    for param, expr in zip(init_params, ctor.args):
        fed[param.name] = _name(expr, params)
    for keyword in ctor.keywords:
        if keyword.arg is not None:
            fed[keyword.arg] = _name(keyword.value, params)
    init = [[p.name, fed.get(p.name), _plain(None if p.default is p.empty else p.default)] for p in init_params]
    args = []
    for expr in call.args:
        if isinstance(expr, ast.Starred):
            args.append("*" + (_name(expr.value, params) or "?"))
        else:
            args.append(_name(expr, params) or "?")
    kwargs = [["**" if k.arg is None else k.arg, _name(k.value, params) or "?"] for k in call.keywords]
    return {"class_name": cls.__name__, "module": cls.__module__, "init": init, "args": args, "kwargs": kwargs}


def _alias_target(function, public):
    """`def abs(x): return absolute(x)`: the public function it forwards to, else None."""
    body = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0].body
    returns = [s for s in body if isinstance(s, ast.Return)]
    if len(returns) == 1 and isinstance(returns[0].value, ast.Call) and isinstance(returns[0].value.func, ast.Name):
        target = returns[0].value.func.id
        return target if target in public else None
    return None


def build() -> dict:
    import keras
    from keras import ops

    spaces = [("", ops), ("nn.", ops.nn), ("numpy.", ops.numpy), ("linalg.", ops.linalg), ("image.", ops.image)]
    flat = {n for n in dir(ops) if isinstance(getattr(ops, n), types.FunctionType)}
    table, done = {}, {}
    for prefix, module in spaces:
        for name in sorted(dir(module)):
            function = getattr(module, name)
            if name.startswith("_") or not isinstance(function, types.FunctionType):
                continue
            public = name if name in flat and getattr(ops, name) is function else prefix + name
            if id(function) in done:  # `swish = silu`: one function under two names
                if done[id(function)] in table and public not in table:
                    table[public] = table[done[id(function)]]
                continue
            done[id(function)] = public
            entry = _entry(function)
            if entry is None:
                target = _alias_target(function, flat)
                entry = _entry(getattr(ops, target)) if target else None
            if entry is not None:
                table[public] = entry
    return {"keras": keras.__version__, "ops": table}


def main() -> int:
    data = build()
    text = json.dumps(data, sort_keys=True, indent=0, separators=(",", ":")) + "\n"
    with open(OUT, "w", encoding="utf-8") as handle:
        handle.write(text)
    unresolved = sorted(k for k, v in data["ops"].items() if "?" in json.dumps(v["args"] + v["kwargs"]))
    print(f"wrote {OUT}: {len(data['ops'])} ops; arguments not read from a parameter: {unresolved}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
