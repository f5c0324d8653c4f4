"""Dataset sources: tensor slices / single tensors (random-access, feed the batch fast path),
range, from_generator (streamed), zip and concatenate."""
from __future__ import annotations

from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np
import torch

from torchstrategy.data import _state, _structure
from torchstrategy.data._ops import closing
from torchstrategy.data._structure import TensorSpec
from torchstrategy.data.dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, IndexPlan
from torchstrategy.ragged import RaggedTensor


def _leaf_to_tensor(value: Any) -> Any:
    if isinstance(value, (str, bytes)):
        return np.asarray(value)
    return _structure.to_tensor(value)


def _convert_structure(value: Any) -> Any:
    """Converts user input; lists are tensors (as tf.convert_to_tensor), tuples/dicts are structure."""
    if isinstance(value, list):
        return _leaf_to_tensor(value)
    if _structure._is_namedtuple(value):
        return type(value)(*[_convert_structure(item) for item in value])
    if isinstance(value, tuple):
        return tuple(_convert_structure(item) for item in value)
    if isinstance(value, dict):
        return {key: _convert_structure(item) for key, item in value.items()}
    return _leaf_to_tensor(value)


class TensorSource:
    """Random access into leaves sliced along dim 0: element i, or a batch gathered in one fancy index."""

    def __init__(self, structure: Any):
        self.structure = structure
        self.leaves = _structure.flatten(structure)
        self.kind = ("tensor" if isinstance(structure, torch.Tensor) else
                     "tuple" if type(structure) is tuple and all(isinstance(leaf, torch.Tensor) for leaf in structure)
                     else "nested")
        self._sliceable = all(isinstance(leaf, (torch.Tensor, np.ndarray)) for leaf in self.leaves)
        self._on_cpu = all(isinstance(leaf, torch.Tensor) and leaf.device.type == "cpu" for leaf in self.leaves)

    def __len__(self) -> int:
        return int(self.leaves[0].shape[0])

    def element(self, index: int) -> Any:
        if self.kind == "tensor":
            return self.structure[index]
        if self.kind == "tuple":
            return tuple(leaf[index] for leaf in self.leaves)
        return _structure.pack_as(self.structure, [leaf[index] for leaf in self.leaves])

    def elements(self, indices: Iterator[int]) -> Iterator[Any]:
        # Tensor.select is the cheapest way to make a row view (about half the cost of leaf[i]).
        if self.kind == "tensor":
            select = self.structure.select
            for index in indices:
                yield select(0, index)
        elif self.kind == "tuple" and len(self.leaves) == 2:
            first, second = self.leaves[0].select, self.leaves[1].select
            for index in indices:
                yield first(0, index), second(0, index)
        elif self.kind == "tuple":
            selects = [leaf.select for leaf in self.leaves]
            for index in indices:
                yield tuple([select(0, index) for select in selects])
        else:
            for index in indices:
                yield self.element(index)

    def gather(self, indices: Sequence[int]) -> Any:
        """The batch of the given rows: one index_select per leaf, no per-element stacking; consecutive rows are
        one contiguous copy of a slice of each leaf. A batch is a copy, as tf.data's are values: `x /= 255.` on a
        batch (a new tensor in TF, in place in torch) must not change the dataset the next epoch reads."""
        if isinstance(indices, list):  # through NumPy: about a third of what torch.as_tensor takes for a batch's list
            indices = np.array(indices, dtype=np.int64)
        run = _consecutive(indices) if self._sliceable else None
        rows = [leaf[run].clone() if isinstance(leaf, torch.Tensor) else leaf[run].copy() for leaf in self.leaves] \
            if run is not None else self._selected(indices)
        if self.kind == "tensor":
            return rows[0]
        if self.kind == "tuple":
            return tuple(rows)
        return _structure.pack_as(self.structure, rows)

    def _selected(self, indices: Any) -> list:
        if isinstance(indices, torch.Tensor):
            index_tensor = indices.long()
        else:
            index_tensor = torch.from_numpy(np.asarray(indices, dtype=np.int64))
        if self._on_cpu:
            return [leaf.index_select(0, index_tensor) for leaf in self.leaves]
        return [leaf.index_select(0, index_tensor if leaf.device.type == "cpu" else index_tensor.to(leaf.device))
                if isinstance(leaf, torch.Tensor) else leaf[index_tensor.numpy()] for leaf in self.leaves]


def _consecutive(indices: Any) -> Optional[slice]:
    """`indices` as a slice when they are consecutive ascending rows (a range of step 1, or such an array)."""
    if isinstance(indices, range):
        return slice(indices.start, indices.stop) if indices.step == 1 and len(indices) else None
    if isinstance(indices, np.ndarray) and indices.ndim == 1 and len(indices):
        first, count = int(indices[0]), len(indices)
        if first >= 0 and int(indices[-1]) - first == count - 1 and (count < 3 or (np.diff(indices) == 1).all()):
            return slice(first, first + count)
    return None


