"""keras.ops in a functional graph: a `keras.ops` function (or a KerasTensor operator such as `x + 1.0`)
applied to KerasTensors records an `Operation` step, written and read as Keras 3's op classes
(`{'module': 'keras.src.ops.numpy', 'class_name': 'Sum', 'config': {'name', 'axis', ...}}`)."""
from __future__ import annotations

import functools
import inspect
import json
import os
from typing import Any, Callable, Optional

import torch

from torchstrategy import _context
from torchstrategy.keras.layers.base import Layer, _snake_case
from torchstrategy.keras.ops._symbolic import has_symbolic

_TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_op_classes.json")


@functools.lru_cache(maxsize=None)
def _table() -> dict:
    """{keras.ops name: how Keras 3.15 records it} (tools/keras_op_classes.py writes the file)."""
    with open(_TABLE_PATH, encoding="utf-8") as handle:
        return json.load(handle)["ops"]


@functools.lru_cache(maxsize=None)
def _names_by_class() -> dict:
    """{(module, class name): keras.ops name}, the first name for a class two functions share."""
    found: dict = {}
    for name, entry in sorted(_table().items(), key=lambda item: ("." in item[0], item[0])):
        found.setdefault((entry["module"], entry["class_name"]), name)
        found.setdefault(entry["class_name"], name)
    return found


def _public_function(name: str) -> Callable:
    """The keras.ops function called `name` ('image.resize' for keras.ops.image's), unwrapped."""
    from torchstrategy.keras import ops

    owner, _, short = name.rpartition(".")
    function = getattr(getattr(ops, owner) if owner else ops, short, None)
    if function is None:
        raise NotImplementedError(f"The graph applies keras.ops.{name}, which keras.ops here does not have yet.")
    return inspect.unwrap(function)


def _generic_entry(name: str, function: Callable) -> dict:
    """How an op Keras records no class for is kept: every argument in the node, a class named after it."""
    args, kwargs = [], []
    for param in inspect.signature(function).parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            args.append("*" + param.name)
        elif param.kind is param.VAR_KEYWORD:
            kwargs.append(["**", param.name])
        elif param.kind is param.KEYWORD_ONLY:
            kwargs.append([param.name, param.name])
        else:
            args.append(param.name)
    short = name.rpartition(".")[2]
    module = "keras.src.ops.image" if name.startswith("image.") else "keras.src.ops.numpy"
    return {"class_name": "".join(part.title() for part in short.split("_")), "module": module, "init": [],
            "args": args, "kwargs": kwargs}


def _config_value(value: Any) -> Any:
    """A constructor argument as Keras's config holds it (dtypes by name, tuples as lists)."""
    if isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    if isinstance(value, (list, tuple)):
        return [_config_value(v) for v in value]
    name = getattr(value, "name", None)
    if type(value).__name__ == "DType" and isinstance(name, str):
        return name
    return value


class Operation(Layer):
    """Keras 3's `keras.Operation`: a weightless step of a functional graph, listed in a model's graph but not in
    `model.layers`. Subclass it and write `call`; on KerasTensors a call records a node (`symbolic_call`)."""

    _keras_operation = True
    _float_policy_only = False

    def __init__(self, name: Optional[str] = None) -> None:
        super().__init__(name=name or _context.unique_name(_snake_case(type(self).__name__)), autocast=False)
        self.built = True  # nothing to build: a summary shows 0 parameters, not 'unbuilt'

    def __call__(self, *args: Any, training: Any = None, **kwargs: Any) -> Any:
        if has_symbolic(args) or has_symbolic(kwargs.values()):
            return self.symbolic_call(*args, **kwargs)
        return self.call(*args, **kwargs)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement call(), as a keras.Operation subclass.")

    def get_config(self) -> dict:
        return {"name": self.name}


