"""tf.tpu.experimental.Topology against TF 2.21's answers (frozen below): TF's constructor, the lookups by
coordinates, missing devices, and TopologyProto bytes both ways; this host's topology as initialize gives it."""
from __future__ import annotations

import numpy as np
import pytest

import torchstrategy as tf
from torchstrategy.cluster.tpu_topology import local_topology

Topology = tf.tpu.experimental.Topology
LINE = [[[0, 0, 0, 0], [1, 0, 0, 0], [2, 0, 0, 0], [3, 0, 0, 0]]]
# TF 2.21: Topology(mesh_shape=[4, 1, 1, 1], device_coordinates=LINE).serialized()
LINE_BYTES = b'\n\x04\x04\x01\x01\x01\x10\x01\x18\x04"\x10\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00'


def test_a_line_of_four_devices_answers_as_tf():
    topology = Topology(mesh_shape=[4, 1, 1, 1], device_coordinates=np.array(LINE, np.int32))
    assert topology.mesh_shape.tolist() == [4, 1, 1, 1] and topology.mesh_rank == 4
    assert (topology.num_tasks, topology.num_tpus_per_task) == (1, 4)
    assert topology.device_coordinates.shape == (1, 4, 4) and topology.device_coordinates.dtype == np.int32
    assert topology.missing_devices.shape == (0, 4) and topology.missing_devices.dtype == np.int64
    assert (topology.task_ordinal_at_coordinates([2, 0, 0, 0]), topology.tpu_device_ordinal_at_coordinates(
        [2, 0, 0, 0])) == (0, 2)
    assert topology.cpu_device_name_at_coordinates([2, 0, 0, 0]) == "/task:0/device:CPU:0"
    assert topology.tpu_device_name_at_coordinates([2, 0, 0, 0]) == "/task:0/device:TPU:2"
    assert topology.tpu_device_name_at_coordinates([2, 0, 0, 0], job="worker") == "/job:worker/task:0/device:TPU:2"
    assert topology.serialized() == LINE_BYTES


def test_serialized_bytes_from_tf_read_back_and_two_tasks_are_looked_up():
    topology = Topology(serialized=LINE_BYTES)
    assert topology.mesh_shape.tolist() == [4, 1, 1, 1] and topology.device_coordinates.tolist() == LINE
    two = Topology(mesh_shape=[2, 1, 1, 2], device_coordinates=np.array(
        [[[0, 0, 0, 0], [0, 0, 0, 1]], [[1, 0, 0, 0], [1, 0, 0, 1]]]))
    # TF 2.21: 2 tasks x 2; [1,0,0,1] is task 1's device 1
    assert (two.num_tasks, two.num_tpus_per_task) == (2, 2)
    assert (two.task_ordinal_at_coordinates([1, 0, 0, 1]), two.tpu_device_ordinal_at_coordinates([1, 0, 0, 1])) == (1, 1)
    assert two.cpu_device_name_at_coordinates([1, 0, 0, 1]) == "/task:1/device:CPU:0"
    assert two.tpu_device_name_at_coordinates([1, 0, 0, 0], job="w") == "/job:w/task:1/device:TPU:0"
    assert Topology(serialized=two.serialized()).device_coordinates.tolist() == two.device_coordinates.tolist()
    sparse = Topology(mesh_shape=[4, 1, 1, 1], device_coordinates=np.array([[[0, 0, 0, 0], [2, 0, 0, 0]]]))
    assert sparse.missing_devices.tolist() == [[1, 0, 0, 0], [3, 0, 0, 0]]  # TF 2.21's answer


@pytest.mark.parametrize("kwargs, message", [
    ({}, "needs `serialized`"),
    ({"mesh_shape": [4, 1, 1, 1]}, "needs `serialized`"),
    ({"mesh_shape": [4, 1, 1, 1], "device_coordinates": [[0, 0, 0]]}, r"must have shape \[num_tasks"),
    ({"mesh_shape": [4, 1, 1, 1], "device_coordinates": [[[5, 0, 0, 0]]]}, "must lie inside mesh_shape"),
    ({"serialized": b"x"}, "TopologyProto"),
    ({"serialized": LINE_BYTES, "mesh_shape": [1]}, "not both"),
])
def test_bad_arguments_say_what_to_pass(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Topology(**kwargs)
    with pytest.raises(ValueError, match=r"No device at coordinates \[3, 3, 0, 0\]"):
        Topology(serialized=LINE_BYTES).task_ordinal_at_coordinates([3, 3, 0, 0])


def test_this_hosts_topology_is_one_task_along_the_first_axis():
    topology = local_topology(4, "CPU")
    assert topology.serialized() == LINE_BYTES and topology.device_kind == "CPU" and topology.num_devices == 4