class TensorSlicesDataset(Dataset):
    """`from_tensor_slices` (or `from_tensors` with single=True, as one slice of an added axis)."""

    def __init__(self, tensors: Any, single: bool = False):
        super().__init__()
        op = "from_tensors" if single else "from_tensor_slices"
        structure = _convert_structure(tensors)
        leaves = _structure.flatten(structure)
        if not leaves:
            raise ValueError(f"Dataset.{op}: got an empty structure {tensors!r}; pass at least one array or tensor.")
        if single:
            structure = _structure.pack_as(structure, [leaf[None] for leaf in leaves])
        else:
            ranks = [np.ndim(leaf) for leaf in leaves]
            if min(ranks) == 0:
                raise ValueError(f"Dataset.from_tensor_slices: every component needs at least one dimension to "
                                 f"slice, got a scalar (shapes {[tuple(np.shape(x)) for x in leaves]}). "
                                 f"Use Dataset.from_tensors for a single element.")
            sizes = [int(leaf.shape[0]) for leaf in leaves]
            if len(set(sizes)) > 1:
                raise ValueError(f"Dataset.from_tensor_slices: all components must have the same size in "
                                 f"dimension 0, got sizes {sizes} (shapes {[tuple(leaf.shape) for leaf in leaves]}). "
                                 f"Pass arrays with equal first dimensions, e.g. x[:n] and y[:n].")
        self._source = TensorSource(structure)

    def _index_plan(self) -> IndexPlan:
        count = len(self._source)
        return IndexPlan(self._source, lambda skip=0: _state.IndexRun(lambda: range(min(skip, count), count)))

    def _content_key(self) -> str:
        return content_digest(self._source.structure)

    def _cardinality(self) -> int:
        return len(self._source)

    def _spec(self, peek: bool = False) -> Any:
        return _structure.map_structure(
            lambda leaf: TensorSpec(tuple(leaf.shape[1:]), leaf.dtype if isinstance(leaf, (torch.Tensor, RaggedTensor))
                                    else np.asarray(leaf).dtype), self._source.structure)


class _RangeSource:
    def __init__(self, values: range, dtype: torch.dtype):
        self.values, self.dtype = values, dtype

    def elements(self, indices: Iterator[int]) -> Iterator[torch.Tensor]:
        values, dtype = self.values, self.dtype
        for index in indices:
            yield torch.tensor(values[index], dtype=dtype)

    def gather(self, indices: Sequence[int]) -> torch.Tensor:
        step, start = self.values.step, self.values.start
        if isinstance(indices, range):
            positions = torch.arange(indices.start, indices.stop, indices.step, dtype=torch.int64)
            return (positions * step + start).to(self.dtype)
        return (torch.as_tensor(indices, dtype=torch.int64) * step + start).to(self.dtype)


class RangeDataset(Dataset):
    """`Dataset.range`: like Python's range, elements are scalar tensors (int64 by default)."""

    def __init__(self, args: Sequence[int], dtype: torch.dtype):
        super().__init__()
        if not 1 <= len(args) <= 3:
            raise TypeError(f"Dataset.range takes 1 to 3 arguments (stop | start, stop[, step]), got {len(args)}.")
        try:
            values = range(*(int(arg) for arg in args))
        except ValueError:
            raise ValueError(f"Dataset.range: step must not be 0, got arguments {tuple(args)}.") from None
        self._source = _RangeSource(values, dtype)

    def _index_plan(self) -> IndexPlan:
        count = len(self._source.values)
        return IndexPlan(self._source, lambda skip=0: _state.IndexRun(lambda: range(min(skip, count), count)))

    def _content_key(self) -> str:
        return repr(self._source.values)

    def _cardinality(self) -> int:
        return len(self._source.values)

    def _spec(self, peek: bool = False) -> Any:
        return TensorSpec((), self._source.dtype)


def _signature_from_types(output_types: Any, output_shapes: Any) -> Any:
    """TensorSpecs from the old `output_types`/`output_shapes` pair (shapes follow the types' structure)."""
    if isinstance(output_types, dict):
        shapes = output_shapes or {}
        return {key: _signature_from_types(dtype, shapes.get(key)) for key, dtype in output_types.items()}
    if isinstance(output_types, (tuple, list)):
        shapes = output_shapes if output_shapes is not None else [None] * len(output_types)
        return tuple(_signature_from_types(dtype, shape) for dtype, shape in zip(output_types, shapes))
    return TensorSpec(output_shapes, output_types)


