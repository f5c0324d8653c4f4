"""`tf.saved_model`: writing models and functions as torch.export programs (one `.pt2` per function, weights
inside, plus a JSON manifest of endpoints and signatures) and loading them back without their Python classes."""
from __future__ import annotations

import dataclasses
import enum
import json
import os
import shutil
import tempfile
import zipfile
from typing import Any, Callable, Mapping, Optional

import numpy as np
import torch

from torchstrategy import _context
from torchstrategy._machinery.lazy import namespace_module

# TF's tag, key and file-name constants (TF 2.21's values): the names TF's SavedModel layout and signatures use
ASSETS_DIRECTORY, ASSETS_KEY = "assets", "saved_model_assets"
CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME = "inputs", "tensorflow/serving/classify"
CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES = "classes", "scores"
DEBUG_DIRECTORY, DEBUG_INFO_FILENAME_PB = "debug", "saved_model_debug_info.pb"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
PREDICT_INPUTS, PREDICT_METHOD_NAME, PREDICT_OUTPUTS = "inputs", "tensorflow/serving/predict", "outputs"
REGRESS_INPUTS, REGRESS_METHOD_NAME, REGRESS_OUTPUTS = "inputs", "tensorflow/serving/regress", "outputs"
SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT = "saved_model.pb", "saved_model.pbtxt"
SAVED_MODEL_SCHEMA_VERSION = 1
SERVING, TRAINING, GPU, TPU = "serve", "train", "gpu", "tpu"
VARIABLES_DIRECTORY, VARIABLES_FILENAME = "variables", "variables"

_FORMAT = "torchstrategy.saved_model"
_VERSION = 1
_MANIFEST = "torchstrategy_saved_model.json"
_TRACE_BATCH = 2  # traced size of unknown dims: 0 and 1 would be specialised by torch.export


class VariablePolicy(enum.Enum):
    """How variables' devices are saved (tf.saved_model.experimental.VariablePolicy; TF's values)."""

    NONE = None
    SAVE_VARIABLE_DEVICES = "save_variable_devices"
    EXPAND_DISTRIBUTED_VARIABLES = "expand_distributed_variables"


@dataclasses.dataclass
class SaveOptions:
    """Accepted as tf.saved_model.SaveOptions for compatibility; none of its fields changes what is written
    (the programs and weights always go into the one directory, on CPU)."""

    namespace_whitelist: Any = None
    save_debug_info: bool = False
    function_aliases: Any = None
    experimental_debug_stripper: bool = False
    experimental_io_device: Optional[str] = None
    experimental_variable_policy: Any = None
    experimental_custom_gradients: bool = True
    experimental_image_format: bool = False
    experimental_skip_saver: bool = False
    experimental_sharding_callback: Any = None
    extra_tags: Any = None

    def __post_init__(self) -> None:  # TF turns None and the policy's name into a VariablePolicy
        policy = self.experimental_variable_policy
        if not isinstance(policy, VariablePolicy):
            names = {p.value: p for p in VariablePolicy}
            if (policy if policy is None else str(policy).lower()) not in names:
                raise ValueError(f"Invalid VariablePolicy value: {policy!r}; use one of {list(names)}.")
            self.experimental_variable_policy = names[policy if policy is None else str(policy).lower()]


@dataclasses.dataclass
class LoadOptions:
    """Accepted as tf.saved_model.LoadOptions. `experimental_io_device` matters: a device string ('cpu',
    'cuda:0') the loaded programs are moved to; the other fields are accepted and ignored."""

    allow_partial_checkpoint: bool = False
    experimental_io_device: Optional[str] = None
    experimental_skip_checkpoint: bool = False
    experimental_variable_policy: Any = None
    experimental_load_function_aliases: bool = False


