"""Sharded checkpoints (torchstrategy/checkpoint/_sharded.py): 2 FSDP ranks (real gloo processes) write
one shard each plus a structure file, atomically; the checkpoint restores on 1 process, into
MirroredStrategy and on 3 FSDP ranks with the saved weights and optimizer state, and a Mirrored file
checkpoint restores into FSDP. Another architecture is refused, naming the variable, before any change."""
from __future__ import annotations

import os

import numpy as np
import pytest

from tests import _multiprocess as mp

COMMON = r'''
import json, os, sys
import numpy as np, torch
import torchstrategy as tf
from torchstrategy.keras.backend import full_value

out = sys.argv[1]


def build(width=6):
    model = tf.keras.Sequential([tf.keras.layers.Dense(width, activation="relu", input_shape=(7,)),
                                 tf.keras.layers.Dense(3)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    return model


def data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, 7)).astype(np.float32), rng.random((n, 3)).astype(np.float32)


def state_values(model):
    """Full weights, Adam slots (parameter order) and iterations: collectives, every rank calls it."""
    values = {f"w{i}": full_value(v).numpy() for i, v in enumerate(model.trainable_variables)}
    opt = model.optimizer
    for i, param in enumerate(opt._all_params()):
        for name, slot in sorted(opt.state.get(param, {}).items()):
            if isinstance(slot, torch.Tensor) and slot.dim() > 0:
                values[f"slot{i}_{name}"] = full_value(slot).numpy()
    values["iterations"] = np.array(int(opt.iterations))
    return values


def dump(name, values, chief=True):
    if chief:
        np.savez(os.path.join(out, name), **values)
'''

SAVE = COMMON + r'''
import torch.distributed.checkpoint as dcp
from torch.distributed.tensor import DTensor

strategy = tf.distribute.experimental.FSDPStrategy(["/cpu:0", "/cpu:1"])
rank = strategy.process_rank
handed = []
real_save = dcp.save


def recording_save(state_dict, **kwargs):  # what each rank hands DCP: its shards, never the whole model
    handed.append({key: [isinstance(v, DTensor), int(v.to_local().numel()) if isinstance(v, DTensor) else int(v.numel()),
                         int(v.numel())] for key, v in state_dict.items()})
    return real_save(state_dict, **kwargs)


dcp.save = recording_save
tf.random.set_seed(1)
with strategy.scope():
    model = build()
x, y = data()
model.fit(x, y, batch_size=8, epochs=2, verbose=0)
ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
folder = os.path.join(out, "ckpts")
manager = tf.train.CheckpointManager(ckpt, folder, max_to_keep=1)
first = manager.save()
listing = sorted(os.listdir(first))
written = ckpt.write(os.path.join(out, "written"))
dump("saved.npz", state_values(model), strategy.is_chief)

# a failure on rank 1 in the middle of writing its shards: nothing is installed, the old one is kept
import torch.distributed.checkpoint.filesystem as fs
real_write = fs.FileSystemWriter.write_data


def failing_write(self, plan, planner):
    if rank == 1:
        raise OSError("disk on fire")
    return real_write(self, plan, planner)


fs.FileSystemWriter.write_data = failing_write
errors = {}
for what, call in [("manager", manager.save), ("write", lambda: ckpt.write(written))]:
    try:
        call()
        errors[what] = None
    except Exception as error:
        errors[what] = f"{type(error).__name__}: {error}"
after_failure = sorted(os.listdir(folder)), sorted(os.listdir(out))
fs.FileSystemWriter.write_data = real_write
model.fit(x[:8], y[:8], batch_size=8, epochs=1, verbose=0)  # changes the state: the written one must be older
last = manager.save()
with open(os.path.join(out, f"save_{rank}.json"), "w") as f:
    json.dump({"first": first, "last": last, "listing": listing, "handed": handed, "errors": errors,
               "after_failure": after_failure, "final": sorted(os.listdir(folder)),
               "latest": tf.train.latest_checkpoint(folder), "meta": tf.train.checkpoint_metadata(last)}, f)
dump("last.npz", state_values(model), strategy.is_chief)
'''

ONE_PROCESS = COMMON + r'''
import warnings
written = os.path.join(out, "written")
tf.random.set_seed(5)
other = build(width=5)
other.optimizer.build(other.trainable_variables)
before = [w.copy() for w in other.get_weights()]
try:
    tf.train.Checkpoint(model=other, optimizer=other.optimizer).read(written)
    refused = None
except ValueError as error:
    refused = str(error)
unchanged = all(np.array_equal(a, b) for a, b in zip(before, other.get_weights()))
model = build()
model.optimizer.build(model.trainable_variables)
status = tf.train.Checkpoint(model=model, optimizer=model.optimizer).read(written)
status.assert_consumed()
dump("one_process.npz", state_values(model))
with open(os.path.join(out, "one_process.json"), "w") as f:
    json.dump({"refused": refused, "unchanged": unchanged,
               "meta": tf.train.checkpoint_metadata(written)}, f)
'''

MIRRORED = COMMON + r'''
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = build()
    model.optimizer.build(model.trainable_variables)
ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
ckpt.read(os.path.join(out, "written")).assert_consumed()
dump("mirrored.npz", state_values(model), strategy.is_chief)
ckpt.write(os.path.join(out, "mirrored_file.ckpt"))  # a file checkpoint of a replicated strategy
'''