class GeneratorDataset(Dataset):
    """`from_generator`: calls `generator(*args)` at the start of every pass and streams its output."""

    def __init__(self, generator: Callable, output_types: Any, output_shapes: Any, args: Optional[Sequence],
                 output_signature: Any):
        super().__init__()
        if not callable(generator):
            raise TypeError(f"Dataset.from_generator: `generator` must be a callable returning an iterator "
                            f"(e.g. a generator function), got {type(generator).__name__}. Pass the function, "
                            f"not the generator object it returns.")
        if output_signature is not None and (output_types is not None or output_shapes is not None):
            raise TypeError("Dataset.from_generator: pass either output_signature or output_types/output_shapes, not both.")
        if output_signature is None and output_types is not None:
            output_signature = _signature_from_types(output_types, output_shapes)
        self._generator, self._args = generator, tuple(args or ())
        self._signature = output_signature
        self._specs = None if output_signature is None else _structure.flatten(output_signature)

    def _conform(self, value: Any, index: int) -> Any:
        """Element number `index` of a pass as tensors of the signature's dtypes, or a TypeError (as tf's,
        which TF 2.21 raises inside the iterator) naming the element, the expected spec and what came."""
        if self._signature is None:
            return _structure.normalize_element(value)
        where = f"Dataset.from_generator: `generator` yielded element {index} (counting from 0)"
        try:
            leaves = _structure.flatten_up_to(self._signature, value)
        except (TypeError, ValueError) as error:
            raise TypeError(f"{where}, {value!r}, which does not match the expected structure "
                            f"{self._signature!r} ({error}). Yield that structure, or fix output_signature.") from None
        tensors = []
        for leaf, spec in zip(leaves, self._specs):
            tensors.append(self._conform_leaf(leaf, spec, where))
        return _structure.pack_as(self._signature, tensors)

    @staticmethod
    def _conform_leaf(leaf: Any, spec: TensorSpec, where: str) -> Any:
        if isinstance(spec.dtype, np.dtype):  # a string spec: kept as NumPy, as from_tensor_slices does
            return np.asarray(leaf)
        try:
            tensor = _structure.to_tensor(leaf, spec.dtype)
        except (TypeError, ValueError, RuntimeError):
            tensor = None
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{where} with a component {leaf!r} that cannot be converted to the expected type: "
                            f"expected {spec!r}. Yield values of dtype {spec.dtype}, or fix output_signature.")
        if not spec.shape.is_compatible_with(tensor.shape):
            raise TypeError(f"{where} with a component of shape {tuple(tensor.shape)} where {spec!r} was "
                            f"expected. Fix the generator or the signature (None = any size).")
        return tensor

    def _iterate_elements(self) -> Iterator[Any]:
        iterator = iter(self._generator(*self._args))
        try:
            for index, value in enumerate(iterator):
                yield self._conform(value, index)
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _spec(self, peek: bool = False) -> Any:
        if self._signature is None and peek:
            return self._peek()
        return self._signature


class ZipDataset(Dataset):
    """`Dataset.zip`: tuple or dict of the inputs' elements; stops at the shortest input."""

    def __init__(self, datasets: Any):
        inputs = _structure.flatten(datasets)
        if not inputs or not all(isinstance(ds, Dataset) for ds in inputs):
            raise TypeError(f"Dataset.zip expects a tuple or dict of Datasets, got {datasets!r}.")
        super().__init__(inputs)
        self._structure = datasets

    def _iterate_elements(self) -> Iterator[Any]:
        yield from self._zipped([ds._iterate() for ds in self._inputs])

    def _elements_from(self, skip: int) -> Iterator[Any]:
        count = self._cardinality()
        if count == UNKNOWN_CARDINALITY:
            return super()._elements_from(skip)
        # Each input gives `skip` elements (at most the shortest's count), as a normal pass pulls them.
        each = skip if count == INFINITE_CARDINALITY else min(skip, count)
        return self._zipped([ds._iterate_from(each) for ds in self._inputs])

    def _zipped(self, iterators: list) -> Iterator[Any]:
        try:
            while True:
                try:
                    parts = [next(iterator) for iterator in iterators]
                except StopIteration:
                    return
                yield _structure.pack_as(self._structure, parts)
        finally:
            for iterator in iterators:
                closing(iterator)

    def _cardinality(self) -> int:
        result = INFINITE_CARDINALITY
        for ds in self._inputs:
            count = ds._cardinality()
            if count == UNKNOWN_CARDINALITY:
                return UNKNOWN_CARDINALITY
            if count != INFINITE_CARDINALITY:
                result = count if result == INFINITE_CARDINALITY else min(result, count)
        return result

    def _spec(self, peek: bool = False) -> Any:
        specs = [ds._spec(peek) for ds in self._inputs]
        return None if any(spec is None for spec in specs) else _structure.pack_as(self._structure, specs)


