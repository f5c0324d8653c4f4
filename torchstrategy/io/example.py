"""`tf.train.Example` and its parts (Features, Feature, BytesList, FloatList, Int64List) as plain Python
messages with TF's protobuf wire encoding (written here, in torchstrategy/_protobuf.py)."""
from __future__ import annotations

import math
import struct
from typing import Any, Iterable, Optional

from torchstrategy._machinery.protobuf import (FIXED32, LENGTH_DELIMITED, VARINT, DecodeError, Message, RepeatedValues,
                                     decode_varint, encode_length_delimited, encode_varint, fields)

__all__ = ["BytesList", "DecodeError", "Example", "Feature", "Features", "FloatList", "Int64List"]


class _ValueList(Message):
    """A message with one `repeated value = 1` field."""

    _type_name = ""

    def __init__(self, value: Optional[Iterable[Any]] = None):
        self._values = RepeatedValues(self, value if value is not None else ())

    @property
    def value(self) -> RepeatedValues:
        return self._values

    @value.setter
    def value(self, items: Iterable[Any]) -> None:
        # protobuf refuses assigning a repeated field; scripts use .value.extend / the constructor
        raise AttributeError(f"Assignment not allowed to repeated field \"value\" of {type(self).__name__}; "
                             f"use .value.extend([...]) or {type(self).__name__}(value=[...]).")

    def Clear(self) -> None:
        list.clear(self._values)

    def _convert(self, item: Any) -> Any:  # pragma: no cover - overridden
        return item

    def _repr_fields(self) -> str:
        return f"value={list(self._values)!r}"


class BytesList(_ValueList):
    """`tf.train.BytesList(value=[b"a", "text"])`: a list of byte strings (str is UTF-8 encoded)."""

    def _convert(self, item: Any) -> bytes:
        if isinstance(item, str):
            return item.encode("utf-8")
        if isinstance(item, (bytes, bytearray, memoryview)):
            return bytes(item)
        if hasattr(item, "item") and getattr(item, "ndim", None) == 0:  # a NumPy bytes scalar / 0-d array
            return self._convert(item.item())
        raise TypeError(f"BytesList value must be bytes or str, got {item!r} of type {type(item).__name__}. "
                        f"Encode numbers first (e.g. str(x).encode()) or use Int64List/FloatList.")

    def _encode(self, out: bytearray) -> None:
        for item in self._values:
            encode_length_delimited(1, item, out)

    def _merge(self, data: bytes) -> None:
        for number, wire_type, value in fields(data):
            if number == 1:
                if wire_type != LENGTH_DELIMITED:
                    raise DecodeError("BytesList.value must be length-delimited")
                list.append(self._values, bytes(value))


def _check_number(item: Any, kind: str) -> Any:
    if isinstance(item, (str, bytes)) or not hasattr(item, "__index__" if kind == "int" else "__float__"):
        raise TypeError(f"{'Int64List' if kind == 'int' else 'FloatList'} value must be "
                        f"{'an integer' if kind == 'int' else 'a number'}, got {item!r} of type "
                        f"{type(item).__name__}.")
    return item


class FloatList(_ValueList):
    """`tf.train.FloatList(value=[1.0, 2.5])`: float32 values (packed fixed32 on the wire, as TF writes)."""

    def _convert(self, item: Any) -> float:
        value = float(_check_number(item, "float"))
        # stored as float32, as protobuf's `float` field does
        return struct.unpack("<f", struct.pack("<f", value))[0] if math.isfinite(value) else value

    def _encode(self, out: bytearray) -> None:
        if self._values:
            encode_length_delimited(1, struct.pack(f"<{len(self._values)}f", *self._values), out)

    def _merge(self, data: bytes) -> None:
        for number, wire_type, value in fields(data):
            if number != 1:
                continue
            if wire_type == LENGTH_DELIMITED:  # packed
                if len(value) % 4:
                    raise DecodeError("packed FloatList has a length that is not a multiple of 4")
                list.extend(self._values, struct.unpack(f"<{len(value) // 4}f", value))
            elif wire_type == FIXED32:
                list.append(self._values, struct.unpack("<f", value)[0])
            else:
                raise DecodeError(f"FloatList.value has wire type {wire_type}")