class Asset:
    """A file a saved object needs (a vocabulary, a config): `save` copies it into the export's assets/
    directory, and the loaded object's Asset of the same attribute name points at that copy."""

    def __init__(self, path: Any) -> None:
        if isinstance(path, Asset):
            path = path.asset_path
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"tf.saved_model.Asset takes a file path; got {type(path).__name__}: {path!r}.")
        self._path = os.fsdecode(os.fspath(path))

    @property
    def asset_path(self) -> str:
        """The file's path (after loading: the copy inside the SavedModel's assets/ directory)."""
        return self._path

    def __repr__(self) -> str:
        return f"Asset({self._path!r})"


def _assets_of(obj: Any) -> dict:
    """The Assets `obj` holds as public attributes (name -> Asset), each file checked to exist."""
    attributes = vars(obj) if hasattr(obj, "__dict__") else {}
    found = {name: value for name, value in attributes.items() if isinstance(value, Asset) and not name.startswith("_")}
    for name, asset in found.items():
        if not os.path.isfile(asset.asset_path):
            raise FileNotFoundError(f"{type(obj).__name__}.{name} is tf.saved_model.Asset({asset.asset_path!r}), "
                                    f"which is not a file: the SavedModel would lack it. Fix the path first.")
    return found


# ----- what gets traced ------------------------------------------------------------------------
@dataclasses.dataclass
class ServingInputSpec:
    """One input of a saved serving function: its name, shape (None for a dynamic dim) and dtype name."""

    name: str
    shape: list  # None for a dynamic dim
    dtype: str

    def to_json(self) -> dict:
        """The manifest's form of this input."""
        return {"name": self.name, "shape": self.shape, "dtype": self.dtype}


def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, torch.dtype):
        return str(dtype).replace("torch.", "")
    if isinstance(dtype, np.dtype) or isinstance(dtype, type):
        return str(torch.from_numpy(np.zeros((), dtype=dtype)).dtype).replace("torch.", "")
    name = str(getattr(dtype, "name", dtype))
    if not isinstance(getattr(torch, name, None), torch.dtype):
        raise ValueError(f"Unsupported dtype {dtype!r} in an input signature: use a numeric or bool dtype.")
    return name


def specs_from_signature(signature: Any, default_names: list) -> list:
    """The ServingInputSpecs of a list of tf.TensorSpec (`input_signature`); an entry without a name gets
    `default_names[index]`. Raises TypeError/ValueError for an entry that is no spec or has unknown rank."""
    specs = []
    for index, spec in enumerate(signature):
        if not hasattr(spec, "shape") or not hasattr(spec, "dtype"):
            raise TypeError(f"input_signature entries must be tf.TensorSpec; entry {index} is {spec!r}.")
        shape = spec.shape.as_list() if hasattr(spec.shape, "as_list") else list(spec.shape)
        if shape is None:
            raise ValueError(f"TensorSpec {spec!r} has unknown rank; give a shape such as [None, 4].")
        name = getattr(spec, "name", None) or default_names[index]
        specs.append(ServingInputSpec(name, [None if d is None else int(d) for d in shape], _dtype_name(spec.dtype)))
    return specs


def model_input_specs(obj: Any, naming: str) -> Optional[list]:
    """Serving specs (ServingInputSpecs; None where the input shape is unknown) of a Keras-like model (duck
    typed: saved_model never imports keras). `naming` is 'call' (TF 2.21 `tf.saved_model.save(model)` names
    a single input 'inputs') or 'tensor' (Keras 3 `model.export` uses the Input tensors' names)."""
    symbolic = getattr(obj, "inputs", None)
    if symbolic is None and getattr(obj, "_input_layer", None) is not None:
        symbolic = [obj._input_layer.output]
    if symbolic:
        names = [getattr(t, "name", None) or f"inputs_{i}" for i, t in enumerate(symbolic)]
        if naming == "call" and len(symbolic) == 1:
            names = ["inputs"]
        return [ServingInputSpec(n, [None] + [None if d is None else int(d) for d in tuple(t.shape)[1:]],
                                 _dtype_name(t.dtype))
                for n, t in zip(names, symbolic)]
    shape = getattr(obj, "_build_input_shape", None)  # a subclassed model that has been called on data
    if isinstance(shape, tuple) and all(d is None or isinstance(d, int) for d in shape):
        dtype = getattr(obj, "compute_dtype", "float32")
        return [ServingInputSpec("inputs", [None] + list(shape[1:]), _dtype_name(dtype))]
    return None


