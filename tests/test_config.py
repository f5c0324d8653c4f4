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


def test_optimizer_settings_read_back_as_tf_gives_them():
    import torchstrategy._context as context

    saved = dict(context.tf_config)
    try:
        assert tf.config.optimizer.get_jit() == ""  # TF 2.21 default
        tf.config.optimizer.set_jit(True)
        assert tf.config.optimizer.get_jit() == "autoclustering"  # TF 2.21
        tf.config.optimizer.set_jit(False)
        assert tf.config.optimizer.get_jit() == ""
        assert tf.config.optimizer.get_experimental_options() == {"disable_model_pruning": False,
                                                                   "disable_meta_optimizer": False}
        tf.config.optimizer.set_experimental_options({"layout_optimizer": False, "constant_folding": True})
        # TF 2.21: the set options first, then the two always reported
        assert list(tf.config.optimizer.get_experimental_options().items()) == [
            ("layout_optimizer", False), ("constant_folding", True), ("disable_model_pruning", False),
            ("disable_meta_optimizer", False)]
        with pytest.raises(ValueError, match="autoclustering"):
            tf.config.optimizer.set_jit("fast")
    finally:
        context.tf_config.update(saved)


def test_threading_maps_onto_torch_threads():
    import torch

    import torchstrategy._context as context

    saved, before = dict(context.tf_config), torch.get_num_threads()
    try:
        assert tf.config.threading.get_intra_op_parallelism_threads() == 0  # TF 2.21: 0 until set
        assert tf.config.threading.get_inter_op_parallelism_threads() == 0
        tf.config.threading.set_intra_op_parallelism_threads(1)
        assert torch.get_num_threads() == 1 and tf.config.threading.get_intra_op_parallelism_threads() == 1
        with pytest.raises(ValueError, match="num_threads"):
            tf.config.threading.set_intra_op_parallelism_threads(-2)
    finally:
        torch.set_num_threads(before)
        context.tf_config.update(saved)


def test_memory_calls_on_the_cpu_behave_as_tf(cpu):
    # TF 2.21 on CPU: zero stats, reset accepted, growth refused for non-GPU devices, unknown GPU refused
    assert tf.config.experimental.get_memory_info("CPU:0") == {"current": 0, "peak": 0}
    assert tf.config.experimental.reset_memory_stats("CPU:0") is None
    with pytest.raises(ValueError, match="non-GPU"):
        tf.config.experimental.set_memory_growth(cpu, True)
    with pytest.raises(KeyError):
        tf.config.experimental.get_memory_growth(cpu)
    count = len(tf.config.list_physical_devices("GPU"))
    with pytest.raises(ValueError, match="No matching devices"):
        tf.config.experimental.get_memory_info(f"GPU:{count}")


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_memory_info_on_a_gpu_follows_torch_cuda():
    import torch

    gpu = tf.config.list_physical_devices("GPU")[0]
    assert tf.config.experimental.get_memory_growth(gpu) is None  # TF: None until set
    tf.config.experimental.set_memory_growth(gpu, True)
    assert tf.config.experimental.get_memory_growth(gpu) is True
    tf.config.experimental.reset_memory_stats("GPU:0")
    block = torch.ones(1 << 20, device="cuda:0")
    info = tf.config.experimental.get_memory_info("GPU:0")
    assert info["current"] >= block.numel() * 4 and info["peak"] >= info["current"]
    del block
    tf.config.experimental.reset_memory_stats("GPU:0")
    assert tf.config.experimental.get_memory_info("GPU:0")["peak"] < 1 << 22
