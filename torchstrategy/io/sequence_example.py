"""`tf.train.SequenceExample` and its parts (FeatureList, FeatureLists) with TF's protobuf wire encoding, on the
message base and the Feature/Features of io/example.py."""
from __future__ import annotations

from typing import Any, Iterable, Optional

from torchstrategy._machinery.protobuf import LENGTH_DELIMITED, DecodeError, Message, encode_length_delimited, fields
from torchstrategy.io.example import Feature, Features, _MessageMap

__all__ = ["FeatureList", "FeatureLists", "SequenceExample"]


class _Features(list):
    """`FeatureList.feature`: a list of Features; `add()` appends a new one, as protobuf's repeated messages."""

    def __init__(self, owner: "FeatureList", items: Iterable[Feature] = ()):
        super().__init__(self._copy(item) for item in items)
        self._owner = owner

    @staticmethod
    def _copy(item: Any) -> Feature:
        if not isinstance(item, Feature):
            raise TypeError(f"FeatureList.feature items must be tf.train.Feature, got {type(item).__name__}.")
        copy = Feature()
        copy.CopyFrom(item)
        return copy

    def add(self, **kwargs: Any) -> Feature:
        """Appends and returns a new Feature (made from `kwargs`)."""
        feature = Feature(**kwargs)
        list.append(self, feature)
        self._owner._modified()
        return feature

    def append(self, item: Feature) -> None:
        list.append(self, self._copy(item))
        self._owner._modified()

    def extend(self, items: Iterable[Feature]) -> None:
        list.extend(self, [self._copy(item) for item in items])
        self._owner._modified()


class FeatureList(Message):
    """`tf.train.FeatureList(feature=[tf.train.Feature(...), ...])`: the per-step features of one sequence."""

    def __init__(self, feature: Optional[Iterable[Feature]] = None):
        self._feature = _Features(self, feature or ())

    @property
    def feature(self) -> _Features:
        return self._feature

    def Clear(self) -> None:
        list.clear(self._feature)

    def _encode(self, out: bytearray) -> None:
        for item in self._feature:
            encode_length_delimited(1, item.SerializeToString(), out)

    def _merge(self, data: bytes) -> None:
        for number, wire_type, value in fields(data):
            if number == 1:
                if wire_type != LENGTH_DELIMITED:
                    raise DecodeError("FeatureList.feature must be length-delimited")
                item = Feature()
                item._merge(value)
                list.append(self._feature, item)

    def _repr_fields(self) -> str:
        return f"feature={list(self._feature)!r}"


class FeatureLists(Message):
    """`tf.train.FeatureLists(feature_list={"name": tf.train.FeatureList(...)})`: named feature lists."""

    def __init__(self, feature_list: Optional[dict] = None):
        self._lists = _MessageMap(self, FeatureList, "FeatureLists.feature_list")
        self._lists.fill(feature_list, "FeatureLists(feature_list=...)")

    @property
    def feature_list(self) -> _MessageMap:
        return self._lists

    def Clear(self) -> None:
        dict.clear(self._lists)

    def _encode(self, out: bytearray) -> None:
        self._lists.encode(out)

    def _merge(self, data: bytes) -> None:
        self._lists.merge(data)

    def _repr_fields(self) -> str:
        return f"feature_list={dict(self._lists)!r}"


class SequenceExample(Message):
    """`tf.train.SequenceExample(context=tf.train.Features(...), feature_lists=tf.train.FeatureLists(...))`.

    >>> ex = SequenceExample()
    >>> ex.feature_lists.feature_list["tokens"].feature.add().int64_list.value.append(7)
    >>> SequenceExample.FromString(ex.SerializeToString()) == ex
    True
    """

    def __init__(self, context: Optional[Features] = None, feature_lists: Optional[FeatureLists] = None):
        self._context = self._field("context", Features, context)
        self._lists = self._field("feature_lists", FeatureLists, feature_lists)

    def _field(self, name: str, cls: type, value: Any) -> Any:
        if value is None:
            return cls()
        if not isinstance(value, cls):
            raise TypeError(f"SequenceExample({name}=...) expects a tf.train.{cls.__name__}, got {type(value).__name__}.")
        copy = cls()
        copy.CopyFrom(value)
        return copy

    @property
    def context(self) -> Features:
        return self._context

    @property
    def feature_lists(self) -> FeatureLists:
        return self._lists

    def HasField(self, field_name: str) -> bool:
        if field_name not in ("context", "feature_lists"):
            raise ValueError(f"SequenceExample has no field {field_name!r}.")
        return bool(self.context.ByteSize() if field_name == "context" else self.feature_lists.ByteSize())

    def Clear(self) -> None:
        self._context, self._lists = Features(), FeatureLists()

    def _encode(self, out: bytearray) -> None:
        context, lists = self._context.SerializeToString(), self._lists.SerializeToString()
        if context or dict(self._context.feature):
            encode_length_delimited(1, context, out)
        if lists or dict(self._lists.feature_list):
            encode_length_delimited(2, lists, out)

    def _merge(self, data: bytes) -> None:
        for number, wire_type, value in fields(data):
            if number == 1 and wire_type == LENGTH_DELIMITED:
                self._context._merge(value)
            elif number == 2 and wire_type == LENGTH_DELIMITED:
                self._lists._merge(value)

    def _repr_fields(self) -> str:
        return f"context={self._context!r}, feature_lists={self._lists!r}"
