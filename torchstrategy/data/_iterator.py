"""`DatasetIterator` (tf.data.Iterator): counts what it hands out and checkpoints itself as the
pipeline state from when it was created plus that count (state_dict/load_state_dict)."""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from torchstrategy.data import _state

if TYPE_CHECKING:  # pragma: no cover
    from torchstrategy.data.dataset import Dataset

ITERATOR_FORMAT = "torchstrategy.data.Iterator.state/1"


def _close(iterator: Any) -> None:
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


class DatasetIterator:
    """Iterator over a Dataset; counts the elements it has produced (`produced`) for checkpointing.

    Save it mid-epoch and resume in a new process, as `tf.train.Checkpoint(iterator=it)` does:

    >>> it = iter(ds); first = next(it)
    >>> saved = it.state_dict()                     # plain data: goes into a checkpoint
    >>> again = iter(build_same_pipeline())         # e.g. in the restarted job
    >>> again.load_state_dict(saved)                # next(again) is the element after `first`
    """

    def __init__(self, dataset: "Dataset"):
        self._dataset = dataset
        # Taken before iterating: iterating advances shuffle passes (eagerly or lazily, by op).
        self._start_state = dataset.get_state()
        self._elements = dataset._iterate()
        self.produced = 0

    def __iter__(self) -> "DatasetIterator":
        return self

    def __next__(self) -> Any:
        element = next(self._elements)
        self.produced += 1
        return element

    def get_next(self) -> Any:
        """The next element; past the end raises tf.errors.OutOfRangeError, as TF (`next()` raises StopIteration)."""
        try:
            return next(self)
        except StopIteration:
            from torchstrategy.errors import OutOfRangeError

            raise OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self) -> Any:
        """The next element as a tf.experimental.Optional (empty at the end instead of raising)."""
        from torchstrategy.data._sampling import get_next_as_optional

        return get_next_as_optional(self)

    @property
    def element_spec(self) -> Any:
        return self._dataset.element_spec

    def close(self) -> None:
        """Stops background work (prefetch threads, map workers) of this iterator now."""
        _close(self._elements)

    def state_dict(self) -> dict:
        """Plain data that resumes this iterator: the dataset's get_state() from when this iterator
        started, and how many elements it has handed to its consumer (prefetched ones do not count)."""
        return {"format": ITERATOR_FORMAT, "dataset_state": copy.deepcopy(self._start_state),
                "produced": self.produced}

    def load_state_dict(self, state: dict) -> None:
        """Continues from `state` (a `state_dict()` of an iterator over an identically built pipeline):
        the next element is the one the saved iterator would have produced next.

        Stops this iterator's background work, rewinds the pipeline to the saved state and skips the
        elements already produced (cheaply on the index fast path). Raises ValueError, changing nothing,
        if the state is malformed or comes from a different pipeline."""
        where = "DatasetIterator.load_state_dict"
        if not isinstance(state, dict) or state.get("format") != ITERATOR_FORMAT:
            raise ValueError(f"{where}: expected the dict returned by DatasetIterator.state_dict() (format "
                             f"{ITERATOR_FORMAT!r}), got {type(state).__name__}"
                             f"{' without that format' if isinstance(state, dict) else ''}.")
        produced = _state.check_int(state.get("produced"), where, "'produced'")
        apply = _state.prepare(self._dataset, state.get("dataset_state"), where)
        # The old iterator's prefetch thread must be gone before the pipeline is rewound, or it could
        # start another shuffle pass after the rewind.
        self.close()
        apply()
        self._start_state = copy.deepcopy(state["dataset_state"])
        self._elements = self._dataset._iterate_from(produced)
        self.produced = produced


def numpy_leaf(leaf: Any) -> Any:
    """A tensor leaf as NumPy (a 0-d tensor becomes a NumPy scalar); other leaves as they are."""
    import torch

    if isinstance(leaf, torch.Tensor):
        array = leaf.detach().cpu().numpy()
        return array[()] if array.ndim == 0 else array
    return leaf


class NumpyIterator:
    """`tf.data.NumpyIterator(dataset)`, what `Dataset.as_numpy_iterator()` returns: the dataset's elements
    with NumPy leaves. It checkpoints as DatasetIterator does (state_dict / load_state_dict).

    >>> [int(x) for x in NumpyIterator(Dataset.range(3))]
    [0, 1, 2]
    """

    def __init__(self, dataset: "Dataset"):
        self._iterator = DatasetIterator(dataset)

    def __iter__(self) -> "NumpyIterator":
        return self

    def __next__(self) -> Any:
        from torchstrategy.nest import map_structure

        return map_structure(numpy_leaf, next(self._iterator))

    def next(self) -> Any:
        """The next element (Python 2 spelling TF keeps)."""
        return self.__next__()

    def save(self) -> dict:
        """The iterator's state (plain data), for `restore`."""
        return self._iterator.state_dict()

    def restore(self, state: dict) -> None:
        """Continues from a `save()` of an iterator over an identically built dataset."""
        self._iterator.load_state_dict(state)

    def state_dict(self) -> dict:
        """See DatasetIterator.state_dict."""
        return self._iterator.state_dict()

    def load_state_dict(self, state: dict) -> None:
        """See DatasetIterator.load_state_dict."""
        self._iterator.load_state_dict(state)

    def close(self) -> None:
        """Stops background work of this iterator now."""
        self._iterator.close()


class IteratorSpec:
    """`tf.data.IteratorSpec(element_spec)`: the spec of an iterator over elements of `element_spec`."""

    def __init__(self, element_spec: Any):
        self._element_spec = element_spec

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    @property
    def value_type(self) -> type:
        return DatasetIterator

    @staticmethod
    def from_value(value: Any) -> "IteratorSpec":
        """The spec of an iterator."""
        return IteratorSpec(value.element_spec)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, IteratorSpec) and other._element_spec == self._element_spec

    def __hash__(self) -> int:
        return hash(repr(self._element_spec))

    def __repr__(self) -> str:
        return f"IteratorSpec({self._element_spec!r})"
