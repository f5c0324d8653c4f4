"""Protobuf's wire format, written here for tf.train.Example (no protobuf dependency): varints,
length-delimited and packed fields, field iteration, and the small message base the Example parts share."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Optional


class DecodeError(ValueError):
    """Raised when bytes are not a valid encoding of the message being parsed (protobuf's DecodeError)."""


# ------------------------------------------------------------------ wire format
VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


def encode_varint(value: int, out: bytearray) -> None:
    value &= 0xFFFFFFFFFFFFFFFF  # negative int64s are sent as their 64-bit two's complement (10 bytes)
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def decode_varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data):
            raise DecodeError("truncated varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift >= 70:
            raise DecodeError("varint longer than 10 bytes")


def encode_length_delimited(field_number: int, payload: bytes, out: bytearray) -> None:
    encode_varint((field_number << 3) | LENGTH_DELIMITED, out)
    encode_varint(len(payload), out)
    out += payload


def fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) for each field of an encoded message; bytes for length-delimited."""
    position, end = 0, len(data)
    while position < end:
        key, position = decode_varint(data, position)
        field_number, wire_type = key >> 3, key & 7
        if wire_type == VARINT:
            value, position = decode_varint(data, position)
        elif wire_type == FIXED64:
            value, position = data[position:position + 8], position + 8
        elif wire_type == FIXED32:
            value, position = data[position:position + 4], position + 4
        elif wire_type == LENGTH_DELIMITED:
            length, position = decode_varint(data, position)
            value, position = data[position:position + length], position + length
        else:
            raise DecodeError(f"unsupported wire type {wire_type} for field {field_number}")
        if position > end:
            raise DecodeError(f"truncated field {field_number}")
        yield field_number, wire_type, value


# ------------------------------------------------------------------ message base
class Message:
    """Shared protobuf-like behaviour: presence hooks for lazily created submessages, parse/serialize."""

    _on_modify: Optional[Callable[[], None]] = None

    def _modified(self) -> None:
        # A submessage read from an unset field joins its parent only once something is written into it.
        hook, self._on_modify = self._on_modify, None
        if hook is not None:
            hook()

    def SerializeToString(self, deterministic: Optional[bool] = None) -> bytes:
        """The protobuf wire encoding (bytes identical to TF's for the same content; map keys sorted)."""
        out = bytearray()
        self._encode(out)
        return bytes(out)

    def ParseFromString(self, serialized: bytes) -> int:
        """Replaces this message's content with the decoded `serialized`; returns the number of bytes read."""
        data = bytes(serialized)
        self.Clear()
        self._merge(data)
        self._modified()
        return len(data)

    @classmethod
    def FromString(cls, serialized: bytes) -> "Message":
        """A new message decoded from `serialized`."""
        message = cls()
        message.ParseFromString(serialized)
        return message

    def CopyFrom(self, other: "Message") -> None:
        """Makes this message a copy of `other` (same type)."""
        if type(other) is not type(self):
            raise TypeError(f"{type(self).__name__}.CopyFrom expects a {type(self).__name__}, got "
                            f"{type(other).__name__}.")
        self.ParseFromString(other.SerializeToString())

    def MergeFrom(self, other: "Message") -> None:
        """Merges `other` (same type) into this message: repeated fields append, maps and set fields override."""
        if type(other) is not type(self):
            raise TypeError(f"{type(self).__name__}.MergeFrom expects a {type(self).__name__}, got "
                            f"{type(other).__name__}.")
        self.MergeFromString(other.SerializeToString())

    def MergeFromString(self, serialized: bytes) -> int:
        """Merges the decoded `serialized` into this message; returns the number of bytes read."""
        data = bytes(serialized)
        self._merge(data)
        self._modified()
        return len(data)

    def SerializePartialToString(self, **kwargs: Any) -> bytes:
        """The same as SerializeToString (these messages have no required fields)."""
        return self.SerializeToString()

    def IsInitialized(self) -> bool:
        """True: these messages have no required fields."""
        return True

    def FindInitializationErrors(self) -> list:
        """[]: these messages have no required fields."""
        return []

    def DiscardUnknownFields(self) -> None:
        """Nothing to do: unknown fields are dropped when parsing."""

    def WhichOneof(self, oneof_group: str) -> Optional[str]:
        """Messages without a oneof refuse every name, as protobuf does (Feature overrides this)."""
        raise ValueError(f'Protocol message {type(self).__name__} has no oneof "{oneof_group}" field.')

    def HasField(self, field_name: str) -> bool:
        """Messages with only repeated or map fields have no presence to ask about (Example etc. override)."""
        raise ValueError(f'Protocol message {type(self).__name__} has no singular "{field_name}" field.')

    def HasExtension(self, extension_handle: Any) -> bool:
        raise KeyError(f"{type(self).__name__} is not extendable (tf.train messages have no extensions).")

    def ClearExtension(self, extension_handle: Any) -> None:
        raise KeyError(f"{type(self).__name__} is not extendable (tf.train messages have no extensions).")

    @property
    def Extensions(self) -> Any:
        raise AttributeError(f"{type(self).__name__} is not extendable (tf.train messages have no extensions).")

    def UnknownFields(self) -> tuple:
        """(): unknown fields are dropped when parsing."""
        return ()

    def SetInParent(self) -> None:
        """Marks a submessage read from an unset field as set in its parent."""
        self._modified()

    def ByteSize(self) -> int:
        return len(self.SerializeToString())

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and self.SerializeToString(True) == other.SerializeToString(True)

    def __ne__(self, other: Any) -> bool:
        return not self == other

    __hash__ = None  # mutable, as protobuf messages

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_fields()})"

    # subclasses: Clear, _encode, _merge, _repr_fields


class RepeatedValues(list):
    """A BytesList/FloatList/Int64List's `value` list: converts items (`owner._convert`), tells the owner."""

    def __init__(self, owner: Any, items: Iterable[Any] = ()):
        super().__init__(owner._convert(item) for item in items)
        self._owner = owner

    def _changed(self) -> None:
        self._owner._modified()

    def append(self, item: Any) -> None:
        super().append(self._owner._convert(item))
        self._changed()

    def extend(self, items: Iterable[Any]) -> None:
        super().extend(self._owner._convert(item) for item in items)
        self._changed()

    def insert(self, index: int, item: Any) -> None:
        super().insert(index, self._owner._convert(item))
        self._changed()

    def __setitem__(self, index: Any, item: Any) -> None:
        if isinstance(index, slice):
            super().__setitem__(index, [self._owner._convert(x) for x in item])
        else:
            super().__setitem__(index, self._owner._convert(item))
        self._changed()

    def __iadd__(self, items: Iterable[Any]) -> "RepeatedValues":
        self.extend(items)
        return self
