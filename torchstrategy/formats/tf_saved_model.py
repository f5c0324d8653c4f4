"""TF's SavedModel directory as TF writes it: `saved_model.pb` (SavedModel -> MetaGraphDef: tags, signature_defs and
the SavedObjectGraph) parsed with our wire-format reader, and its `variables/variables` bundle's values per object."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from torchstrategy._machinery.protobuf import LENGTH_DELIMITED, VARINT, DecodeError, fields
from torchstrategy.formats.base import FormatError
from torchstrategy.formats.tf_bundle import _DTYPE_NAMES, BundleCorruptedError, BundleReader, is_bundle
from torchstrategy.formats.tf_object_graph import OBJECT_GRAPH_KEY, ObjectGraph, object_reference

__all__ = ["SAVED_MODEL_PB", "SAVED_MODEL_PBTXT", "TensorInfo", "SignatureInfo", "SavedNode", "TFSavedModel",
           "is_tf_saved_model", "read_tf_saved_model", "variables_prefix", "read_variable_values"]

SAVED_MODEL_PB, SAVED_MODEL_PBTXT = "saved_model.pb", "saved_model.pbtxt"
#: SavedObject's `kind` oneof: field number -> name (TF's saved_object_graph.proto)
_KINDS = {4: "user_object", 5: "asset", 6: "function", 7: "variable", 8: "bare_concrete_function", 9: "constant",
          10: "resource", 12: "captured_tensor"}
_EXTRA_DTYPES = {20: "resource", 21: "variant"}
#: signature_defs TF keeps for itself (the initializer), not among `loaded.signatures`
_INTERNAL_SIGNATURES = ("__saved_model_init_op",)


@dataclass
class TensorInfo:
    """One input or output of a signature: the graph tensor's name, dtype name, shape (None: unknown rank;
    None entries: unknown sizes)."""

    name: str = ""
    dtype: str = "invalid"
    shape: Optional[tuple] = None


@dataclass
class SignatureInfo:
    """A SignatureDef: named inputs and outputs (name -> TensorInfo) and the method name."""

    inputs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    method_name: str = ""


@dataclass
class SavedNode:
    """One SavedObject: its kind, (child node id, local name) pairs, the user object's identifier, and for a
    variable its name, dtype, shape and trainability; for a function its concrete functions' names."""

    kind: str = ""
    children: list = field(default_factory=list)
    identifier: str = ""
    name: str = ""
    dtype: str = ""
    shape: Optional[tuple] = None
    trainable: bool = False
    concrete_functions: list = field(default_factory=list)
    asset_index: int = 0


@dataclass
class TFSavedModel:
    """What `read_tf_saved_model` found: the directory, the first MetaGraphDef's tags, the TF version that
    wrote it, the object graph's nodes (node 0 is the saved root), signatures and asset file names."""

    export_dir: str
    tags: list = field(default_factory=list)
    tensorflow_version: str = ""
    tensorflow_git_version: str = ""
    nodes: list = field(default_factory=list)
    signatures: dict = field(default_factory=dict)
    asset_files: list = field(default_factory=list)


def is_tf_saved_model(export_dir: str) -> bool:
    """Whether `export_dir` is a directory holding a TF-written saved_model.pb or saved_model.pbtxt."""
    return any(os.path.isfile(os.path.join(export_dir, name)) for name in (SAVED_MODEL_PB, SAVED_MODEL_PBTXT))


def variables_prefix(export_dir: str) -> str:
    """The prefix of the SavedModel's variables bundle: '{export_dir}/variables/variables'."""
    return os.path.join(export_dir, "variables", "variables")


# ----------------------------------------------------------------------------- parsing
def _text(value: bytes) -> str:
    return bytes(value).decode("utf-8", errors="replace")


def _dtype(code: int) -> str:
    return _DTYPE_NAMES.get(code) or _EXTRA_DTYPES.get(code, f"dtype_{code}")


def _shape(data: bytes) -> Optional[tuple]:
    dims = []
    for number, wire, value in fields(data):
        if number == 3 and wire == VARINT and value:
            return None
        if number == 2 and wire == LENGTH_DELIMITED:
            size = 0
            for sub_number, sub_wire, sub_value in fields(value):
                if sub_number == 1 and sub_wire == VARINT:
                    size = sub_value - (1 << 64) if sub_value >= 1 << 63 else sub_value
            dims.append(None if size < 0 else size)
    return tuple(dims)


