"""Everything `fit`/`evaluate`/`predict` accept as data, turned into one shape: an iterable of
global batches `(x, y, sample_weight)` with a known or unknown number of steps per epoch."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator, Optional

import numpy as np
import torch

from torchstrategy.data.dataset import Dataset
from torchstrategy.data.distribute import DistributedDataset, fingerprint, mark_same_on_every_process
from torchstrategy.keras.dataset_creator import DatasetCreator
from torchstrategy.keras.py_dataset import PyDataset, PyDatasetBatches
from torchstrategy.nest import flatten as flatten_structure, map_structure

_DEFAULT_BATCH = 32


def _is_array_like(value: Any) -> bool:
    leaves = flatten_structure(value) if isinstance(value, (list, tuple, dict)) else [value]
    return bool(leaves) and all(isinstance(leaf, (np.ndarray, torch.Tensor, int, float)) for leaf in leaves)


def _num_rows(value: Any) -> int:
    for leaf in flatten_structure(value):
        if hasattr(leaf, "shape") and len(leaf.shape):
            return int(leaf.shape[0])
    raise ValueError("Could not find the number of samples: pass arrays with a batch dimension.")


def _rows(value: Any, rows: slice) -> Any:
    return map_structure(lambda leaf: leaf[rows] if hasattr(leaf, "shape") else leaf, value)


def _check_rows(x: Any, y: Any, sample_weight: Any) -> None:
    sizes = {name: _num_rows(v) for name, v in (("x", x), ("y", y), ("sample_weight", sample_weight)) if v is not None}
    if len(set(sizes.values())) > 1:
        detail = ", ".join(f"{name}: {size} samples" for name, size in sizes.items())
        raise ValueError(f"Data cardinality is ambiguous: {detail}. Make sure all arrays contain the same "
                         f"number of samples.")


@dataclass
class EpochData:
    """Batches for the loops: a fresh iterator over `source` each epoch, or one kept across epochs.

    It remembers the dataset's state when the current iterator was opened and how many batches
    that iterator has given, which is exactly what a backup needs to resume at the same batch.
    """

    source: Any
    steps: Optional[int]
    persistent: bool = False

    def __post_init__(self) -> None:
        self._iterator: Optional[Iterator[Any]] = None
        self.state: Any = None  # the source's get_state() when the current iterator was opened
        self.consumed = 0  # batches the current iterator has given

    @property
    def global_positions(self) -> bool:
        """True when a position in these batches (a count of steps) means the same samples on any number of
        replicas: the source splits the global batches of one pipeline that every replica reads alike."""
        return isinstance(self.source, DistributedDataset) and self.source.reads_global_batches

    def epoch_iterator(self, resume: Optional[tuple] = None) -> Iterator[Any]:
        """This epoch's batches; `resume=(state, consumed)` reopens where a saved run stood."""
        if resume is not None:
            state, consumed = resume
            if state is not None:
                self.source.set_state(state)
            self._open(consumed)
        elif self._iterator is None or not self.persistent:
            self._open(0)
        return self._iterator  # type: ignore[return-value]

    def _open(self, skip: int) -> None:
        self.state = self.source.get_state() if hasattr(self.source, "get_state") else None
        self.consumed = skip
        if skip and not hasattr(self.source, "iterate_from"):
            raise ValueError(f"Cannot resume in the middle of a {type(self.source).__name__}: only torchstrategy "
                             f"datasets can skip to a saved position.")
        self._iterator = self._counting(self.source.iterate_from(skip) if skip else iter(self.source))

    def _counting(self, batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            self.consumed += 1
            yield batch


def unpack(batch: Any) -> tuple[Any, Any, Any]:
    """Splits a batch into (x, y, sample_weight) as Keras does: tuples of 1-3 items, else x alone."""
    if isinstance(batch, list):
        batch = tuple(batch)
    if isinstance(batch, tuple) and not hasattr(batch, "_fields"):
        if len(batch) == 1:
            return batch[0], None, None
        if len(batch) == 2:
            return batch[0], batch[1], None
        if len(batch) == 3:
            return batch
        raise ValueError(f"Data is expected to be (x,), (x, y) or (x, y, sample_weight); got a tuple of "
                         f"{len(batch)} items.")
    return batch, None, None


def split_validation(x: Any, y: Any, sample_weight: Any, validation_split: float) -> tuple:
    """Keras's split: the LAST `validation_split` fraction of the arrays becomes validation data."""
    if not 0.0 <= validation_split < 1.0:
        raise ValueError(f"validation_split must be in [0, 1); got {validation_split}.")
    if not _is_array_like(x):
        raise ValueError("validation_split is only supported for NumPy arrays or tensors, not for datasets, "
                         "DataLoaders or generators. Pass validation_data instead.")
    total = _num_rows(x)
    split_at = int(math.floor(total * (1.0 - validation_split)))
    if split_at == 0 or split_at == total:
        raise ValueError(f"validation_split={validation_split} leaves no training or no validation samples "
                         f"out of {total}. Use a split that keeps both non-empty.")
    train = tuple(_rows(v, slice(0, split_at)) if v is not None else None for v in (x, y, sample_weight))
    val = tuple(_rows(v, slice(split_at, total)) if v is not None else None for v in (x, y, sample_weight))
    return train, val


def adapt(x: Any, y: Any = None, sample_weight: Any = None, batch_size: Optional[int] = None,
          shuffle: Any = False, steps: Optional[int] = None) -> EpochData:
    """Wraps any accepted input as EpochData of global batches (a DatasetCreator stays the dataset function
    it is: the model's strategy calls it, once per input pipeline, when it makes the steps' inputs)."""
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size <= 0):
        raise ValueError(f"batch_size must be a positive integer; got {batch_size!r}.")
    if isinstance(x, DatasetCreator):
        return _from_creator(x, y, sample_weight, steps)
    if isinstance(x, (PyDataset, PyDatasetBatches)):
        return _from_py_dataset(x, y, sample_weight, shuffle, steps)
    if isinstance(x, (Dataset, DistributedDataset)):
        if y is not None:
            raise ValueError("`y` argument is not supported when x is a dataset: the dataset must yield "
                             "(inputs, targets) tuples.")
        cardinality = int(x.cardinality())
        if cardinality == -1 and steps is None:
            raise ValueError("When providing an infinite dataset (e.g. .repeat()), you must specify the number "
                             "of steps to run (steps_per_epoch / steps / validation_steps).")
        persistent = steps is not None and cardinality != steps
        return EpochData(x, steps if steps is not None else (cardinality if cardinality >= 0 else None), persistent)
    if isinstance(x, torch.utils.data.DataLoader):
        return EpochData(x, steps if steps is not None else _len_or_none(x), persistent=steps is not None)
    if isinstance(x, torch.utils.data.Dataset) and not _is_array_like(x):
        loader = torch.utils.data.DataLoader(x, batch_size=batch_size or _DEFAULT_BATCH, shuffle=bool(shuffle))
        return EpochData(loader, steps if steps is not None else len(loader), persistent=steps is not None)
    if hasattr(x, "__next__"):
        return EpochData(x, steps, persistent=True)
    if x is None:
        raise ValueError("No data given: pass x (arrays, a Dataset, a DataLoader).")
    if not _is_array_like(x):
        raise TypeError(f"Unrecognized data type: x={type(x).__name__}. Pass NumPy arrays, torch tensors, a "
                        f"torchstrategy Dataset, or a torch DataLoader/Dataset.")
    x, y, sample_weight = (_lists_as_tuples(v) for v in (x, y, sample_weight))
    _check_rows(x, y, sample_weight)
    parts = (x,) if y is None else ((x, y) if sample_weight is None else (x, y, sample_weight))
    dataset = Dataset.from_tensor_slices(parts)
    rows = _num_rows(x)
    if shuffle:
        dataset = dataset.shuffle(rows, reshuffle_each_iteration=True)
    size = batch_size or _DEFAULT_BATCH
    dataset = dataset.batch(size)
    per_epoch = math.ceil(rows / size)
    return EpochData(dataset, min(steps, per_epoch) if steps is not None else per_epoch)


