"""CentralStorageStrategy: 2 CPU replica threads over ONE copy of the variables train as one process on
the global batch (test_local_replicas.py and the conformance battery in conformance/ run the rest on it)."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf
from tests.distribute.conformance._battery import cnn, images


def _cnn(strategy, optimizer="adam"):
    return cnn(strategy, optimizer, seed=3)


def _data():
    return images(64)


def test_two_cpu_replicas_over_one_copy_of_the_variables_train_as_one_process():
    x, y = _data()
    reference = _cnn(tf.distribute.OneDeviceStrategy("/cpu:0"))
    expected = reference.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False).history
    strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
    model = _cnn(strategy)
    # what each replica computes with: the same storage, the one the model holds
    storages = strategy.experimental_local_results(strategy.run(
        lambda: [v.untyped_storage().data_ptr() for v in model.trainable_variables]))
    got = model.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False).history
    assert strategy.num_replicas_in_sync == 2 and strategy.num_local_replicas == 2
    assert storages[0] == storages[1] == [v.untyped_storage().data_ptr() for v in model.trainable_variables]
    assert len(model.trainable_variables) == len(reference.trainable_variables)  # one set, not one per replica
    for ours, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(ours, theirs, atol=1e-6, rtol=0)
    np.testing.assert_allclose(got["loss"], expected["loss"], rtol=1e-6)
    assert int(model.optimizer.iterations) == 3 * 64 // 16  # one update per step, not one per replica
    assert strategy.extended.parameter_devices == ("cpu",)
    assert strategy.extended.worker_devices == ("cpu:0", "cpu:1")
    strategy.teardown()


@pytest.mark.parametrize("devices, message", [
    (["/cpu:0", "/tpu:0"], "must all be of one kind"),
    (["/cpu:0", "/cpu:0"], "No duplicates allowed"),
    ([], "has no device"),
    (["/tpu:0"], "CPUs or CUDA GPUs"),
])
def test_bad_compute_devices_are_refused_saying_what_to_pass(devices, message):
    with pytest.raises(ValueError, match=message):
        tf.distribute.experimental.CentralStorageStrategy(devices)


def test_a_parameter_device_other_than_the_cpu_for_cpu_replicas_is_refused():
    with pytest.raises(ValueError, match="keep the variables on the CPU"):
        tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"], parameter_device="/tpu:0")
