"""tf.train.Checkpoint: save/write/restore/read, the save counter and index, TF's restore status
checks, every kind of tracked object, resuming training exactly, and bad input."""
from __future__ import annotations

import gc
import os
import time
import warnings

import numpy as np
import pytest
import torch

import torchstrategy as tf
from torchstrategy.checkpoint import CheckpointCorruptedError, save_state


def _mlp(out: int = 2) -> tf.keras.Model:
    return tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                                tf.keras.layers.Dense(out)])


def _batches(count: int) -> list:
    generator = torch.Generator().manual_seed(0)
    return [(torch.randn(8, 3, generator=generator), torch.randn(8, 2, generator=generator)) for _ in range(count)]


def _train(model: tf.keras.Model, optimizer, batches: list) -> None:
    for x, y in batches:
        with tf.GradientTape() as tape:
            loss = ((model(x, training=True) - y) ** 2).mean()
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


def test_save_numbers_files_and_updates_the_index_while_write_does_neither(tmp_path):
    step = tf.Variable(0)
    ckpt = tf.train.Checkpoint(step=step)
    prefix = str(tmp_path / "ckpt")
    assert int(ckpt.save_counter) == 0
    assert ckpt.save(prefix) == prefix + "-1"
    step.assign(7)
    assert ckpt.save(prefix) == prefix + "-2" and int(ckpt.save_counter) == 2
    with open(tmp_path / "checkpoint", encoding="utf-8") as handle:
        assert handle.read().splitlines() == ['model_checkpoint_path: "ckpt-2"', 'all_model_checkpoint_paths: "ckpt-2"']
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix + "-2"
    assert ckpt.write(str(tmp_path / "exact")) == str(tmp_path / "exact")
    assert int(ckpt.save_counter) == 2 and tf.train.latest_checkpoint(str(tmp_path)) == prefix + "-2"

    fresh_step = tf.Variable(0)
    fresh = tf.train.Checkpoint(step=fresh_step)
    fresh.restore(prefix + "-1").assert_consumed()
    assert int(fresh_step) == 0 and int(fresh.save_counter) == 1
    fresh.restore(prefix + "-2").assert_consumed()
    assert int(fresh_step) == 7 and int(fresh.save_counter) == 2
    assert fresh.save(prefix) == prefix + "-3"  # numbering continues from the restored counter

    read_step = tf.Variable(0)
    reader = tf.train.Checkpoint(step=read_step)
    reader.read(str(tmp_path / "exact")).assert_consumed()
    assert int(read_step) == 7 and int(reader.save_counter) == 0  # read() leaves the counter alone


def test_resuming_a_keras_model_and_optimizer_matches_an_uninterrupted_run(tmp_path):
    batches = _batches(6)
    tf.random.set_seed(1)
    reference = _mlp()
    reference_optimizer = tf.keras.optimizers.Adam(0.05)
    _train(reference, reference_optimizer, batches)

    tf.random.set_seed(1)
    model = _mlp()
    optimizer = tf.keras.optimizers.Adam(0.05)
    _train(model, optimizer, batches[:3])
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ckpt"))

    tf.random.set_seed(99)  # other initial weights, and an optimizer without variables yet
    resumed = _mlp()
    resumed_optimizer = tf.keras.optimizers.Adam(0.05)
    tf.train.Checkpoint(model=resumed, optimizer=resumed_optimizer).restore(path).assert_consumed()
    assert int(resumed_optimizer.iterations) == 3
    _train(resumed, resumed_optimizer, batches[3:])
    for ours, expected in zip(resumed.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-7)
    assert int(resumed_optimizer.iterations) == 6


