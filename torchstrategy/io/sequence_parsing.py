"""`tf.io.parse_single_sequence_example` / `parse_sequence_example`: serialized tf.train.SequenceExamples into
context features (as parse_example does them) and per-step feature lists (FixedLenSequenceFeature, VarLenFeature,
RaggedFeature)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch

from torchstrategy._machinery.protobuf import DecodeError
from torchstrategy.errors import InvalidArgumentError
from torchstrategy.io import features as _features
from torchstrategy.io import parsing
from torchstrategy.io.example import Example
from torchstrategy.io.features import FixedLenSequenceFeature, RaggedFeature
from torchstrategy.io.parsing import VarLenFeature
from torchstrategy.io.sequence_example import SequenceExample
from torchstrategy.ragged import RaggedTensor
from torchstrategy.sparse_tensor import SparseTensorValue as SparseTensor

__all__ = ["parse_sequence_example", "parse_single_sequence_example"]

_KIND_OF = {"int64": "int64_list", "float32": "float_list", "string": "bytes_list"}


def _decode(record: Any, where: str) -> SequenceExample:
    data = parsing._as_record(record, where)
    try:
        return SequenceExample.FromString(data)
    except DecodeError as error:
        raise InvalidArgumentError(None, None,
                                   f"{where}: could not parse a serialized tf.train.SequenceExample "
                                   f"({error}).") from None


def _sequence_specs(sequence_features: Any, where: str) -> dict:
    specs = {}
    for key, spec in (sequence_features or {}).items():
        if not isinstance(spec, (FixedLenSequenceFeature, VarLenFeature, RaggedFeature)):
            raise TypeError(f"{where}: sequence feature {key!r} must be a FixedLenSequenceFeature, VarLenFeature or "
                            f"RaggedFeature, got {spec!r}.")
        if isinstance(spec, RaggedFeature) and spec.partitions:
            raise NotImplementedError(f"{where}: RaggedFeature partitions in sequence_features are not supported "
                                      f"here; parse the feature list without partitions and split it after.")
        specs[key] = (spec, parsing._dtype_name(spec.dtype))
    return specs


def _frames(example: SequenceExample, key: str, spec: Any, dtype: str, where: str) -> Optional[list]:
    """The values of each step of feature list `key` (None when the list is absent)."""
    lists = example.feature_lists.feature_list
    if key not in lists:
        return None
    frames = []
    for step, feature in enumerate(lists[key].feature):
        kind = feature.WhichOneof("kind")
        if kind is None:
            frames.append([])
            continue
        if kind != _KIND_OF[dtype]:
            raise InvalidArgumentError(None, None, f"{where}: step {step} of feature list {key!r} holds "
                                       f"{kind.replace('_list', '')} values but the spec asks for {dtype}.")
        frames.append(list(getattr(feature, kind).value))
    return frames


def _dense_frames(frames: Optional[list], key: str, spec: FixedLenSequenceFeature, dtype: str, where: str) -> Any:
    shape = [int(size) for size in spec.shape]
    size = int(np.prod(shape)) if shape else 1
    if frames is None:
        if not spec.allow_missing:
            raise InvalidArgumentError(None, None,
                                       f"{where}: feature list {key!r} is required but could not be found. Give its "
                                       f"FixedLenSequenceFeature allow_missing=True if some examples lack it.")
        frames = []
    for step, values in enumerate(frames):
        if len(values) != size:
            raise InvalidArgumentError(None, None,
                                       f"{where}: step {step} of feature list {key!r} has {len(values)} values, but "
                                       f"its shape {shape} needs {size}.")
    flat = [value for values in frames for value in values]
    return _features.values_array(flat, dtype).reshape([len(frames)] + shape)


def _context(example: SequenceExample) -> Example:
    return Example(features=example.context)


def parse_single_sequence_example(serialized: Any, context_features: Optional[dict] = None,
                                  sequence_features: Optional[dict] = None, example_name: Any = None,
                                  name: Optional[str] = None) -> tuple:
    """(context, feature_lists) dicts of one serialized tf.train.SequenceExample: context features as
    parse_single_example gives them; a FixedLenSequenceFeature list as [steps, *shape], a VarLenFeature list as a
    SparseTensor [steps, longest], a RaggedFeature list as a RaggedTensor [steps, None]."""
    where = "parse_single_sequence_example"
    context_specs = parsing._check_spec(context_features, where) if context_features else {}
    specs = _sequence_specs(sequence_features, where)
    example = _decode(serialized, where)
    context = _context(example)
    parsed_context = {key: parsing._single(context, key, spec, dtype, where)
                      for key, (spec, dtype) in context_specs.items()}
    parsed = {}
    for key, (spec, dtype) in specs.items():
        frames = _frames(example, key, spec, dtype, where)
        if isinstance(spec, FixedLenSequenceFeature):
            parsed[key] = _dense_frames(frames, key, spec, dtype, where)
        elif isinstance(spec, VarLenFeature):
            frames = frames or []
            indices = [[step, position] for step, values in enumerate(frames) for position in range(len(values))]
            flat = [value for values in frames for value in values]
            parsed[key] = SparseTensor(indices or torch.zeros((0, 2)), _features.values_array(flat, dtype),
                                       [len(frames), max((len(v) for v in frames), default=0)])
        else:
            frames = frames or []
            parsed[key] = _features.ragged_batch([_features.values_array(v, dtype) for v in frames], dtype)
    return parsed_context, parsed


def parse_sequence_example(serialized: Any, context_features: Optional[dict] = None,
                           sequence_features: Optional[dict] = None, example_names: Any = None,
                           name: Optional[str] = None) -> tuple:
    """(context, feature_lists, feature_list_lengths) of a batch (1-D) of serialized SequenceExamples: context as
    parse_example; a FixedLenSequenceFeature list as [batch, longest, *shape] padded with its default_value (0 /
    b'') and its step counts (int64 [batch]) in feature_list_lengths; a VarLenFeature list as a SparseTensor
    [batch, longest, widest]; a RaggedFeature list as a RaggedTensor [batch, (steps), (values)]."""
    where = "parse_sequence_example"
    if isinstance(serialized, (bytes, str)) or (isinstance(serialized, np.ndarray) and serialized.ndim == 0):
        raise ValueError(f"{where}: `serialized` must be a 1-D batch of records; for one record use "
                         f"tf.io.parse_single_sequence_example.")
    context_specs = parsing._check_spec(context_features, where) if context_features else {}
    specs = _sequence_specs(sequence_features, where)
    examples = [_decode(record, f"{where} (example {index})") for index, record in enumerate(list(serialized))]
    context = {}
    if context_specs:
        context = parsing.parse_example([_context(e).SerializeToString() for e in examples], context_features)
    parsed, lengths = {}, {}
    for key, (spec, dtype) in specs.items():
        per_example = [_frames(example, key, spec, dtype, f"{where} (example {index})")
                       for index, example in enumerate(examples)]
        if isinstance(spec, FixedLenSequenceFeature):
            parts = [_dense_frames(frames, key, spec, dtype, f"{where} (example {index})")
                     for index, frames in enumerate(per_example)]
            parsed[key] = _features.fixed_sequence_batch(parts, spec, dtype)
            lengths[key] = torch.tensor([len(part) for part in parts], dtype=torch.int64)
        elif isinstance(spec, VarLenFeature):
            indices, flat = [], []
            for row, frames in enumerate(per_example):
                for step, values in enumerate(frames or []):
                    indices.extend([row, step, position] for position in range(len(values)))
                    flat.extend(values)
            steps = max((len(frames or []) for frames in per_example), default=0)
            widest = max((len(values) for frames in per_example for values in (frames or [])), default=0)
            parsed[key] = SparseTensor(indices or torch.zeros((0, 3)), _features.values_array(flat, dtype),
                                       [len(examples), steps, widest])
        else:
            rows = [_features.ragged_batch([_features.values_array(v, dtype) for v in (frames or [])], dtype)
                    for frames in per_example]
            parsed[key] = _features.ragged_batch(rows, dtype) if rows else RaggedTensor.from_row_lengths(
                _features.values_array([], dtype), [])
    return context, parsed, lengths