def _plain_module(obj: Any) -> Any:
    """The user's module under a DDP/FSDP or torch.compile wrapper (weights are the same tensors)."""
    while True:
        if isinstance(obj, torch.nn.parallel.DistributedDataParallel):
            obj = obj.module
        elif hasattr(obj, "_orig_mod") and isinstance(obj, torch.nn.Module):
            obj = obj._orig_mod
        else:
            return obj


class _Traced(torch.nn.Module):
    """The module torch.export traces: holds `owner`'s weights and returns the function's outputs flat."""

    def __init__(self, owner: Any, function: Callable, structure: dict) -> None:
        super().__init__()
        if isinstance(owner, torch.nn.Module):
            self.owner = owner
        self._function = function
        self._structure = structure

    def forward(self, *tensors: torch.Tensor) -> tuple:
        result = self._function(*tensors)
        flat, self._structure["outputs"] = _flatten_outputs(result)
        return tuple(flat)


def _flatten_outputs(result: Any) -> tuple:
    if isinstance(result, torch.Tensor):
        return [result], {"kind": "tensor", "names": ["output_0"]}
    if isinstance(result, Mapping):
        keys = list(result)
        return [result[k] for k in keys], {"kind": "dict", "names": [str(k) for k in keys]}
    if isinstance(result, (list, tuple)) and all(isinstance(t, torch.Tensor) for t in result):
        return list(result), {"kind": type(result).__name__, "names": [f"output_{i}" for i in range(len(result))]}
    raise ValueError(f"A saved function must return a tensor, a list/tuple of tensors or a dict of tensors; "
                     f"got {type(result).__name__}.")


def _example_inputs(specs: list, device: torch.device) -> tuple:
    return tuple(torch.zeros([_TRACE_BATCH if d is None else d for d in s.shape], dtype=getattr(torch, s.dtype),
                             device=device) for s in specs)


def _dynamic_shapes(specs: list) -> tuple:
    batch = torch.export.Dim("batch")
    shapes = []
    for index, spec in enumerate(specs):
        dims = {}
        for axis, size in enumerate(spec.shape):
            if size is None:
                dims[axis] = batch if axis == 0 else torch.export.Dim(f"input{index}_dim{axis}")
        shapes.append(dims or None)
    return tuple(shapes)


def _export(owner: Any, function: Callable, specs: list, what: str) -> tuple:
    """(ExportedProgram on CPU, output structure) for `function` traced on `specs`."""
    module = owner if isinstance(owner, torch.nn.Module) else None
    parameter = next(iter(module.parameters()), None) if module is not None else None
    device = parameter.device if parameter is not None else torch.device("cpu")
    structure: dict = {}
    traced = _Traced(owner, function, structure)
    was_training = module.training if module is not None else False
    if module is not None:
        module.eval()
    try:
        with torch.no_grad():
            program = torch.export.export(traced, _example_inputs(specs, device),
                                          dynamic_shapes=(_dynamic_shapes(specs),), strict=False)
    except Exception as error:
        raise ValueError(f"Could not trace {what} with torch.export for inputs "
                         f"{[s.to_json() for s in specs]}: {error}") from error
    finally:
        if module is not None:
            module.train(was_training)
    if device.type != "cpu":
        from torch.export.passes import move_to_device_pass

        program = move_to_device_pass(program, "cpu")
    return program, structure["outputs"]


def _signature_functions(obj: Any, signatures: Any) -> dict:
    """{signature name: function with .input_signature} from save()'s `signatures` argument."""
    if signatures is None:
        return {}
    if callable(signatures) and not isinstance(signatures, Mapping):
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: signatures}
    if isinstance(signatures, Mapping):
        return dict(signatures)
    raise TypeError(f"signatures must be a tf.function with an input_signature or a dict of them; "
                    f"got {type(signatures).__name__}.")