def test_a_compiled_model_brings_its_optimizer_and_shared_objects_are_stored_once(tmp_path):
    model = _mlp()
    model.compile(optimizer="adam", loss="mse")
    model.fit(torch.randn(16, 3), torch.randn(16, 2), batch_size=8, verbose=0)
    path = tf.train.Checkpoint(optimizer=model.optimizer, model=model).save(str(tmp_path / "c"))
    other = _mlp()
    other.compile(optimizer="adam", loss="mse")
    tf.train.Checkpoint(model=other).restore(path).expect_partial()
    assert int(other.optimizer.iterations) == 2
    for ours, expected in zip(other.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(ours, expected)


class _Cursor:
    """Any object with state_dict()/load_state_dict() (as dataset iterators have)."""

    def __init__(self) -> None:
        self.position = 0

    def state_dict(self) -> dict:
        return {"position": self.position}

    def load_state_dict(self, state: dict) -> None:
        self.position = state["position"]


def test_every_supported_kind_round_trips(tmp_path):
    cursor, tensor, nested = _Cursor(), torch.arange(4.0), tf.train.Checkpoint(inner=tf.Variable([1, 2]))
    layers = [tf.keras.layers.Dense(2), tf.keras.layers.Dense(3)]
    for index, layer in enumerate(layers):
        layer(torch.ones(1, 2 + index))
    sgd = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1, momentum=0.9)
    ckpt = tf.train.Checkpoint(cursor=cursor, tensor=tensor, nested=nested, layers=layers, sgd=sgd)
    ckpt.extra = tf.Variable(3.5)  # attributes set later are tracked too
    cursor.position = 41
    sgd.param_groups[0]["params"][0].grad = torch.ones(2)
    sgd.step()
    path = ckpt.write(str(tmp_path / "all"))
    saved = [layer.get_weights() for layer in layers]

    new_layers = [tf.keras.layers.Dense(2), tf.keras.layers.Dense(3)]
    for index, layer in enumerate(new_layers):
        layer(torch.ones(1, 2 + index))
    new = dict(cursor=_Cursor(), tensor=torch.zeros(4), nested=tf.train.Checkpoint(inner=tf.Variable([0, 0])),
               layers=new_layers, sgd=torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.5, momentum=0.9))
    restored = tf.train.Checkpoint(**new)
    restored.extra = tf.Variable(0.0)
    restored.read(path).assert_consumed()
    assert new["cursor"].position == 41 and new["tensor"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert new["nested"].inner.tolist() == [1, 2] and float(restored.extra) == 3.5
    assert new["sgd"].param_groups[0]["lr"] == 0.1
    momentum = list(new["sgd"].state.values())[0]["momentum_buffer"]
    np.testing.assert_allclose(momentum.numpy(), [1.0, 1.0])
    for layer, expected in zip(new_layers, saved):
        for ours, theirs in zip(layer.get_weights(), expected):
            np.testing.assert_array_equal(ours, theirs)


def test_status_checks_follow_tf(tmp_path):
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    path = tf.train.Checkpoint(a=a, b=b).save(str(tmp_path / "ckpt"))

    partial = tf.train.Checkpoint(a=tf.Variable(0.0))
    status = partial.restore(path)
    status.assert_existing_objects_matched().assert_nontrivial_match()
    with pytest.raises(AssertionError, match="matched nothing here: 'b'"):
        status.assert_consumed()
    with pytest.warns(UserWarning, match=r"not restored.*\['b'\].*expect_partial"):
        del status
        gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        partial.restore(path).expect_partial()  # silenced, as in TF
        gc.collect()

    bigger = tf.train.Checkpoint(a=tf.Variable(0.0), b=tf.Variable(0.0), c=tf.Variable(0.0))
    status = bigger.restore(path)
    with pytest.raises(AssertionError, match="not in the checkpoint: 'c'"):
        status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match="Nothing in .* matched"):
        tf.train.Checkpoint(z=tf.Variable(0.0)).restore(path).expect_partial().assert_nontrivial_match()

    initial = tf.train.Checkpoint(a=a).restore(None)
    for check in (initial.assert_consumed, initial.assert_existing_objects_matched, initial.assert_nontrivial_match):
        with pytest.raises(AssertionError, match=r"No checkpoint specified \(save_path=None\)"):
            check()
    assert initial.expect_partial() is initial