FSDP3 = COMMON + r'''
from torch.distributed.tensor import DTensor
strategy = tf.distribute.experimental.FSDPStrategy(["/cpu:0", "/cpu:1", "/cpu:2"])
tf.random.set_seed(9)
with strategy.scope():
    model = build()
x, y = data(n=6, seed=3)
model.fit(x, y, batch_size=6, epochs=1, verbose=0)  # shards the model and builds the optimizer, 3 ways
ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
ckpt.restore(tf.train.latest_checkpoint(os.path.join(out, "ckpts"))).assert_consumed()
sharded = all(isinstance(v, DTensor) for v in model.trainable_variables)
dump("fsdp3.npz", state_values(model), strategy.is_chief)
model.fit(x, y, batch_size=6, epochs=1, verbose=0)  # away from the saved values again
ckpt.read(os.path.join(out, "mirrored_file.ckpt")).assert_consumed()
still_sharded = all(isinstance(v, DTensor) for v in model.trainable_variables)
dump("fsdp3_from_file.npz", state_values(model), strategy.is_chief)
with open(os.path.join(out, f"fsdp3_{strategy.process_rank}.json"), "w") as f:
    json.dump({"sharded": sharded, "still_sharded": still_sharded}, f)
'''


def _run(folder, source, name, timeout=240):
    script = mp.write_script(folder, source, name=name)
    result = mp.run_python([script, str(folder)], timeout=timeout)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    return result


def _load(path):
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def _assert_same(ours, expected):
    assert sorted(ours) == sorted(expected)
    for key in expected:
        np.testing.assert_array_equal(ours[key], expected[key], err_msg=key)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sharded")
    _run(folder, SAVE, "save.py")
    return folder


@pytest.mark.slow
def test_two_ranks_write_one_shard_each_plus_metadata_without_gathering(saved):
    reports = [mp.read_json(saved / f"save_{rank}.json") for rank in range(2)]
    report = reports[0]
    assert report["listing"] == [".metadata", "__0_0.distcp", "__1_0.distcp", "structure.tsckpt"]
    assert sorted(os.listdir(saved / "written")) == report["listing"]
    handed = [rank_report["handed"][0] for rank_report in reports]  # the first save's state dict, per rank
    assert sorted(handed[0]) == sorted(handed[1]) and len(handed[0]) == 4 + 4 * 2  # 4 weights, 2 Adam slots each
    for key in handed[0]:
        (dtensor0, local0, full), (dtensor1, local1, _) = handed[0][key], handed[1][key]
        assert dtensor0 and dtensor1, key
        # each rank handed DCP only its own rows (Shard(0)): no rank held the whole tensor, together all of it
        assert local0 < full and local1 < full and local0 + local1 == full, (key, local0, local1, full)
    assert report["meta"]["world_size"] == 2 and report["meta"]["strategy"] == "FSDPStrategy"


@pytest.mark.slow
def test_max_to_keep_removes_directories_and_latest_checkpoint_finds_one(saved):
    report = mp.read_json(saved / "save_0.json")
    assert report["final"] == ["checkpoint", os.path.basename(report["last"])]  # the first one's directory is gone
    assert report["latest"] == report["last"] and report["last"].endswith("ckpt-3")


@pytest.mark.slow
def test_a_rank_failing_mid_write_keeps_the_previous_checkpoint(saved):
    for rank in range(2):
        report = mp.read_json(saved / f"save_{rank}.json")
        errors = report["errors"]
        assert errors["manager"] and errors["write"], errors  # every rank raised, for both saves
        if rank == 1:
            assert "disk on fire" in errors["manager"]
        in_folder, in_out = report["after_failure"]
        assert in_folder == ["checkpoint", "ckpt-1"]  # no ckpt-2, no temp directory left
        assert not [name for name in in_out if name.endswith(".tmp")], in_out
    # the checkpoint the failed write would have replaced still holds the first (older) values
    _run(saved, ONE_PROCESS, "one_process.py")
    _assert_same(_load(saved / "one_process.npz"), _load(saved / "saved.npz"))
    assert not np.array_equal(_load(saved / "saved.npz")["w0"], _load(saved / "last.npz")["w0"])


@pytest.mark.slow
def test_restores_on_one_process_and_refuses_another_architecture(saved):
    if not (saved / "one_process.json").exists():
        _run(saved, ONE_PROCESS, "one_process.py")
    report = mp.read_json(saved / "one_process.json")
    _assert_same(_load(saved / "one_process.npz"), _load(saved / "saved.npz"))
    assert report["refused"] is not None and "'_stack.0.kernel'" in report["refused"], report["refused"]
    assert "shape (7, 6) in the checkpoint but (7, 5)" in report["refused"]
    assert report["unchanged"]
    assert report["meta"]["world_size"] == 2


@pytest.mark.slow
def test_restores_into_mirrored_and_on_three_fsdp_ranks_and_a_mirrored_file_into_fsdp(saved):
    _run(saved, MIRRORED, "mirrored.py")
    expected = _load(saved / "saved.npz")
    _assert_same(_load(saved / "mirrored.npz"), expected)
    _run(saved, FSDP3, "fsdp3.py")
    _assert_same(_load(saved / "fsdp3.npz"), _load(saved / "last.npz"))  # the newest of the manager
    _assert_same(_load(saved / "fsdp3_from_file.npz"), expected)
    for rank in range(3):
        report = mp.read_json(saved / f"fsdp3_{rank}.json")
        assert report == {"sharded": True, "still_sharded": True}