def _declared_specs(function: Any, where: str) -> list:
    signature = getattr(function, "input_signature", None)
    if signature is None:
        raise ValueError(f"{where} has no input_signature, so it cannot be traced for serving. Decorate it with "
                         f"@tf.function(input_signature=[tf.TensorSpec(shape, dtype, name)]).")
    python = getattr(function, "python_function", function)
    code = getattr(python, "__code__", None)
    arg_names = list(code.co_varnames[:code.co_argcount]) if code is not None else []
    if arg_names and arg_names[0] == "self" or hasattr(function, "__self__"):
        arg_names = arg_names[1:]
    arg_names += [f"input_{i}" for i in range(len(arg_names), len(signature))]
    return specs_from_signature(signature, arg_names)


def _tracked_functions(obj: Any) -> dict:
    """Attributes of `obj` that are tf.functions with an input_signature (TF keeps them as methods)."""
    found = {}
    for name in dir(type(obj)):
        if name.startswith("__") and name != "__call__":
            continue
        attribute = getattr(type(obj), name, None)
        if getattr(attribute, "input_signature", None) is not None:
            found[name] = getattr(obj, name)
    return found


def is_chief_for(obj: Any) -> bool:
    """True when this process writes `obj`'s exports: the chief of `obj.distribute_strategy`, else of the
    entered strategy; True without any strategy."""
    strategy = getattr(obj, "distribute_strategy", None)
    if strategy is None and _context.has_strategy():
        strategy = _context.get_strategy()
    return True if strategy is None else bool(strategy.is_chief)


# ----- save ------------------------------------------------------------------------------------
def save(obj: Any, export_dir: str, signatures: Any = None, options: Optional[SaveOptions] = None) -> None:
    """Writes `obj`'s serving functions to the directory `export_dir` (tf.saved_model.save).

    `signatures` is a `tf.function(input_signature=[...])` or a dict name -> such function; without it, a
    model with a known input shape gets a 'serving_default' signature from its call. Under a multi-process
    strategy only the chief writes; the other processes return at once.

    >>> import torchstrategy as tf
    >>> model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    >>> tf.saved_model.save(model, "/tmp/served")                              # doctest: +SKIP
    >>> tf.saved_model.load("/tmp/served").signatures["serving_default"](inputs=x)  # doctest: +SKIP
    """
    write_functions(obj, export_dir, signatures, endpoints=None)