class OpStep(Operation):
    """One keras.ops function as a graph step. Each op has its own class (`operation_class`), named as Keras's
    ('Sum', 'GetItem'), whose constructor takes the config: `type(op).from_config(op.get_config())` copies an op."""

    function_name = ""  # the keras.ops function (set on each op's class)
    entry: dict = {}  # how Keras records it (keras_op_classes.json)

    def __init__(self, name: Optional[str] = None, **config: Any) -> None:
        super().__init__(name=name or _context.unique_name(_snake_case(self.entry["class_name"])))
        self._function = _public_function(self.function_name)
        self._signature = inspect.signature(self._function)
        self.op_config = config

    def __reduce_ex__(self, protocol: int) -> Any:  # the class is made at run time: pickle says how to make it
        return _bare_operation, (self.function_name, self.entry), self.__dict__

    @property
    def class_name(self) -> str:
        return self.entry["class_name"]

    @property
    def module(self) -> str:
        return self.entry["module"]

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the function on the node's arguments plus the op's config."""
        if self.class_name == "GetItem" and len(args) == 2 and isinstance(args[1], list):
            args = (args[0], tuple(args[1]))  # a config stores the index tuple as a list (Keras's GetItem too)
        bound = self._arguments(args, kwargs)
        return self._function(*bound.args, **bound.kwargs)

    def _arguments(self, args: tuple, kwargs: dict) -> inspect.BoundArguments:
        """The function's arguments from the node's args/kwargs (named by the entry) and the config."""
        values: dict = {}
        for init_param, param, _default in self.entry["init"]:
            if param is not None and init_param in self.op_config:
                values[param] = self.op_config[init_param]
        plain = [a for a in self.entry["args"] if not a.startswith("*")]
        spread_at = next((i for i, a in enumerate(self.entry["args"]) if a.startswith("*")), None)
        if spread_at is None:
            if len(args) > len(plain):
                raise TypeError(f"Operation '{self.name}' ({self.class_name}) takes {len(plain)} arguments in the "
                                f"graph; got {len(args)}.")
            values.update(zip(plain, args))
        else:
            after = len(self.entry["args"]) - spread_at - 1
            values.update(zip(self.entry["args"][:spread_at], args[:spread_at]))
            values[self.entry["args"][spread_at][1:]] = tuple(args[spread_at:len(args) - after])
            values.update(zip(self.entry["args"][spread_at + 1:], args[len(args) - after:]))
        named = {key: param for key, param in self.entry["kwargs"] if key != "**"}
        spread = next((param for key, param in self.entry["kwargs"] if key == "**"), None)
        extra = {}
        for key, value in kwargs.items():
            if key in named:
                values[named[key]] = value
            elif spread is not None:
                extra[key] = value
            elif key in self._signature.parameters:  # a generic op, or a config read from a newer Keras
                values[key] = value
            else:
                raise TypeError(f"Operation '{self.name}' ({self.class_name}) got an unexpected argument '{key}'.")
        if spread is not None:
            values[spread] = extra
        ordered = {name: values[name] for name in self._signature.parameters if name in values}
        return inspect.BoundArguments(self._signature, ordered)

    def get_config(self) -> dict:
        return {"name": self.name, **{key: _config_value(value) for key, value in self.op_config.items()}}


# ----- recording (keras.ops on KerasTensors) -----------------------------------------------------------------
def _static_fact(name: str, args: tuple, kwargs: dict) -> tuple[bool, Any]:
    """keras.ops functions that give a fact about a KerasTensor instead of a graph step (as in Keras 3)."""
    value = args[0] if args else next(iter(kwargs.values()), None)
    if name == "shape":
        return True, tuple(value.shape)
    if name == "dtype":
        return True, str(value.dtype).replace("torch.", "")
    if name == "is_tensor":
        return True, False
    if name == "convert_to_numpy":
        raise ValueError("A KerasTensor is symbolic: it's a placeholder for a shape and a dtype. It doesn't have "
                         "any actual numerical value. You cannot convert it to a NumPy array.")
    return False, None


def apply(name: str, function: Callable, args: tuple, kwargs: dict) -> Any:
    """`keras.ops.<name>(*args, **kwargs)` on KerasTensors: the KerasTensor(s) of a new Operation node."""
    static, value = _static_fact(name, args, kwargs)
    if static:
        return value
    entry = _table().get(name) or _generic_entry(name, function)
    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    values = bound.arguments
    config = {init_param: values[param] if param is not None else default
              for init_param, param, default in entry["init"]}
    call_args: list = []
    for arg in entry["args"]:
        if arg.startswith("*"):
            call_args.extend(values.get(arg[1:], ()))
        else:
            call_args.append(values[arg])
    call_kwargs: dict = {}
    for key, param in entry["kwargs"]:
        if key == "**":
            call_kwargs.update(values.get(param, {}))
        else:
            call_kwargs[key] = values[param]
    return operation_class(name, entry)(**config)(*call_args, **call_kwargs)


# ----- reading Keras's configs --------------------------------------------------------------------------------
def from_keras_entry(class_name: str, module: str, config: Optional[dict]) -> OpStep:
    """The Operation of a Keras graph entry whose module is `keras.src.ops.*`."""
    config = dict(config or {})
    op_name = config.pop("name", None)
    names = _names_by_class()
    function_name = names.get((module, class_name)) or names.get(class_name)
    if function_name is not None:
        return operation_class(function_name)(name=op_name, **config)
    # a class the table does not know: the function named after it, its config passed by keyword
    short = _snake_case(class_name)
    function_name = ("image." + short) if module.endswith(".image") else short
    entry = dict(_generic_entry(function_name, _public_function(function_name)), class_name=class_name,
                 module=module, init=[[key, key, None] for key in config])
    return operation_class(function_name, entry)(name=op_name, **config)


def upgrade_legacy_entry(entry: dict) -> dict:
    """A graph entry torchstrategy wrote before operations followed Keras (class 'TensorOperation', config `op`,
    called on one [a, b] list) in Keras's form; any other entry as it is."""
    if entry.get("class_name") != "TensorOperation" or "op" not in (entry.get("config") or {}):
        return entry
    op = entry["config"]["op"]
    nodes = [dict(node, args=list(node["args"][0])) if isinstance(node, dict) and len(node.get("args", [])) == 1
             else node for node in entry.get("inbound_nodes", [])]
    table = _table()[op]
    return dict(entry, module=table["module"], class_name=table["class_name"], registered_name=table["class_name"],
                config={"name": entry["config"].get("name") or entry.get("name")}, inbound_nodes=nodes)


@functools.lru_cache(maxsize=None)
def _operation_class(function_name: str, entry_json: str) -> type:
    entry = json.loads(entry_json)
    return type(entry["class_name"], (OpStep,), {"function_name": function_name, "entry": entry,
                                                     "__module__": __name__, "__doc__": f"keras.ops.{function_name} "
                                                     "as a graph step."})


def operation_class(function_name: str, entry: Optional[dict] = None) -> type:
    """The Operation class of keras.ops.<function_name> (one per op, made once), recorded as `entry` says (by
    default as Keras 3.15 records it, or with every argument in the node for an op Keras gives no class)."""
    if entry is None:
        entry = _table().get(function_name) or _generic_entry(function_name, _public_function(function_name))
    return _operation_class(function_name, json.dumps(entry, sort_keys=True))


def _bare_operation(function_name: str, entry: dict) -> OpStep:
    """An op of the class `operation_class` makes, before pickle puts its state back."""
    cls = operation_class(function_name, entry)
    return cls.__new__(cls)
