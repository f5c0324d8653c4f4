"""The frozen TF 2.21 / Keras 3.15 API manifest (names, kinds, signatures) and the errors for TF names
torchstrategy does not provide. Stdlib only: tools/tf_api_manifest.py loads this file to write it."""
from __future__ import annotations

import functools
import gzip
import inspect
import json
import os
from typing import Any, Optional

MANIFEST_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_api_manifest.json.gz")
_LITERALS = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))
_PREFIX = {
    inspect.Parameter.VAR_POSITIONAL: "*",
    inspect.Parameter.VAR_KEYWORD: "**",
}

# What to use instead of TF API torchstrategy does not provide (longest matching prefix wins).
ALTERNATIVES = {
    "tf.compat.v1": "eager TF2 code (tf.function is optional), tf.keras and tf.GradientTape, not sessions, "
                    "placeholders and collections",
    "tf.compat.v1.Session": "eager execution: call the ops directly, or wrap a step in tf.function",
    "tf.compat.v1.placeholder": "eager execution: pass tensors as function arguments",
    "tf.compat.v2": "the tf.* names themselves (tf.compat.v2.X is tf.X in TF 2)",
    "tf.lite": "torch.export (and ai-edge-torch to produce a .tflite model)",
    "tf.estimator": "keras Model.fit / Model.evaluate / Model.predict under a tf.distribute strategy",
    "tf.feature_column": "keras.utils.FeatureSpace or keras preprocessing layers, per column: numeric_column -> "
                         "Normalization (FeatureSpace.float_normalized), bucketized_column -> Discretization, "
                         "categorical_column_with_vocabulary_list/_file -> StringLookup or IntegerLookup, "
                         "categorical_column_with_identity -> IntegerLookup or CategoryEncoding, "
                         "categorical_column_with_hash_bucket -> Hashing, crossed_column -> HashedCrossing, "
                         "indicator_column -> CategoryEncoding, embedding_column/shared_embeddings -> Embedding, "
                         "sequence_* columns -> the same layers on padded sequences (tf.feature_column is the "
                         "legacy Estimator-era API)",
    "tf.quantization.experimental": "torch.ao.quantization (tf.quantization.experimental rewrites TF SavedModel "
                                    "graphs, which torchstrategy does not run); for quantization-aware training "
                                    "use tf.quantization.fake_quant_with_min_max_vars",
    "tf.tpu.experimental.embedding": "keras.layers.Embedding under tf.distribute.TPUStrategy (TPU embedding "
                                     "tables and SparseCore are TF's TPU runtime)",
    "tf.profiler.experimental.server": "tf.profiler.experimental.start/stop or Profile inside the process to "
                                       "profile (torch.profiler writes the TensorBoard trace); there is no remote "
                                       "profiler service to connect to",
    "tf.profiler.experimental.client": "tf.profiler.experimental.start/stop or Profile inside the process to "
                                       "profile (torch.profiler writes the TensorBoard trace); there is no remote "
                                       "profiler service to connect to",
    "tf.distribute.experimental.rpc": "tf.distribute.Server with a ClusterCoordinator (closures on workers), "
                                      "or torch.distributed.rpc",
    "tf.raw_ops": "the public tf.* / tf.math / tf.nn ops (raw op kernels are TF's C++ internals)",
    "tf.Graph": "eager execution (torch.compile does the graph work behind tf.function)",
    "tf.Session": "eager execution: call the ops directly, or wrap a step in tf.function",
    "tf.xla": "torch.compile (tf.function(jit_compile=True) maps to it)",
    "tf.mlir": "torch.export / torch.compile",
    "tf.dtensor": "tf.distribute strategies or keras.distribution (DTensor layouts are torch DTensor here)",
    "tf.queue": "tf.data pipelines",
    "tf.experimental.tensorrt": "torch-tensorrt (torch_tensorrt.compile) on the model, or torch.export for serving",
    "tf.experimental.ExtensionType": "a Python class holding tensors (a dataclass); a torch.Tensor subclass with "
                                     "__torch_function__ where ops must accept it",
    "tf.experimental.BatchableExtensionType": "a Python class holding tensors (a dataclass); a torch.Tensor "
                                              "subclass with __torch_function__ where ops must accept it",
    "tf.experimental.dispatch_for_api": "__torch_function__ on a torch.Tensor subclass (how torch dispatches ops "
                                        "to a type)",
    "tf.experimental.dispatch_for_unary_elementwise_apis": "__torch_function__ on a torch.Tensor subclass",
    "tf.experimental.dispatch_for_binary_elementwise_apis": "__torch_function__ on a torch.Tensor subclass",
    "tf.experimental.unregister_dispatch_for": "__torch_function__ on a torch.Tensor subclass",
    "tf.data.experimental.service": "a tf.data pipeline in each worker process, split by the strategy "
                                    "(strategy.distribute_datasets_from_function / experimental_distribute_dataset)",
    "tf.data.experimental.distributed_save": "Dataset.save in each worker process",
    "tf.data.experimental.from_variant": "pass Dataset objects themselves (there are no variant tensors)",
    "tf.data.experimental.to_variant": "pass Dataset objects themselves (there are no variant tensors)",
    "tf.data.experimental.make_saveable_from_iterator": "tf.train.Checkpoint(iterator=iterator) (iterators "
                                                        "checkpoint through state_dict / load_state_dict)",
    "tf.data.experimental.get_model_proto": "the torch profiler (there is no tf.data autotuning model)",
    "tf.train.ServerDef": "tf.distribute.cluster_resolver and torchrun (processes meet through torch.distributed)",
    "tf.train.ClusterDef": "tf.train.ClusterSpec (its as_dict() is the cluster)",
    "tf.train.JobDef": "tf.train.ClusterSpec (its as_dict() is the cluster)",
    "tf.io.write_graph": "torch.export (there is no GraphDef to write)",
    "tf.io.decode_proto": "tf.train.Example / SequenceExample .FromString, or protobuf's Python API",
    "tf.io.encode_proto": "tf.train.Example / SequenceExample .SerializeToString, or protobuf's Python API",
    "tf.load_op_library": "torch.library custom ops",
    "tf.load_library": "torch.library custom ops",
    "tf.sysconfig": "torch.utils.cpp_extension",
    "tf.tools": "torch.export / the torch profiler",
    "keras.src": "the public keras.* API (keras.src is Keras's private tree)",
    "tf.contrib": "the TF2 API (tf.contrib was removed in TF 2.0)",
    "tf.placeholder": "eager execution: pass tensors as function arguments",
}
# TF names that TF 2.21 itself no longer has, but scripts still reach for (they get the hint too).
REMOVED = {"tf.estimator": "TF 2.16", "tf.contrib": "TF 2.0", "tf.Session": "TF 2.0", "tf.placeholder": "TF 2.0"}