def write_functions(obj: Any, export_dir: str, signatures: Any, endpoints: Optional[dict],
                    naming: str = "call") -> None:
    """Traces `obj`'s functions and writes them to `export_dir` (what `save` and Keras `model.export` share).

    `endpoints` maps endpoint names to (function, list of ServingInputSpec) (model.export's `serve`);
    `signatures` as for `save` (or names of endpoints); `naming` as for `model_input_specs`. Only the chief
    (`is_chief_for(obj)`) writes; the other processes return at once."""
    obj = _plain_module(obj)
    if not isinstance(export_dir, (str, os.PathLike)):
        raise TypeError(f"export_dir must be a directory path; got {type(export_dir).__name__}.")
    export_dir = os.fspath(export_dir)
    if not is_chief_for(obj):
        return  # the chief writes the (replica-identical) weights; others must not race it on the same path
    functions: dict = {}  # key -> (function, specs, what)
    endpoint_keys: dict = {}
    for name, (function, specs) in (endpoints or {}).items():
        functions[name] = (function, specs, f"endpoint '{name}'")
        endpoint_keys[name] = name
    for name, function in _tracked_functions(obj).items():
        if name not in functions:
            functions[name] = (function, _declared_specs(function, f"'{name}'"), f"function '{name}'")
        endpoint_keys[name] = name
    signature_keys: dict = {}
    for name, function in _signature_functions(obj, signatures).items():
        same = [key for key, (known, _, _) in functions.items() if known == function]
        if isinstance(function, str) and function in functions or same:
            signature_keys[name] = function if isinstance(function, str) else same[0]
            continue  # the signature runs a function saved already: one program serves both
        functions[f"signature_{name}"] = (function, _declared_specs(function, f"Signature '{name}'"),
                                         f"signature '{name}'")
        signature_keys[name] = f"signature_{name}"
    if not signature_keys and isinstance(obj, torch.nn.Module):
        specs = model_input_specs(obj, naming)
        if specs is None and not endpoint_keys:
            raise ValueError(
                f"Cannot save {type(obj).__name__} for serving: it has no input signature and its input shape is "
                f"unknown. Pass signatures=tf.function(..., input_signature=[tf.TensorSpec(...)]), or build the "
                f"model first (give it a keras.Input / input_shape=, call model.build(shape), or call it on data).")
        if specs is not None:
            functions["serving_default"] = (_model_call(obj), specs, f"{type(obj).__name__}'s call")
            signature_keys[DEFAULT_SERVING_SIGNATURE_DEF_KEY] = "serving_default"
    if not functions:
        raise ValueError(f"Nothing to save: {type(obj).__name__} has no tf.function with an input_signature. "
                         f"Pass signatures= or save a built Keras model.")
    assets, asset_files = {}, {}
    for name, asset in sorted(_assets_of(obj).items()):
        stem = os.path.basename(asset.asset_path)
        filename = stem if stem not in asset_files.values() else f"{name}_{stem}"
        assets[filename], asset_files[name] = asset.asset_path, filename
    manifest: dict = {"format": _FORMAT, "version": _VERSION, "functions": {}, "endpoints": endpoint_keys,
                      "signatures": signature_keys, "assets": asset_files}
    programs = {}
    for key, (function, specs, what) in functions.items():
        program, outputs = _export(obj, function, specs, what)
        programs[f"{key}.pt2"] = program
        manifest["functions"][key] = {"program": f"{key}.pt2", "inputs": [s.to_json() for s in specs],
                                      "outputs": outputs}
    _write_atomically(export_dir, manifest, programs, assets)


def _model_call(model: Any) -> Callable:
    def call(*tensors: torch.Tensor) -> Any:
        return model(tensors[0] if len(tensors) == 1 else list(tensors), training=False)

    return call