def _from_creator(creator: DatasetCreator, y: Any, sample_weight: Any, steps: Optional[int]) -> EpochData:
    """As TF: the strategy calls the creator once per input pipeline, and one iterator runs across epochs
    (the function's own shuffle buffer keeps going instead of restarting each epoch)."""
    if y is not None or sample_weight is not None:
        raise ValueError("`y` and `sample_weight` are not supported with a DatasetCreator: its dataset_fn must "
                         "return a dataset of (inputs, targets[, sample_weights]) tuples.")
    if steps is None:
        raise ValueError("A tf.keras.utils.experimental.DatasetCreator gives no way to know how many batches it "
                         "holds: pass `steps_per_epoch` to Model.fit (and `validation_steps` for its validation "
                         "data), or `steps` to Model.evaluate / Model.predict.")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps <= 0:
        raise ValueError(f"The number of steps for a DatasetCreator must be a positive integer; got {steps!r}.")
    return EpochData(creator, steps, persistent=True)


def _from_py_dataset(x: Any, y: Any, sample_weight: Any, shuffle: Any, steps: Optional[int]) -> EpochData:
    """A PyDataset's batches, one epoch per iteration (its batch order shuffled each epoch with `shuffle`)."""
    for name, value in (("y", y), ("sample_weight", sample_weight)):
        if value is not None:
            raise ValueError(f"Argument `{name}` is not supported when using a PyDataset as input: its "
                             "__getitem__ must return (inputs, targets[, sample_weights]) tuples.")
    batches = x if isinstance(x, PyDatasetBatches) else PyDatasetBatches(x)
    count = batches.dataset.num_batches
    batches.shuffle = bool(shuffle) and count is not None
    if count is None and steps is None:
        raise ValueError("This PyDataset is endless (num_batches is None): pass the number of steps to run "
                         "(steps_per_epoch / steps / validation_steps).")
    loader = torch.utils.data.DataLoader(batches, batch_size=None)
    return EpochData(loader, steps if steps is not None else count,
                     persistent=count is None or (steps is not None and steps != count))


