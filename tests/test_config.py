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


def test_functions_run_eagerly_is_what_run_functions_eagerly_set_and_it_skips_compilation():
    import torch

    import torchstrategy as tf

    assert tf.config.functions_run_eagerly() is False  # TF 2.21's default
    calls = []

    @tf.function(jit_compile=True)
    def double(x):
        calls.append(torch.compiler.is_compiling())
        return x * 2

    tf.config.run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly() is True and tf.config.experimental_functions_run_eagerly() is True
        assert double(torch.tensor(2.0)).item() == 4.0 and calls == [False]  # ran as plain Python
    finally:
        tf.config.experimental_run_functions_eagerly(False)
    assert tf.config.functions_run_eagerly() is False


def test_visible_devices_hide_accelerators_but_never_the_cpu():
    import pytest

    import torchstrategy as tf

    cpus = tf.config.list_physical_devices("CPU")
    assert tf.config.get_visible_devices("CPU") == cpus
    with pytest.raises(ValueError, match="cannot hide the CPU"):  # TF 2.21 accepts it, then its first op fails
        # with NotFoundError "No CPU devices are available in this process": refused here before any work
        tf.config.set_visible_devices([], "CPU")
    with pytest.raises(ValueError, match="Unrecognized device"):
        tf.config.set_visible_devices(["/gpu:0"])
    tf.config.set_visible_devices([], "GPU")
    try:
        assert tf.config.get_visible_devices("GPU") == [] and tf.config.experimental.get_visible_devices("CPU") == cpus
    finally:
        tf.config.experimental.set_visible_devices(tf.config.list_physical_devices("GPU"), "GPU")
    assert tf.config.get_visible_devices("GPU") == tf.config.list_physical_devices("GPU")


def test_placement_policy_and_execution_settings_keep_tfs_defaults_and_values():
    import pytest

    import torchstrategy as tf

    # TF 2.21 defaults: soft placement on, device policy 'silent', synchronous execution on
    assert tf.config.get_soft_device_placement() is True
    assert tf.config.experimental.get_device_policy() == "silent"
    assert tf.config.experimental.get_synchronous_execution() is True
    tf.config.set_soft_device_placement(False)
    tf.config.experimental.set_device_policy("explicit")
    try:
        assert tf.config.get_soft_device_placement() is False
        assert tf.config.experimental.get_device_policy() == "explicit"
        with pytest.raises(ValueError, match="Not a valid device policy"):
            tf.config.experimental.set_device_policy("loud")
    finally:
        tf.config.set_soft_device_placement(True)
        tf.config.experimental.set_device_policy(None)
    assert tf.config.experimental.get_device_details(tf.config.list_physical_devices("CPU")[0]) == {}
    filters = tf.config.experimental.ClusterDeviceFilters()
    filters.set_device_filters("worker", 0, ["/job:ps"])
    assert filters.filters() == {("worker", 0): ["/job:ps"]}


def test_tensor_float_32_switch_sets_torchs_matmul_flags():
    import torch

    import torchstrategy as tf

    before = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    try:
        assert torch.backends.cuda.matmul.allow_tf32 is False and torch.get_float32_matmul_precision() == "highest"
        tf.config.experimental.enable_tensor_float_32_execution(True)
        assert tf.config.experimental.tensor_float_32_execution_enabled() is True
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(before)