def _write_atomically(export_dir: str, manifest: dict, programs: dict, assets: Optional[dict] = None) -> None:
    target = os.path.abspath(export_dir)
    if os.path.exists(target):
        if not os.path.isdir(target):
            raise FileExistsError(f"'{export_dir}' is a file; tf.saved_model.save needs a directory path.")
        if os.listdir(target) and not os.path.isfile(os.path.join(target, _MANIFEST)):
            raise FileExistsError(f"'{export_dir}' is a non-empty directory that is not a torchstrategy SavedModel; "
                                  f"refusing to replace its contents. Choose another path or empty it.")
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.tmp-", dir=parent)
    try:
        for filename, program in programs.items():
            torch.export.save(program, os.path.join(staging, filename))
        if assets:
            os.makedirs(os.path.join(staging, ASSETS_DIRECTORY))
            for filename, source in assets.items():
                shutil.copyfile(source, os.path.join(staging, ASSETS_DIRECTORY, filename))
        with open(os.path.join(staging, _MANIFEST), "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=1)
        retired = None
        if os.path.exists(target):
            retired = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.old-", dir=parent)
            os.rename(target, os.path.join(retired, "dir"))
        os.rename(staging, target)
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


# ----- load ------------------------------------------------------------------------------------
def contains_saved_model(export_dir: str) -> bool:
    """True when `export_dir` holds a SavedModel: written by torchstrategy, or by TF (saved_model.pb/.pbtxt)."""
    names = (_MANIFEST, SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT)
    return any(os.path.isfile(os.path.join(os.fspath(export_dir), name)) for name in names)


class _ConcreteFunction:
    """One loaded program: checks and converts its inputs, runs the program, returns its outputs."""

    def __init__(self, key: str, entry: dict, program: Any, device: Optional[str]) -> None:
        self.name = key
        self._inputs = [ServingInputSpec(**spec) for spec in entry["inputs"]]
        self._outputs = entry["outputs"]
        self._module = program.module()
        self._device = torch.device(device) if device else torch.device("cpu")
        if device:
            self._module = self._module.to(self._device)

    @property
    def structured_input_signature(self) -> tuple:
        """((), {name: spec}) as TF's ConcreteFunction has it (specs as tf.TensorSpec-like objects)."""
        from torchstrategy.data import TensorSpec

        return (), {s.name: TensorSpec(s.shape, getattr(torch, s.dtype), s.name) for s in self._inputs}

    @property
    def structured_outputs(self) -> dict:
        return {name: None for name in self._outputs["names"]}

    def _flat_outputs(self, args: tuple, kwargs: dict) -> list:
        names = [s.name for s in self._inputs]
        if len(args) > len(names):
            raise TypeError(f"'{self.name}' takes {len(names)} input(s) {names}; got {len(args)} positional.")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"'{self.name}' got an unexpected input '{key}'; its inputs are {names}.")
            if key in values:
                raise TypeError(f"'{self.name}' got input '{key}' twice (positionally and by name).")
            values[key] = value
        missing = [n for n in names if n not in values]
        if missing:
            raise TypeError(f"'{self.name}' is missing input(s) {missing}; call it with {names} as keywords.")
        tensors = [self._as_input(spec, values[spec.name]) for spec in self._inputs]
        with torch.no_grad():
            return list(self._module(*tensors))

    def _as_input(self, spec: ServingInputSpec, value: Any) -> torch.Tensor:
        dtype = getattr(torch, spec.dtype)
        tensor = value.detach() if isinstance(value, torch.Tensor) else torch.as_tensor(np.asarray(value))
        tensor = tensor.to(device=self._device, dtype=dtype)
        shape = tuple(tensor.shape)
        if len(shape) != len(spec.shape) or any(e is not None and e != s for e, s in zip(spec.shape, shape)):
            expected = tuple(spec.shape)
            raise ValueError(f"Input '{spec.name}' of '{self.name}' must have shape {expected} (None: any size); "
                             f"got {shape}.")
        return tensor

    def as_dict(self, *args: Any, **kwargs: Any) -> dict:
        return dict(zip(self._outputs["names"], self._flat_outputs(args, kwargs)))

    def as_structure(self, *args: Any, **kwargs: Any) -> Any:
        flat = self._flat_outputs(args, kwargs)
        kind = self._outputs["kind"]
        if kind == "tensor":
            return flat[0]
        if kind == "dict":
            return dict(zip(self._outputs["names"], flat))
        return tuple(flat) if kind == "tuple" else flat


class _Signature:
    """A loaded signature: called with the TensorSpec names as keywords (or positionally), returns a dict."""

    def __init__(self, function: _ConcreteFunction) -> None:
        self._function = function
        self.structured_input_signature = function.structured_input_signature
        self.structured_outputs = function.structured_outputs

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return self._function.as_dict(*args, **kwargs)


class _Endpoint:
    """A loaded endpoint (a saved method): returns the outputs structured as the original function did."""

    def __init__(self, function: _ConcreteFunction) -> None:
        self._function = function
        self.structured_input_signature = function.structured_input_signature

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function.as_structure(*args, **kwargs)