def _lists_as_tuples(value: Any) -> Any:
    """Keras reads a list of arrays as several inputs/targets; tf.data would stack a list into one tensor."""
    if isinstance(value, list) and value and all(hasattr(v, "shape") for v in value):
        return tuple(value)
    if isinstance(value, dict):
        return {key: _lists_as_tuples(item) for key, item in value.items()}
    return value


def _len_or_none(value: Any) -> Optional[int]:
    try:
        return len(value)
    except TypeError:
        return None


def chief_inputs(strategy: Any, *inputs: Any) -> tuple:
    """`inputs` as the chief holds them on every process of a multi-process strategy: a PyDataset (one per
    process) gets rank 0's shuffle seed, so every process reads its batches in the same order. (Arrays become
    the chief's in `adapt_everywhere`.)"""
    if inputs and isinstance(inputs[0], PyDataset):
        batches = PyDatasetBatches(inputs[0])
        if strategy.num_processes > 1:
            batches.seed = int(strategy.broadcast(batches.seed, 0))
        return (batches,) + tuple(inputs[1:])
    return inputs


def adapt_everywhere(strategy: Any, x: Any, y: Any = None, sample_weight: Any = None, batch_size: Optional[int] = None,
                     shuffle: Any = False, steps: Optional[int] = None) -> EpochData:
    """`adapt()` for a loop of `strategy`. On every process of a multi-process strategy, arrays are the chief's
    (TF's one-process MirroredStrategy trains on the script's arrays, so replicas that drew their own, e.g.
    unseeded NumPy data, take rank 0's), and the pipeline made of them starts in rank 0's state (its shuffle
    seed). One small collective compares every process's `fingerprint` of its arrays (shapes, and sums over
    evenly spaced elements: every element of an array under 16,384 elements, about 8,192 of a larger one, so
    tens of microseconds however large; arrays that differ only between the samples are not told apart) and
    carries rank 0's state; the arrays travel only when a fingerprint differs. The pipeline is then marked
    the same on every process, so distributing it compares nothing more."""
    arrays = (x,) if y is None and sample_weight is None else (x, y, sample_weight)
    if strategy.num_processes <= 1 or not all(a is None or _is_array_like(a) for a in arrays) \
            or all(a is None for a in arrays):
        return adapt(x, y, sample_weight, batch_size, shuffle, steps)
    rng = torch.get_rng_state()  # an unseeded shuffle draws its seed: a rebuild below draws the same one again
    try:
        data, failure = adapt(x, y, sample_weight, batch_size, shuffle, steps), None
        mine = (fingerprint(flatten_structure(arrays)), data.source.get_state())
    except (TypeError, ValueError) as error:  # said after the collective, so no process waits for this one
        data, failure, mine = None, error, None
    everyone = strategy.gather_objects(mine)
    chief = everyone[0]
    if chief is None:
        if failure is not None:
            raise failure
        raise ValueError("The chief (rank 0) refused its input to this call (its error says why): every process "
                         "trains on the chief's arrays, so fix the input there.")
    state = None if mine is None else mine[1]
    if any(other is None or other[0] != chief[0] for other in everyone):
        x, y, sample_weight = strategy.broadcast((x, y, sample_weight), 0)
        if strategy.process_rank != 0:
            torch.set_rng_state(rng)
            data = adapt(x, y, sample_weight, batch_size, shuffle, steps)
            state = data.source.get_state()
    if state != chief[1]:
        data.source.set_state(chief[1])
    mark_same_on_every_process(data.source)
    return data