def _tensor_info(data: bytes) -> TensorInfo:
    info = TensorInfo(shape=None)
    for number, wire, value in fields(data):
        if number == 1 and wire == LENGTH_DELIMITED:
            info.name = _text(value)
        elif number == 2 and wire == VARINT:
            info.dtype = _dtype(value)
        elif number == 3 and wire == LENGTH_DELIMITED:
            info.shape = _shape(value)
    return info


def _map_entry(data: bytes) -> tuple[str, bytes]:
    key, payload = "", b""
    for number, wire, value in fields(data):
        if number == 1 and wire == LENGTH_DELIMITED:
            key = _text(value)
        elif number == 2 and wire == LENGTH_DELIMITED:
            payload = value
    return key, payload


def _signature(data: bytes) -> SignatureInfo:
    signature = SignatureInfo()
    for number, wire, value in fields(data):
        if number in (1, 2) and wire == LENGTH_DELIMITED:
            key, payload = _map_entry(value)
            (signature.inputs if number == 1 else signature.outputs)[key] = _tensor_info(payload)
        elif number == 3 and wire == LENGTH_DELIMITED:
            signature.method_name = _text(value)
    return signature


def _fill_kind(node: SavedNode, data: bytes) -> None:
    for number, wire, value in fields(data):
        if node.kind == "variable":
            if number == 1 and wire == VARINT:
                node.dtype = _dtype(value)
            elif number == 2 and wire == LENGTH_DELIMITED:
                node.shape = _shape(value)
            elif number == 3 and wire == VARINT:
                node.trainable = bool(value)
            elif number == 6 and wire == LENGTH_DELIMITED:
                node.name = _text(value)
        elif node.kind == "user_object" and number == 1 and wire == LENGTH_DELIMITED:
            node.identifier = _text(value)
        elif node.kind == "function" and number == 1 and wire == LENGTH_DELIMITED:
            node.concrete_functions.append(_text(value))
        elif node.kind == "bare_concrete_function" and number == 1 and wire == LENGTH_DELIMITED:
            node.concrete_functions.append(_text(value))
        elif node.kind == "asset" and number == 1 and wire == VARINT:
            node.asset_index = value


def _node(data: bytes) -> SavedNode:
    node = SavedNode()
    for number, wire, value in fields(data):
        if number == 1 and wire == LENGTH_DELIMITED:
            node.children.append(object_reference(value))
        elif number in _KINDS and wire == LENGTH_DELIMITED:
            node.kind = _KINDS[number]
            _fill_kind(node, value)
    if node.kind == "variable" and node.shape is None:
        node.shape = ()
    return node


def _meta_graph(model: TFSavedModel, data: bytes) -> None:
    for number, wire, value in fields(data):
        if number == 1 and wire == LENGTH_DELIMITED:  # MetaInfoDef
            for sub_number, sub_wire, sub_value in fields(value):
                if sub_number == 4 and sub_wire == LENGTH_DELIMITED:
                    model.tags.append(_text(sub_value))
                elif sub_number == 5 and sub_wire == LENGTH_DELIMITED:
                    model.tensorflow_version = _text(sub_value)
                elif sub_number == 6 and sub_wire == LENGTH_DELIMITED:
                    model.tensorflow_git_version = _text(sub_value)
        elif number == 5 and wire == LENGTH_DELIMITED:
            key, payload = _map_entry(value)
            if key not in _INTERNAL_SIGNATURES:
                model.signatures[key] = _signature(payload)
        elif number == 6 and wire == LENGTH_DELIMITED:  # AssetFileDef: tensor_info = 1, filename = 2
            model.asset_files.append(next((_text(v) for n, w, v in fields(value) if n == 2), ""))
        elif number == 7 and wire == LENGTH_DELIMITED:
            model.nodes = [_node(v) for n, w, v in fields(value) if n == 1 and w == LENGTH_DELIMITED]


