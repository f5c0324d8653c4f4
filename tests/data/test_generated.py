"""Dataset.random (RandomDataset) and Dataset.counter, NumpyIterator / IteratorSpec, the option classes TF 2.21
adds (AutotuneAlgorithm, ServiceOptions under Options.experimental_service)."""
from __future__ import annotations

import numpy as np
import torch

import torchstrategy as tf

Dataset = tf.data.Dataset


def test_random_is_seeded_int64_in_tfs_range():
    values = [int(x) for x in Dataset.random(seed=1).take(2000)]
    # TF 2.21 draws from [0, 2**32) too (its own stream: the numbers differ)
    assert min(values) >= 0 and max(values) < 2**32 and max(values) > 2**31
    assert values[:5] == [int(x) for x in Dataset.random(seed=1).take(5)]
    assert values[:5] != [int(x) for x in Dataset.random(seed=2).take(5)]
    fixed = Dataset.random(seed=3).take(3)
    assert [int(x) for x in fixed] == [int(x) for x in fixed]  # each pass repeats the stream
    again = Dataset.random(seed=3, rerandomize_each_iteration=True).take(3)
    assert [int(x) for x in again] != [int(x) for x in again]
    assert Dataset.random().element_spec == tf.TensorSpec((), tf.int64)
    assert Dataset.random().cardinality() == tf.data.INFINITE_CARDINALITY
    assert isinstance(tf.data.experimental.RandomDataset(seed=1), Dataset)


def test_random_state_round_trips():
    ds = Dataset.random(seed=5, rerandomize_each_iteration=True).take(2)
    list(ds)
    state = ds.get_state()
    expected = [int(x) for x in ds]
    ds.set_state(state)
    assert [int(x) for x in ds] == expected


def test_counter_as_tf():
    assert [int(x) for x in Dataset.counter(2, 5).take(3)] == [2, 7, 12]  # TF 2.21
    assert Dataset.counter(dtype=tf.int32).element_spec == tf.TensorSpec((), tf.int32)
    assert Dataset.counter().cardinality() == tf.data.INFINITE_CARDINALITY


def test_numpy_iterator_and_iterator_spec():
    iterator = Dataset.range(4).as_numpy_iterator()
    assert isinstance(iterator, tf.data.NumpyIterator)
    assert next(iterator) == np.int64(0) and iterator.next() == 1
    saved = iterator.save()
    assert [int(x) for x in iterator] == [2, 3]
    resumed = tf.data.NumpyIterator(Dataset.range(4))
    resumed.restore(saved)
    assert [int(x) for x in resumed] == [2, 3]
    spec = tf.data.IteratorSpec(tf.TensorSpec((), tf.int64))
    assert spec == tf.data.IteratorSpec.from_value(iter(Dataset.range(2)))
    assert spec.element_spec == tf.TensorSpec((), tf.int64)


def test_tf_2_21_option_classes():
    algorithms = [(m.name, int(m.value)) for m in tf.data.experimental.AutotuneAlgorithm]
    assert algorithms == [("DEFAULT", 0), ("HILL_CLIMB", 1), ("GRADIENT_DESCENT", 2), ("MAX_PARALLELISM", 3),
                          ("STAGE_BASED", 4)]  # TF 2.21
    options = tf.data.Options()
    assert isinstance(options.experimental_service, tf.data.experimental.ServiceOptions)
    assert options.experimental_service.pinned is None
    options.experimental_service.pinned = True
    assert Dataset.range(2).with_options(options).options().experimental_service.pinned is True
    assert torch.equal(torch.tensor(0), torch.tensor(0))