def _dtype_kind(dtype: Any) -> Any:
    """What concatenate compares: the dtype, with every NumPy string/object dtype as one 'string' kind."""
    return "string" if isinstance(dtype, np.dtype) and dtype.kind in "OSUV" else dtype


def _compatible_elements(first: Any, second: Any) -> bool:
    """tf.data's rule for concatenate: same nesting and the same dtype per component; shapes may differ
    (even in rank: the result's spec then has unknown sizes)."""
    if not _structure.same_structure(first, second):
        return False
    return all(_dtype_kind(a.dtype) == _dtype_kind(b.dtype)
               for a, b in zip(_structure.flatten(first), _structure.flatten(second)))


def _check_concatenable(first: Any, second: Any) -> None:
    if not _compatible_elements(first, second):
        raise TypeError(f"Dataset.concatenate: incompatible dataset elements (different element structures or "
                        f"dtypes):\n  {first!r} vs.\n  {second!r}\n"
                        f"Both datasets need the same structure and the same dtype per component (shapes may "
                        f"differ); convert one of them first, e.g. with `.map(lambda x: tf.cast(x, ...))`.")


class ConcatenateDataset(Dataset):
    """`a.concatenate(b)`: a's elements then b's. Their element specs must be compatible (TypeError, as tf)."""

    def __init__(self, first: Dataset, second: Dataset):
        if not isinstance(second, Dataset):
            raise TypeError(f"Dataset.concatenate expects a Dataset, got {type(second).__name__}.")
        super().__init__((first, second))
        specs = [first._spec(), second._spec()]
        if None not in specs:
            _check_concatenable(*specs)
        # a spec known only from the elements (map, generators without a signature) is checked on the first
        # element of the second dataset, against the first dataset's spec or first element
        self._known_spec = None if None in specs else specs[0]

    def _checked_second(self, elements: Iterator[Any], first_spec: Any) -> Iterator[Any]:
        """The second input's elements, the first one checked against `first_spec` (None: unknown)."""
        checked = first_spec is None or self._known_spec is not None
        for element in elements:
            if not checked:
                _check_concatenable(first_spec, _structure.spec_of(element))
                checked = True
            yield element

    def _iterate_elements(self) -> Iterator[Any]:
        first, second = self._inputs
        first_spec = self._known_spec if self._known_spec is not None else first._spec()
        for element in first._iterate():
            if first_spec is None:
                first_spec = _structure.spec_of(element)
            yield element
        yield from self._checked_second(second._iterate(), first_spec)

    def _elements_from(self, skip: int) -> Iterator[Any]:
        first, second = self._inputs
        count = first._cardinality()
        if count == UNKNOWN_CARDINALITY:
            return super()._elements_from(skip)
        if count == INFINITE_CARDINALITY or skip <= count:
            return self._chained(first._iterate_from(skip), second)
        _state.finish_pass(first._iterate_from(count), "the first dataset of concatenate")
        return self._checked_second(second._iterate_from(skip - count), first._spec())

    def _chained(self, rest_of_first: Iterator, second: Dataset) -> Iterator[Any]:
        yield from rest_of_first
        yield from self._checked_second(second._iterate(), self._inputs[0]._spec())

    def _cardinality(self) -> int:
        first, second = (ds._cardinality() for ds in self._inputs)
        if first < 0:
            return first
        if second < 0:
            return second
        return first + second

    def _spec(self, peek: bool = False) -> Any:
        first, second = (ds._spec(peek) for ds in self._inputs)
        if first is None or second is None:
            return None
        def merge(a: TensorSpec, b: TensorSpec) -> TensorSpec:
            if a.shape.rank is None or a.shape.rank != b.shape.rank:
                return TensorSpec(None, a.dtype)
            return TensorSpec([x if x == y else None for x, y in zip(a.shape, b.shape)], a.dtype)
        return _structure.pack_as(first, [merge(a, b) for a, b in zip(_structure.flatten(first), _structure.flatten(second))])


def content_digest(structure: Any) -> str:
    """A SHA-256 of the leaves of `structure` (their dtypes, shapes and bytes), for dataset fingerprints."""
    import hashlib

    digest = hashlib.sha256()
    for leaf in _structure.flatten(structure):
        if isinstance(leaf, torch.Tensor):
            digest.update(f"{leaf.dtype}{tuple(leaf.shape)}".encode())
            flat = leaf.detach().cpu().reshape(-1).contiguous()
            digest.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
        else:
            digest.update(repr(np.asarray(leaf, dtype=object).tolist()).encode())
    return digest.hexdigest()