def _literal(value: Any) -> bool:
    """True for defaults whose repr is a fact worth comparing (None, numbers, strings, tuples of them)."""
    if isinstance(value, _LITERALS):
        return True
    if type(value) in (tuple, list, frozenset):
        return all(_literal(item) for item in value)
    if type(value) is dict:
        return all(_literal(k) and _literal(v) for k, v in value.items())
    return False


def format_default(value: Any) -> str:
    """A default as text: its repr for literals, `<TypeName>` for anything else (compared as 'some object')."""
    if _literal(value):
        return repr(value)
    return f"<{type(value).__name__}>"


def format_signature(signature: inspect.Signature) -> str:
    """TF-comparable text of a signature: names, kinds ('/', '*', '**') and defaults; no annotations."""
    parts = []
    seen_keyword_only = False
    for index, param in enumerate(signature.parameters.values()):
        kind = param.kind
        if kind == inspect.Parameter.KEYWORD_ONLY and not seen_keyword_only:
            seen_keyword_only = True
            previous = list(signature.parameters.values())[:index]
            if not any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in previous):
                parts.append("*")
        text = _PREFIX.get(kind, "") + param.name
        if param.default is not inspect.Parameter.empty:
            text += "=" + format_default(param.default)
        parts.append(text)
        if kind == inspect.Parameter.POSITIONAL_ONLY:
            following = list(signature.parameters.values())[index + 1:]
            if not following or following[0].kind != inspect.Parameter.POSITIONAL_ONLY:
                parts.append("/")
    return "(" + ", ".join(parts) + ")"


