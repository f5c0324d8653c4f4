"""TensorParallelStrategy and its layouts part in one process: mesh checks, layout -> DTensor placements,
the "layer/weight" paths layouts match (2-process training is in tests/keras/test_distribution.py)."""
from __future__ import annotations

import pytest
from torch import nn
from torch.distributed.tensor import Replicate, Shard

from torchstrategy.distribute.parts.layouts import parameter_paths, placements_for
from torchstrategy.distribute.tensor_parallel import TensorParallelStrategy, check_mesh


def test_placements_follow_the_layout_axes():
    assert placements_for((None, "model"), ("batch", "model"), "d/kernel", 2) == [Replicate(), Shard(1)]
    assert placements_for(("model",), ("batch", "model"), "d/bias", 1) == [Replicate(), Shard(0)]
    with pytest.raises(ValueError, match=r"names axis \['modle'\], which is not an axis of the mesh"):
        placements_for((None, "modle"), ("batch", "model"), "d/kernel", 2)
    with pytest.raises(ValueError, match="shards two dimensions over mesh axis 'model'"):
        placements_for(("model", "model"), ("batch", "model"), "d/kernel", 2)


def test_mesh_checks():
    assert check_mesh((1, 2), ("batch", "model"), None) == "batch"
    with pytest.raises(ValueError, match="batch axis 'data' is not an axis"):
        check_mesh((1, 2), ("batch", "model"), "data")
    with pytest.raises(ValueError, match="same length"):
        check_mesh((1, 2), ("batch",), None)
    with pytest.raises(NotImplementedError, match="batch axis of size 1"):
        TensorParallelStrategy((2, 2), ("batch", "model"))


def test_paths_use_the_owner_name_then_torch_names():
    class Named(nn.Linear):
        name = "dense_1"

    module = nn.Sequential(Named(2, 3), nn.Linear(3, 1))
    assert [p for p, _, _ in parameter_paths(module)] == ["dense_1/weight", "dense_1/bias", "1.weight", "1.bias"]


def test_one_device_mesh_runs_in_this_process():
    strategy = TensorParallelStrategy((1,), ("batch",), layouts={"x": ("batch",)})
    assert strategy.num_replicas_in_sync == 1 and strategy.device_mesh is None
    assert strategy.input_context().num_input_pipelines == 1
