"""tf.device, tf.name_scope, tf.init_scope and the other execution-context names."""
from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

import torchstrategy as tf


def test_device_places_new_tensors_and_variables():
    with tf.device("/CPU:0"):
        assert tf.constant([1.0]).device.type == "cpu" and tf.Variable(1.0).device.type == "cpu"
        assert torch.zeros(2).device.type == "cpu"
    with tf.device("/job:localhost/replica:0/task:0/device:CPU:0"), tf.device(None):
        assert tf.zeros([1]).device.type == "cpu"
    with pytest.raises(ValueError, match="cannot parse"):
        with tf.device("not a device!"):
            pass
    with pytest.raises(ValueError, match="TPU"):
        with tf.device("/TPU:0"):
            pass


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without a GPU")
def test_device_gpu_without_cuda_is_a_clear_error():
    with pytest.raises(RuntimeError, match="no CUDA GPU is visible"):
        with tf.device("/GPU:0"):
            pass


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_device_gpu_places_on_cuda():
    with tf.device("/GPU:0"):
        assert tf.constant([1.0]).device.type == "cuda" and tf.Variable([1.0]).device.type == "cuda"


def test_name_scope_nests_and_prefixes_variable_names():
    with tf.name_scope("outer") as scope:
        assert scope == "outer/" and tf.get_current_name_scope() == "outer"
        with tf.name_scope("inner"):
            assert tf.Variable(1.0, name="w").name == "outer/inner/w:0"  # as TF 2.21
        with tf.name_scope("top/"):
            assert tf.get_current_name_scope() == "top"
    assert tf.get_current_name_scope() == "" and tf.Variable(1.0, name="w").name == "w:0"
    with pytest.raises(ValueError, match="not a valid scope name"):
        tf.name_scope("bad name!")


def test_init_scope_pauses_recording():
    w = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        with tf.init_scope():
            frozen = w * 3
        live = w * 3
    assert not frozen.requires_grad and float(tape.gradient(live, w)) == 3.0


def test_eager_helpers():
    assert tf.executing_eagerly() is True and tf.inside_function() is False
    assert tf.get_logger() is logging.getLogger("tensorflow")
    assert tf.no_op() is None and tf.group(tf.constant(1)) is None
    with tf.control_dependencies([tf.constant(1)]):
        assert tf.tuple([tf.constant(1), tf.constant(2)])[1].item() == 2
    assert tf.is_tensor(tf.constant(1)) and tf.is_tensor(tf.constant("a")) and not tf.is_tensor(np.ones(2))
    assert not tf.is_symbolic_tensor(tf.constant(1))
    np.testing.assert_array_equal(tf.get_static_value(tf.constant([1, 2])), [1, 2])
    assert float(tf.timestamp()) > 1.6e9 and tf.timestamp().dtype == torch.float64


def test_device_spec_parses_and_prints_like_tf():
    spec = tf.DeviceSpec.from_string("/job:worker/replica:0/task:1/device:GPU:2")
    assert (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) == ("worker", 0, 1, "GPU", 2)
    assert spec.to_string() == "/job:worker/replica:0/task:1/device:GPU:2"  # TF 2.21's strings below too
    assert tf.DeviceSpec(device_type="cpu", device_index=0).to_string() == "/device:CPU:0"
    assert tf.DeviceSpec(job="ps").replace(task=3).to_string() == "/job:ps/task:3"
    assert spec.make_merged_spec(tf.DeviceSpec(device_type="CPU")).to_string() == \
        "/job:worker/replica:0/task:1/device:CPU:2"
    assert tf.DeviceSpec.from_string("/gpu:1").to_string() == "/device:GPU:1"
    assert tf.DeviceSpec(job="w") == tf.DeviceSpec(job="w")
    with pytest.raises(ValueError, match="Unknown attribute"):
        tf.DeviceSpec.from_string("/planet:mars")