def test_an_unbuilt_model_is_restored_when_its_variables_are_created(tmp_path):
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = tf.keras.layers.Dense(5)
            self.out = tf.keras.layers.Dense(1)

        def call(self, inputs):
            return self.out(self.hidden(inputs))

    trained = Net()
    trained(torch.ones(1, 3))
    path = tf.train.Checkpoint(model=trained).save(str(tmp_path / "ckpt"))
    lazy = Net()
    status = tf.train.Checkpoint(model=lazy).restore(path)
    with pytest.raises(AssertionError, match="waiting for their variables.*'model'"):
        status.assert_consumed()
    x = torch.randn(4, 3)
    np.testing.assert_allclose(lazy(x).detach().numpy(), trained(x).detach().numpy(), rtol=1e-6)
    status.assert_consumed()


def test_metadata_records_what_wrote_the_file(tmp_path):
    before = time.time()
    path = tf.train.Checkpoint(v=tf.Variable(1.0)).save(str(tmp_path / "ckpt"))
    metadata = tf.train.checkpoint_metadata(path)
    assert metadata["library_version"] == tf.version.TORCHSTRATEGY_VERSION and metadata["world_size"] == 1
    assert metadata["strategy"] == "DefaultStrategy" and before <= metadata["time"] <= time.time()
    assert tf.train.Checkpoint(v=tf.Variable(0.0)).restore(path).metadata == metadata
    with tf.distribute.OneDeviceStrategy("cpu:0").scope():
        inside = tf.train.Checkpoint(v=tf.Variable(1.0)).save(str(tmp_path / "scoped"))
    assert tf.train.checkpoint_metadata(inside)["strategy"] == "OneDeviceStrategy"


def test_another_architecture_names_the_first_mismatched_variable_and_changes_nothing(tmp_path):
    path = tf.train.Checkpoint(model=_mlp(2)).save(str(tmp_path / "ckpt"))
    other = _mlp(3)
    before = other.get_weights()
    with pytest.raises(ValueError, match=r"'_stack\.1\.kernel' \(weight 'kernel' of layer 'dense_\d+'\) has shape "
                                         r"\(4, 2\) in the checkpoint but \(4, 3\) in this model.*another architecture"):
        tf.train.Checkpoint(model=other).restore(path)
    for ours, expected in zip(other.get_weights(), before):
        np.testing.assert_array_equal(ours, expected)
    deeper = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,)), tf.keras.layers.Dense(2),
                                  tf.keras.layers.Dense(2)])
    with pytest.raises(ValueError, match=r"'_stack\.2\.kernel'.* is not in the checkpoint"):
        tf.train.Checkpoint(model=deeper).restore(path)
    with pytest.raises(ValueError, match=r"'v' .* shape \(3,\) in the checkpoint but \(2,\) here"):
        source = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0, 3.0])).write(str(tmp_path / "v"))
        tf.train.Checkpoint(v=tf.Variable([0.0, 0.0])).read(source)
    with pytest.raises(ValueError, match="'model' .* is a tensor .* but a module"):
        tf.train.Checkpoint(model=tf.Variable(0.0)).restore(path)


