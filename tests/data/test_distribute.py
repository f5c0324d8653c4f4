"""Inputs that experimental_distribute_dataset and fit cannot split, in one process: a non-dataset
(TypeError saying what to pass) and an unbatched dataset under 2 replicas (ValueError saying to batch it)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchstrategy as tf
from tests._local_replicas import ThreadReplicaStrategy


@pytest.fixture
def two_replicas():
    made = ThreadReplicaStrategy(2)
    yield made
    made.teardown()


def _xy(n: int = 8):
    return np.arange(n * 3, dtype=np.float32).reshape(n, 3), np.arange(n, dtype=np.float32)


@pytest.mark.parametrize("not_a_dataset", [[1, 2, 3], np.zeros((4, 3), np.float32), iter([np.zeros(2)])])
def test_distributing_a_non_dataset_says_what_to_pass(not_a_dataset):
    # TF 2.21 fails with AttributeError: 'list' object has no attribute '_variant_tensor'
    for strategy in (tf.distribute.OneDeviceStrategy("/cpu:0"), tf.distribute.MirroredStrategy(["/cpu:0"])):
        with pytest.raises(TypeError, match=r"expects a tf.data.Dataset \(or a torch DataLoader\).*"
                                            r"from_tensor_slices\(\(x, y\)\).batch\(global_batch_size\)"):
            strategy.experimental_distribute_dataset(not_a_dataset)


def test_a_dataset_and_a_dataloader_are_still_accepted():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    x, y = _xy()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.from_numpy(x)), batch_size=4)
    assert [tuple(b[0].shape) for b in strategy.experimental_distribute_dataset(loader)] == [(4, 3), (4, 3)]
    # one replica: an unbatched dataset is not split, so it passes through as TF's does
    elements = list(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y))))
    assert len(elements) == 8 and tuple(elements[0][0].shape) == (3,)


@pytest.mark.parametrize("make", [
    lambda x, y: tf.data.Dataset.from_tensor_slices((x, y)),                  # y has scalar elements
    lambda x, y: tf.data.Dataset.from_tensor_slices((x, y[:, None])),         # first sizes 3 vs 1
    lambda x, y: tf.data.Dataset.from_tensor_slices((x, y)).batch(4).unbatch(),
    lambda x, y: tf.data.Dataset.range(8),
])
def test_unbatched_dataset_is_refused_when_distributed_over_two_replicas(two_replicas, make):
    # TF 2.21 fails here with IndexError ('list index out of range'), or silently splits the feature axis
    x, y = _xy()
    with pytest.raises(ValueError, match=r"The dataset is not batched.*2 replicas in sync.*"
                                         r"\.batch\(global_batch_size\).*dataset\.batch\(64\)"):
        two_replicas.experimental_distribute_dataset(make(x, y))


def test_unbatched_dataset_with_spec_known_only_from_elements_is_refused_on_its_first_element(two_replicas):
    x, y = _xy()
    calls = []
    mapped = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (calls.append(1) or a, b))
    distributed = two_replicas.experimental_distribute_dataset(mapped)  # no element made yet
    assert calls == []
    with pytest.raises(ValueError, match="The dataset is not batched.*a component is a scalar"):
        next(iter(distributed))


def test_batched_and_prebatched_datasets_still_split(two_replicas):
    x, y = _xy()
    for dataset in (tf.data.Dataset.from_tensor_slices((x, y)).batch(4),
                    tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a * 2, b)).batch(4),
                    tf.data.Dataset.from_tensors((x, y))):  # one element that already is a global batch
        batch = next(iter(two_replicas.experimental_distribute_dataset(dataset)))
        rows = [tuple(part[0].shape) for part in batch.values]
        assert len(rows) == 2 and rows[0] == rows[1] and rows[0][1] == 3


def test_fit_on_an_unbatched_dataset_fails_before_any_step(two_replicas):
    x, y = _xy()
    with two_replicas.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
        model.compile(optimizer="sgd", loss="mse")
    before = [w.copy() for w in model.get_weights()]
    steps = []

    class CountSteps(tf.keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            steps.append(batch)

    with pytest.raises(ValueError, match=r"The dataset is not batched.*\.batch\(global_batch_size\)"):
        model.fit(tf.data.Dataset.from_tensor_slices((x, y)), epochs=1, verbose=0, callbacks=[CountSteps()])
    assert steps == []
    for now, then in zip(model.get_weights(), before):
        np.testing.assert_array_equal(now, then)