class LoadedSavedModel:
    """What `load` returns: `.signatures` (name -> function returning a dict) and each saved endpoint as a
    method (e.g. `.serve(x)`); callable only when a `__call__` function was saved, as in TF."""

    def __init__(self, export_dir: str, signatures: dict, endpoints: dict, assets: Optional[dict] = None) -> None:
        self.export_dir = export_dir
        self.signatures = signatures
        self._endpoints = endpoints
        for name, filename in (assets or {}).items():
            setattr(self, name, Asset(os.path.join(export_dir, ASSETS_DIRECTORY, filename)))
        for name, endpoint in endpoints.items():
            if name != "__call__":
                setattr(self, name, endpoint)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "__call__" not in self._endpoints:
            raise TypeError(f"The SavedModel at '{self.export_dir}' has no __call__ function; use "
                            f".signatures[...] or one of its endpoints {sorted(self._endpoints)}.")
        return self._endpoints["__call__"](*args, **kwargs)


def _not_ours(export_dir: str) -> OSError:
    where = f"SavedModel file does not exist at: {export_dir}/{_MANIFEST}"
    if not os.path.exists(export_dir):
        return OSError(f"{where}: no such directory. Check the path, or write one with tf.saved_model.save / "
                       f"model.export.")
    if not os.path.isdir(export_dir):
        return OSError(f"{where}: '{export_dir}' is a file, not a SavedModel directory.")
    entries = sorted(os.listdir(export_dir))
    held = "it is empty" if not entries else f"it holds {entries[:10]}"
    return OSError(f"{where}: {held}. Pass a directory written by tf.saved_model.save or model.export.")


def _load_program(export_dir: str, name: str) -> Any:
    """One function's torch.export program; a missing or cut-short file is named, with what to do."""
    path = os.path.join(export_dir, name)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"SavedModel '{export_dir}' lists the program file '{name}', which is missing. "
                                "Copy the whole export directory again, or export the model again.")
    try:
        return torch.export.load(path)
    except (zipfile.BadZipFile, EOFError, RuntimeError) as error:
        raise OSError(f"SavedModel program file '{path}' is damaged (cut short or overwritten: {error}). Copy the "
                      "whole export directory again, or export the model again.") from error


def load(export_dir: str, tags: Any = None, options: Optional[LoadOptions] = None) -> Any:
    """Loads a directory written by `save` or `model.export`; needs none of the original Python classes. A
    TF-written SavedModel loads as its object tree with its variables (its TF graph functions cannot run here).

    >>> loaded = tf.saved_model.load("/tmp/served")                               # doctest: +SKIP
    >>> loaded.signatures["serving_default"](inputs=x)["output_0"]                 # doctest: +SKIP
    """
    export_dir = os.fspath(export_dir)
    manifest_path = os.path.join(export_dir, _MANIFEST)
    if not os.path.isfile(manifest_path):
        if os.path.isdir(export_dir) and any(os.path.isfile(os.path.join(export_dir, name)) for name in
                                             (SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT)):
            from torchstrategy.formats.tf_saved_model_objects import load_tf_saved_model

            return load_tf_saved_model(export_dir, Asset)  # TF-written: variables and specs; graphs do not run
        raise _not_ours(export_dir)
    with open(manifest_path, encoding="utf-8") as handle:
        manifest = json.load(handle)
    if manifest.get("format") != _FORMAT or int(manifest.get("version", 0)) > _VERSION:
        raise OSError(f"'{manifest_path}' is not a torchstrategy SavedModel manifest of version <= {_VERSION} "
                      f"(format={manifest.get('format')!r}, version={manifest.get('version')!r}).")
    device = options.experimental_io_device if options is not None else None
    from torchstrategy._machinery import cpu_kernels as _cpu_kernels  # noqa: F401  (registers the torchstrategy:: ops a program may call)

    functions = {}
    for key, entry in manifest["functions"].items():
        functions[key] = _ConcreteFunction(key, entry, _load_program(export_dir, entry["program"]), device)
    signatures = {name: _Signature(functions[key]) for name, key in manifest["signatures"].items()}
    endpoints = {name: _Endpoint(functions[key]) for name, key in manifest["endpoints"].items()}
    return LoadedSavedModel(export_dir, signatures, endpoints, manifest.get("assets"))


experimental = namespace_module("torchstrategy.saved_model.experimental", ("tf.saved_model.experimental",),
                                {"VariablePolicy": VariablePolicy})