def signature_text(obj: Any) -> Optional[str]:
    """format_signature of `obj`, or None when Python cannot tell its signature. For a class whose
    signature reads `(*args, **kwargs)` (a `__new__` or metaclass in the way), its `__init__`'s is used."""
    try:
        text = format_signature(inspect.signature(obj))
    except (TypeError, ValueError, RuntimeError):
        return None
    if inspect.isclass(obj) and text == "(*args, **kwargs)" and inspect.isfunction(vars_lookup(obj, "__init__")):
        try:
            params = list(inspect.signature(obj.__init__).parameters.values())[1:]
            text = format_signature(inspect.Signature(params))
        except (TypeError, ValueError, RuntimeError):
            pass
    return text


def vars_lookup(klass: type, name: str) -> Any:
    """The raw class attribute `name` from the first class in the MRO defining it (None if none)."""
    for owner in klass.__mro__:
        if name in vars(owner):
            return vars(owner)[name]
    return None


def comparable(text: Optional[str]) -> Optional[str]:
    """Signature text with non-literal defaults' type names dropped (any object matches any object)."""
    if text is None:
        return None
    out = []
    i = 0
    while i < len(text):
        if text[i] == "<" and i > 0 and text[i - 1] == "=":
            j = text.index(">", i)
            out.append("<>")
            i = j + 1
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def canonical_member_kind(owner: type, name: str) -> str:
    """'method', 'classmethod', 'staticmethod', 'property' or 'attribute' for a class member."""
    for klass in owner.__mro__:
        if name in vars(klass):
            raw = vars(klass)[name]
            break
    else:
        return "attribute"
    if isinstance(raw, classmethod):
        return "classmethod"
    if isinstance(raw, staticmethod):
        return "staticmethod"
    if isinstance(raw, property) or inspect.isdatadescriptor(raw):
        return "property"
    if callable(raw):
        return "method"
    return "attribute"


@functools.lru_cache(maxsize=1)
def load() -> dict:
    """The manifest as a dict: {'versions', 'aliases', 'names': {path: entry}} (loaded once)."""
    with gzip.open(MANIFEST_PATH, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def canonical_path(path: str) -> str:
    """`path` with module aliases (tf.keras -> keras, tf.metrics -> keras.metrics) resolved."""
    aliases = load()["aliases"]
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        if head in aliases:
            return canonical_path(".".join([aliases[head]] + parts[cut:]))
    return path


def entry(path: str) -> Optional[list]:
    """The manifest entry for a public TF/Keras path ([kind, ...]), or None when TF has no such name."""
    return load()["names"].get(canonical_path(path))


def alternative(path: str) -> Optional[str]:
    """What to use instead of the TF name `path`, from ALTERNATIVES (longest matching prefix)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        hint = ALTERNATIVES.get(".".join(parts[:cut]))
        if hint:
            return hint
    return None


def not_provided_error(api_paths: tuple, name: str, module_name: str) -> AttributeError:
    """The AttributeError for `name` looked up in a torchstrategy module standing for `api_paths`:
    a TF/Keras name we do not provide says so (and what to use instead); anything else reads as Python's."""
    if not name.startswith("_"):
        for api_path in api_paths:
            path = f"{api_path}.{name}"
            found = entry(path)
            if found is None and path in load()["aliases"]:
                found = ["module"]  # an alias namespace (tf.compat.v2 stands for tf itself)
            if found is None:
                continue
            library = "Keras" if canonical_path(path).startswith("keras") else "TensorFlow"
            kind = "namespace" if found[0] == "module" else found[0]
            message = (f"{path} is {library} API ({kind}) that torchstrategy does not provide "
                       f"(module '{module_name}' has no attribute '{name}')")
            hint = alternative(path) or alternative(canonical_path(path))
            if hint:
                message += f"; instead use: {hint}"
            return AttributeError(message)
        for api_path in api_paths:
            path = f"{api_path}.{name}"
            if path in REMOVED:
                return AttributeError(f"{path} was removed from TensorFlow in {REMOVED[path]} and torchstrategy "
                                      f"does not provide it (module '{module_name}' has no attribute '{name}'); "
                                      f"instead use: {alternative(path)}")
    return AttributeError(f"module '{module_name}' has no attribute '{name}'")