class Int64List(_ValueList):
    """`tf.train.Int64List(value=[1, -2])`: int64 values (packed varints on the wire, as TF writes)."""

    def _convert(self, item: Any) -> int:
        value = int(_check_number(item, "int").__index__())
        if not -(2**63) <= value < 2**63:
            raise ValueError(f"Int64List value {value} is out of the int64 range.")
        return value

    def _encode(self, out: bytearray) -> None:
        if self._values:
            payload = bytearray()
            for item in self._values:
                encode_varint(item, payload)
            encode_length_delimited(1, bytes(payload), out)

    def _merge(self, data: bytes) -> None:
        def signed(raw: int) -> int:
            raw &= 0xFFFFFFFFFFFFFFFF
            return raw - (1 << 64) if raw >> 63 else raw

        for number, wire_type, value in fields(data):
            if number != 1:
                continue
            if wire_type == LENGTH_DELIMITED:  # packed
                position = 0
                while position < len(value):
                    raw, position = decode_varint(value, position)
                    list.append(self._values, signed(raw))
            elif wire_type == VARINT:
                list.append(self._values, signed(value))
            else:
                raise DecodeError(f"Int64List.value has wire type {wire_type}")


_KINDS = {"bytes_list": (1, BytesList), "float_list": (2, FloatList), "int64_list": (3, Int64List)}


class Feature(Message):
    """`tf.train.Feature(int64_list=...)` (or bytes_list / float_list): a oneof named "kind"."""

    def __init__(self, bytes_list: Optional[BytesList] = None, float_list: Optional[FloatList] = None,
                 int64_list: Optional[Int64List] = None):
        self._kind: Optional[str] = None
        self._value: Optional[_ValueList] = None
        self._unset: dict[str, _ValueList] = {}
        given = [(name, value) for name, value in (("bytes_list", bytes_list), ("float_list", float_list),
                                                   ("int64_list", int64_list)) if value is not None]
        for name, value in given:  # as protobuf: the last oneof member set wins
            cls = _KINDS[name][1]
            if not isinstance(value, cls):
                raise TypeError(f"Feature({name}=...) expects a tf.train.{cls.__name__}, got "
                                f"{type(value).__name__}.")
            copy = cls()
            copy.CopyFrom(value)
            self._set_kind(name, copy)

    def _set_kind(self, name: str, value: _ValueList) -> None:
        self._kind, self._value = name, value
        self._unset.clear()
        value._on_modify = None
        self._modified()

    def _member(self, name: str) -> _ValueList:
        if self._kind == name:
            return self._value
        if name not in self._unset:
            member = _KINDS[name][1]()
            member._on_modify = lambda: self._set_kind(name, member)
            self._unset[name] = member
        return self._unset[name]

    bytes_list = property(lambda self: self._member("bytes_list"))
    float_list = property(lambda self: self._member("float_list"))
    int64_list = property(lambda self: self._member("int64_list"))

    def WhichOneof(self, oneof_group: str) -> Optional[str]:
        """The set member of the "kind" oneof ("bytes_list", "float_list", "int64_list") or None."""
        if oneof_group != "kind":
            raise ValueError(f"Feature has no oneof named {oneof_group!r}; its oneof is 'kind'.")
        return self._kind

    def HasField(self, field_name: str) -> bool:
        if field_name == "kind":
            return self._kind is not None
        if field_name not in _KINDS:
            raise ValueError(f"Feature has no field {field_name!r}.")
        return self._kind == field_name

    def Clear(self) -> None:
        self._kind, self._value = None, None
        self._unset.clear()

    def _encode(self, out: bytearray) -> None:
        if self._kind is not None:
            encode_length_delimited(_KINDS[self._kind][0], self._value.SerializeToString(), out)

    def _merge(self, data: bytes) -> None:
        by_number = {number: name for name, (number, _) in _KINDS.items()}
        for number, wire_type, value in fields(data):
            name = by_number.get(number)
            if name is None:
                continue
            if wire_type != LENGTH_DELIMITED:
                raise DecodeError(f"Feature.{name} must be length-delimited")
            member = self._value if self._kind == name else _KINDS[name][1]()
            member._merge(value)
            self._kind, self._value = name, member

    def _repr_fields(self) -> str:
        return "" if self._kind is None else f"{self._kind}={self._value!r}"