def test_bad_objects_and_files_are_refused_clearly(tmp_path):
    with pytest.raises(TypeError, match=r"cannot track step=5 .*Wrap a Python number in tf.Variable"):
        tf.train.Checkpoint(step=5)
    with pytest.raises(ValueError, match="cannot track"):  # TF raises ValueError here; both work
        tf.train.Checkpoint(things=[tf.Variable(1.0), "text"])
    ckpt = tf.train.Checkpoint()
    with pytest.raises(TypeError, match="cannot track name='x'"):
        ckpt.name = "x"
    with pytest.raises(AttributeError, match="save_counter"):
        ckpt.save_counter = tf.Variable(3)
    with pytest.raises(FileNotFoundError, match="nowhere-1"):
        ckpt.restore(str(tmp_path / "nowhere-1"))
    with pytest.raises(FileNotFoundError, match="is a directory"):
        ckpt.restore(str(tmp_path))
    save_state({"weights": [torch.ones(2)]}, str(tmp_path / "other.bin"))
    with pytest.raises(ValueError, match="not a tf.train.Checkpoint file"):
        ckpt.restore(str(tmp_path / "other.bin"))
    path = ckpt.save(str(tmp_path / "ckpt"))
    with open(path, "r+b") as handle:
        handle.truncate(os.path.getsize(path) - 3)
    with pytest.raises(CheckpointCorruptedError, match=f"'{path}' is corrupted"):
        ckpt.restore(path)
    saved = tf.train.Checkpoint(sgd=torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1)).write(
        str(tmp_path / "sgd"))
    two_groups = torch.optim.SGD([{"params": [torch.nn.Parameter(torch.ones(2))]},
                                  {"params": [torch.nn.Parameter(torch.ones(1))]}], lr=0.1)
    with pytest.raises(ValueError, match="Cannot restore 'sgd' \\(SGD\\)"):
        tf.train.Checkpoint(sgd=two_groups).read(saved)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_state_saves_from_and_restores_onto_the_gpu(tmp_path):
    torch.manual_seed(0)
    layer = torch.nn.Linear(5, 3).cuda()
    optimizer = torch.optim.Adam(layer.parameters(), lr=0.1)
    layer(torch.randn(4, 5, device="cuda")).sum().backward()
    optimizer.step()
    counter = tf.Variable(torch.tensor([1.0, 2.0], device="cuda"))
    path = tf.train.Checkpoint(layer=layer, optimizer=optimizer, counter=counter).save(str(tmp_path / "gpu"))
    other = torch.nn.Linear(5, 3).cuda()
    other_optimizer = torch.optim.Adam(other.parameters(), lr=0.1)
    other_counter = tf.Variable(torch.zeros(2, device="cuda"))
    tf.train.Checkpoint(layer=other, optimizer=other_optimizer, counter=other_counter).restore(path).assert_consumed()
    assert other.weight.device.type == "cuda" and torch.equal(other.weight, layer.weight)
    assert other_counter.device.type == "cuda" and other_counter.tolist() == [1.0, 2.0]
    moments = [state["exp_avg"] for state in other_optimizer.state.values()]
    expected = [state["exp_avg"] for state in optimizer.state.values()]
    assert all(m.device.type == "cuda" and torch.equal(m, e) for m, e in zip(moments, expected))


def test_objects_added_after_restore_are_restored_when_added(tmp_path):
    # TF's deferred restoration: restore() first, attach the optimizer and a step counter afterwards
    model, optimizer = _mlp(), tf.keras.optimizers.Adam(0.01)
    _train(model, optimizer, _batches(3))
    step = tf.Variable(7, dtype=tf.int64)
    path = tf.train.Checkpoint(model=model, optimizer=optimizer, step=step).save(str(tmp_path / "ckpt"))

    fresh_model, fresh_optimizer = _mlp(), tf.keras.optimizers.Adam(0.01)
    fresh_optimizer.build(fresh_model.trainable_variables)
    checkpoint = tf.train.Checkpoint(model=fresh_model)
    status = checkpoint.restore(path)
    with pytest.raises(AssertionError, match="matched nothing here"):
        status.assert_consumed()
    checkpoint.optimizer = fresh_optimizer
    checkpoint.step = fresh_step = tf.Variable(0, dtype=tf.int64)
    status.assert_consumed()  # everything in the file found its object
    assert int(fresh_step) == 7 and int(fresh_optimizer.iterations) == 3
    for got, want in zip(fresh_optimizer.variables, optimizer.variables):
        torch.testing.assert_close(got, want)
    # and training goes on exactly as the original would
    batches = _batches(5)[3:]
    _train(model, optimizer, batches)
    _train(fresh_model, fresh_optimizer, batches)
    for got, want in zip(fresh_model.get_weights(), model.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6)
