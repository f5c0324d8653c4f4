"""The TrackableObjectGraph proto TF stores in a checkpoint under `_CHECKPOINTABLE_OBJECT_GRAPH`: nodes with named
children, the tensors (attributes) each node saved and its optimizer slots; parsed, walked and written here."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from torchstrategy._machinery.protobuf import LENGTH_DELIMITED, VARINT, encode_length_delimited, encode_varint, fields

__all__ = ["OBJECT_GRAPH_KEY", "VARIABLE_VALUE", "Attribute", "ObjectNode", "SlotReference", "ObjectGraph",
           "object_reference"]

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VARIABLE_VALUE = "VARIABLE_VALUE"


@dataclass
class Attribute:
    """One saved tensor of a node: its attribute name, the variable's full name, and its key in the bundle."""

    name: str = ""
    full_name: str = ""
    checkpoint_key: str = ""


@dataclass
class SlotReference:
    """An optimizer slot (e.g. Adam's 'm') of the variable node `original`, stored at node `slot`."""

    original: int = 0
    slot_name: str = ""
    slot: int = 0


@dataclass
class ObjectNode:
    """One trackable object: (child node id, local name) pairs, saved attributes, slot variables."""

    children: list = field(default_factory=list)
    attributes: list = field(default_factory=list)
    slot_variables: list = field(default_factory=list)
    has_checkpoint_values: Optional[bool] = None

    def child(self, name: str) -> Optional[int]:
        """The node id of the child called `name`, else None."""
        for node_id, local_name in self.children:
            if local_name == name:
                return node_id
        return None

    def value_key(self) -> Optional[str]:
        """The bundle key of this node's VARIABLE_VALUE (a variable node), else None."""
        for attribute in self.attributes:
            if attribute.name == VARIABLE_VALUE:
                return attribute.checkpoint_key
        return None


def _strings(data: bytes, names: tuple) -> dict:
    out = {name: "" for name in names}
    for number, wire, value in fields(data):
        if wire == LENGTH_DELIMITED and 1 <= number <= len(names):
            out[names[number - 1]] = value.decode("utf-8")
    return out


def object_reference(data: bytes) -> tuple[int, str]:
    """An ObjectReference message (a child edge of TF's object graphs, in checkpoints and SavedModels alike):
    (node_id, local_name)."""
    node_id, name = 0, ""
    for number, wire, value in fields(data):
        if number == 1 and wire == VARINT:
            node_id = value
        elif number == 2 and wire == LENGTH_DELIMITED:
            name = value.decode("utf-8")
    return node_id, name


def _parse_node(data: bytes) -> ObjectNode:
    node = ObjectNode()
    for number, wire, value in fields(data):
        if number == 1 and wire == LENGTH_DELIMITED:
            node.children.append(object_reference(value))
        elif number == 2 and wire == LENGTH_DELIMITED:
            node.attributes.append(Attribute(**_strings(value, ("name", "full_name", "checkpoint_key"))))
        elif number == 3 and wire == LENGTH_DELIMITED:
            slot = SlotReference()
            for sub_number, sub_wire, sub_value in fields(value):
                if sub_number == 1 and sub_wire == VARINT:
                    slot.original = sub_value
                elif sub_number == 2 and sub_wire == LENGTH_DELIMITED:
                    slot.slot_name = sub_value.decode("utf-8")
                elif sub_number == 3 and sub_wire == VARINT:
                    slot.slot = sub_value
            node.slot_variables.append(slot)
        elif number == 5 and wire == LENGTH_DELIMITED:
            node.has_checkpoint_values = any(n == 1 and v for n, _, v in fields(value))
    return node


def _encode_node(node: ObjectNode) -> bytes:
    out = bytearray()
    for node_id, name in node.children:
        ref = bytearray()
        if node_id:
            encode_varint(1 << 3 | VARINT, ref)
            encode_varint(node_id, ref)
        encode_length_delimited(2, name.encode("utf-8"), ref)
        encode_length_delimited(1, bytes(ref), out)
    for attribute in node.attributes:
        item = bytearray()
        for number, text in enumerate((attribute.name, attribute.full_name, attribute.checkpoint_key), 1):
            if text:
                encode_length_delimited(number, text.encode("utf-8"), item)
        encode_length_delimited(2, bytes(item), out)
    for slot in node.slot_variables:
        item = bytearray()
        if slot.original:
            encode_varint(1 << 3 | VARINT, item)
            encode_varint(slot.original, item)
        encode_length_delimited(2, slot.slot_name.encode("utf-8"), item)
        if slot.slot:
            encode_varint(3 << 3 | VARINT, item)
            encode_varint(slot.slot, item)
        encode_length_delimited(3, bytes(item), out)
    if node.has_checkpoint_values is not None:
        flag = bytearray()
        if node.has_checkpoint_values:
            encode_varint(1 << 3 | VARINT, flag)
            encode_varint(1, flag)
        encode_length_delimited(5, bytes(flag), out)
    return bytes(out)


@dataclass
class ObjectGraph:
    """A TrackableObjectGraph: node 0 is the root (the tf.train.Checkpoint that was saved)."""

    nodes: list = field(default_factory=list)

    @classmethod
    def parse(cls, data: bytes) -> "ObjectGraph":
        """Decodes a serialized TrackableObjectGraph."""
        return cls([_parse_node(value) for number, wire, value in fields(bytes(data))
                    if number == 1 and wire == LENGTH_DELIMITED])

    def serialize(self) -> bytes:
        """The TrackableObjectGraph's wire bytes (byte for byte what TF writes for the same graph)."""
        out = bytearray()
        for node in self.nodes:
            encode_length_delimited(1, _encode_node(node), out)
        return bytes(out)

    def paths(self) -> dict:
        """node id -> the first path (by breadth-first search from the root, children in order) that reaches it,
        e.g. 'model/layer_with_weights-0/kernel' (as TF names an object)."""
        found, queue = {0: ""}, [0]
        while queue:
            node_id = queue.pop(0)
            for child, name in self.nodes[node_id].children:
                if child not in found:
                    found[child] = f"{found[node_id]}/{name}" if found[node_id] else name
                    queue.append(child)
        return found
