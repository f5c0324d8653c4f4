"""`tf.keras.utils.experimental.DatasetCreator`: a dataset function handed to `fit`/`evaluate`, which
the model's strategy calls once per input pipeline with its `tf.distribute.InputContext`."""
from __future__ import annotations

from typing import Any, Callable, Optional

from torchstrategy.data.dataset import Dataset
from torchstrategy.distribute import InputOptions


class DatasetCreator:
    """Wraps `dataset_fn(input_context) -> tf.data.Dataset` so that `Model.fit` builds the input itself.

    fit/evaluate pass it to `strategy.distribute_datasets_from_function`, so the function sees each
    pipeline's `InputContext` (to shard and to size per-replica batches); `steps_per_epoch` (fit) or
    `steps` (evaluate) must then be given, since the number of batches cannot be known in advance.

    >>> import torchstrategy as tf
    >>> def dataset_fn(context):
    ...     batch = context.get_per_replica_batch_size(8)
    ...     return tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat().batch(batch)
    >>> creator = tf.keras.utils.experimental.DatasetCreator(dataset_fn)
    >>> int(creator(tf.distribute.InputContext()).cardinality())  # infinite
    -1
    """

    def __init__(self, dataset_fn: Callable[..., Dataset], input_options: Optional[InputOptions] = None) -> None:
        if not callable(dataset_fn):
            raise TypeError(f"DatasetCreator needs a callable `dataset_fn` (a function taking a "
                            f"tf.distribute.InputContext and returning a tf.data.Dataset); got "
                            f"{type(dataset_fn).__name__}.")
        if input_options is not None and not isinstance(input_options, InputOptions):
            raise TypeError(f"DatasetCreator's `input_options` must be a tf.distribute.InputOptions or None; got "
                            f"{type(input_options).__name__}.")
        self.dataset_fn = dataset_fn
        self.input_options = input_options

    def __call__(self, *args: Any, **kwargs: Any) -> Dataset:
        """Calls `dataset_fn` with these arguments; a TypeError unless it returns a tf.data.Dataset."""
        dataset = self.dataset_fn(*args, **kwargs)
        if not isinstance(dataset, Dataset):
            raise TypeError(f"The `dataset_fn` given to DatasetCreator must return a tf.data.Dataset; it returned "
                            f"{type(dataset).__name__}. Build the input with tf.data.Dataset (e.g. "
                            f"`tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size)`).")
        return dataset
