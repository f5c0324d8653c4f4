"""tf.config devices: logical CPU devices made with set_logical_device_configuration (TF 2.21's listing and
names), the older virtual-device names, and clear errors for what cannot be split here."""
from __future__ import annotations

import pytest

import torchstrategy as tf


@pytest.fixture
def cpu():
    device = tf.config.list_physical_devices("CPU")[0]
    yield device
    tf.config.set_logical_device_configuration(device, None)


def test_a_cpu_split_into_two_logical_devices_is_listed_as_tf_lists_it(cpu):
    assert [d.name for d in tf.config.list_logical_devices("CPU")] == ["/device:CPU:0"]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration(),
                                                     tf.config.LogicalDeviceConfiguration()])
    # TF 2.21: ['/device:CPU:0', '/device:CPU:1'], device_type 'CPU'
    assert [(d.name, d.device_type) for d in tf.config.list_logical_devices("CPU")] == [
        ("/device:CPU:0", "CPU"), ("/device:CPU:1", "CPU")]
    assert len(tf.config.get_logical_device_configuration(cpu)) == 2
    assert len(tf.config.list_physical_devices("CPU")) == 1  # still one physical CPU
    tf.config.experimental.set_virtual_device_configuration(cpu, None)  # the older name undoes it
    assert tf.config.get_logical_device_configuration(cpu) is None
    assert len(tf.config.list_logical_devices("CPU")) == 1


def test_the_logical_cpu_names_are_the_device_strings_mirrored_strategy_takes(cpu):
    import torch

    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    names = [d.name for d in tf.config.list_logical_devices("CPU")]
    # MirroredStrategy(names) parses each into its replica's device (one gloo process per logical CPU)
    assert [tf.config.parse_device(name) for name in names] == [torch.device("cpu", 0), torch.device("cpu", 1)]


def test_bad_logical_device_configurations_are_refused(cpu):
    with pytest.raises(TypeError, match="PhysicalDevice"):
        tf.config.set_logical_device_configuration("/cpu:0", [tf.config.LogicalDeviceConfiguration()])
    with pytest.raises(TypeError, match="LogicalDeviceConfiguration"):
        tf.config.set_logical_device_configuration(cpu, [{"memory_limit": 1}])
    gpu = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")
    with pytest.raises(ValueError, match="not supported"):
        tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(1024)] * 2)