class _MessageMap(dict):
    """A protobuf `map<string, Message>` field (`Features.feature`, `FeatureLists.feature_list`): str keys (bytes
    are decoded), reading a missing key adds an empty value, and its owner hears of every change."""

    def __init__(self, owner: Message, value_type: type, field: str):
        super().__init__()
        self._owner, self._value_type, self._field = owner, value_type, field

    def _key(self, key: Any) -> str:
        if isinstance(key, bytes):
            key = key.decode("utf-8")
        if not isinstance(key, str):
            raise TypeError(f"{self._field} keys must be str, got {key!r} of type {type(key).__name__}.")
        return key

    def __missing__(self, key: str) -> Any:
        value = self._value_type()
        dict.__setitem__(self, key, value)
        self._owner._modified()
        return value

    def __getitem__(self, key: Any) -> Any:
        return super().__getitem__(self._key(key))

    def __setitem__(self, key: Any, value: Any) -> None:
        if not isinstance(value, self._value_type):
            raise TypeError(f"{self._field}[{key!r}] must be a tf.train.{self._value_type.__name__}, got "
                            f"{type(value).__name__}.")
        dict.__setitem__(self, self._key(key), value)
        self._owner._modified()

    def get_or_create(self, key: Any) -> Any:
        return self[key]

    def fill(self, mapping: Optional[dict], where: str) -> None:
        """A constructor's `{name: value}`: copies of the values (as protobuf copies into a new message)."""
        for key, value in (mapping or {}).items():
            if not isinstance(value, self._value_type):
                raise TypeError(f"{where}: the value for {key!r} must be a tf.train.{self._value_type.__name__}, "
                                f"got {type(value).__name__}.")
            copy = self._value_type()
            copy.CopyFrom(value)
            dict.__setitem__(self, self._key(key), copy)

    def encode(self, out: bytearray) -> None:
        """The entries as field 1 of the owner. Map order on the wire is unspecified; TF's (upb) order follows its
        hash table. Sorted keys are protobuf's deterministic order: one entry gives TF's exact bytes, several a
        stable encoding."""
        for key in sorted(self):
            entry = bytearray()
            encode_length_delimited(1, key.encode("utf-8"), entry)
            encode_length_delimited(2, dict.__getitem__(self, key).SerializeToString(), entry)
            encode_length_delimited(1, bytes(entry), out)

    def merge(self, data: bytes) -> None:
        """Decodes the owner's wire data: each field-1 entry (key 1, value 2); a repeated key: the last one wins."""
        for number, wire_type, value in fields(data):
            if number != 1:
                continue
            if wire_type != LENGTH_DELIMITED:
                raise DecodeError(f"{self._field} entries must be length-delimited")
            key, item = "", self._value_type()
            for entry_number, entry_type, entry_value in fields(value):
                if entry_number == 1 and entry_type == LENGTH_DELIMITED:
                    try:
                        key = bytes(entry_value).decode("utf-8")
                    except UnicodeDecodeError:
                        raise DecodeError(f"a {self._field} key is not valid UTF-8") from None
                elif entry_number == 2 and entry_type == LENGTH_DELIMITED:
                    item = self._value_type()
                    item._merge(entry_value)
            dict.__setitem__(self, key, item)


class Features(Message):
    """`tf.train.Features(feature={"name": tf.train.Feature(...)})`: a map from names to Features."""

    def __init__(self, feature: Optional[dict] = None):
        self._feature = _MessageMap(self, Feature, "Features.feature")
        self._feature.fill(feature, "Features(feature=...)")

    @property
    def feature(self) -> _MessageMap:
        return self._feature

    def Clear(self) -> None:
        dict.clear(self._feature)

    def _encode(self, out: bytearray) -> None:
        self._feature.encode(out)

    def _merge(self, data: bytes) -> None:
        self._feature.merge(data)

    def _repr_fields(self) -> str:
        return f"feature={dict(self._feature)!r}"


class Example(Message):
    """`tf.train.Example(features=tf.train.Features(...))`: one record of named features.

    >>> ex = Example(features=Features(feature={"x": Feature(int64_list=Int64List(value=[1, 2]))}))
    >>> ex.SerializeToString().hex()
    '0a0d0a0b0a017812061a040a020102'
    """

    def __init__(self, features: Optional[Features] = None):
        self._features: Optional[Features] = None
        self._unset: Optional[Features] = None
        if features is not None:
            if not isinstance(features, Features):
                raise TypeError(f"Example(features=...) expects a tf.train.Features, got {type(features).__name__}.")
            copy = Features()
            copy.CopyFrom(features)
            self._features = copy

    @property
    def features(self) -> Features:
        if self._features is not None:
            return self._features
        if self._unset is None:
            self._unset = Features()

            def join() -> None:
                self._features, self._unset = self._unset, None
                self._modified()

            self._unset._on_modify = join
        return self._unset

    def HasField(self, field_name: str) -> bool:
        if field_name != "features":
            raise ValueError(f"Example has no field {field_name!r}.")
        return self._features is not None

    def Clear(self) -> None:
        self._features, self._unset = None, None

    def _encode(self, out: bytearray) -> None:
        if self._features is not None:
            encode_length_delimited(1, self._features.SerializeToString(), out)

    def _merge(self, data: bytes) -> None:
        for number, wire_type, value in fields(data):
            if number == 1 and wire_type == LENGTH_DELIMITED:
                if self._features is None:
                    self._features = Features()
                self._features._merge(value)

    def _repr_fields(self) -> str:
        return "" if self._features is None else f"features={self._features!r}"