def read_tf_saved_model(export_dir: str) -> TFSavedModel:
    """Parses `{export_dir}/saved_model.pb` (the first MetaGraphDef, TF's 'serve' graph). A text-form
    saved_model.pbtxt or one without an object graph raises FormatError, a damaged file OSError (as TF), each
    naming the file."""
    export_dir = os.fspath(export_dir)
    path = os.path.join(export_dir, SAVED_MODEL_PB)
    if not os.path.isfile(path):
        if os.path.isfile(os.path.join(export_dir, SAVED_MODEL_PBTXT)):
            raise FormatError(f"'{os.path.join(export_dir, SAVED_MODEL_PBTXT)}' is a SavedModel in protobuf text "
                              f"form, which torchstrategy does not read; save it again in binary form "
                              f"({SAVED_MODEL_PB}, TF's default).")
        raise FormatError(f"SavedModel file does not exist at: {path}. Pass a directory written by "
                          f"tf.saved_model.save or model.export.")
    with open(path, "rb") as handle:
        data = handle.read()
    model = TFSavedModel(export_dir)
    try:
        meta_graphs = [value for number, wire, value in fields(data) if number == 2 and wire == LENGTH_DELIMITED]
        if meta_graphs:
            _meta_graph(model, meta_graphs[0])
    except (DecodeError, UnicodeDecodeError, IndexError) as error:
        raise OSError(f"Cannot parse file '{path}' as a SavedModel ({error}): it is cut short or is not a "
                      f"SavedModel. Copy the whole directory again, or save the model again.") from error
    if not meta_graphs:
        raise FormatError(f"'{path}' holds no MetaGraphDef ({len(data)} bytes): it is empty, cut short or not a "
                          f"SavedModel. Copy the whole directory again, or save the model again.")
    if not model.nodes:
        raise FormatError(f"'{path}' has no object graph (a TF1-style SavedModel, or the file is cut short); "
                          f"torchstrategy reads SavedModels written by TF2's tf.saved_model.save or model.export.")
    for node_id, node in enumerate(model.nodes):
        if any(child >= len(model.nodes) for child, _ in node.children):
            raise FormatError(f"'{path}' is damaged: object {node_id} names a child beyond the "
                              f"{len(model.nodes)} objects of its graph. Copy the whole directory again.")
    return model


# ----------------------------------------------------------------------------- variable values
def _checkpoint_ids(model: TFSavedModel, graph: ObjectGraph) -> dict:
    """saved node id -> checkpoint node id, by walking both graphs from their roots along equal child names."""
    found, queue = {0: 0}, [0]
    while queue:
        saved_id = queue.pop(0)
        checkpoint_node = graph.nodes[found[saved_id]]
        for child, name in model.nodes[saved_id].children:
            if child in found:
                continue
            checkpoint_child = checkpoint_node.child(name)
            if checkpoint_child is not None and checkpoint_child < len(graph.nodes):
                found[child] = checkpoint_child
                queue.append(child)
    return found


def read_variable_values(model: TFSavedModel) -> dict:
    """saved node id -> the variable's saved value (NumPy array, bfloat16 as a torch tensor) for every variable
    node, read (CRC-checked) from the variables bundle; a missing or damaged file raises naming it."""
    prefix = variables_prefix(model.export_dir)
    variable_ids = [i for i, node in enumerate(model.nodes) if node.kind == "variable"]
    if not variable_ids:
        return {}
    if not is_bundle(prefix):
        raise FileNotFoundError(f"The SavedModel at '{model.export_dir}' has {len(variable_ids)} variable(s) but no "
                          f"'{prefix}.index': the variables file is missing. Copy the whole directory again "
                          f"(variables/ included).")
    reader = BundleReader(prefix)
    reader.check_shards()  # FileNotFoundError naming a missing data shard
    try:
        graph = ObjectGraph.parse(reader.tensor(OBJECT_GRAPH_KEY).item())
    except (BundleCorruptedError, DecodeError, KeyError) as error:
        raise FormatError(f"The SavedModel's variables bundle '{prefix}' cannot be read: {error}") from error
    ids = _checkpoint_ids(model, graph)
    values = {}
    for node_id in variable_ids:
        key = graph.nodes[ids[node_id]].value_key() if node_id in ids else None
        if key is None:
            raise FormatError(f"'{prefix}' holds no value for variable '{model.nodes[node_id].name}' (object "
                              f"{node_id}) of the SavedModel at '{model.export_dir}'; the directory is damaged.")
        try:
            values[node_id] = reader.tensor(key)
        except (BundleCorruptedError, KeyError) as error:
            raise FormatError(f"The SavedModel's variables bundle '{prefix}' cannot be read: {error}") from error
    return values
